#!/usr/bin/env python3
"""tables.py [--check] [CHAPTER_DIR] - 05's own README table, from results/GPU.csv.

Between <!-- best:GPU:begin --> and <!-- best:GPU:end -->: per shape, the fastest transpose
before transposeSectorAligned existed (every other transpose kernel) and the fastest of all,
each as a fraction of copyVec4 measured in the same run. --check changes nothing and exits 1
if the README differs from what the CSV gives. Standard library only.
"""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import results  # noqa: E402

NEW = "transposeSectorAligned"


def best_table(path):
    meta, rows = results.read(path)
    problems = list(dict.fromkeys(r["problem"] for r in rows))
    out = ["Best transpose / `copyVec4` per shape (%s, %s, `make bench`): before = the fastest of the kernels "
           "above `%s`, after = the fastest of all." % (meta.get("gpu", "?"), meta.get("date", "?")[:10], NEW),
           "",
           "| shape | before: kernel | before / copy | after: kernel | after / copy |",
           "|---|---|---:|---|---:|"]
    for p in problems:
        rs = [r for r in rows if r["problem"] == p]
        copy = float(next(r for r in rs if r["kernel"] == "copyVec4")["ms"])
        tr = [r for r in rs if r["kernel"].startswith("transpose")]
        before = min((r for r in tr if r["kernel"] != NEW), key=lambda r: float(r["ms"]))
        after = min(tr, key=lambda r: float(r["ms"]))
        out.append("| %s | `%s` | %.3f | `%s` | %.3f |" % (
            p, before["kernel"], copy / float(before["ms"]), after["kernel"], copy / float(after["ms"])))
    return "\n".join(out)


def main(argv):
    check = "--check" in argv
    args = [a for a in argv[1:] if a != "--check"]
    chapter = args[0] if args else os.path.dirname(os.path.abspath(__file__))
    readme_path = os.path.join(chapter, "README.md")
    readme = open(readme_path).read()
    new = readme
    for path in sorted(glob.glob(os.path.join(chapter, "results", "*.csv"))):
        gpu = os.path.splitext(os.path.basename(path))[0]
        if "_" in gpu:
            continue
        pat = re.compile(r"(<!-- best:%s:begin -->\n)(?:.*?\n)?(<!-- best:%s:end -->)" % (gpu, gpu), re.S)
        new = pat.sub(lambda m: m.group(1) + best_table(path) + "\n" + m.group(2), new)
    if check:
        if new != readme:
            sys.exit("%s: the best-per-shape table is not what its CSV gives: run make readme-tables" % readme_path)
        return
    if new != readme:
        open(readme_path, "w").write(new)
        print("updated", readme_path)


if __name__ == "__main__":
    main(sys.argv)
