#!/usr/bin/env python3
"""plot.py CSV - the chapter's plots, saved beside the CSV as .png.

results/<gpu>.csv: GB/s against n, one line per kernel (common/plot.py).
results/<gpu>_constant_cache.csv: time per warp-wide read against the number of
different addresses the warp asks for, __constant__ vs __ldg.
"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "common"))
import plot as common_plot  # noqa: E402
import results  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def plot_cache(path):
    meta, rows = results.read(path)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for k in dict.fromkeys(r["kernel"] for r in rows):
        pts = sorted((float(r["size"]), float(r["ns/load/SM"])) for r in rows if r["kernel"] == k)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=k)
    ds = sorted({float(r["size"]) for r in rows})
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xticks(ds)
    ax.set_xticklabels(["%d" % d for d in ds])
    ax.set_yticks([0.5, 1, 2, 4, 8, 16, 32, 64])
    ax.set_yticklabels(["0.5", "1", "2", "4", "8", "16", "32", "64"])
    ax.set_ylim(0.5, 64)
    ax.set_xlabel("different addresses per warp-wide read")
    ax.set_ylabel("ns per warp-wide read, per SM")
    ax.grid(True, alpha=0.3, which="both")
    ax.set_title("constant cache vs read-only cache on %s (%s)" % (meta.get("gpu", "?"), meta.get("date", "?")[:10]))
    ax.legend(fontsize=9)
    results.save_png(fig, path)


if __name__ == "__main__":
    path = results.csv_argument()
    if path.endswith("_constant_cache.csv"):
        plot_cache(path)
    else:
        common_plot.plot(path)
