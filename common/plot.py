#!/usr/bin/env python3
"""plot.py CSV - throughput for each problem of a sweep, one line per kernel, saved as CSV's name .png.

The x axis is the problems in the order the sweep ran them (a category each, so a 8191x8193
shape does not sit on top of 8192x8192); the y axis the rate column (GB/s or GFLOP/s). Baselines
(cudaMemcpy, copies, CUB, cuBLAS) are dashed. A chapter with a plot of its own keeps it in
NN_name/plot.py.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def plot(path, title=None):
    meta, rows = results.read(path)
    rate = results.rate_column(rows)
    kernels = list(dict.fromkeys(r["kernel"] for r in rows))
    problems = list(dict.fromkeys(r["problem"] for r in rows))
    colors = plt.get_cmap("tab20").colors
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for i, k in enumerate(kernels):
        pts = [(problems.index(r["problem"]), float(r[rate])) for r in rows if r["kernel"] == k]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="osD^v<>"[i % 7], label=k, color=colors[i % 20],
                linestyle="--" if k.lower().startswith(("cuda", "copy", "cub", "cublas")) else "-")
    ax.set_xticks(range(len(problems)))
    ax.set_xticklabels(problems, rotation=30, ha="right", fontsize=8)
    ax.set_xlabel("problem")
    ax.set_ylabel(rate.replace("_per_", "/"))
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.set_title(title or "%s on %s (%s)" % (os.path.basename(os.path.dirname(os.path.dirname(os.path.abspath(path)))),
                                           meta.get("gpu", "?"), meta.get("date", "?")[:10]))
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5))
    results.save_png(fig, path)


if __name__ == "__main__":
    path = results.csv_argument()
    plot(path)
