#!/usr/bin/env python3
"""plot.py CSV - the plots of 02_distributed_smem part 1, beside the CSV (same name, .png).

  results/<gpu>.csv          --sweep: GB/s per kernel and problem (common/plot.py's plot)
  results/<gpu>_cluster.csv  --cluster-sweep: GB/s against bins, one line per kernel and cluster size
  results/<gpu>_micro.csv    --micro: latencies, DSMEM bandwidth and atomics by cluster size, cluster.sync()
Any other CSV (e.g. part 2's <gpu>_sync.csv, which has its own plot) is left alone: exit 0.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
import plot as common_plot  # noqa: E402  (common/plot.py: log axis, peer style)
import results  # noqa: E402


def cluster_plot(path, plt):
    meta, rows = results.read(path)
    fig, ax = plt.subplots(figsize=(9.5, 5.5))
    cub = [(float(r["bins"]), float(r["GB_per_s"])) for r in rows if r["kernel"].startswith("cub")]
    ax.plot([c[0] for c in cub], [c[1] for c in cub], **common_plot.line_style("cub::DeviceHistogram", "peer", 0))
    # Two things vary: the kernel (line style and marker) and the cluster size (colour, light to
    # dark as the cluster grows: an ordered quantity gets an ordered palette).
    styles = {"clusterHist": ("-", "o"), "clusterHistVec4": ((0, (1, 1)), "s"), "clusterHistVec4Agg": ("-.", "^"),
              "clusterHistSliced": (":", "D"), "clusterHistExchange": ("--", "*")}
    cmap = plt.get_cmap("viridis_r")
    colors = {c: cmap(0.15 + 0.8 * i / 4) for i, c in enumerate((1, 2, 4, 8, 16))}
    values = [c[1] for c in cub]
    for k, (ls, mk) in styles.items():
        for c, col in colors.items():
            pts = [(float(r["bins"]), float(r["GB_per_s"])) for r in rows
                   if r["kernel"] == k and int(r["cluster"]) == c and r["result"] == "PASS"]
            if pts:
                values += [p[1] for p in pts]
                ax.plot([p[0] for p in pts], [p[1] for p in pts], linestyle=ls, marker=mk, markersize=4, color=col,
                        linewidth=1.3, label="%s, cluster %d" % (k, c))
    ax.set_xscale("log", base=2)
    ax.set_xlabel("bins (uniform samples, n from the CSV's command line)")
    common_plot.rate_axis(ax, values, "GB/s (n * 4 bytes / time)")
    ax.set_title("Histogram by cluster size on %s (%s)" % (meta.get("gpu", "?"), meta.get("date", "?")[:10]))
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    results.save_png(fig, path)


def micro_plot(path, plt):
    meta, rows = results.read(path)
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.8))
    for r in rows:  # the measure: `problem` since --micro writes through common::Report, `measure` before
        r["measure"] = r.get("measure") or r["problem"]
    lat = [r for r in rows if r["measure"].startswith("latency")]
    labels = [r["measure"].replace("latency: ", "") + ("" if r["cluster"] in ("-", "1") else " (C=%s)" % r["cluster"])
              for r in lat]
    axes[0].barh(range(len(lat)), [float(r["value"]) for r in lat], color="tab:blue")
    axes[0].set_yticks(range(len(lat)))
    axes[0].set_yticklabels([l[:48] for l in labels], fontsize=7)
    axes[0].invert_yaxis()
    axes[0].set_xscale("log")
    axes[0].set_xlabel("cycles per dependent load")
    axes[0].set_title("latency")
    for ax, prefix, unit in ((axes[1], "bandwidth", "GB/s"), (axes[2], "atomics", "Gatomic/s")):
        pts = [(int(r["cluster"]), float(r["value"])) for r in rows if r["measure"].startswith(prefix)]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color="#4c72b0")
        ax.set_xscale("log", base=2)
        ax.set_xticks([1, 2, 4, 8, 16])
        ax.set_xticklabels(["1 (local)", "2", "4", "8", "16"])
        ax.minorticks_off()
        ax.set_xlabel("cluster size")
        common_plot.rate_axis(ax, [p[1] for p in pts], unit)
        ax.set_title(prefix + " to the next block's shared memory\n(all SMs)", fontsize=10)
    sync = [(int(r["cluster"]), float(r["value"])) for r in rows if r["measure"].startswith("cluster.sync")]
    if sync:
        ax2 = axes[2].twinx()
        ax2.plot([p[0] for p in sync], [p[1] for p in sync], "r--", marker="s", label="cluster.sync() cycles")
        ax2.set_ylabel("cluster.sync() cycles", color="r")
        ax2.set_ylim(bottom=0)
    fig.suptitle("What remote shared memory costs on %s (%s)" % (meta.get("gpu", "?"), meta.get("date", "?")[:10]))
    results.save_png(fig, path)


def main():
    path = results.csv_argument()
    name = os.path.basename(path)
    ours = name.endswith(("_cluster.csv", "_micro.csv")) or "_" not in os.path.splitext(name)[0]
    if not ours:
        print("plot.py: %s is not part 1's; left alone" % path)
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    if name.endswith("_cluster.csv"):
        cluster_plot(path, plt)
    elif name.endswith("_micro.csv"):
        micro_plot(path, plt)
    elif "_" not in os.path.splitext(name)[0]:
        common_plot.plot(path, "Histogram, n = 2^28 int samples, by bins and distribution (%s)" %
                         results.read(path)[0].get("gpu", "?"))


if __name__ == "__main__":
    main()
