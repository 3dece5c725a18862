#!/usr/bin/env python3
"""plot.py CSV - throughput for each problem of a sweep, a marker per kernel, saved as CSV's name .png.

The x axis is the problems in the order the sweep ran them (a category each, so a 8191x8193
shape does not sit on top of 8192x8192): markers, not lines, and the kernels side by side
within a category. The y axis is the rate column (GB/s or GFLOP/s), logarithmic where the
values span more than 10x. The series are grouped so that three things are found at a glance:
the peer (black bar, "the number to reach"), the tutorials' seed kernels (grey), the best
kernel (bold red star); the other kernels in a few muted colours. A chapter with a plot of its
own keeps it in NN_name/plot.py and uses style() and rate_axis() from here.
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator  # noqa: E402

# Per chapter: the tutorials' starting kernels (see the top README's Sources), the kernel the
# chapter ends with, and peers beyond the one the CSV's pct_of_ column is relative to.
SEEDS = {
    "01_matmul": ["MatMulKernelNaive", "MatMulKernel", "MatMulKernelTiled"],
    "02_distributed_smem": ["histSmemStatic", "histSmem"],
    "04_reduction": ["reduceNeighbored", "reduceGmem", "reduceSmem"],
    "05_transpose": ["copyGmem", "naiveGmem", "naiveGmemStridedRead", "transposeSmem"],
    "06_constant_stencil": ["stencil1DGlobal", "stencil1DConstant"],
    "07_shuffle": ["matvecGmemCache", "matvecSmem", "matvecShuffle"],
}
BEST = {
    "01_matmul": "sgemmAutotuned",
    "02_distributed_smem": "clusterHistBest",
    "04_reduction": "reduceBulkCopy",
    "05_transpose": "transposeSectorAligned",
    "06_constant_stencil": "stencil1DL1Vec4",
    "07_shuffle": "matvecShuffleTuned",
}
OTHER_PEERS = {"02_distributed_smem": ["histGlobalAtomics"]}
PEER_PREFIXES = ("cuda", "copy", "cub", "cublas")

GREYS = ["#8c8c8c", "#b0b0b0", "#6e6e6e", "#a0a0a0"]
MUTED = ["#4c72b0", "#55a868", "#8172b2", "#ccb974", "#64b5cd"]  # seaborn "muted"-like, five hues
MARKERS = "o^sDv<>ph"


def chapter_of(csv_path):
    """results/h200.csv of 05_transpose -> "05_transpose"."""
    return os.path.basename(os.path.dirname(os.path.dirname(os.path.abspath(csv_path))))


def is_peer(kernel, chapter):
    return kernel.lower().startswith(PEER_PREFIXES) or kernel in OTHER_PEERS.get(chapter, [])


def roles(kernels, chapter, rows=None):
    """{kernel: "peer" | "peer2" | "seed" | "best" | "other"}: "peer" is the peer the CSV's pct_of_
    column is relative to (100% on every row; else the first peer), "peer2" any other. Without a
    BEST entry, the best kernel is the non-peer one with the highest mean log rate."""
    seeds = SEEDS.get(chapter, [])
    peers = [k for k in kernels if k not in seeds and is_peer(k, chapter)]
    primary = peers[0] if peers else None
    if rows and peers:
        pct = next((c for c in rows[0] if c.startswith("pct_of_")), None)

        def is_100(v):
            try:
                return abs(float(v) - 100) < 0.05
            except ValueError:
                return False
        exact = [k for k in peers if pct and all(is_100(r[pct]) for r in rows if r["kernel"] == k)]
        primary = exact[0] if exact else primary
    out = {}
    for k in kernels:
        out[k] = ("peer" if k == primary else "peer2") if k in peers else "seed" if k in seeds else "other"
    best = BEST.get(chapter)
    if best not in out and rows:
        rate = results.rate_column(rows)
        score = {}
        for k in (k for k in kernels if out[k] == "other"):
            v = [float(r[rate]) for r in rows if r["kernel"] == k and r.get("result", "PASS") == "PASS"]
            if v and min(v) > 0:
                score[k] = sum(math.log(x) for x in v) / len(v)
        best = max(score, key=score.get) if score else None
    if best in out:
        out[best] = "best"
    return out


def style(kernel, role, index):
    """matplotlib keyword arguments for one series: index counts the series of the same role."""
    if role == "peer":
        return dict(color="black", marker="_", markersize=22, markeredgewidth=2.6, linestyle="--", linewidth=2.2,
                    zorder=5, label=kernel + " (peer)")
    if role == "peer2":
        return dict(color="#333333", marker="_", markersize=16, markeredgewidth=1.6, linestyle=":", linewidth=1.6,
                    zorder=4, label=kernel + " (peer)")
    if role == "seed":
        return dict(color=GREYS[index % len(GREYS)], marker="osD^"[index % 4], markersize=6, markerfacecolor="none",
                    markeredgewidth=1.4, linestyle="-", linewidth=1.0, zorder=2, label=kernel + " (seed)")
    if role == "best":
        return dict(color="crimson", marker="*", markersize=12, markeredgecolor="darkred", linestyle="-",
                    linewidth=2.8, zorder=6, label=kernel + " (best)")
    return dict(color=MUTED[index % len(MUTED)], marker=MARKERS[(index // len(MUTED) + index) % len(MARKERS)],
                markersize=5, alpha=0.85, linestyle="-", linewidth=1.1, zorder=3, label=kernel)


def line_style(kernel, role, index):
    """style() for a series drawn as a line over a numeric x: the peers get a small round marker."""
    kw = style(kernel, role, index)
    if role in ("peer", "peer2"):
        kw.update(marker="o", markersize=4, markeredgewidth=1)
    return kw


def ordered(kernels, role_of):
    """Legend and drawing order: peers, best, others, seeds."""
    rank = {"peer": 0, "peer2": 1, "best": 2, "other": 3, "seed": 4}
    return sorted(kernels, key=lambda k: (rank[role_of[k]], kernels.index(k)))


def _plain(v, _pos=None):
    return ("%g" % v) if v < 1e5 else "%.0fk" % (v / 1e3)


def rate_axis(ax, values, label):
    """A log y axis with plain-number ticks where max/min > 10, else linear from 0."""
    values = [v for v in values if v > 0]
    ax.set_ylabel(label)
    if values and max(values) / min(values) > 10:
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
        ax.yaxis.set_major_formatter(FuncFormatter(_plain))
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, p: ""))
        ax.set_ylim(min(values) / 1.4, max(values) * 1.4)
        ax.set_ylabel(label + " (log scale)")
    else:
        ax.set_ylim(bottom=0)
    ax.grid(True, axis="y", which="major", alpha=0.3)


def plot(path, title=None, xlabel="problem", ylabel=None):
    meta, rows = results.read(path)
    rate = results.rate_column(rows)
    chapter = chapter_of(path)
    kernels = list(dict.fromkeys(r["kernel"] for r in rows))
    problems = list(dict.fromkeys(r["problem"] for r in rows))
    role_of = roles(kernels, chapter, rows)
    fig, ax = plt.subplots(figsize=(10.5, 5.8))
    drawn = [k for k in ordered(kernels, role_of)]
    seen_role = {}
    spread = 0.8  # the part of a category's width the non-peer kernels are spread over
    movers = [k for k in kernels if role_of[k] not in ("peer", "peer2")]
    for k in drawn:
        role = role_of[k]
        i = seen_role.get(role, 0)
        seen_role[role] = i + 1
        kw = style(k, role, i)
        kw["linestyle"] = "none"  # categories: markers only
        kw.pop("linewidth", None)
        dx = 0.0 if k not in movers else (movers.index(k) + 0.5) / len(movers) * spread - spread / 2
        pts = [(problems.index(r["problem"]) + dx, float(r[rate])) for r in rows if r["kernel"] == k]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], **kw)
    ax.set_xticks(range(len(problems)))
    ax.set_xticklabels(problems, rotation=30, ha="right", fontsize=8)
    ax.set_xlim(-0.6, len(problems) - 0.4)
    for x in range(len(problems) - 1):
        ax.axvline(x + 0.5, color="#e4e4e4", linewidth=0.8, zorder=0)
    ax.set_xlabel(xlabel)
    rate_axis(ax, [float(r[rate]) for r in rows], ylabel or rate.replace("_per_", "/"))
    ax.set_title(title or "%s on %s (%s)" % (chapter, meta.get("gpu", "?"), meta.get("date", "?")[:10]))
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5), numpoints=1)
    results.save_png(fig, path)


if __name__ == "__main__":
    path = results.csv_argument()
    plot(path)
