#!/usr/bin/env bash
# profile.sh PROGRAM - Nsight Compute's shared-memory counters for every kernel
# launch of `PROGRAM --ncu`, beside the bank model's prediction for the same
# launch: requests, wavefronts and bank conflicts, loads and stores. The tile
# kernels run as one block (the seeds' setup), the stride sweep with a short
# loop, then PROBES random address patterns (default 384). Writes
# 03_bank_conflicts/results/<gpu>_ncu.csv and exits 1 if any count differs (then the committed
# CSV is left as it was and this run's table stays in build/profile/03_bank_conflicts/).
# shellcheck source=common/ncu_guard.sh
. "$(dirname "$0")/../common/ncu_guard.sh" "${1:-./bank_conflicts}"  # prog, dir, gpu; exits 2 without ncu or a GPU
m=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
m=$m,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
m=$m,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum
log=$(mktemp)
trap 'rm -f "$log"' EXIT
args="--ncu --tiles 1 --iters 64 --probe ${PROBES:-384}"
echo "== ncu --clock-control none on $prog $args"
"$ncu" --clock-control none --csv --metrics "$m" "$prog" $args >"$log"
out=$dir/results/${gpu}_ncu.csv
new=$(ncu_staged "$out")
python3 "$dir/ncu_compare.py" "$log" "$new"
ncu_commit "$new" "$out"
