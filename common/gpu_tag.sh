#!/usr/bin/env bash
# gpu_tag.sh - the short name of the GPU for results file names, one per model and form factor:
#   "NVIDIA H200" -> h200, "NVIDIA H100 80GB HBM3" -> h100, "NVIDIA H100 PCIe" -> h100-pcie,
#   "NVIDIA GeForce RTX 4090" -> rtx4090, "Tesla T4" -> t4, "NVIDIA A100-SXM4-80GB" -> a100-sxm4,
#   "NVIDIA RTX A6000" -> rtxa6000, "NVIDIA RTX 6000 Ada Generation" -> rtx6000-ada.
# A MIG slice adds its profile ("h100-mig-1g.10gb"): nvidia-smi gives it its whole GPU's name, and
# its results must not take the whole GPU's file.
# usage: common/gpu_tag.sh [NAME [MIG_PROFILE]]   (as nvidia-smi prints them; default: the GPU the
# programs run on, device 0 of CUDA_VISIBLE_DEVICES, and its first MIG device's profile where it has any)
# Which GPU that is: the first entry of CUDA_VISIBLE_DEVICES where it is a UUID (GPU-..., MIG-...);
# else CUDA's device 0, which is the fastest GPU, not nvidia-smi's GPU 0, unless
# CUDA_DEVICE_ORDER=PCI_BUS_ID: where the GPUs are not all one model and neither says which, it
# prints why on stderr and names none rather than file one GPU's results under another's name.
# Prints nothing (and exits 1) where nvidia-smi finds no GPU. NVIDIA_SMI replaces nvidia-smi (tests).
set -o pipefail
smi=${NVIDIA_SMI:-nvidia-smi}
if [ $# -ge 1 ]; then
    name=$1 mig=${2:-}
else
    # nvidia-smi -L: "GPU 0: NAME (UUID: GPU-...)", then "  MIG 1g.10gb     Device  0: (UUID: MIG-...)"
    # for each slice. One line a GPU: NAME|GPU-uuid|first MIG profile|profile=MIG-uuid ...
    gpus=$("$smi" -L 2>/dev/null | awk '
        function flush() { if (name != "") print name "|" uuid "|" first "|" migs }
        /^GPU [0-9]+: / { flush(); line = $0; sub(/^GPU [0-9]+: /, "", line)
                          uuid = line; sub(/.*\(UUID: /, "", uuid); sub(/\).*/, "", uuid)
                          name = line; sub(/ \(UUID: .*/, "", name); first = ""; migs = "" }
        $1 == "MIG" { u = $NF; sub(/\)$/, "", u); if (first == "") first = $2; migs = migs " " $2 "=" u }
        END { flush() }') || exit 1
    [ -n "$gpus" ] || exit 1
    want=${CUDA_VISIBLE_DEVICES-0}
    want=${want%%,*} want=${want// /}
    case $want in
        "") exit 1 ;;  # CUDA_VISIBLE_DEVICES= : no GPU visible
        MIG-GPU-*) echo "gpu_tag.sh: CUDA_VISIBLE_DEVICES=$want: name the slice by its MIG UUID (nvidia-smi -L)" >&2
                   exit 1 ;;
        GPU-*) pick=$(printf '%s\n' "$gpus" | awk -F'|' -v w="$want" 'index($2, w) == 1')
               mig=${pick#*|*|} mig=${mig%%|*} ;;
        MIG-*) pick=$(printf '%s\n' "$gpus" | awk -F'|' -v w="=$want" 'index($4, w) > 0')
               mig=$(printf '%s\n' "${pick##*|}" | tr ' ' '\n' | awk -F= -v w="$want" 'index($2, w) == 1 { print $1 }') ;;
        *[!0-9]*) echo "gpu_tag.sh: CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES: not an index or a UUID" >&2; exit 1 ;;
        *) if [ "${CUDA_DEVICE_ORDER:-}" != PCI_BUS_ID ] &&
                  [ "$(printf '%s\n' "$gpus" | cut -d'|' -f1,3 | sort -u | wc -l)" -gt 1 ]; then
               echo "gpu_tag.sh: GPUs of different models (or MIG layouts) here, and CUDA's device $want is the fastest-first order's," \
                    "not nvidia-smi's: set CUDA_VISIBLE_DEVICES to the GPU's UUID (nvidia-smi -L)" \
                    "or CUDA_DEVICE_ORDER=PCI_BUS_ID" >&2
               exit 1
           fi
           pick=$(printf '%s\n' "$gpus" | sed -n "$((10#$want + 1))p")
           mig=${pick#*|*|} mig=${mig%%|*} ;;
    esac
    [ -n "$pick" ] || { echo "gpu_tag.sh: no GPU $want (nvidia-smi -L)" >&2; exit 1; }
    # A UUID's prefix (CUDA takes one) must name one GPU, and one slice.
    if [ "$(printf '%s\n' "$pick" | wc -l)" -gt 1 ] || [ "$(printf '%s\n' "$mig" | wc -l)" -gt 1 ]; then
        echo "gpu_tag.sh: CUDA_VISIBLE_DEVICES=$want matches more than one GPU or slice" >&2
        exit 1
    fi
    name=${pick%%|*}
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
