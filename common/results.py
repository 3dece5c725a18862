"""results.py - read a results CSV written by common/report.hpp (stdlib only)."""
import csv


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
