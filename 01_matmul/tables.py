#!/usr/bin/env python3
"""tables.py [--check] [CHAPTER_DIR] - 01's own README tables, from results/GPU.csv.

Between <!-- goal:GPU:begin --> and <!-- goal:GPU:end -->: per shape, cuBLAS's fp32 GFLOP/s, the
fast fp32 kernels' time over cuBLAS's (each measured in the same run), the fastest fp32 kernel, and
the chapter's fp32 goal for that shape (FP32_GOALS).
Between <!-- tf32:GPU:... -->: the same for the tensor-core kernels against cuBLAS TF32
(TF32_GOALS), and sgemm3xTf32 against cuBLAS fp32 (SPLIT3_GOALS; met only where its largest error
is no larger than cuBLAS fp32's in the same run).
Between <!-- accuracy:GPU:... -->: every row's error at 4096^3 (rel_max, rel_med).
Between <!-- diffs:begin --> and <!-- diffs:end -->: the tensor-core steps' `diff` line counts
(`+added -removed` against the step before, or the step it names: "from step 15") and include
closures (files and lines, from `nvcc -M`), counted from the step files; the prose stays as written.
--check changes nothing and exits 1 if the README differs from what the CSV (or the step files) give.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import results  # noqa: E402

FAST = ["sgemmCpAsync", "sgemmStreamK", "sgemmAutotuned"]
TENSOR = ["sgemmTf32Mma", "sgemmTmaWgmma", "sgemmTmaWgmmaWide", "sgemmTmaWgmmaPersistent", "sgemmTmaWgmmaSplitK",
          "sgemmTmaWgmmaMulticast"]
SPLIT3 = "sgemm3xTf32"
PEERS = ["cublasSgemm", "cublasGemmEx TF32"]


def simt(r):
    """An fp32 SIMT row (not a peer, not a tensor-core kernel)."""
    return r["kernel"] not in PEERS and r.get("peer", "fp32") == "fp32" and r["kernel"] != SPLIT3


def own(r):
    """A row that timed its own kernel: not a launcher that ran the step before it ("(ran sgemmCpAsync:
    ...)"), whose second time of the same kernel would make the fastest the better of two draws."""
    return "(ran " not in r.get("launch", "")


def dims(problem):
    return [int(x) for x in problem.split("x")]


def one_short(problem):
    """Exactly one of M, N, K in 256..1023, the other two >= 1024."""
    d = dims(problem)
    return sum(256 <= x < 1024 for x in d) == 1 and sum(x >= 1024 for x in d) == 2


# The goals, per shape (None: no goal there). fp32 (FFMA kernels) / cuBLAS SGEMM:
FP32_GOALS = ">= 0.95 at 4096^3, >= 0.90 where M, N >= 1024 and K >= 256"


def goal_of(problem):
    m, n, k = dims(problem)
    if problem == "4096x4096x4096":
        return 0.95
    return 0.90 if m >= 1024 and n >= 1024 and k >= 256 else None


TF32_GOALS = ">= 1.00 where M, N, K >= 1024, >= 0.90 where one of them is 256-1023 and the others >= 1024, >= 0.80 elsewhere"


def tf32_goal_of(problem):
    if min(dims(problem)) >= 1024:
        return 1.00
    return 0.90 if one_short(problem) else 0.80


SPLIT3_GOALS = (">= 2.6 at 4096^3 and 8192^3, >= 2.0 where M, N, K >= 1024, >= 1.5 where one of them is 256-1023 "
                "and the others >= 1024, with a max error no larger than cuBLAS fp32's")


def split3_goal_of(problem):
    if problem in ("4096x4096x4096", "8192x8192x8192"):
        return 2.6
    if min(dims(problem)) >= 1024:
        return 2.0
    return 1.5 if one_short(problem) else None


