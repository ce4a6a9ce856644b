#!/usr/bin/env python3
"""Instructions per packet of the switch, by function, from a callgrind profile.

    valgrind --tool=callgrind --collect-atstart=no \
        --toggle-collect=emu_switch_rx --toggle-collect=emu_switch_tx_prepare \
        --toggle-collect=emu_switch_tx_done --callgrind-out-file=OUT \
        BUILD/tests/bench/bench_switch --epochs 3 --epoch-ms 100
    tests/bench/callgrind_per_packet.py OUT [N] [--packets P]

Only the switch's own work is collected (no net_null, no bench loop). The packet count is
the number of calls into the parser (roce_parse_partial, _dp, _min and _qp, and the
whole-frame roce_parse, _dp, _min and _qp) from outside it: every packet is parsed once. Prints the total and the N (default 20) most expensive functions,
self cost (callees not included), each divided by that count. Works on bench_fabric,
bench_reorder and bench_impair too (their sides are driven through the same three calls).
Where the parse is inline in the parse stage (the bump's class-only parse since 2026-12-02)
there is no call to count: give the packets with --packets P, from bench_switch's
"bump switch: P packets received in all" line of the same run (with --only bump or tm; the
warm-up and the drain included, as the profile).
"""
import collections
import re
import sys

PARSERS = ("roce_parse_partial", "roce_parse_partial_dp", "roce_parse_partial_min",
           "roce_parse_partial_qp", "roce_parse", "roce_parse_dp", "roce_parse_min",
           "roce_parse_qp")


def main():
    args = sys.argv[1:]
    given = None
    if "--packets" in args:
        i = args.index("--packets")
        if i + 1 >= len(args) or not args[i + 1].isdigit() or int(args[i + 1]) == 0:
            sys.exit("--packets: a packet count above 0")
        given = int(args[i + 1])
        del args[i:i + 2]
    if len(args) < 1:
        sys.exit(__doc__)
    sys.argv = [sys.argv[0]] + args
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    names, self_ir, calls_to = {}, collections.Counter(), collections.Counter()
    cur = cfn = pending = None
    with open(sys.argv[1]) as fh:
        for line in fh:
            m = re.match(r"^(fn|cfn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
            if m:
                kind, idx, name = m.groups()
                if name:
                    names[idx] = name
                if kind == "fn":
                    cur = idx
                else:
                    cfn = idx
                continue
            if line.startswith("calls="):
                pending = int(line.split("=")[1].split()[0])
                continue
            m = re.match(r"^(?:[+-]?\d+|\*) (\d+)$", line.rstrip("\n"))
            if m and cur is not None:
                if pending is not None:  # the cost line of a call: the callee's, not ours
                    # a parser calling another (roce_parse -> roce_parse_partial) is one parse
                    if names.get(cur) not in PARSERS:
                        calls_to[cfn] += pending
                    pending = None
                else:
                    self_ir[cur] += int(m.group(1))
    by_name = {v: k for k, v in names.items()}
    pkts = given if given is not None else sum(calls_to[by_name[n]] for n in PARSERS
                                               if n in by_name)
    if pkts == 0:
        sys.exit("no call into the parser in this profile (the parse inline?): give the "
                 "packets with --packets P")
    total = sum(self_ir.values())
    print("packets %d, instructions %d, per packet %.1f" % (pkts, total, total / pkts))
    for idx, v in self_ir.most_common(top):
        print("%8.1f  %s" % (v / pkts, names.get(idx, idx)))


if __name__ == "__main__":
    main()
