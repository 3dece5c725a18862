#!/usr/bin/env bash
# profile.sh PROGRAM - DRAM bytes, L1 and L2 traffic and shared-memory wavefronts
# for every stencil kernel and the copy (ncu, clocks left alone). Writes
# 06_constant_stencil/results/<gpu>_ncu.csv. n = 2^25 (128 MiB an array, past
# the 60 MB L2): the bytes per output do not depend on the size.
# shellcheck source=common/ncu_guard.sh
. "$(dirname "$0")/../common/ncu_guard.sh" "${1:-./constant_stencil}"  # prog, dir, gpu; exits 2 without ncu or a GPU
m=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum
m=$m,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
m=$m,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
m=$m,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum
m=$m,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active
out=$dir/results/${gpu}_ncu.csv
new=$(ncu_staged "$out")
echo "== ncu on $prog --n 2^25 (first launch of each kernel)"
"$ncu" --clock-control none --print-units base --csv --kernel-name regex:'stencil|copy' --metrics "$m" \
    "$prog" --n 33554432 --reps 1 --warmup 0 --cache-iters 1 |
    python3 "$dir/../common/ncu_table.py" "$new" \
        dram_read_B=dram__bytes_read.sum \
        dram_write_B=dram__bytes_write.sum \
        l2_to_l1_sectors=lts__t_sectors_srcunit_tex_op_read.sum \
        gld_requests=l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum \
        gld_sectors_per_req=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum/l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum \
        gld_l1_miss_sectors=l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum \
        smem_wavefronts=l1tex__data_pipe_lsu_wavefronts_mem_shared.sum \
        smem_bank_conflicts=l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum \
        warp_insts=smsp__inst_executed.sum \
        occupancy_pct=sm__warps_active.avg.pct_of_peak_sustained_active
ncu_commit "$new" "$out"
