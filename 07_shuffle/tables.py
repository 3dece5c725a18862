#!/usr/bin/env python3
"""tables.py [--check] [CHAPTER_DIR] - 07's own README table, from results/GPU.csv.

Between <!-- best:GPU:begin --> and <!-- best:GPU:end -->: per shape, the fastest y = A x kernel,
what its launcher ran, its GB/s (A and x read once, y written once) and cub::DeviceReduce::Sum's
GB/s (A read once) in the same run, and their ratio (the chapter's goal: >= 0.90). --check
changes nothing and exits 1 if the README differs from what the CSV gives. Standard library only.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import results  # noqa: E402


def best_table(path):
    meta, rows = results.read(path)
    rate = results.rate_column(rows)
    problems = list(dict.fromkeys(r["problem"] for r in rows))
    out = ["Best y = A x / `cub::DeviceReduce::Sum` per shape (%s, %s, `make bench`; GB/s over GB/s)." % (
               meta.get("gpu", "?"), meta.get("date", "?")[:10]),
           "",
           "| shape | best kernel | what ran | GB/s | CUB GB/s | best / CUB |",
           "|---|---|---|---:|---:|---:|"]
    for p in problems:
        rs = [r for r in rows if r["problem"] == p]
        cub = next(r for r in rs if r["kernel"].startswith("cub"))
        best = max((r for r in rs if not r["kernel"].startswith("cub")), key=lambda r: float(r[rate]))
        out.append("| %s | `%s` | %s | %.0f | %.0f | %.3f |" % (
            p, best["kernel"], best["launch"], float(best[rate]), float(cub[rate]),
            float(best[rate]) / float(cub[rate])))
    return "\n".join(out)
if __name__ == "__main__":
    results.update_marked_tables(sys.argv, __file__, "best", best_table)
