#!/usr/bin/env python3
"""tables.py [--check] [CHAPTER_DIR] - 05's own README table, from results/GPU.csv.

Between <!-- best:GPU:begin --> and <!-- best:GPU:end -->: per shape, the fastest transpose
before transposeSectorAligned existed (the transpose kernels above it in the CSV, which lists them
in teaching order) and the fastest of all, of the rows that PASSed,
each as a fraction of copyVec4 measured in the same run. --check changes nothing and exits 1
if the README differs from what the CSV gives. Standard library only.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import results  # noqa: E402

NEW = "transposeSectorAligned"


def best_table(path):
    meta, rows = results.read(path)
    problems = list(dict.fromkeys(r["problem"] for r in rows))
    out = ["Best transpose / `copyVec4` per shape (%s, %s, `make bench`): before = the fastest of the kernels "
           "above `%s`, after = the fastest of all." % (meta.get("gpu", "?"), meta.get("date", "?")[:10], NEW),
           "",
           "| shape | before: kernel | before / copy | after: kernel | after / copy |",
           "|---|---|---:|---|---:|"]
    for p in problems:
        rs = [r for r in rows if r["problem"] == p]
        copy = float(next(r for r in rs if r["kernel"] == "copyVec4")["ms"])
        tr = [r for r in rs if r["kernel"].startswith("transpose")]
        above = tr[:[r["kernel"] for r in tr].index(NEW)]
        cells = [p]
        # Only rows that passed (a failed or unlaunched kernel's time counts for nothing) and ran
        # their own kernel: a float4 kernel at a shape it cannot take runs transposeSmemPadCoarse,
        # and its launch column says "(coarse: ...)".
        for cand in (above, tr):
            best = min((r for r in cand if r["result"] == "PASS" and "(coarse:" not in r["launch"]),
                       key=lambda r: float(r["ms"]), default=None)
            cells += ["`%s`" % best["kernel"], "%.3f" % (copy / float(best["ms"]))] if best else ["-", "-"]
        out.append("| %s |" % " | ".join(cells))
    return "\n".join(out)


if __name__ == "__main__":
    results.update_marked_tables(sys.argv, __file__, "best", best_table)
