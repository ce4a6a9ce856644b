#!/usr/bin/env python3
"""Replay test: departures taken with the next input's pass change nothing.

rocemu replay takes a packet's departure off a port's delay line together with the next
input frame when nothing else happens in the switch before that frame (no egress stage, no
incast, no fabric: emu_switch_next_change_ns()); with --timeline it goes event by event (the
timeline samples the state at every event). This test replays the same inputs through
switches where queues build (ECN marks, PFC frames out of the receiving port, tail drops on
a lossy class, headroom drops on the lossless one, a propagation delay, traffic both ways)
both ways and asserts that every output is the same byte for byte: the all-ports annotated
pcapng, a per-port pcap, the drop capture and the --stats JSON.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import roceframes  # noqa: E402

T0 = 1_700_000_000_000_000_000

PORTS = '"ports": [{"name": "p0"}, {"name": "p1"}]'
INGRESS = ('"ingress": [{"type": "parse", "trust": "dscp", "dscp_map": {"26": 3}},'
           ' {"type": "forward", "mode": "pairs", "pairs": [["p0", "p1"]]}]')
PIPELINES = {
    # lossless priority 3 with PFC, ECN at dequeue, a dynamic shared buffer, 2 us of cable
    "lossless": '{%s, %s, "tm": {"buffer": {"total_kb": 256, "mode": "dynamic", "alpha": 1,'
                ' "cell_bytes": 256}, "ports": ['
                '{"port": "p0", "rate_gbps": 10, "lossless": [3], "delay_us": 2,'
                ' "ecn": {"kmin_kb": 10, "kmax_kb": 40, "pmax": 0.5}, "pfc": {"cable_m": 3}},'
                '{"port": "p1", "rate_gbps": 10, "lossless": [3], "delay_us": 2,'
                ' "ecn": {"kmin_kb": 10, "kmax_kb": 40, "pmax": 0.5}, "pfc": {"cable_m": 3}}'
                ']}}' % (PORTS, INGRESS),
    # lossy, small static buffers, ECN at enqueue, strict priority
    "lossy": '{%s, %s, "tm": {"ports": ['
             '{"port": "p0", "rate_gbps": 25, "buffer_kb": 32, "scheduler": "strict",'
             ' "ecn": {"kmin_kb": 8, "kmax_kb": 24, "pmax": 1, "mark_at": "enqueue"}},'
             '{"port": "p1", "rate_gbps": 5, "buffer_kb": 32, "scheduler": "strict",'
             ' "ecn": {"kmin_kb": 8, "kmax_kb": 24, "pmax": 1, "mark_at": "enqueue"}}'
             ']}}' % (PORTS, INGRESS),
}


def inputs(tmp):
    """p0: bursts of 1 KB writes at 40 Gb/s (priority 3, and priority 0 every fourth),
    enough to fill p1's queue; p1: 64-byte ACKs back every 700 ns."""
    a, b = [], []
    t = 0
    psn = 0
    for burst in range(40):
        for i in range(48):
            dscp = 0 if i % 4 == 3 else 26
            a.append((t, roceframes.rc_frame(psn, payload=1024, opcode=0x0A, dscp=dscp)))
            psn += 1
            t += 215
        t += 30_000 if burst % 3 else 4_000
    end = t
    t = 100
    while t < end:
        ack = roceframes.rc_frame(psn, payload=0, opcode=0x11, qp=0x46)
        b.append((t, ack + bytes(max(0, 60 - len(ack)))))
        t += 700
    pa, pb = os.path.join(tmp, "a.pcap"), os.path.join(tmp, "b.pcap")
    roceframes.write_pcap(pa, a, T0)
    roceframes.write_pcap(pb, b, T0)
    return pa, pb, len(a) + len(b)


def run(rocemu, pipeline, pa, pb, d, timeline):
    os.makedirs(d, exist_ok=True)
    cmd = [rocemu, "replay", "--pipeline", pipeline, "--seed", "7",
           "--in", pa + ":p0", "--in", pb + ":p1",
           "--out", os.path.join(d, "all.pcapng"), "--out", os.path.join(d, "p1.pcap:p1"),
           "--drops", os.path.join(d, "drops.pcapng"), "--stats", os.path.join(d, "stats.json")]
    if timeline:
        cmd += ["--timeline", os.path.join(d, "t.csv"), "--timeline-us", "1"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return r


def main():
    rocemu, _src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    failed = 0

    def check(ok, what):
        nonlocal failed
        print(("ok   " if ok else "FAIL ") + what)
        failed += not ok

    with tempfile.TemporaryDirectory() as tmp:
        pa, pb, n_in = inputs(tmp)
        for name, text in PIPELINES.items():
            pl = os.path.join(tmp, name + ".json")
            with open(pl, "w") as f:
                f.write(text)
            res = {}
            for mode in ("late", "events"):
                d = os.path.join(tmp, name + "-" + mode)
                r = run(rocemu, pl, pa, pb, d, mode == "events")
                res[mode] = (r, d)
                check(r.returncode == 0, "%s %s: exit %d %s" % (name, mode, r.returncode,
                                                                 r.stderr.strip()[:300]))
            (rl, dl), (re_, de) = res["late"], res["events"]
            if rl.returncode or re_.returncode:
                continue
            with open(os.path.join(dl, "stats.json")) as f:
                st = json.load(f)
            ctr = {}
            for p in st.get("tm", {}).get("ports", []) if isinstance(st.get("tm"), dict) else []:
                for k, v in p.items():
                    if isinstance(v, int):
                        ctr[k] = ctr.get(k, 0) + v
            # the case is worth something: queues built (marks or drops happened)
            check(rl.stdout.count("drop") > 0 or "ecn" in rl.stdout,
                  "%s: the run marked or dropped (summary names them)" % name)
            for fn in ("all.pcapng", "p1.pcap", "drops.pcapng", "stats.json"):
                with open(os.path.join(dl, fn), "rb") as f:
                    a = f.read()
                with open(os.path.join(de, fn), "rb") as f:
                    b = f.read()
                check(a == b and len(a) > 0,
                      "%s: %s the same taken late and event by event (%d and %d bytes)"
                      % (name, fn, len(a), len(b)))
            lines_l = [x for x in rl.stdout.splitlines() if not x.startswith("replay: ")]
            lines_e = [x for x in re_.stdout.splitlines()
                       if not x.startswith("replay: ") and "timeline" not in x]
            check(lines_l == lines_e, "%s: the same summary (%d lines)" % (name, len(lines_l)))
            if lines_l != lines_e:
                for x, y in zip(lines_l, lines_e):
                    if x != y:
                        print("  late:   " + x + "\n  events: " + y)
                        break
    print("FAILED: %d checks" % failed if failed else "all checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
