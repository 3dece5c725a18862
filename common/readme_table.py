#!/usr/bin/env python3
"""readme_table.py [--check] CHAPTER... - write each chapter README's results tables from its CSVs.

In NN_name/README.md, the text between
    <!-- results:GPU:begin -->  and  <!-- results:GPU:end -->
is replaced by a table of NN_name/results/GPU.csv at its default problem (the CSV's
`default_problem` metadata, else its first problem), and the text between
    <!-- sweep:GPU:begin -->    and  <!-- sweep:GPU:end -->
by a kernel x problem table of the throughput, and the text between
    <!-- csv:NAME:begin -->      and  <!-- csv:NAME:end -->
by NN_name/results/NAME.csv as it is (e.g. an ncu table). --check changes nothing and exits 1 if a
README is not what its CSV gives (CI runs it: the tables are generated, never typed).
"""
import csv
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results  # noqa: E402


def command_text(meta, committed):
    """The CSV's command; where its --csv went elsewhere (a GPU machine's output folder), where it is now."""
    command = meta.get("command", "?")
    written = re.search(r"--csv (\S+)", command)
    if written and written.group(1) != committed:
        return "`%s` (that CSV is `%s` here)" % (command, committed)
    return "`%s`" % command


def main_table(meta, rows, committed):
    rate, peer = results.rate_column(rows), results.peer_column(rows)
    problem = meta.get("default_problem") or rows[0]["problem"]
    unit = rate.replace("_per_", "/")
    out = ["%s, %s, CUDA %s, driver %s, %s. Command: %s." % (
               problem, meta.get("gpu", "?"), meta.get("cuda_runtime", "?"), meta.get("driver", "?"),
               meta.get("date", "?")[:10], command_text(meta, committed)),
           "",
           "| kernel | launch | ms | %s | %% of %s | max err | result |" % (unit, peer[len("pct_of_"):]),
           "|---|---|---:|---:|---:|---:|---|"]
    for r in rows:
        if r["problem"] != problem:
            continue
        pct = "%.1f%%" % float(r[peer]) if r[peer] else "-"
        out.append("| `%s` | %s | %.4f | %.0f | %s | %s | %s |" % (
            r["kernel"], r["launch"], float(r["ms"]), float(r[rate]), pct, r["max_err"], r["result"]))
    return "\n".join(out)


def sweep_table(meta, rows, committed):  # (committed: as main_table's)
    rate = results.rate_column(rows)
    problems = list(dict.fromkeys(r["problem"] for r in rows))
    kernels = list(dict.fromkeys(r["kernel"] for r in rows))
    value = {(r["kernel"], r["problem"]): r for r in rows}
    out = ["%s by problem (%s):" % (rate.replace("_per_", "/"), meta.get("gpu", "?")), "",
           "| kernel | " + " | ".join(problems) + " |",
           "|---|" + "---:|" * len(problems)]
    for k in kernels:
        cells = []
        for p in problems:
            r = value.get((k, p))
            cells.append("-" if r is None else "%.0f%s" % (float(r[rate]), "" if r["result"] == "PASS" else " FAIL"))
        out.append("| `%s` | " % k + " | ".join(cells) + " |")
    return "\n".join(out)


def plain_table(path, columns=None):
    require_csv(path)
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(l for l in f if not l.startswith("#"))]
    if len(rows) < 2:
        sys.exit("readme_table.py: %s has no rows" % path)
    if columns:  # only these columns, in this order
        idx = [rows[0].index(c) for c in columns.split(",")]
        rows = [[r[i] for i in idx] for r in rows]
    out = ["| " + " | ".join(rows[0]) + " |", "|---|" + "---:|" * (len(rows[0]) - 1)]
    out += ["| `%s` | " % short_name(r[0]) + " | ".join(r[1:]) + " |" for r in rows[1:]]
    return "\n".join(out)


def short_name(kernel):
    """A kernel's name for a table: a library's long template arguments (CUB's policies) as <...>."""
    return kernel[:kernel.index("<")] + "<...>" if len(kernel) > 60 and "<" in kernel else kernel


def unmatched_markers(text):
    """Every <!-- KEY:begin --> needs its <!-- KEY:end --> after it, and every end its begin
    (a mistyped marker would leave a hand-made table in place, and --check would not see it)."""
    problems, opened = [], []
    for m in re.finditer(r"<!-- ([\w.:-]+?)(?: cols=[\w,]+)?:(begin|end) -->", text):
        key, which = m.group(1), m.group(2)
        if which == "begin":
            if key in opened:
                problems.append("%s begins again before it ends" % key)
            opened.append(key)
        elif key in opened:
            opened.remove(key)
        else:
            problems.append("%s ends without a begin" % key)
    return problems + ["%s begins and never ends" % k for k in opened]


def require_csv(csv_path):
    if not os.path.exists(csv_path):
        sys.exit("readme_table.py: a marker names %s, which does not exist" % csv_path)


def read_rows(csv_path):
    require_csv(csv_path)
    meta, rows = results.read(csv_path)
    if not rows:
        sys.exit("readme_table.py: %s has no rows" % csv_path)
    return meta, rows


def render(readme_text, chapter):
    def replace(kind, make):
        nonlocal readme_text
        pattern = re.compile(r"(<!-- %s:([\w.-]+):begin -->\n).*?(<!-- %s:\2:end -->)" % (kind, kind), re.S)

        def sub(m):
            meta, rows = read_rows(os.path.join(chapter, "results", m.group(2) + ".csv"))
            committed = "/".join([os.path.basename(os.path.normpath(chapter)), "results", m.group(2) + ".csv"])
            return m.group(1) + make(meta, rows, committed) + "\n" + m.group(3)
        readme_text = pattern.sub(sub, readme_text)
    replace("results", main_table)
    replace("sweep", sweep_table)
    # <!-- csv:NAME:begin --> (every column) or <!-- csv:NAME cols=a,b,c:begin --> (those columns)
    pattern = re.compile(r"(<!-- csv:([\w.-]+)(?: cols=([\w,]+))?:begin -->\n).*?(<!-- csv:\2:end -->)", re.S)
    readme_text = pattern.sub(
        lambda m: m.group(1) + plain_table(os.path.join(chapter, "results", m.group(2) + ".csv"), m.group(3)) + "\n"
        + m.group(4), readme_text)
    return readme_text


def main(argv):
    check = "--check" in argv
    stale = []
    for chapter in [a for a in argv if a != "--check"]:
        path = os.path.join(chapter, "README.md")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            old = f.read()
        broken = unmatched_markers(old)
        if broken:
            print("%s: %s" % (path, "; ".join(broken)))
            return 1
        new = render(old, chapter)
        if new != old:
            if check:
                stale.append(path)
            else:
                with open(path, "w") as f:
                    f.write(new)
                print("updated", path)
    for p in stale:
        print("%s: results tables differ from its CSV; run `make readme-tables`" % p)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
