#!/usr/bin/env python3
"""ncu_roofline.py OUT.csv < ncu --csv output (01_matmul/profile.sh's metrics)

One row per kernel (its first launch, in launch order): time, achieved GFLOP/s
(2 x FFMA instructions executed per thread, plus the tensor cores' TF32 math ops
where profile.sh found that counter, over time), DRAM MB read + written, FLOP
per DRAM byte, global load sectors (LDG and LDGSTS = cp.async, in millions),
shared-memory load / store wavefronts (millions) and bank conflicts (millions).
Prints the table and writes OUT.csv (what plot.py draws the roofline from).
"""
import csv
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from ncu_table import first_launches, short_name as ncu_short_name  # noqa: E402


# The tensor cores' TF32 math ops (an FMA is 2), where this ncu has the counter (profile.sh asks).
TENSOR_OPS = "sm__ops_path_tensor_src_tf32_dst_fp32.sum"


def short_name(demangled):
    """cuBLAS's 'sm80_xmma_gemm_..._tilesize256x128x8_stage3_...' -> 'cuBLAS 256x128x8 stage3' (its TF32
    kernel: 'cuBLAS TF32 128x256x32 wg2x1x1');
    'sgemmCpAsync<matmul::Tile<128, 256, 32, 64, 64, 3, 1>, 1>' -> 'sgemmCpAsync 128x256x32 s3'."""
    m = re.search(r"xmma_gemm.*tilesize(\d+x\d+x\d+)_(stage\d+)", demangled)
    if m:
        return "cuBLAS %s %s" % (m.group(1), m.group(2))
    m = re.search(r"xmma_gemm_\w*tf32\w*_tilesize(\d+x\d+x\d+)_warpgroupsize(\d+x\d+x\d+)", demangled)
    if m:  # cuBLAS's TF32 kernel on Hopper: 'sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x256x32_warpgroupsize2x1x1_...'
        return "cuBLAS TF32 %s wg%s" % (m.group(1), m.group(2))
    m = re.search(r"(\w+)<matmul::Tile<(\d+), (\d+), (\d+), \d+, \d+, (\d+)", demangled)
    if m:
        return "%s %sx%sx%s s%s" % m.groups()
    m = re.search(r"(\w+)<matmul::(?:Mma|Wgmma|Split3)Tile<(\d+), (\d+)", demangled)  # the tensor-core steps
    if m:
        return "%s %s %s" % m.groups()
    return ncu_short_name(demangled)


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    launches = {}
    lines = [l for l in sys.stdin if l.startswith('"')]
    for row in csv.DictReader(lines):
        d = launches.setdefault(row["ID"], {"kernel": short_name(row["Kernel Name"])})
        try:
            v = float(row["Metric Value"].replace(",", ""))
        except ValueError:
            continue
        unit = row.get("Metric Unit", "")
        name = row["Metric Name"]
        scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "nsecond": 1, "usecond": 1e3,
                 "msecond": 1e6, "second": 1e9}.get(unit, 1)
        d[name] = v * scale
    header = ["kernel", "time_us", "GFLOP_per_s", "dram_MB", "flop_per_dram_byte", "gld_sectors_M",
              "gldgsts_sectors_M", "smem_ld_wavefronts_M", "smem_st_wavefronts_M", "ld_bank_conflicts_M",
              "st_bank_conflicts_M"]
    table = []
    for d in first_launches(launches):
        try:
            t = d["gpu__time_duration.sum"]
            flop = 2 * d["sm__sass_thread_inst_executed_op_ffma_pred_on.sum"] + d.get(TENSOR_OPS, 0)
            dram = d["dram__bytes_read.sum"] + d["dram__bytes_write.sum"]
        except KeyError:
            continue
        g = lambda k: "%.2f" % (d.get(k, 0) / 1e6)
        table.append([d["kernel"], "%.1f" % (t / 1e3), "%.0f" % (flop / t), "%.1f" % (dram / 1e6),
                      "%.1f" % (flop / dram if dram else 0),
                      g("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
                      g("l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum"),
                      g("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
                      g("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"),
                      g("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
                      g("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum")])
    width = [max(len(str(r[i])) for r in table + [header]) for i in range(len(header))]
    for r in [header] + table:
        print("  ".join(str(c).ljust(width[i]) if i == 0 else str(c).rjust(width[i]) for i, c in enumerate(r)))
    with open(argv[1], "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(table)
    print("wrote", argv[1])


if __name__ == "__main__":
    main(sys.argv)
