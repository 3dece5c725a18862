#!/usr/bin/env bash
# profile.sh PROGRAM - shared-memory wavefronts and bank conflicts, global
# sectors per request and L1 wavefronts per store request, for every transpose
# kernel (ncu, clocks left alone); then DRAM and L2 traffic at odd shapes
# (results/<gpu>_odd_ncu.csv).
# Writes 05_transpose/results/<gpu>_ncu.csv. A 2048 x 2048 matrix is enough:
# the counts per request do not depend on the size.
# shellcheck source=common/ncu_guard.sh
. "$(dirname "$0")/../common/ncu_guard.sh" "${1:-./transpose}"  # prog, dir, gpu; exits 2 without ncu or a GPU
m=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
m=$m,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
m=$m,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
m=$m,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
# L1 wavefronts of the global stores: ncu names them ..._mem_lgds_... where L1 also serves
# distributed shared memory (Hopper and newer), ..._mem_lg_... before; "-" where it offers neither.
st_wav=$("$ncu" --query-metrics 2>/dev/null | awk '{print $1}' |
    grep -xE 'l1tex__data_pipe_lsu_wavefronts_mem_lg(ds)?_cmd_write' | sort -r | head -n 1 || true)
[ -z "$st_wav" ] || m=$m,$st_wav.sum
out=$dir/results/${gpu}_ncu.csv
new=$(ncu_staged "$out")
echo "== ncu on $prog --rows 2048 --cols 2048 (first launch of each kernel)"
"$ncu" --clock-control none --csv --metrics "$m" "$prog" --rows 2048 --cols 2048 --reps 1 --warmup 0 |
    python3 "$dir/../common/ncu_table.py" "$new" \
        smem_ld_wavefronts=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum \
        smem_st_wavefronts=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum \
        ld_bank_conflicts=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum \
        st_bank_conflicts=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum \
        gld_sectors_per_req=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum/l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum \
        gst_sectors_per_req=l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum/l1tex__t_requests_pipe_lsu_mem_global_op_st.sum \
        gst_wavefronts_per_req="${st_wav:-none}.sum/l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"
ncu_commit "$new" "$out"

# Odd shapes: why an odd number of ROWS (misaligned output rows) was slow, and
# what transposeSectorAligned changes. DRAM bytes, L2 sectors written by the
# SMs, store sectors per request, duration; first launch of each kernel.
m=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
m=$m,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_read.sum
m=$m,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for s in 8192x8192 8192x8191 8191x8192 8193x8193; do
    echo "== ncu on $prog --rows ${s%x*} --cols ${s#*x} (copyVec4, transposeSmemPadCoarse, transposeSectorAligned)"
    "$ncu" --clock-control none --csv --print-units base -k 'regex:copyVec4|PadCoarse|SectorAligned' \
        --metrics "$m" "$prog" --rows "${s%x*}" --cols "${s#*x}" --reps 1 --warmup 0 --kernel transposeSectorAligned \
        >"$tmp/$s.csv"
    "$ncu" --clock-control none --csv --print-units base -k 'regex:PadCoarse' \
        --metrics "$m" "$prog" --rows "${s%x*}" --cols "${s#*x}" --reps 1 --warmup 0 --kernel transposeSmemPadCoarse \
        >>"$tmp/$s.csv"
done
odd=$dir/results/${gpu}_odd_ncu.csv
new_odd=$(ncu_staged "$odd")
python3 - "$tmp" "$new_odd" <<'PY'
import csv, os, sys
tmp, out = sys.argv[1], sys.argv[2]
header = ["shape", "kernel", "time_us", "dram_read_MiB", "dram_write_MiB", "l2_write_sectors_M",
          "l2_read_sectors_M", "gst_sectors_per_req"]
table = []
for s in ["8192x8192", "8192x8191", "8191x8192", "8193x8193"]:
    launches = {}
    lines = [l for l in open(os.path.join(tmp, s + ".csv")) if l.startswith('"') and not l.startswith('"ID"')]
    hdr = next(l for l in open(os.path.join(tmp, s + ".csv")) if l.startswith('"ID"'))
    for row in csv.DictReader([hdr] + lines):
        name = row["Kernel Name"].split("(")[0].split("::")[-1].removeprefix("void ")
        d = launches.setdefault((name, row["ID"]), {})
        d[row["Metric Name"]] = float(row["Metric Value"].replace(",", ""))
    seen = set()
    for (name, _), d in launches.items():
        if name in seen:
            continue
        seen.add(name)
        table.append([s, name, "%.1f" % (d["gpu__time_duration.sum"] / 1e3),
                      "%.1f" % (d["dram__bytes_read.sum"] / 2**20), "%.1f" % (d["dram__bytes_write.sum"] / 2**20),
                      "%.2f" % (d["lts__t_sectors_srcunit_tex_op_write.sum"] / 1e6),
                      "%.2f" % (d["lts__t_sectors_srcunit_tex_op_read.sum"] / 1e6),
                      "%.2f" % (d["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] /
                                d["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"])])
with open(out, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(header)
    w.writerows(table)
for r in [header] + table:
    print("  ".join(r))
print("wrote", out)
PY
ncu_commit "$new_odd" "$odd"
