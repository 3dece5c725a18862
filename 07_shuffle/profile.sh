#!/usr/bin/env bash
# profile.sh PROGRAM - DRAM bytes and global-load efficiency of every y = A x
# kernel and of the CUB peer (ncu, clocks left alone), at the default 1 GiB
# matrix. Writes 07_shuffle/results/<gpu>_ncu.csv. What to look at: dram_read_MB
# against the 1024 MiB the byte model counts (x, y and re-reads are the rest),
# and bytes per load request (8-byte vs 16-byte loads).
# shellcheck source=common/ncu_guard.sh
. "$(dirname "$0")/../common/ncu_guard.sh" "${1:-./shuffle}"  # prog, dir, gpu; exits 2 without ncu or a GPU
m=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
m=$m,l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
m=$m,sm__warps_active.avg.pct_of_peak_sustained_active
out=$dir/results/${gpu}_ncu.csv
new=$(ncu_staged "$out")
echo "== ncu on $prog --rows 16384 --cols 8192 (first launch of each matvec kernel and of CUB's reduce)"
"$ncu" --clock-control none --csv --print-units base -k 'regex:matvec|DeviceReduce' --metrics "$m" \
    "$prog" --rows 16384 --cols 8192 --reps 1 --warmup 0 |
    python3 "$dir/../common/ncu_table.py" "$new" \
        time_ns=gpu__time_duration.sum \
        dram_read_B=dram__bytes_read.sum \
        dram_write_B=dram__bytes_write.sum \
        ld_bytes_per_req=l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum/l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum \
        warps_active_pct=sm__warps_active.avg.pct_of_peak_sustained_active
ncu_commit "$new" "$out"