def best_of(problem, rs):
    """One shape's rows (kernel -> row): per precision ("fp32", "tf32", "3xtf32"), a dict with the
    fastest kernel, its ratio to the peer (peer time / its time), the goal (None: none) and whether
    it is met; for 3xTF32 also its max error over cuBLAS fp32's (met needs both). None where the
    shape has no row for it."""
    out = {}
    fp32_ms = float(rs["cublasSgemm"]["ms"])
    best = min((r for r in rs.values() if simt(r) and own(r)), key=lambda r: float(r["ms"]))
    ratio, goal = fp32_ms / float(best["ms"]), goal_of(problem)
    out["fp32"] = dict(kernel=best["kernel"], ratio=ratio, goal=goal, met=None if goal is None else ratio >= goal)
    if "cublasGemmEx TF32" in rs and any(k in rs for k in TENSOR):
        tf32_ms = float(rs["cublasGemmEx TF32"]["ms"])
        k = min((k for k in TENSOR if k in rs and own(rs[k])), key=lambda k: float(rs[k]["ms"]))
        ratio, goal = tf32_ms / float(rs[k]["ms"]), tf32_goal_of(problem)
        out["tf32"] = dict(kernel=k, ratio=ratio, goal=goal, met=ratio >= goal)
    if SPLIT3 in rs:
        s3, fp32_err = rs[SPLIT3], float(rs["cublasSgemm"]["rel_max"])
        ratio, goal = fp32_ms / float(s3["ms"]), split3_goal_of(problem)
        err = float(s3["rel_max"]) / fp32_err if fp32_err > 0 else float("inf")
        out["3xtf32"] = dict(kernel=SPLIT3, ratio=ratio, goal=goal, err=err,
                             met=None if goal is None else ratio >= goal and err <= 1)
    return out


def met_cell(b):
    return "-" if b["met"] is None else ("yes" if b["met"] else "**no**")


def goal_table(path):
    meta, rows = results.read(path)
    problems = list(dict.fromkeys(r["problem"] for r in rows))
    out = ["Kernel time / cuBLAS time per shape (%s, %s, `make bench`); goal: %s." % (
               meta.get("gpu", "?"), meta.get("date", "?")[:10], FP32_GOALS),
           "",
           "| shape | cuBLAS GFLOP/s | " + " | ".join("`%s`" % k for k in FAST) + " | fastest | goal | met |",
           "|---|---:|" + "---:|" * len(FAST) + "---|---:|---|"]
    for p in problems:
        rs = {r["kernel"]: r for r in rows if r["problem"] == p}
        peer = rs["cublasSgemm"]
        peer_ms = float(peer["ms"])
        ratio = {k: peer_ms / float(rs[k]["ms"]) for k in FAST if k in rs}
        b = best_of(p, rs)["fp32"]
        out.append("| %s | %.0f | %s | `%s` %.3f | %s | %s |" % (
            p, float(peer[results.rate_column(rows)]), " | ".join("%.3f" % ratio[k] if k in ratio else "-" for k in FAST),
            b["kernel"], b["ratio"], "-" if b["goal"] is None else "%.2f" % b["goal"], met_cell(b)))
    return "\n".join(out)


