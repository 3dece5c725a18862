#!/usr/bin/env bash
# profile.sh PROGRAM - shared-memory wavefronts and bank conflicts, and global
# sectors per request, for every transpose kernel (ncu, clocks left alone).
# Writes 05_transpose/results/<gpu>_ncu.csv. A 2048 x 2048 matrix is enough:
# the counts per request do not depend on the size.
set -euo pipefail
prog=${1:-./transpose}
dir=$(dirname "$0")
gpu=$("$(dirname "$0")/../common/gpu_tag.sh")
m=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
m=$m,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
m=$m,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
m=$m,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
echo "== ncu on $prog --rows 2048 --cols 2048 (first launch of each kernel)"
${NCU:-ncu} --clock-control none --csv --metrics "$m" "$prog" --rows 2048 --cols 2048 --reps 1 --warmup 0 |
    python3 "$dir/../common/ncu_table.py" "$dir/results/${gpu}_ncu.csv" \
        smem_ld_wavefronts=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum \
        smem_st_wavefronts=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum \
        ld_bank_conflicts=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum \
        st_bank_conflicts=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum \
        gld_sectors_per_req=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum/l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum \
        gst_sectors_per_req=l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum/l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
