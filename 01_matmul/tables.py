#!/usr/bin/env python3
"""tables.py [--check] [CHAPTER_DIR] - 01's own README table, from results/GPU.csv.

Between <!-- goal:GPU:begin --> and <!-- goal:GPU:end -->: per shape, cuBLAS's GFLOP/s, the
fast kernels' time over cuBLAS's (each measured in the same run), the fastest kernel, and the
chapter's goal for that shape (>= 0.90 at 4096^3, >= 0.80 where M and N are >= 1024, none else).
--check changes nothing and exits 1 if the README differs from what the CSV gives.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import results  # noqa: E402

FAST = ["sgemmCpAsync", "sgemmStreamK", "sgemmAutotuned"]


def goal_of(problem):
    m, n, _ = (int(x) for x in problem.split("x"))
    if problem == "4096x4096x4096":
        return 0.90
    return 0.80 if m >= 1024 and n >= 1024 else None


def goal_table(path):
    meta, rows = results.read(path)
    problems = list(dict.fromkeys(r["problem"] for r in rows))
    out = ["Kernel time / cuBLAS time per shape (%s, %s, `make bench`); goal: >= 0.90 at 4096^3, "
           ">= 0.80 where M, N >= 1024." % (meta.get("gpu", "?"), meta.get("date", "?")[:10]),
           "",
           "| shape | cuBLAS GFLOP/s | " + " | ".join("`%s`" % k for k in FAST) + " | fastest | goal | met |",
           "|---|---:|" + "---:|" * len(FAST) + "---|---:|---|"]
    for p in problems:
        rs = {r["kernel"]: r for r in rows if r["problem"] == p}
        peer = rs["cublasSgemm"]
        peer_ms = float(peer["ms"])
        ratio = {k: peer_ms / float(rs[k]["ms"]) for k in FAST if k in rs}
        best = min((r for k, r in rs.items() if k != "cublasSgemm"), key=lambda r: float(r["ms"]))
        best_ratio = peer_ms / float(best["ms"])
        goal = goal_of(p)
        met = "-" if goal is None else ("yes" if best_ratio >= goal else "**no**")
        out.append("| %s | %.0f | %s | `%s` %.3f | %s | %s |" % (
            p, float(peer[results.rate_column(rows)]), " | ".join("%.3f" % ratio[k] if k in ratio else "-" for k in FAST),
            best["kernel"], best_ratio, "-" if goal is None else "%.2f" % goal, met))
    return "\n".join(out)


if __name__ == "__main__":
    results.update_marked_tables(sys.argv, __file__, "goal", goal_table)
