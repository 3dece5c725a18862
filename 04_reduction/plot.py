#!/usr/bin/env python3
"""plot.py RESULTS.csv - GB/s against n for every kernel and CUB, one panel per element type.

The sweep CSV (make bench) holds int and float rows, problems named "int 2^20" etc. Other CSVs
in results/ (the accuracy and final-sum tables) are not plots and are skipped.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import results  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(path):
    meta, rows = results.read(path)
    if not rows or "kernel" not in rows[0] or len({r["problem"] for r in rows}) < 2:
        print("skipped", path, "(not a sweep)")
        return
    rate = results.rate_column(rows)
    types = list(dict.fromkeys(r["problem"].split()[0] for r in rows))
    kernels = list(dict.fromkeys(r["kernel"] for r in rows))
    fig, axes = plt.subplots(1, len(types), figsize=(7.5 * len(types), 6), squeeze=False, sharey=True)
    cmap = plt.get_cmap("tab20")
    for ax, t in zip(axes[0], types):
        for i, k in enumerate(kernels):
            pts = sorted((float(r["size"]), float(r[rate])) for r in rows
                         if r["kernel"] == k and r["problem"].split()[0] == t)
            if not pts:
                continue
            cub, best = k.startswith("cub"), k == "reduceVec4"
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3, label=k,
                    color="black" if cub else "crimson" if best else cmap(i % 20), linestyle="--" if cub else "-",
                    linewidth=2.2 if cub or k == "reduceVec4" else 1.2)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("n (%s elements)" % t)
        ax.set_title("%s" % t)
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
    axes[0][0].set_ylabel(rate.replace("_per_", "/") + " (n * sizeof(T) / time)")
    axes[0][-1].legend(fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.suptitle("04_reduction on %s (%s)" % (meta.get("gpu", "?"), meta.get("date", "?")[:10]))
    results.save_png(fig, path)


if __name__ == "__main__":
    path = results.csv_argument()
    main(path)
