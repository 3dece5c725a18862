#!/usr/bin/env python3
"""plot.py RESULTS.csv - cost of a shared-memory request against its bank-conflict degree.

Reads the stride sweep rows of a bank_conflicts results CSV (readStrideThroughput and
readStrideLatency at strides 1..32: conflict degree gcd(stride, 32)) and saves RESULTS.png:
left, SM cycles per warp request with 32 warps per SM reading (throughput); right, cycles
per request of one warp whose every read waits for the previous one (latency). Then
rewrites the chapter README's own tables (tables.py) from the same CSVs.
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import results  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def sweep_points(rows, kernel):
    pts = []
    for r in rows:
        if r["kernel"] != kernel or r["result"] != "PASS":
            continue
        stride = int(float(r["size"]))
        if stride > 32:
            continue
        pts.append((math.gcd(stride, 32), float(r["cyc/req"]), stride))
    return sorted(pts)


def plot(path):
    meta, rows = results.read(path)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6))
    for ax, kernel, title in ((axes[0], "readStrideThroughput", "throughput: 32 warps per SM"),
                              (axes[1], "readStrideLatency", "latency: one warp, dependent reads")):
        pts = sweep_points(rows, kernel)
        if not pts:
            continue
        degrees = sorted({p[0] for p in pts})
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=22, color="#8c8c8c", alpha=0.7, zorder=3,
                   label="strides 1..32")
        med = [sorted(p[1] for p in pts if p[0] == d)[len([p for p in pts if p[0] == d]) // 2] for d in degrees]
        ax.plot(degrees, med, marker="o", color="crimson", linewidth=2, label="measured (median)")
        base = med[0]
        if kernel == "readStrideThroughput":
            ax.plot(degrees, [base * d for d in degrees], linestyle="--", color="black",
                    label="%.2f x degree (one wavefront per cycle)" % base)
        else:
            slope = (med[-1] - med[0]) / (degrees[-1] - degrees[0])
            ax.plot(degrees, [base + slope * (d - 1) for d in degrees], linestyle="--", color="black",
                    label="%.0f + %.2f x (degree - 1)" % (base, slope))
        ys = [p[1] for p in pts]
        if max(ys) / min(ys) > 10:  # 1 to 32 cycles: log-log, where "proportional" is still a straight line
            ax.set_xscale("log", base=2)
            ax.set_yscale("log", base=2)
            ticks = [2 ** i for i in range(int(math.log2(min(ys))), int(math.log2(max(ys))) + 2)]
            ax.set_yticks(ticks)
            ax.set_yticklabels([str(t) for t in ticks])
            ax.set_ylabel("SM cycles per request (log scale)")
        else:
            ax.set_ylim(bottom=0)
            ax.set_ylabel("SM cycles per request")
        ax.set_xticks(degrees)
        ax.set_xticklabels([str(d) for d in degrees])
        ax.minorticks_off()
        ax.set_xlabel("bank-conflict degree = wavefronts per request")
        ax.grid(True, alpha=0.3)
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=8)
    fig.suptitle("Cost of bank conflicts on %s (%s)" % (meta.get("gpu", "?"), meta.get("date", "?")[:10]))
    results.save_png(fig, path)


if __name__ == "__main__":
    path = results.csv_argument()
    plot(path)
    import tables  # noqa: E402  (beside this file)
    tables.main([os.path.dirname(os.path.dirname(os.path.abspath(path)))])
