#!/usr/bin/env bash
# gpu_tag.sh - the short name of GPU 0 for results file names: "NVIDIA H200" -> "h200".
# Prints nothing (and exits 1) where nvidia-smi finds no GPU.
set -o pipefail
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 |
    sed -e 's/^NVIDIA //' -e 's/ .*//' | tr 'A-Z' 'a-z' | grep .
