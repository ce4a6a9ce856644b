#!/usr/bin/env python3
"""Replay test: closed-loop 8:1 incast (pipelines/incast-closed-loop.json).

One real flow enters p0 at 1/9 of p1's 100 Gb/s (4154-byte RDMA WRITE frames, DSCP 26 ->
priority 3, for 20 ms) while a profile enables, for the same 20 ms, one source of eight
virtual 100 Gb/s senders into p1 priority 3 (lossless, PFC on, RED ECN 100-400 KB):

- pfc8: the senders honour PFC one by one. Nothing is dropped anywhere; the senders were
  paused (pauses, paused time); p1's queue sits near the senders' eight xoff thresholds; the
  real flow still gets its 1/9 (within 10%), every frame of it delivered.
- the same eight senders open loop (honour_pfc off, a copy of the pipeline): the TM drops
  their frames (tm_dropped > 0, drops by reason): what pfc8 is compared with.
- dcqcn8p: PFC and DCQCN (the DCQCN paper's parameters) on the CNPs of their CE-marked
  frames. Nothing dropped; CNPs and rate cuts happened; the senders share what the real flow
  leaves (together within 10% of 8/9 of the link, each within 25% of 1/9, Jain's index
  >= 0.95); the real flow gets its 1/9 within 10%; over the second half p1's queue is between
  Kmin / 4 and Kmax on average (the queue oscillates around the ECN thresholds instead of
  sitting at the PFC limit) and the senders were paused at least 10 times less than pfc8's.
- dcqcn8 (NVIDIA's documented defaults): nothing dropped, CNPs and cuts happened (how the
  queue behaves with those defaults is in pipelines/README.md).
- pipelines/ecmp-4x25.json's hotspot source (two virtual 25 Gb/s senders attached to leaf0,
  sending to p1, honouring PFC) with 8 real QPs from p0 at 1 Gb/s each: every hotspot frame
  crosses the one leaf0-spine link its 5-tuple hashes to (that link routed them all, the
  other three only real frames); nothing is lost; that link's queue is the deepest and its
  senders were paused; the other links still carry real traffic.
Every run's conservation holds.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pcapdump  # noqa: E402
import roceframes  # noqa: E402

T0 = 1_000_000_000_000
RUN_NS = 20_000_000
LINK_BPS = 100e9


def roce_frame(psn, payload=4096, qp=0x45, sport=0xC000):
    """Eth | IPv4 DSCP 26 ECT(0) | UDP 4791 | BTH RDMA WRITE MIDDLE | payload | ICRC (zeros)."""
    return roceframes.rc_frame(psn, payload, qp=qp, sport=sport)


failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(rocemu, d, pipeline, source, idx):
    prof = os.path.join(d, source + ".json")
    with open(prof, "w") as f:
        json.dump({"phases": [{"at_s": 0, "incast": {source: {"enabled": True}}},
                              {"at_s": RUN_NS / 1e9, "incast": {source: {"enabled": False}}}]},
                  f)
    out, st, tl = (os.path.join(d, source + x) for x in (".pcap", ".stats.json", ".csv"))
    r = subprocess.run([rocemu, "replay", "--pipeline", pipeline, "--profile", prof,
                        "--in", os.path.join(d, "in.pcap") + ":p0", "--out", out + ":p1",
                        "--stats", st, "--timeline", tl, "--timeline-us", "20"],
                       capture_output=True, text=True)
    check(r.returncode == 0, "%s: rocemu replay exit 0 (got %d: %s)" %
          (source, r.returncode, r.stderr.strip()[-300:]))
    with open(st) as f:
        stats = json.load(f)
    check(stats["conservation"]["ok"], "%s: conservation holds" % source)
    inc = stats["incast"][idx]
    assert inc["name"] == source, inc["name"]
    _, frames = pcapdump.read_pcap(out)
    # the real flow: frames from 10.0.0.1 (the virtual ones are absorbed, never in out.pcap)
    t_real = [t - T0 for t, _, p in frames if p[26:30] == bytes([10, 0, 0, 1])]
    q = []
    with open(tl) as f:
        for row in csv.DictReader(f):
            if row["port"] == "p1" and row["prio"] == "3" and row["queue_bytes"] != "":
                q.append((int(row["t_ns"]) - T0, int(row["queue_bytes"])))
    return stats, inc, t_real, q


def rate_of(times, bits, t_from, t_to):
    n = sum(1 for t in times if t_from <= t < t_to)
    return n * bits * 1e9 / (t_to - t_from)


def hotspot(rocemu, d, src):
    pipeline = os.path.join(src, "pipelines", "ecmp-4x25.json")
    frame = roce_frame(0)
    wire_bits = (len(frame) + 24) * 8
    gap = wire_bits  # ns: 1 Gb/s per QP
    frames = []
    for q in range(8):
        frames += [(int(i * gap + q * 97), roce_frame(i, qp=0x100 + q, sport=0xC000 + 7 * q))
                   for i in range(int(5_000_000 / gap))]
    frames.sort(key=lambda x: x[0])
    roceframes.write_pcap(os.path.join(d, "in.pcap"), frames, T0)
    run_ns = 5_000_000
    prof = os.path.join(d, "hotspot.json")
    with open(prof, "w") as f:
        json.dump({"phases": [{"at_s": 0, "incast": {"hotspot": {"enabled": True}}},
                              {"at_s": run_ns / 1e9, "incast": {"hotspot": {"enabled": False}}}]},
                  f)
    st = os.path.join(d, "hotspot.stats.json")
    r = subprocess.run([rocemu, "replay", "--pipeline", pipeline, "--profile", prof, "--in",
                        os.path.join(d, "in.pcap") + ":p0", "--stats", st],
                       capture_output=True, text=True)
    check(r.returncode == 0, "hotspot: rocemu replay exit 0 (got %d: %s)" %
          (r.returncode, r.stderr.strip()[-300:]))
    with open(st) as f:
        stats = json.load(f)
    check(stats["conservation"]["ok"] and stats["conservation"]["drops"] == 0,
          "hotspot: conservation holds, nothing dropped (%d)" % stats["conservation"]["drops"])
    inc = stats["incast"][0]
    c = inc["counters"]
    check(c["generated"] > 0 and c["absorbed"] == c["generated"] and c["tm_dropped"] == 0,
          "hotspot: every virtual frame reached p1 (%d of %d)" % (c["absorbed"], c["generated"]))
    links = {t["port"]: t for t in stats["tm"] if t["port"].startswith("leaf0-spine")}
    routed = {x["name"]: x["counters"]["routed"] for x in stats["fabric"]["links"]
              if x["name"] in links}
    real = len(frames)
    hot = [n for n, k in routed.items() if k >= c["generated"]]
    check(len(hot) == 1 and sum(routed.values()) == real + c["generated"],
          "hotspot: all %d virtual frames on one leaf0 uplink, %s (routed %s, %d real)" %
          (c["generated"], hot, routed, real))
    if len(hot) == 1:
        mq = {n: t["counters"]["max_queue_bytes"] for n, t in links.items()}
        check(all(mq[hot[0]] > v for n, v in mq.items() if n != hot[0]),
              "hotspot: %s's queue is the deepest (max queue bytes %s)" % (hot[0], mq))
        check(sum(1 for n, k in routed.items() if n != hot[0] and k > 0) >= 1,
              "hotspot: real QPs hashed onto the other uplinks still flow")
    check(c["pauses"] > 0, "hotspot: the senders were paused (%d), not dropped" % c["pauses"])


def main():
    rocemu, src = sys.argv[1], sys.argv[2]
    pipeline = os.path.join(src, "pipelines", "incast-closed-loop.json")
    with tempfile.TemporaryDirectory() as d:
        frame = roce_frame(0)
        wire_bits = (len(frame) + 24) * 8
        gap = wire_bits * 9 / (LINK_BPS / 1e9)  # ns: 1/9 of the link
        n_real = int(RUN_NS / gap)
        roceframes.write_pcap(os.path.join(d, "in.pcap"),
                              [(int(i * gap), roce_frame(i)) for i in range(n_real)], T0)
        with open(pipeline) as f:
            pl = json.load(f)
        kmin = pl["tm"]["ports"][1]["ecn"]["kmin_kb"] * 1024
        kmax = pl["tm"]["ports"][1]["ecn"]["kmax_kb"] * 1024
        fair = LINK_BPS / 9
        window = (RUN_NS // 2, RUN_NS)  # the second half: after the senders converged

        # pfc8: PFC alone
        stats, inc, t_real, q = run(rocemu, d, pipeline, "pfc8", 0)
        c = inc["counters"]
        check(c["tm_dropped"] == 0 and stats["conservation"]["drops"] == 0,
              "pfc8: nothing dropped (tm_dropped %d, drops %d)" %
              (c["tm_dropped"], stats["conservation"]["drops"]))
        check(c["generated"] > 0 and c["absorbed"] == c["generated"],
              "pfc8: every virtual frame left p1 (%d of %d)" % (c["absorbed"], c["generated"]))
        check(c["pauses"] > 0 and c["paused_ns"] > 0,
              "pfc8: the senders were paused (%d pauses, %.2f ms)" %
              (c["pauses"], c["paused_ns"] / 1e6))
        check(len(t_real) == n_real, "pfc8: every real frame delivered (%d of %d)" %
              (len(t_real), n_real))
        r = rate_of(t_real, wire_bits, *window)
        check(abs(r - fair) <= 0.1 * fair, "pfc8: the real flow gets %.2f Gb/s (1/9: %.2f)" %
              (r / 1e9, fair / 1e9))
        pfc_pauses = c["pauses"]
        qh = [b for t, b in q if t >= window[0] and t < window[1]]
        pfc_q = sum(qh) / len(qh)
        print("     pfc8: p1 queue %.0f KB on average over the second half" % (pfc_q / 1024))

        # the same senders open loop: dropped
        open_pl = os.path.join(d, "open.json")
        pl2 = json.loads(json.dumps(pl))
        pl2["incast"][0]["honour_pfc"] = False
        with open(open_pl, "w") as f:
            json.dump(pl2, f)
        stats, inc, t_real, q = run(rocemu, d, open_pl, "pfc8", 0)
        check(inc["counters"]["tm_dropped"] > 0 and stats["conservation"]["drops"] > 0,
              "open loop: the TM drops the senders' frames (tm_dropped %d, drops %d)" %
              (inc["counters"]["tm_dropped"], stats["conservation"]["drops"]))

        # dcqcn8p: PFC + DCQCN (paper parameters)
        stats, inc, t_real, q = run(rocemu, d, pipeline, "dcqcn8p", 2)
        c = inc["counters"]
        check(c["tm_dropped"] == 0 and stats["conservation"]["drops"] == 0,
              "dcqcn8p: nothing dropped (tm_dropped %d, drops %d)" %
              (c["tm_dropped"], stats["conservation"]["drops"]))
        check(c["cnps"] > 0 and c["rate_cuts"] > 0,
              "dcqcn8p: CNPs reached the senders (%d) and cut their rates (%d)" %
              (c["cnps"], c["rate_cuts"]))
        check(len(t_real) == n_real, "dcqcn8p: every real frame delivered (%d of %d)" %
              (len(t_real), n_real))
        r = rate_of(t_real, wire_bits, *window)
        check(abs(r - fair) <= 0.1 * fair,
              "dcqcn8p: the real flow gets %.2f Gb/s (1/9: %.2f)" % (r / 1e9, fair / 1e9))
        sent = [h["frames"] for h in inc["senders"]]
        agg = sum(sent) * wire_bits * 1e9 / RUN_NS
        check(abs(agg - 8 * fair) <= 0.1 * 8 * fair,
              "dcqcn8p: the eight senders together %.2f Gb/s (8/9: %.2f)" %
              (agg / 1e9, 8 * fair / 1e9))
        per = [s * wire_bits * 1e9 / RUN_NS for s in sent]
        check(all(abs(p - fair) <= 0.25 * fair for p in per),
              "dcqcn8p: each sender within 25%% of 1/9: %s Gb/s" %
              " ".join("%.2f" % (p / 1e9) for p in per))
        jain = sum(sent) ** 2 / (len(sent) * sum(s * s for s in sent))
        check(jain >= 0.95, "dcqcn8p: Jain's fairness index %.3f >= 0.95" % jain)
        qh = [b for t, b in q if t >= window[0] and t < window[1]]
        qm = sum(qh) / len(qh)
        check(kmin / 4 <= qm <= kmax,
              "dcqcn8p: p1 queue %.0f KB on average over the second half, between Kmin/4 "
              "(%d KB) and Kmax (%d KB); pfc8's was %.0f KB" %
              (qm / 1024, kmin / 4096, kmax / 1024, pfc_q / 1024))
        check(c["pauses"] * 10 <= pfc_pauses,
              "dcqcn8p: %d pauses, at least 10x fewer than pfc8's %d" %
              (c["pauses"], pfc_pauses))

        # dcqcn8: NVIDIA's defaults
        stats, inc, t_real, q = run(rocemu, d, pipeline, "dcqcn8", 1)
        c = inc["counters"]
        check(c["tm_dropped"] == 0 and stats["conservation"]["drops"] == 0,
              "dcqcn8: nothing dropped (tm_dropped %d)" % c["tm_dropped"])
        check(c["cnps"] > 0 and c["rate_cuts"] > 0,
              "dcqcn8: CNPs (%d) and rate cuts (%d)" % (c["cnps"], c["rate_cuts"]))
        qh = [b for t, b in q if t >= window[0] and t < window[1]]
        print("     dcqcn8: p1 queue %.0f KB on average over the second half, %d pauses, "
              "%.2f ms paused in all" % (sum(qh) / len(qh) / 1024, c["pauses"],
                                          c["paused_ns"] / 1e6))
        hotspot(rocemu, d, src)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
