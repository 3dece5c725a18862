"""results.py - read a results CSV written by common/report.hpp (stdlib only)."""
import csv
import os
import sys


def read(path):
    """Returns (metadata dict, list of row dicts) from a results CSV."""
    meta, lines = {}, []
    with open(path, newline="") as f:
        for line in f:
            if line.startswith("# "):
                key, _, value = line[2:].partition(": ")
                meta[key.strip()] = value.strip()
            elif line.strip():
                lines.append(line)
    return meta, list(csv.DictReader(lines))


def rate_column(rows):
    """The throughput column: GB_per_s, GFLOP_per_s, ..."""
    return next(k for k in rows[0] if k.endswith("_per_s"))


def peer_column(rows):
    return next(k for k in rows[0] if k.startswith("pct_of_"))


def save_png(fig, csv_path):
    """Saves a figure beside the CSV it was drawn from: results/h200.csv -> results/h200.png."""
    fig.tight_layout()
    out = os.path.splitext(csv_path)[0] + ".png"
    fig.savefig(out, dpi=110)
    print("wrote", out)


def csv_argument():
    """The one command-line argument of a plot script: the results CSV."""
    if len(sys.argv) != 2:
        sys.exit("usage: %s RESULTS.csv" % os.path.basename(sys.argv[0]))
    return sys.argv[1]
