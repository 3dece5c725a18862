#!/usr/bin/env python3
"""plot.py CSV - y = A x GB/s for every kernel against the matrix shape (1 GiB shapes from wide to
skinny, then the small one), with cub::DeviceReduce::Sum over the same bytes as the peer (black
bar). Saved beside the CSV as .png. GB/s: A and x read once, y written once (CUB: A read once)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import results  # noqa: E402

import plot as common_plot  # noqa: E402  (common/plot.py: markers per shape, peer / seeds / best grouped)


def plot(path):
    meta, _ = results.read(path)
    common_plot.plot(path, "07_shuffle: y = A x on %s (%s)" % (meta.get("gpu", "?"), meta.get("date", "?")[:10]),
                     xlabel="A: rows x cols (double)", ylabel="GB/s (A, x read once, y written once; CUB: A)")


if __name__ == "__main__":
    path = results.csv_argument()
    plot(path)