def tf32_table(path):
    meta, rows = results.read(path)
    problems = list(dict.fromkeys(r["problem"] for r in rows))
    out = ["Tensor-core kernel time / cuBLAS TF32 time per shape (%s, %s, `make bench`); goal: %s. "
           "`%s` / cuBLAS fp32, goal: %s." % (meta.get("gpu", "?"), meta.get("date", "?")[:10], TF32_GOALS, SPLIT3,
                                              SPLIT3_GOALS),
           "",
           "| shape | cuBLAS TF32 GFLOP/s | " + " | ".join("`%s`" % k for k in TENSOR) +
           " | fastest | goal | met | `%s` GFLOP/s | `%s` / cuBLAS fp32 | its error / cuBLAS fp32's | goal | met |" % (
               SPLIT3, SPLIT3),
           "|---|---:|" + "---:|" * len(TENSOR) + "---|---:|---|---:|---:|---:|---:|---|"]
    for p in problems:
        rs = {r["kernel"]: r for r in rows if r["problem"] == p}
        if "cublasGemmEx TF32" not in rs:
            continue
        peer_ms = float(rs["cublasGemmEx TF32"]["ms"])
        ratio = {k: peer_ms / float(rs[k]["ms"]) for k in TENSOR if k in rs}
        bests = best_of(p, rs)
        b, rate = bests["tf32"], results.rate_column(rows)
        s3_cells = ["-"] * 5
        if "3xtf32" in bests:
            b3 = bests["3xtf32"]
            s3_cells = ["%.0f" % float(rs[SPLIT3][rate]), "%.2f" % b3["ratio"], "%.2f" % b3["err"],
                        "-" if b3["goal"] is None else "%.1f" % b3["goal"], met_cell(b3)]
        out.append("| %s | %.0f | %s | `%s` %.3f | %.2f | %s | %s |" % (
            p, float(rs["cublasGemmEx TF32"][rate]), " | ".join("%.3f" % ratio[k] if k in ratio else "-" for k in TENSOR),
            b["kernel"], b["ratio"], b["goal"], met_cell(b), " | ".join(s3_cells)))
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


def step_file(chapter, n):
    return glob.glob(os.path.join(chapter, "steps", "%02d_*.cuh" % n))[0]


def diff_counts(old, new):
    """(lines added, lines removed) in `diff old new`, as `diff | grep -c '^>'` counts them."""
    out = subprocess.run(["diff", old, new], capture_output=True, text=True).stdout.splitlines()
    return sum(l.startswith(">") for l in out), sum(l.startswith("<") for l in out)


def include_closure(chapter, path):
    """(files, lines): the repository files `path` includes, itself included (nvcc -M from the root)."""
    root = os.path.join(chapter, "..")
    deps = subprocess.run(["nvcc", "-M", "-I.", "-x", "cu", os.path.relpath(path, root)], cwd=root,
                          capture_output=True, text=True, check=True).stdout
    tokens = {os.path.normpath(t) for t in re.findall(r"[^\s:\\]+", deps)}  # "./common/x.cuh" -> "common/x.cuh"
    files = sorted(t for t in tokens if re.match(r"(common|01_matmul)/", t))
    return len(files), sum(sum(1 for _ in open(os.path.join(root, f))) for f in files)


def update_diffs_table(argv, chapter_file):
    """The counted columns of the README's diffs table (nothing to do without nvcc: said, not failed)."""
    check, readme_path, readme = results.chapter_readme(argv, chapter_file)
    chapter = os.path.dirname(readme_path)
    m = re.search(r"<!-- diffs:begin -->\n(.*?)<!-- diffs:end -->", readme, re.S)
    if m is None:
        return
    if shutil.which("nvcc") is None:
        print("%s: no nvcc, the diffs table's include closures not counted" % readme_path)
        return
    rows = []
    for line in m.group(1).splitlines():
        cells = line.split(" | ")
        step = re.match(r"\| (\d+) `", line)
        if step and len(cells) == 4:
            n = int(step.group(1))
            against = re.match(r"\+\d+ -\d+( from step (\d+))?$", cells[1])
            if against:
                before = int(against.group(2)) if against.group(2) else n - 1
                cells[1] = "+%d -%d" % diff_counts(step_file(chapter, before), step_file(chapter, n)) + (
                    against.group(1) or "")
            cells[3] = "%d files, %d lines |" % include_closure(chapter, step_file(chapter, n))
            line = " | ".join(cells)
        rows.append(line)
    new = readme[:m.start(1)] + "\n".join(rows) + "\n" + readme[m.end(1):]
    results.write_or_check(readme_path, readme, new, check, "the diffs table is not what the step files give")


if __name__ == "__main__":
    results.update_marked_tables(sys.argv, __file__, "goal", goal_table)
    results.update_marked_tables(sys.argv, __file__, "tf32", tf32_table)
    results.update_marked_tables(sys.argv, __file__, "accuracy", accuracy_table)
    update_diffs_table(sys.argv, __file__)
