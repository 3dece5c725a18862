#!/usr/bin/env bash
# profile.sh PROGRAM - per kernel at 4096^3 (A and B are 64 MiB each, past the
# 60 MB L2, so DRAM bytes mean something): time, achieved FLOP/s (2 x FFMA
# executed, plus TF32 tensor ops), DRAM bytes and FLOP per DRAM byte (the roofline's x axis), global
# load sectors (LDG + LDGSTS, i.e. cp.async), shared-memory load/store
# wavefronts and bank conflicts. ncu, clocks left alone. Writes
# 01_matmul/results/<gpu>_ncu.csv (first launch of each kernel).
# shellcheck source=common/ncu_guard.sh
. "$(dirname "$0")/../common/ncu_guard.sh" "${1:-./matmul}"  # prog, dir, gpu; exits 2 without ncu or a GPU
m=gpu__time_duration.sum,sm__sass_thread_inst_executed_op_ffma_pred_on.sum,dram__bytes_read.sum,dram__bytes_write.sum
m=$m,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum
m=$m,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
m=$m,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
# The tensor-core steps' flops: TF32 math ops in the tensor path, where this ncu knows the counter.
if "$ncu" --query-metrics 2>/dev/null | grep -q '^sm__ops_path_tensor_src_tf32_dst_fp32 '; then
    m=$m,sm__ops_path_tensor_src_tf32_dst_fp32.sum
else
    echo "ncu has no sm__ops_path_tensor_src_tf32_dst_fp32: the tensor-core rows' GFLOP/s will read 0"
fi
mkdir -p "$dir/results"
args=${PROFILE_ARGS:---m 4096 --n 4096 --k 4096}
echo "== ncu on $prog $args (first launch of each kernel)"
# sgemmAutotuned's search (~200 trial launches) is not profiled: it takes the model's choice here.
out=$dir/results/${gpu}_ncu.csv
new=$(ncu_staged "$out")
MATMUL_AUTOTUNE=model "$ncu" --clock-control none --print-units base --csv --metrics "$m" "$prog" $args --reps 1 --warmup 0 |
    python3 "$dir/ncu_roofline.py" "$new"
ncu_commit "$new" "$out"
