#!/usr/bin/env bash
# profile.sh PROGRAM - global load/store requests and sectors (32-byte
# "transactions") of the block-per-chunk kernels, as in seed 000's table:
# 2^24 ints, 128-thread blocks. Writes 04_reduction/results/<gpu>_ncu.csv.
# A sector count is the traffic between the SM and L1/L2: the in-place
# kernels' tree shows up here, not in DRAM bytes.
# shellcheck source=common/ncu_guard.sh
. "$(dirname "$0")/../common/ncu_guard.sh" "${1:-./reduction}"  # prog, dir, gpu; exits 2 without ncu or a GPU
ld=l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
st=l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
out=$dir/results/${gpu}_ncu.csv
new=$(ncu_staged "$out")
echo "== ncu on $prog --type int --n 16777216 (first launch of each kernel)"
"$ncu" --clock-control none --csv --kernel-name regex:'reduce(Neighbored|Gmem|Smem)' \
    --metrics "$ld,$st,dram__bytes_read.sum,gpu__time_duration.sum" \
    "$prog" --type int --n 16777216 --reps 1 --warmup 0 |
    python3 "$dir/../common/ncu_table.py" "$new" \
        gld_requests=l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum \
        gld_sectors=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum \
        gst_requests=l1tex__t_requests_pipe_lsu_mem_global_op_st.sum \
        gst_sectors=l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum \
        dram_read_bytes=dram__bytes_read.sum \
        time_ns=gpu__time_duration.sum
ncu_commit "$new" "$out"
