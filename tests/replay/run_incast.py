#!/usr/bin/env python3
"""Replay test: incast load from virtual senders (pipelines/dcqcn-lab.json, source onoff8).

The input is generated here (stdlib only): p0 sends 400 RoCEv2 RDMA WRITE frames (DSCP 26 ->
priority 3, ECT(0)) towards p1, 200 in the first 2 ms and 200 from t0 + 1 s. A profile enables
onoff8 (8 senders x 25 Gb/s of 4154-byte frames, 100 us on / 400 us off, into p1 priority 3) at
t0 + 0.5 ms and disables it at t0 + 1.0015 s. The input starts at 1000 s: time zero of the run
is the first frame, not the epoch.
Asserts: the number of virtual frames is exactly what the schedule gives
(k x 33424e9 / 200e9 ns < 100 us per cycle, one cycle every 500 us); all were absorbed, none
dropped; every real frame was transmitted; the TM marked real frames too (the incast holds p1's
queue above Kmin); conservation counts the virtual frames as created and consumed; the replay
ends (the sources stop with the profile)."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import roceframes  # noqa: E402

T0 = 1_000_000_000_000  # 1000 s, in ns


def roce_frame(psn, payload=1024):
    """Eth | IPv4 DSCP 26 ECT(0) | UDP 4791 | BTH RDMA WRITE MIDDLE | payload | ICRC (zeros)."""
    return roceframes.rc_frame(psn, payload)


def expected_virtual(enable_ns, disable_ns):
    wire_bits = (4154 + 24) * 8
    per_cycle = 0
    while per_cycle * wire_bits * 10**9 // (8 * 25 * 10**9) < 100_000:
        per_cycle += 1
    cycles = 0
    while enable_ns + cycles * 500_000 < disable_ns:
        cycles += 1
    return per_cycle * cycles


def main():
    rocemu, src = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as d:
        inp, out, st = (os.path.join(d, n) for n in ("in.pcap", "out.pcap", "stats.json"))
        prof = os.path.join(d, "profile.json")
        times = list(range(0, 2_000_000, 10_000)) + \
            list(range(1_000_000_000, 1_002_000_000, 10_000))
        roceframes.write_pcap(inp, [(t, roce_frame(psn)) for psn, t in enumerate(times)], T0)
        with open(prof, "w") as f:
            json.dump({"phases": [
                {"at_s": 0.0005, "incast": {"onoff8": {"enabled": True}}},
                {"at_s": 1.0015, "incast": {"onoff8": {"enabled": False}}}]}, f)
        r = subprocess.run([rocemu, "replay", "--pipeline",
                            os.path.join(src, "pipelines", "dcqcn-lab.json"), "--profile", prof,
                            "--in", inp + ":p0", "--out", out + ":p1", "--stats", st],
                           capture_output=True, text=True, timeout=240)
        print(r.stdout)
        if r.returncode != 0:
            print(r.stderr)
            print("FAIL: rocemu replay exited with %d" % r.returncode)
            return 1
        with open(st) as f:
            stats = json.load(f)
    fails = []

    def check(cond, what):
        print("%s %s" % ("ok  " if cond else "FAIL", what))
        if not cond:
            fails.append(what)

    inc = {s["name"]: s for s in stats["incast"]}
    c = inc["onoff8"]["counters"]
    want = expected_virtual(500_000, 1_001_500_000)
    check(c["generated"] == want, "onoff8 generated %d, schedule gives %d" % (c["generated"], want))
    check(c["bytes"] == 4154 * want, "onoff8 bytes %d" % c["bytes"])
    check(c["absorbed"] == want and c["tm_dropped"] == 0 and c["incast_nombuf"] == 0,
          "all absorbed, none dropped")
    check(inc["incast8"]["counters"]["generated"] == 0, "incast8 stayed off")
    p1 = [p for p in stats["ports"] if p["name"] == "p1"][0]
    check(p1["tx_pkts"] == 400, "p1 transmitted the 400 real frames (%d)" % p1["tx_pkts"])
    tm1 = [t for t in stats["tm"] if t["port"] == "p1"][0]["counters"]
    real_marked = tm1["ecn_marked"] - c["ecn_marked"]
    check(c["ecn_marked"] > 0 and real_marked > 0,
          "ECN marks: %d virtual, %d real" % (c["ecn_marked"], real_marked))
    check(tm1["max_queue_bytes"] > 100 * 1024, "p1 queue above Kmin (%d)" % tm1["max_queue_bytes"])
    cons = stats["conservation"]
    check(cons["ok"] and cons["created"] == want and cons["consumed"] == want,
          "conservation %s" % cons)
    check(stats["runner"]["profile_changes"] == 2, "two profile changes")
    check("incast onoff8 -> p1 prio 3" in r.stdout, "summary line")
    print("%d failed" % len(fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
