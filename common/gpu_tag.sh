#!/usr/bin/env bash
# gpu_tag.sh - the short name of GPU 0 for results file names, one per model and form factor:
#   "NVIDIA H200" -> h200, "NVIDIA H100 80GB HBM3" -> h100, "NVIDIA H100 PCIe" -> h100-pcie,
#   "NVIDIA GeForce RTX 4090" -> rtx4090, "Tesla T4" -> t4, "NVIDIA A100-SXM4-80GB" -> a100-sxm4,
#   "NVIDIA RTX A6000" -> rtxa6000, "NVIDIA RTX 6000 Ada Generation" -> rtx6000-ada.
# A MIG slice adds its profile ("h100-mig-1g.10gb"): nvidia-smi gives it its whole GPU's name, and
# its results must not take the whole GPU's file.
# usage: common/gpu_tag.sh [NAME [MIG_PROFILE]]   (as nvidia-smi prints them; default: GPU 0's name,
# and its first MIG device's profile where it has any)
# Prints nothing (and exits 1) where nvidia-smi finds no GPU.
set -o pipefail
if [ $# -ge 1 ]; then
    name=$1 mig=${2:-}
else
    name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
    # nvidia-smi -L: "GPU 0: ...", then "  MIG 1g.10gb     Device  0: (UUID: ...)" for each slice.
    mig=$(nvidia-smi -L 2>/dev/null | awk '/^GPU / { gpus++ } gpus == 1 && $1 == "MIG" { print $2; exit }')
fi
# Lower case, '-' as a space; the vendor and brand words go.
read -r -a words <<<"$(printf '%s' "$name" | tr 'A-Z-' 'a-z ' | sed -E 's/\b(nvidia|geforce|tesla|quadro)\b//g')"
[ ${#words[@]} -gt 0 ] || exit 1
tag=${words[0]} i=1
# A family word (rtx, gtx, titan, pro) joins the words after it up to the model number.
while [[ ! $tag =~ [0-9] ]] && [ "$i" -lt ${#words[@]} ]; do tag+=${words[$i]} i=$((i + 1)); done
# Then the words that tell models of one number apart; memory sizes and the rest do not.
for w in "${words[@]:$i}"; do
    case $w in pcie | nvl | sxm* | ti | super | ada | laptop) tag+=-$w ;; esac
done
[ -n "$mig" ] && tag+=-mig-$mig
printf '%s\n' "$tag"
