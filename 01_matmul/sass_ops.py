#!/usr/bin/env python3
"""sass_ops.py PATTERN < cuobjdump --dump-sass output

For each function whose mangled name contains PATTERN: instruction counts of the
whole function and of its main loop (the instructions between the loop's
BAR.SYNC and the backward branch that closes it). What the README's SASS notes
come from: LDS.128 per FFMA, the FFMA share of the loop, and no LDL/STL (spills).
"""
import re
import sys
from collections import Counter


def ops(lines):
    c = Counter()
    for l in lines:
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", l)
        if m:
            c[m.group(2)] += 1
    return c


def main():
    pat = sys.argv[1]
    funcs, name, cur = {}, None, []
    for l in sys.stdin:
        m = re.search(r"Function : (\S+)", l)
        if m:
            if name:
                funcs[name] = cur
            name, cur = m.group(1), []
        elif name:
            cur.append(l)
    if name:
        funcs[name] = cur
    for f, lines in funcs.items():
        if pat not in f:
            continue
        whole = ops(lines)
        # the main loop: from the last BAR.SYNC before the backward branch with the most FFMA
        best = None
        for i, l in enumerate(lines):
            m = re.search(r"BRA (0x[0-9a-f]+)", l)
            a = re.match(r"\s*/\*([0-9a-f]+)\*/", l)
            if m and a and int(m.group(1), 16) < int(a.group(1), 16):
                target = int(m.group(1), 16)
                body = [x for x in lines[:i + 1] if re.match(r"\s*/\*([0-9a-f]+)\*/", x)
                        and int(re.match(r"\s*/\*([0-9a-f]+)\*/", x).group(1), 16) >= target]
                c = ops(body)
                if best is None or c["FFMA"] > best["FFMA"]:
                    best = c
        print(f)
        print("  function: " + " ".join("%s %d" % kv for kv in whole.most_common(12)),
              "| LDL %d STL %d" % (whole["LDL"], whole["STL"]))
        if best:
            total = sum(best.values())
            print("  main loop: %d instructions, FFMA %d (%.1f%%), LDS.128 %d: " % (
                total, best["FFMA"], 100.0 * best["FFMA"] / total, best["LDS.128"]) +
                " ".join("%s %d" % kv for kv in best.most_common(10)))


if __name__ == "__main__":
    main()
