# ncu_guard.sh - sourced by every NN_name/profile.sh: refuse early, and never destroy results.
#
#   . "$(dirname "$0")/../common/ncu_guard.sh" PROGRAM
#                              strict mode (set -euo pipefail); sets prog=PROGRAM, dir (the
#                              chapter's folder) and gpu (the results tag, e.g. h200); runs
#                              ncu_preflight
#   ncu_preflight              one line and exit 2 without ncu ($NCU, default ncu) or without a GPU
#                              (nvidia-smi -L fails), before anything runs
#   new=$(ncu_staged FINAL)    where to write this run's table: build/profile/<chapter>/<file>,
#                              not the committed CSV
#   ncu_commit NEW FINAL       replace FINAL by NEW, only when NEW holds a header and at least one
#                              row; else say so, keep FINAL, exit 1
# A script that stops early (set -e: ncu failed, the program failed, a table did not match)
# leaves FINAL as it was; what it wrote stays in build/profile/ to look at.
ncu=${NCU:-ncu}

ncu_preflight() {
    command -v "$ncu" >/dev/null 2>&1 || {
        echo "$(basename "$(dirname "$0")")/profile.sh: $ncu (Nsight Compute) not found: it comes with the CUDA" \
             "Toolkit; put its bin/ on PATH or set NCU=/path/to/ncu. Results left as they are."
        exit 2
    }
    nvidia-smi -L >/dev/null 2>&1 || {
        echo "$(basename "$(dirname "$0")")/profile.sh: no GPU found (nvidia-smi -L fails). Results left as they are."
        exit 2
    }
    # Counters may need admin rights (ncu: ERR_NVGPUCTRPERM): one kernel at the small size says
    # so before the real runs print pages of the same error.
    local args="" probe
    [ -f "$dir/sanitize.args" ] && args=$(grep -v -E '^[[:space:]]*(#|$)' "$dir/sanitize.args" | head -n 1)
    # shellcheck disable=SC2086
    probe=$("$ncu" --launch-count 1 --metrics sm__cycles_elapsed.sum "$prog" $args 2>&1 || true)
    if grep -q ERR_NVGPUCTRPERM <<<"$probe"; then
        echo "$(basename "$(dirname "$0")")/profile.sh: ncu may not read the GPU's performance counters here" \
             "(ERR_NVGPUCTRPERM): run as root, or enable them for all users as NVIDIA explains at" \
             "https://developer.nvidia.com/ERR_NVGPUCTRPERM. Results left as they are."
        exit 2
    fi
}

ncu_staged() {
    local final=$1 chapter root
    chapter=$(dirname "$(dirname "$final")")
    root=$(dirname "$chapter")
    mkdir -p "$root/build/profile/$(basename "$chapter")"
    local new
    new="$root/build/profile/$(basename "$chapter")/$(basename "$final")"
    rm -f "$new"
    echo "$new"
}

ncu_commit() {
    local new=$1 final=$2 rows
    rows=$(grep -cv '^#' "$new" 2>/dev/null || true)
    if [ "${rows:-0}" -lt 2 ]; then
        echo "profile: $new has no kernel rows: $final left as it was"
        exit 1
    fi
    mkdir -p "$(dirname "$final")"
    mv -f "$new" "$final"
    echo "replaced $final ($((rows - 1)) rows)"
}

set -euo pipefail
prog=$1
dir=$(dirname "$0")
ncu_preflight
gpu=$("$dir/../common/gpu_tag.sh")
