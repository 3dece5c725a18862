#!/usr/bin/env python3
"""tables.py [--check] [CHAPTER_DIR] - the chapter README's own tables, from its results CSVs.

Between <!-- wavefronts:GPU:begin --> and <!-- wavefronts:GPU:end -->: every tile kernel's
shared load/store wavefronts from the seed's table, the bank model and Nsight Compute
(results/GPU_ncu.csv, one block), with its time for one block and for the default number
of tiles (results/GPU.csv). Between <!-- strides:GPU:begin --> and <!-- strides:GPU:end -->:
the stride sweep. Standard library only; --check changes nothing and exits 1 if the README
differs from what the CSVs give. (common/readme_table.py writes the results:GPU table.)
"""
import csv
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import results  # noqa: E402

# Seed 000's ncu table (load, store transactions) and nsys time (ns) for one block.
SEED = {
    "writeRowReadRow": (32, 32, 1248), "writeColReadCol": (1024, 1024, 1920),
    "writeColReadRow": (32, 1024, 1280), "writeRowReadCol": (1024, 32, 1280),
    "writeRowReadColDynamic": (1024, 32, 1280), "writeRowReadColPadding": (32, 32, 896),
    "writeRowReadColDynPad": (32, 32, 896),
    "writeRowReadRowRect": (16, 16, 1119), "writeColReadColRect": (256, 256, 1248),
    "writeColReadRowRect": (16, 256, 928), "writeRowReadColRect": (256, 16, 992),
    "writeRowReadColDynamicRect": (256, 16, 960), "writeRowReadColPaddingRect": (16, 16, 896),
    "writeRowReadColDynPadRect": (16, 16, 896),
}


def read_ncu(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def wavefront_table(chapter, gpu):
    meta, rows = results.read(os.path.join(chapter, "results", gpu + ".csv"))
    ncu = read_ncu(os.path.join(chapter, "results", gpu + "_ncu.csv"))
    default = meta.get("default_problem")
    rate = results.rate_column(rows)
    timing = {(r["problem"], r["kernel"]): r for r in rows}
    out = ["Shared-memory wavefronts of one block (load / store): the seed's ncu table, the bank model, and "
           "Nsight Compute on %s (`make profile`); time of one block (`1 tiles`) and of %s (`make bench`)." % (
               meta.get("gpu", "?"), default),
           "",
           "| kernel | seed ld/st | model ld/st | ncu ld/st | ncu conflicts ld/st | model = ncu | "
           "seed ns, 1 block | ms, 1 block | ms, %s | %% of peer |" % default,
           "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|"]
    for r in ncu:
        k = r["kernel"]
        if "/" in k:
            continue
        seed = SEED.get(k)
        one, big = timing.get(("1 tiles", k)), timing.get((default, k))
        out.append("| `%s` | %s | %s/%s | %s/%s | %s/%s | %s | %s | %s | %s | %s |" % (
            k, "%d/%d" % seed[:2] if seed else "-", r["model_ld_wf"], r["model_st_wf"], r["ncu_ld_wf"],
            r["ncu_st_wf"], r["ncu_ld_conf"], r["ncu_st_conf"], r["match"], seed[2] if seed else "-",
            "%.4f" % float(one["ms"]) if one else "-", "%.4f" % float(big["ms"]) if big else "-",
            ("%.1f%%" % float(big["pct_of_peer"])) if big and big["pct_of_peer"] else "-"))
    sweep = [r for r in ncu if "/" in r["kernel"]]
    probes = [r for r in sweep if r["kernel"].startswith("probe/")]
    strides = [r for r in sweep if not r["kernel"].startswith("probe/")]
    out.append("")
    out.append("Also checked by `make profile`: %d stride-sweep launches (%d match) and %d random probe patterns "
               "of 4-, 8- and 16-byte loads and stores (%d match): requests, wavefronts and bank conflicts, "
               "loads and stores, every count equal." % (
                   len(strides), sum(r["match"] == "yes" for r in strides), len(probes),
                   sum(r["match"] == "yes" for r in probes)))
    return "\n".join(out)


def stride_table(chapter, gpu):
    meta, rows = results.read(os.path.join(chapter, "results", gpu + ".csv"))
    rate = results.rate_column(rows)
    by = {}
    for r in rows:
        if r["kernel"].startswith("readStride"):
            by.setdefault(int(float(r["size"])), {})[r["kernel"]] = r
    out = ["Stride sweep on %s: lane l reads word l x stride. Throughput: one block of 32 warps per SM, SM cycles "
           "per warp request and the bandwidth the lanes got; latency: one warp, each read waiting for the last." % (
               meta.get("gpu", "?")),
           "",
           "| stride | model wavefronts (degree) | 8-byte-bank mode | throughput cyc/req | %s | %% of stride 1 | "
           "latency cyc/req | result |" % rate.replace("_per_", "/"),
           "|---:|---:|---:|---:|---:|---:|---:|---|"]
    for s in sorted(by):
        t, l = by[s].get("readStrideThroughput"), by[s].get("readStrideLatency")
        base = t or l
        out.append("| %d | %s | %s | %s | %s | %s | %s | %s |" % (
            s, base["ld wf/req"], base["8B-mode ld"], t["cyc/req"] if t else "-",
            "%.0f" % float(t[rate]) if t else "-", ("%.1f%%" % float(t["pct_of_peer"])) if t and t["pct_of_peer"] else "-",
            l["cyc/req"] if l else "-",
            "PASS" if all(x["result"] == "PASS" for x in (t, l) if x) else "FAIL"))
    return "\n".join(out)


def render(text, chapter):
    for kind, make in (("wavefronts", wavefront_table), ("strides", stride_table)):
        pattern = re.compile(r"(<!-- %s:([\w.-]+):begin -->\n).*?(<!-- %s:\2:end -->)" % (kind, kind), re.S)
        text = pattern.sub(lambda m: m.group(1) + make(chapter, m.group(2)) + "\n" + m.group(3), text)
    return text


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    chapter = args[0] if args else os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(chapter, "README.md")
    if not os.path.exists(path):
        return 0
    with open(path) as f:
        old = f.read()
    new = render(old, chapter)
    if new == old:
        return 0
    if check:
        print("%s: tables differ from the results CSVs; run `make plots CHAPTERS=%s`" % (path, os.path.basename(chapter)))
        return 1
    with open(path, "w") as f:
        f.write(new)
    print("updated", path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
