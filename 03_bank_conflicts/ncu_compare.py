#!/usr/bin/env python3
"""ncu_compare.py LOG OUT.csv - pair each `MODEL` line of `bank_conflicts --ncu` with Nsight
Compute's counters for the same launch (ncu --csv, launches in order) and check they agree.

A MODEL line is `MODEL name ld_req st_req ld_wf st_wf ld_conflicts st_conflicts`, one per
kernel launch, in launch order. Prints the tile and sweep rows (and any probe row that
differs), writes every row to OUT.csv, and exits 1 unless every count matches exactly.
"""
import csv
import re
import sys

METRICS = [  # (column, ncu metric), in the order of a MODEL line's numbers
    ("ld_req", "smsp__inst_executed_op_shared_ld.sum"),
    ("st_req", "smsp__inst_executed_op_shared_st.sum"),
    ("ld_wf", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
    ("st_wf", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"),
    ("ld_conf", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
    ("st_conf", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
]


def short_name(demangled):
    name = re.sub(r"^void ", "", demangled.split("(")[0].strip())
    base, _, targs = name.partition("<")
    return base.split("::")[-1] + ("<" + targs.replace(" ", "") if targs else "")


def main(log_path, out_path):
    with open(log_path) as f:
        lines = f.read().splitlines()
    models = []
    for l in lines:
        if l.startswith("MODEL "):
            p = l.split()
            models.append((p[1], [int(x) for x in p[2:8]]))
    launches = {}
    for row in csv.DictReader([l for l in lines if l.startswith('"')]):
        d = launches.setdefault(int(row["ID"]), {"kernel": short_name(row["Kernel Name"])})
        try:
            d[row["Metric Name"]] = int(float(row["Metric Value"].replace(",", "")))
        except ValueError:
            d[row["Metric Name"]] = None
    ids = sorted(launches)
    if len(ids) != len(models):
        print("ncu profiled %d launches but the program printed %d MODEL lines" % (len(ids), len(models)))
        return 1
    header = ["kernel", "ncu_kernel"]
    for col, _ in METRICS:
        header += ["model_" + col, "ncu_" + col]
    header.append("match")
    rows, bad, probes = [], 0, 0
    for (name, pred), lid in zip(models, ids):
        d = launches[lid]
        meas = [d.get(m) for _, m in METRICS]
        ok = all(p == q for p, q in zip(pred, meas))
        bad += not ok
        probes += name.startswith("probe/")
        row = [name, d["kernel"]]
        for p, q in zip(pred, meas):
            row += [p, "-" if q is None else q]
        rows.append(row + ["yes" if ok else "NO"])
    with open(out_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    cols = ["kernel", "ld req", "st req", "ld wavefronts", "st wavefronts", "ld conflicts", "st conflicts", "match"]
    table = [cols]
    for r in rows:
        if r[0].startswith("probe/") and r[-1] == "yes":
            continue
        table.append([r[0]] + ["%s/%s" % (r[2 + 2 * i], r[3 + 2 * i]) for i in range(len(METRICS))] + [r[-1]])
    width = [max(len(str(t[i])) for t in table) for i in range(len(cols))]
    print("model/ncu for each launch (probe rows only where they differ):")
    for t in table:
        print("  ".join(str(c).ljust(width[i]) if i == 0 else str(c).rjust(width[i]) for i, c in enumerate(t)))
    print("%d launches (%d random probes): %d match the model exactly, %d differ" % (len(rows), probes, len(rows) - bad, bad))
    print("wrote", out_path)
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
