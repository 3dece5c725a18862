#!/usr/bin/env python3
"""plot.py CSV - y = A x GB/s for every kernel against the matrix shape (1 GiB shapes from wide to
skinny, then the small one), with cub::DeviceReduce::Sum over the same bytes dashed. Saved beside
the CSV as .png. GB/s: A and x read once, y written once (CUB: A read once)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import results  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def plot(path):
    meta, rows = results.read(path)
    rate = results.rate_column(rows)
    problems = list(dict.fromkeys(r["problem"] for r in rows))
    kernels = list(dict.fromkeys(r["kernel"] for r in rows))
    fig, ax = plt.subplots(figsize=(10, 5.5))
    for k in kernels:
        pts = [(problems.index(r["problem"]), float(r[rate])) for r in rows if r["kernel"] == k]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=k,
                linestyle="--" if k.startswith("cub") else "-", color="black" if k.startswith("cub") else None)
    ax.set_xticks(range(len(problems)))
    ax.set_xticklabels(problems, rotation=30, ha="right", fontsize=8)
    ax.set_xlabel("A: rows x cols (double)")
    ax.set_ylabel("GB/s (A, x read once, y written once; CUB: A)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.set_title("07_shuffle: y = A x on %s (%s)" % (meta.get("gpu", "?"), meta.get("date", "?")[:10]))
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5))
    results.save_png(fig, path)


if __name__ == "__main__":
    path = results.csv_argument()
    plot(path)
