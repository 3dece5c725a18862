#!/usr/bin/env python3
"""plot.py RESULTS.csv - GB/s against n for every kernel and CUB, one panel per element type.

The sweep CSV (make bench) holds int and float rows, problems named "int 2^20" etc. Other CSVs
in results/ (the accuracy and final-sum tables) are not plots and are skipped.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import plot as common_plot  # noqa: E402  (roles and styles: peer, seeds, best, others)
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
    role_of = common_plot.roles(kernels, "04_reduction", rows)
    for ax, t in zip(axes[0], types):
        seen_role = {}
        for k in common_plot.ordered(kernels, role_of):
            pts = sorted((float(r["size"]), float(r[rate])) for r in rows
                         if r["kernel"] == k and r["problem"].split()[0] == t)
            if not pts:
                continue
            i = seen_role.get(role_of[k], 0)
            seen_role[role_of[k]] = i + 1
            kw = common_plot.line_style(k, role_of[k], i)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], **kw)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("n (%s elements)" % t)
        ax.set_title("%s" % t)
        common_plot.rate_axis(ax, [float(r[rate]) for r in rows], rate.replace("_per_", "/") + " (n * sizeof(T) / time)")
    for ax in axes[0][1:]:
        ax.set_ylabel("")
    axes[0][-1].legend(fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.suptitle("04_reduction on %s (%s)" % (meta.get("gpu", "?"), meta.get("date", "?")[:10]))
    results.save_png(fig, path)


if __name__ == "__main__":
    path = results.csv_argument()
    main(path)
