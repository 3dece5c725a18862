#!/usr/bin/env python3
"""plot.py results/h200.csv - 01_matmul's plots, beside the CSV:

  h200.png           GFLOP/s of every kernel at every sweep shape (common/plot.py)
  h200_goals.png     per shape, the fastest kernel of each precision over its peer (fp32 and
                     3xTF32 over cuBLAS SGEMM, TF32 over cuBLAS TF32), against the goal there
                     (tables.py's goals: the same numbers as the README's goal tables)
  h200_roofline.png  a roofline from results/h200_ncu.csv (make profile): each kernel
                     at its FLOP per DRAM byte and achieved FLOP/s, under the fp32 FMA
                     and TF32 tensor peaks and the HBM bandwidth of the datasheet
"""
import csv
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "common"))
import plot as common_plot  # noqa: E402
import results  # noqa: E402
sys.path.insert(0, here)
import tables  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PEAK_GFLOPS = 66900.0  # H200 SXM fp32 FMA: 132 SMs x 128 lanes x 2 x 1.98 GHz
TF32_PEAK_GFLOPS = 494500.0  # H200 SXM TF32 tensor cores, dense (datasheet: 989 TFLOP/s with 2:4 sparsity)
DRAM_GBS = 4800.0      # HBM3e, datasheet


def roofline(csv_path):
    ncu = os.path.splitext(csv_path)[0] + "_ncu.csv"
    if not os.path.exists(ncu):
        print("no", ncu, "(make profile): no roofline")
        return
    with open(ncu, newline="") as f:
        rows = [r for r in csv.DictReader(l for l in f if not l.startswith("#"))]
    # Kernels that do arithmetic on data past the L2 (not split-K's reduction, not the 128^3 TF32 probe)
    rows = [r for r in rows if float(r["flop_per_dram_byte"]) > 0 and float(r["GFLOP_per_s"]) > 0
            and float(r["dram_MB"]) > 10]
    fig, ax = plt.subplots(figsize=(12, 6))
    xs = [10 ** (i / 20) for i in range(0, 81)]
    ax.plot(xs, [min(PEAK_GFLOPS, DRAM_GBS * x) for x in xs], color="black", linewidth=1)
    ax.text(xs[-1], PEAK_GFLOPS * 1.05, "fp32 FMA peak %.0f TFLOP/s" % (PEAK_GFLOPS / 1e3), ha="right", fontsize=8)
    ax.plot(xs, [min(TF32_PEAK_GFLOPS, DRAM_GBS * x) for x in xs], color="black", linewidth=1, linestyle="--")
    ax.text(xs[-1], TF32_PEAK_GFLOPS * 1.05, "TF32 tensor peak %.0f TFLOP/s (dense)" % (TF32_PEAK_GFLOPS / 1e3),
            ha="right", fontsize=8)
    ax.text(2, DRAM_GBS * 2 * 1.4, "HBM %.1f TB/s" % (DRAM_GBS / 1e3), fontsize=8, rotation=28)
    # Grouped as in every plot here: cuBLAS black, the seeds' kernels grey, the best one a red star.
    bases = [r["kernel"].split()[0] for r in rows]
    role_of = common_plot.roles(list(dict.fromkeys(bases)), "01_matmul")
    if "best" not in role_of.values():  # sgemmAutotuned not profiled: the fastest kernel that was
        # (not sgemm3xTf32, which executes three TF32 products per useful one)
        fastest = max((r for r, b in zip(rows, bases) if role_of[b] == "other" and b != "sgemm3xTf32"),
                      key=lambda r: float(r["GFLOP_per_s"]), default=None)
        if fastest:
            role_of[fastest["kernel"].split()[0]] = "best"
    seen_role = {}
    for r, base in sorted(zip(rows, bases), key=lambda rb: common_plot.ordered(list(dict.fromkeys(bases)),
                                                                                 role_of).index(rb[1])):
        role = role_of[base]
        i = seen_role.get(role, 0)
        seen_role[role] = i + 1
        kw = common_plot.style(r["kernel"], role, i)
        if role in ("peer", "peer2"):
            kw.update(marker="D", markersize=8, markeredgewidth=1, markerfacecolor="black")
        kw.update(linestyle="none", label="%s (%.0f)" % (r["kernel"], float(r["GFLOP_per_s"])))
        kw.pop("linewidth", None)
        ax.plot(float(r["flop_per_dram_byte"]), float(r["GFLOP_per_s"]), **kw)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("FLOP per DRAM byte (ncu dram__bytes read + write)")
    ax.set_ylabel("GFLOP/s ((2 x FFMA + TF32 tensor ops) executed / time)")
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title("01_matmul roofline (%s)" % os.path.basename(ncu))
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    out = os.path.splitext(csv_path)[0] + "_roofline.png"
    fig.savefig(out, dpi=110)
    print("wrote", out)


def goals(csv_path):
    meta, rows = results.read(csv_path)
    problems = list(dict.fromkeys(r["problem"] for r in rows))
    bests = [tables.best_of(p, {r["kernel"]: r for r in rows if r["problem"] == p}) for p in problems]
    panels = [("fp32", "fastest fp32 (FFMA) kernel / cuBLAS SGEMM"),
              ("tf32", "fastest TF32 kernel / cuBLAS TF32"),
              ("3xtf32", "sgemm3xTf32 / cuBLAS SGEMM (met: and its max error <= SGEMM's)")]
    fig, axes = plt.subplots(3, 1, figsize=(max(10, 0.55 * len(problems)), 10), sharex=True)
    xs = range(len(problems))
    for ax, (key, title) in zip(axes, panels):
        for x, b in zip(xs, bests):
            if key not in b:
                continue
            e = b[key]
            color = "#999999" if e["met"] is None else ("#2a9d3a" if e["met"] else "#d1342f")
            ax.bar(x, e["ratio"], color=color, width=0.7)
            ax.text(x, e["ratio"], "%.2f" % e["ratio"], ha="center", va="bottom", fontsize=7)
            if e["goal"] is not None:
                ax.plot([x - 0.4, x + 0.4], [e["goal"]] * 2, color="black", linewidth=2)
        ax.axhline(1.0, color="black", linewidth=0.6, linestyle=":")
        ax.set_ylabel("x peer")
        ax.set_title(title, fontsize=10, loc="left")
        ax.grid(True, axis="y", alpha=0.3)
    axes[-1].set_xticks(list(xs))
    axes[-1].set_xticklabels(problems, rotation=60, ha="right", fontsize=8)
    fig.suptitle("01_matmul against its peers and goals (black bars: the goal at that shape; green met, red not, "
                 "grey no goal), %s, %s" % (meta.get("gpu", "?"), meta.get("date", "?")[:10]), fontsize=10)
    fig.tight_layout()
    out = os.path.splitext(csv_path)[0] + "_goals.png"
    fig.savefig(out, dpi=100)
    print("wrote", out)


if __name__ == "__main__":
    path = results.csv_argument()
    common_plot.plot(path)
    roofline(path)
    goals(path)
