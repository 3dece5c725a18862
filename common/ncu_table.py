#!/usr/bin/env python3
"""ncu_table.py OUT.csv LABEL=EXPR ... < ncu --csv output

Turns Nsight Compute's --csv output (one line per kernel launch and metric) into one row
per kernel: the first launch of each kernel name, in launch order. Each column is
LABEL=METRIC or LABEL=METRIC/METRIC (a ratio, e.g. sectors per request). Prints the
table and writes it to OUT.csv. Used by the chapters' profile.sh scripts.
"""
import csv
import re
import sys


def short_name(demangled):
    """'void ns::kernel<true>(const float *, int)' -> 'kernel<true>'."""
    name = demangled.split("(")[0].strip()
    name = re.sub(r"^void ", "", name)
    base, _, targs = name.partition("<")
    base = base.split("::")[-1]
    return base + ("<" + targs if targs else "")


def first_launches(launches):
    """The first launch of each kernel, in launch order ({launch id: {"kernel": name, ...}})."""
    seen = set()
    for lid in sorted(launches, key=int):
        d = launches[lid]
        if d["kernel"] not in seen:
            seen.add(d["kernel"])
            yield d


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    out_path, columns = argv[1], [c.split("=", 1) for c in argv[2:]]
    launches = {}  # (launch id) -> {"kernel": name, metric: value}
    lines = [l for l in sys.stdin if l.startswith('"')]  # skip ncu's ==PROF== lines and program output
    for row in csv.DictReader(lines):
        d = launches.setdefault(row["ID"], {"kernel": short_name(row["Kernel Name"])})
        try:
            d[row["Metric Name"]] = float(row["Metric Value"].replace(",", ""))
        except ValueError:
            pass
    table = []
    for d in first_launches(launches):
        cells = [d["kernel"]]
        for _, expr in columns:
            a, _, b = expr.partition("/")
            try:
                v = d[a] / d[b] if b else d[a]
                cells.append("%.2f" % v if b else "%.0f" % v)
            except (KeyError, ZeroDivisionError):
                cells.append("-")
        table.append(cells)
    header = ["kernel"] + [label for label, _ in columns]
    width = [max(len(str(r[i])) for r in table + [header]) for i in range(len(header))]
    for r in [header] + table:
        print("  ".join(str(c).ljust(width[i]) if i == 0 else str(c).rjust(width[i]) for i, c in enumerate(r)))
    with open(out_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(table)
    print("wrote", out_path)


if __name__ == "__main__":
    main(sys.argv)
