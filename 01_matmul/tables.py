#!/usr/bin/env python3
"""tables.py [--check] [CHAPTER_DIR] - 01's own README tables, from results/GPU.csv.

Between <!-- goal:GPU:begin --> and <!-- goal:GPU:end -->: per shape, cuBLAS's fp32 GFLOP/s, the
fast fp32 kernels' time over cuBLAS's (each measured in the same run), the fastest fp32 kernel, and
the chapter's goal for that shape (>= 0.90 at 4096^3, >= 0.80 where M and N are >= 1024, none else).
Between <!-- tf32:GPU:... -->: the same for the tensor-core kernels against cuBLAS TF32 (>= 0.90 at
4096^3 and 8192^3, >= 0.80 where M and N are >= 1024), and sgemm3xTf32 against cuBLAS fp32.
Between <!-- accuracy:GPU:... -->: every row's error at 4096^3 (rel_max, rel_med).
--check changes nothing and exits 1 if the README differs from what the CSV gives.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import results  # noqa: E402

FAST = ["sgemmCpAsync", "sgemmStreamK", "sgemmAutotuned"]
TENSOR = ["sgemmTf32Mma", "sgemmTmaWgmma", "sgemmTmaWgmmaWide", "sgemmTmaWgmmaPersistent", "sgemmTmaWgmmaSplitK"]
SPLIT3 = "sgemm3xTf32"
PEERS = ["cublasSgemm", "cublasGemmEx TF32"]


def simt(r):
    """An fp32 SIMT row (not a peer, not a tensor-core kernel)."""
    return r["kernel"] not in PEERS and r.get("peer", "fp32") == "fp32" and r["kernel"] != SPLIT3


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
        best = min((r for r in rs.values() if simt(r)), key=lambda r: float(r["ms"]))
        best_ratio = peer_ms / float(best["ms"])
        goal = goal_of(p)
        met = "-" if goal is None else ("yes" if best_ratio >= goal else "**no**")
        out.append("| %s | %.0f | %s | `%s` %.3f | %s | %s |" % (
            p, float(peer[results.rate_column(rows)]), " | ".join("%.3f" % ratio[k] if k in ratio else "-" for k in FAST),
            best["kernel"], best_ratio, "-" if goal is None else "%.2f" % goal, met))
    return "\n".join(out)


def tf32_goal_of(problem):
    m, n, _ = (int(x) for x in problem.split("x"))
    if problem in ("4096x4096x4096", "8192x8192x8192"):
        return 0.90
    return 0.80 if m >= 1024 and n >= 1024 else None


def tf32_table(path):
    meta, rows = results.read(path)
    problems = list(dict.fromkeys(r["problem"] for r in rows))
    out = ["Tensor-core kernel time / cuBLAS TF32 time per shape, and `%s` / cuBLAS fp32 (%s, %s, `make bench`); "
           "goal: >= 0.90 at 4096^3 and 8192^3, >= 0.80 where M, N >= 1024." % (
               SPLIT3, meta.get("gpu", "?"), meta.get("date", "?")[:10]),
           "",
           "| shape | cuBLAS TF32 GFLOP/s | " + " | ".join("`%s`" % k for k in TENSOR) +
           " | fastest | goal | met | `%s` GFLOP/s | `%s` / cuBLAS fp32 |" % (SPLIT3, SPLIT3),
           "|---|---:|" + "---:|" * len(TENSOR) + "---|---:|---|---:|---:|"]
    for p in problems:
        rs = {r["kernel"]: r for r in rows if r["problem"] == p}
        if "cublasGemmEx TF32" not in rs:
            continue
        peer_ms = float(rs["cublasGemmEx TF32"]["ms"])
        ratio = {k: peer_ms / float(rs[k]["ms"]) for k in TENSOR if k in rs}
        best = max(ratio, key=ratio.get)
        goal = tf32_goal_of(p)
        met = "-" if goal is None else ("yes" if ratio[best] >= goal else "**no**")
        rate = results.rate_column(rows)
        s3 = rs.get(SPLIT3)
        out.append("| %s | %.0f | %s | `%s` %.3f | %s | %s | %s | %s |" % (
            p, float(rs["cublasGemmEx TF32"][rate]), " | ".join("%.3f" % ratio[k] if k in ratio else "-" for k in TENSOR),
            best, ratio[best], "-" if goal is None else "%.2f" % goal, met,
            "%.0f" % float(s3[rate]) if s3 else "-",
            "%.2f" % (float(rs["cublasSgemm"]["ms"]) / float(s3["ms"])) if s3 else "-"))
    return "\n".join(out)


def accuracy_table(path, problem="4096x4096x4096"):
    meta, rows = results.read(path)
    rs = [r for r in rows if r["problem"] == problem and "rel_max" in r]
    out = ["Error against the double CPU reference at %s (%s, %s, `make bench`; 1028 sampled elements), "
           "relative to `S = sum_k |a_ik b_kj|`:" % (problem, meta.get("gpu", "?"), meta.get("date", "?")[:10]),
           "",
           "| kernel | computes in | max error / S | median error / S |",
           "|---|---|---:|---:|"]
    show = PEERS + ["sgemmAutotuned"] + TENSOR + [SPLIT3]
    for k in show:
        r = next((r for r in rs if r["kernel"] == k), None)
        if r is None:
            continue
        what = "3 x TF32" if k == SPLIT3 else ("TF32" if r["peer"] == "tf32" else "fp32")
        out.append("| `%s` | %s | %s | %s |" % (k, what, r["rel_max"], r["rel_med"]))
    return "\n".join(out)


if __name__ == "__main__":
    results.update_marked_tables(sys.argv, __file__, "goal", goal_table)
    results.update_marked_tables(sys.argv, __file__, "tf32", tf32_table)
    results.update_marked_tables(sys.argv, __file__, "accuracy", accuracy_table)
