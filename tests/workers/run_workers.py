#!/usr/bin/env python3
"""rocemu live on several worker lcores, on vdevs (no namespaces needed; root for EAL).

  run_workers.py ROCEMU SRC qp-order   per-QP frame sequences out of 1 and 2 workers are equal
  run_workers.py ROCEMU SRC ring-full  a ring between workers overfilled: named drop, summary
                                       line, --strict exit status, conservation
  run_workers.py ROCEMU SRC pfc-rx     PFC frames received on a port whose egress another
                                       worker owns pause that egress
  run_workers.py ROCEMU SRC capture    capture stages on 2 workers: one file, every frame,
                                       in time order, per-QP order as 1 worker's
  run_workers.py ROCEMU SRC learning   a learning bridge of 4 ports on 2 workers: a MAC
                                       learned on one worker is known to the other

qp-order: 16 RC QPs A -> B (WRITE, 200 PSNs each) and their 16 ACK QPs B -> A, interleaved,
split per port into two RX queue files by a hash of (destination IP, DestQP), as RSS keeps a QP
on one queue, and fed through net_pcap (2 RX queues a port, one pcap each, read once). The
pipeline has no random or timing-dependent stage: parse, forward, a PSN-targeted drop on each
direction, a TM that never drops. Runs: 1 worker; 2 workers as the default map gives them
(each port's queue 0 polled by the owner of the other port, queue 1 by the other worker, which
hands its frames over a ring); 2 workers with every frame crossing a ring (--rxq-map); 2
workers with one RX queue a port (all its frames in one file) and --rx-spread, which sends the
QPs whose hash is the other worker's to its ingress over a ring. Every
run's per-QP PSN sequences on each port's output must equal the 1-worker run's, without the
targeted PSNs; the 2-worker runs must have handed frames over.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "replay"))
from roceframes import ip_cksum, write_pcap  # noqa: E402
from pcapdump import read_pcap  # noqa: E402
import capfile  # noqa: E402

N_QP = 16
N_PSN = 200
DROPS = {(2, 0x105): 17, (1, 0x203): 40}  # (dst host, DestQP) -> PSN dropped by impair


def frame(src, dst, qp, psn, opcode, payload):
    bth = struct.pack(">BBHII", opcode, 0, 0xFFFF, qp, psn & 0xFFFFFF)
    if opcode == 0x11:
        bth += struct.pack(">I", 0x1F << 24 | psn)  # AETH: an ACK with its MSN
    udp = struct.pack(">HHHH", 0xC000 + (qp & 0xFF), 4791, 8 + len(bth) + payload + 4, 0)
    ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 26 << 2, 20 + len(udp) + len(bth) +
                               payload + 4, 0, 0x4000, 64, 17, 0, bytes([10, 0, 0, src]),
                               bytes([10, 0, 0, dst])))
    ip[10:12] = struct.pack(">H", ip_cksum(bytes(ip)))
    eth = bytes([2, 0, 0, 0, 0, dst, 2, 0, 0, 0, 0, src]) + b"\x08\x00"
    return eth + bytes(ip) + udp + bth + bytes(payload) + bytes(4)


def queue_of(dst, qp):
    """The software RSS stand-in: a hash of (destination IP, DestQP) over 2 queues."""
    return ((dst * 2654435761) ^ (qp * 40503)) >> 3 & 1


def make_inputs(tmp):
    """Port 0 receives A's data (to 10.0.0.2), port 1 B's ACKs (to 10.0.0.1)."""
    files = {}
    for port, (src, dst, base, op, size) in enumerate(((1, 2, 0x100, 0x07, 256),
                                                       (2, 1, 0x200, 0x11, 0))):
        qs = [[], []]
        every = []
        t = 0
        for psn in range(N_PSN):
            for k in range(N_QP):
                qp = base + k
                qs[queue_of(dst, qp)].append((t, frame(src, dst, qp, psn, op, size)))
                every.append(qs[queue_of(dst, qp)][-1])
                t += 1000
        for q in (0, 1):
            path = os.path.join(tmp, "in%d_q%d.pcap" % (port, q))
            write_pcap(path, qs[q])
            files[(port, q)] = path
        # the port's frames in one file, for one RX queue (--rx-spread)
        path = os.path.join(tmp, "in%d_all.pcap" % port)
        write_pcap(path, every)
        files[(port, "all")] = path
    return files


PIPELINE = {
    "description": "run_workers qp-order: no random or timing-dependent stage",
    "ports": [{"name": "p0", "dev": "net_pcap0"}, {"name": "p1", "dev": "net_pcap1"}],
    "ingress": [
        {"type": "parse"},
        {"type": "forward", "mode": "pairs", "pairs": [["p0", "p1"]]},
        {"type": "impair", "events": [
            {"name": "a_psn17", "action": "drop", "match": {"dest_qp": 0x105, "psn": 17}},
            {"name": "b_psn40", "action": "drop", "match": {"dest_qp": 0x203, "psn": 40}},
        ]},
    ],
    "tm": {"buffer": {"total_kb": 65536},
           "ports": [{"port": "p0", "rate_gbps": 1600, "buffer_kb": 32768},
                     {"port": "p1", "rate_gbps": 1600, "buffer_kb": 32768}]},
}


def run_ok(cmd, tag):
    """Run rocemu; fail the test (with its output) unless it exits 0 with conservation OK."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if p.returncode != 0 or "conservation: " not in p.stdout or \
            ": OK" not in p.stdout.split("conservation: ")[1]:
        print(p.stdout[-3000:], p.stderr[-2000:])
        raise SystemExit("FAIL: %s: rocemu exited %d or conservation not OK" %
                         (tag, p.returncode))
    return p


def lcores(n):
    return ["-l", "0-1"] if n == 1 else ["--lcores", "0@(0,1),1@0,2@1"]


def run(rocemu, tmp, tag, n, files, extra=(), single=False):
    """single: one RX queue a port, fed the port's frames in one file (--rx-spread)."""
    out = [os.path.join(tmp, "%s_out%d.pcap" % (tag, p)) for p in (0, 1)]
    stats = os.path.join(tmp, tag + ".json")
    rx = ["rx_pcap=%s" % files[(p, "all")] if single else
          "rx_pcap=%s,rx_pcap=%s" % (files[(p, 0)], files[(p, 1)]) for p in (0, 1)]
    cmd = [rocemu] + lcores(n) + [
        "--no-huge", "-m", "1024", "--no-pci", "--file-prefix=rw%d_%s" % (os.getpid(), tag),
        "--log-level=lib.eal:error",
        "--vdev", "net_pcap0,%s,tx_pcap=%s" % (rx[0], out[0]),
        "--vdev", "net_pcap1,%s,tx_pcap=%s" % (rx[1], out[1]),
        "--", "--pipeline", os.path.join(tmp, "pipeline.json"), "--workers", str(n),
        "--rx-queues", "1" if single else "2", "--duration", "3", "--stats", stats] + \
        list(extra)
    p = run_ok(cmd, tag)
    return out, json.load(open(stats)), p.stdout


def sequences(path):
    """{(dst host, DestQP): [PSN, ...]} in the order the port sent them."""
    seq = {}
    for _ts, _len, b in read_pcap(path)[1]:
        if len(b) < 54 or b[12:14] != b"\x08\x00" or b[23] != 17:
            continue
        dst, qp = b[33], struct.unpack(">I", b[46:50])[0] & 0xFFFFFF
        seq.setdefault((dst, qp), []).append(struct.unpack(">I", b[50:54])[0] & 0xFFFFFF)
    return seq


def qp_order(rocemu, tmp):
    files = make_inputs(tmp)
    with open(os.path.join(tmp, "pipeline.json"), "w") as f:
        json.dump(PIPELINE, f)
    base, s1, _ = run(rocemu, tmp, "w1", 1, files)
    ref = [sequences(base[0]), sequences(base[1])]
    errs = []
    # the reference itself: every QP whole, in PSN order, less the targeted PSN
    for p, direction in ((1, "A -> B"), (0, "B -> A")):
        if len(ref[p]) != N_QP:
            errs.append("1 worker: %s carried %d QPs, want %d" % (direction, len(ref[p]), N_QP))
        for key, psns in ref[p].items():
            want = [x for x in range(N_PSN) if DROPS.get(key) != x]
            if psns != want:
                errs.append("1 worker: QP %#x: %d PSNs, not 0..%d in order less the targeted "
                            "one" % (key[1], len(psns), N_PSN - 1))
    for tag, extra in (("w2", ()), ("w2x", ("--rxq-map", "p0:0:0,p0:1:0,p1:0:1,p1:1:1")),
                       ("w2s", ("--rx-spread",))):
        out, st, text = run(rocemu, tmp, tag, 2, files, extra, single=tag == "w2s")
        ho = sum(w["handoff_out"] for w in st["workers"])
        if tag == "w2s":
            # one queue a port, polled by one worker: the frames of about half the QPs
            # crossed to the other worker's ingress, and every one of them arrived
            sp_out = sum(w["spread_out"] for w in st["workers"])
            sp_in = sum(w["spread_in"] for w in st["workers"])
            if not 0.2 * 2 * N_QP * N_PSN < sp_out < 0.8 * 2 * N_QP * N_PSN or \
                    sp_in != sp_out:
                errs.append("w2s: %d frames spread out, %d in, of %d" %
                            (sp_out, sp_in, 2 * N_QP * N_PSN))
        got = [sequences(out[0]), sequences(out[1])]
        for p in (0, 1):
            if got[p] != ref[p]:
                bad = [k for k in set(ref[p]) | set(got[p]) if got[p].get(k) != ref[p].get(k)]
                errs.append("%s: port p%d: %d QPs differ from 1 worker's, e.g. %#x: %s..." %
                            (tag, p, len(bad), bad[0][1], got[p].get(bad[0], [])[:8]))
        drops = {k: v for k, v in st["stages"][2]["counters"].items() if k.startswith("drop_")}
        if drops != {k: v for k, v in s1["stages"][2]["counters"].items()
                     if k.startswith("drop_")}:
            errs.append("%s: targeted drops %s, 1 worker %s" % (tag, drops,
                                                               s1["stages"][2]["counters"]))
        want_ho = 2 * N_QP * N_PSN - 2 if tag == "w2x" else None
        if ho == 0 or (want_ho is not None and ho != want_ho):
            errs.append("%s: %d frames handed over between workers%s" %
                        (tag, ho, "" if want_ho is None else ", want %d" % want_ho))
        print("ok: %s: %d frames handed over; per-QP sequences %s" %
              (tag, ho, "equal" if not errs else "checked"))
    for e in errs:
        print("  " + e)
    if errs:
        raise SystemExit("FAIL: qp-order")
    print("qp-order: per-QP sequences and targeted drops of 2 workers equal 1 worker's")


def capture(rocemu, tmp):
    """qp-order's traffic and pipeline with two egress captures: a header capture of every
    frame into a classic pcap, and an annotated pcapng with every dropped frame (the two
    PSN-targeted drops, one on each worker with 2 workers). With 2 workers each worker's
    replica pushes into a ring of its own and the main lcore writes one file of each, merged
    in time. Every run (1 worker; 2 as mapped by default; 2 with every frame crossing a ring):
    the pcap holds every frame forwarded, in time order, with per-QP PSN sequences equal to
    1 worker's; the pcapng holds them and the 2 dropped frames, each with its comment (the
    drops named), in time order; the stage's counters and the summary line agree."""
    files = make_inputs(tmp)
    pl = json.loads(json.dumps(PIPELINE))
    pl["description"] = "run_workers capture: qp-order's switch with two egress captures"
    pl["egress"] = [
        {"type": "capture", "name": "cap_hdr", "file": os.path.join(tmp, "cap.pcap"),
         "snaplen": 128, "ring_size": 16384},
        {"type": "capture", "name": "cap_ann", "file": os.path.join(tmp, "ann.pcapng"),
         "snaplen": 64, "ring_size": 16384, "annotate": "all", "drops": True},
    ]
    with open(os.path.join(tmp, "pipeline.json"), "w") as f:
        json.dump(pl, f)
    forwarded = 2 * N_QP * N_PSN - len(DROPS)
    errs, ref = [], None
    for tag, n, extra in (("w1", 1, ()), ("w2", 2, ()),
                          ("w2x", 2, ("--rxq-map", "p0:0:0,p0:1:0,p1:0:1,p1:1:1"))):
        _out, st, text = run(rocemu, tmp, tag, n, files, extra)
        e = []
        _ns, frames = read_pcap(os.path.join(tmp, "cap.pcap"))
        seq = {}
        for _ts, _len, b in frames:
            dst, qp = b[33], struct.unpack(">I", b[46:50])[0] & 0xFFFFFF
            seq.setdefault((dst, qp), []).append(struct.unpack(">I", b[50:54])[0] & 0xFFFFFF)
        back = sum(1 for a, b in zip(frames, frames[1:]) if b[0] < a[0])
        if len(frames) != forwarded:
            e.append("cap.pcap: %d frames, want %d" % (len(frames), forwarded))
        if back:
            e.append("cap.pcap: time goes back %d times" % back)
        if ref is None:
            ref = seq
        elif seq != ref:
            bad = [k for k in set(ref) | set(seq) if seq.get(k) != ref.get(k)]
            e.append("cap.pcap: %d QPs' PSN sequences differ from 1 worker's" % len(bad))
        fmt, recs = capfile.read(os.path.join(tmp, "ann.pcapng"))
        drops = [r for r in recs if r[4] is not None and " drop=" in r[4]]
        if fmt != "pcapng" or len(recs) != forwarded + len(DROPS):
            e.append("ann.pcapng: %s of %d records, want pcapng of %d" %
                     (fmt, len(recs), forwarded + len(DROPS)))
        if any(r[4] is None for r in recs):
            e.append("ann.pcapng: %d records without their comment" %
                     sum(1 for r in recs if r[4] is None))
        if len(drops) != len(DROPS) or capfile.backwards(recs):
            e.append("ann.pcapng: %d drop records (want %d), time back %d times" %
                     (len(drops), len(DROPS), capfile.backwards(recs)))
        stages = {x["name"]: x["counters"] for x in st["stages"]}
        if stages["cap_hdr"]["captured"] != forwarded or \
                stages["cap_ann"]["captured"] != forwarded + len(DROPS):
            e.append("counters: cap_hdr captured %d, cap_ann %d" %
                     (stages["cap_hdr"]["captured"], stages["cap_ann"]["captured"]))
        want_line = "capture: %d packets written to %s" % (forwarded,
                                                          os.path.join(tmp, "cap.pcap"))
        if want_line not in text:
            e.append("summary: no line '%s'" % want_line)
        if "time-order window" in text:
            # the writer holds each worker's records until the other's clock passes them:
            # only a window over its capacity makes a record late
            e.append("summary: frames written late: %s" %
                     [x for x in text.splitlines() if "time-order window" in x])
        if n == 2 and sum(w["handoff_out"] for w in st["workers"]) == 0:
            e.append("no frame crossed between the workers")
        for x in e:
            errs.append("%s: %s" % (tag, x))
        print("ok: %s: %d frames in cap.pcap in time order, %d records in ann.pcapng (%d drops) "
              "%s" % (tag, len(frames), len(recs), len(drops), "" if not e else "(see below)"))
    for x in errs:
        print("  " + x)
    if errs:
        raise SystemExit("FAIL: capture")
    print("capture: 2 workers write each capture stage's one file with every frame, in time "
          "order, per-QP order as 1 worker's")


def ring_full(rocemu, tmp):
    pl = {"description": "run_workers ring-full",
          "ports": [{"name": "p0", "dev": "net_null0"}, {"name": "p1", "dev": "net_null1"}],
          "ingress": [{"type": "parse"},
                      {"type": "forward", "mode": "pairs", "pairs": [["p0", "p1"]]}],
          "tm": {"ports": [{"port": "p0", "rate_gbps": 1600}, {"port": "p1", "rate_gbps": 1600}]}}
    with open(os.path.join(tmp, "ring.json"), "w") as f:
        json.dump(pl, f)
    results = {}
    for strict in (False, True):
        stats = os.path.join(tmp, "ring%d.json" % strict)
        cmd = [rocemu] + lcores(2) + [
            "--no-huge", "-m", "1024", "--no-pci", "--file-prefix=rwr%d" % os.getpid(),
            "--log-level=lib.eal:error", "--vdev", "net_null0,size=64,copy=1",
            "--vdev", "net_null1,size=64,copy=1", "--", "--pipeline",
            os.path.join(tmp, "ring.json"), "--workers", "2", "--ring-size", "2",
            "--rxq-map", "p0:0:0,p1:0:1", "--duration", "2", "--stats", stats]
        if strict:
            cmd.append("--strict")
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        st = json.load(open(stats))
        full = st["runner"]["drop_handoff_full"]
        results[strict] = (p.returncode, full, p.stdout)
        errs = []
        if full <= 0 or sum(w["drop_handoff_full"] for w in st["workers"]) != full:
            errs.append("drop_handoff_full %d (workers %s)" %
                        (full, [w["drop_handoff_full"] for w in st["workers"]]))
        if not st["conservation"]["ok"]:
            errs.append("conservation %s" % st["conservation"])
        line = [ln for ln in p.stdout.splitlines() if ln.startswith("rocemu: LOST ")]
        if not line or "%d found a ring between workers full" % full not in line[0]:
            errs.append("summary line: %s" % (line or "none"))
        if "runner.drop_handoff_full=%d" % full not in p.stdout:
            errs.append("drops by reason do not name runner.drop_handoff_full")
        if p.returncode != (1 if strict else 0):
            errs.append("exit status %d, want %d" % (p.returncode, 1 if strict else 0))
        for e in errs:
            print("  " + e)
        if errs:
            print(p.stdout[-2500:], p.stderr[-1000:])
            raise SystemExit("FAIL: ring-full%s" % (" --strict" if strict else ""))
        print("ok: ring-full%s: %d frames dropped as runner.drop_handoff_full, named in the "
              "summary, exit %d, conservation OK" % (" --strict" if strict else "", full,
                                                     p.returncode))


def pfc_frame(prio, quanta):
    """802.1Qbb: 01:80:c2:00:00:01, MAC control 0x8808, opcode 0x0101, class-enable vector,
    eight pause times, padded to 60 bytes."""
    q = [0] * 8
    q[prio] = quanta
    body = struct.pack(">HH8H", 0x0101, 1 << prio, *q)
    f = bytes.fromhex("0180c2000001" "020000000002") + b"\x88\x08" + body
    return f + bytes(60 - len(f))


def pfc_rx(rocemu, tmp):
    """B's port (p1) receives 50 XOFF frames for priority 3 (max pause) while A's data flows
    to it: with 2 workers p1's RX queue is polled by p0's owner and p1's egress is the other
    worker's, so every PFC frame crosses a ring to pause p1's egress."""
    data, pfc = [], []
    for i in range(4000):
        data.append((i * 1000, frame(1, 2, 0x100 + (i & 7), i >> 3, 0x07, 256)))
    for i in range(50):
        pfc.append((i * 80000, pfc_frame(3, 0xFFFF)))
    for name, frames in (("d0", data), ("d1", pfc)):
        write_pcap(os.path.join(tmp, name + ".pcap"), frames)
    pl = {"description": "run_workers pfc-rx",
          "ports": [{"name": "p0", "dev": "net_pcap0"}, {"name": "p1", "dev": "net_pcap1"}],
          "ingress": [{"type": "parse", "trust": "dscp", "dscp_map": {"26": 3}},
                      {"type": "forward", "mode": "pairs", "pairs": [["p0", "p1"]]}],
          "tm": {"ports": [{"port": "p0", "rate_gbps": 100, "lossless": [3], "pfc": {"cable_m": 3}},
                           {"port": "p1", "rate_gbps": 100, "lossless": [3], "pfc": {"cable_m": 3}}]}}
    with open(os.path.join(tmp, "pfc.json"), "w") as f:
        json.dump(pl, f)
    for n in (1, 2):
        stats = os.path.join(tmp, "pfc%d.json" % n)
        cmd = [rocemu] + lcores(n) + [
            "--no-huge", "-m", "1024", "--no-pci", "--file-prefix=rwp%d" % os.getpid(),
            "--log-level=lib.eal:error",
            "--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (os.path.join(tmp, "d0.pcap"),
                                                          os.path.join(tmp, "o0.pcap")),
            "--vdev", "net_pcap1,rx_pcap=%s,tx_pcap=%s" % (os.path.join(tmp, "d1.pcap"),
                                                          os.path.join(tmp, "o1.pcap")),
            "--", "--pipeline", os.path.join(tmp, "pfc.json"), "--workers", str(n),
            "--duration", "2", "--drain", "5", "--stats", stats]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if not os.path.exists(stats):
            print(p.stdout[-2000:], p.stderr[-2000:])
            raise SystemExit("FAIL: pfc-rx: rocemu exited %d without its stats" % p.returncode)
        st = json.load(open(stats))
        p1 = [t for t in st["tm"] if t["port"] == "p1"][0]
        pr3 = p1["priorities"][3]
        errs = []
        if p.returncode != 0:
            errs.append("exit %d" % p.returncode)
        if p1["counters"]["pfc_rx"] != 50 or st["runner"]["consumed_mac_control"] != 50:
            errs.append("pfc_rx %d, consumed %d, want 50" % (p1["counters"]["pfc_rx"],
                                                            st["runner"]["consumed_mac_control"]))
        if pr3["paused_ns"] <= 0:
            errs.append("p1 priority 3 never paused: %s" % pr3)
        if not st["conservation"]["ok"]:
            errs.append("conservation %s" % st["conservation"])
        crossed = sum(w.get("handoff_pfc", 0) for w in st["workers"])
        # the 50 received, and any PFC frame p1's TM made for p0 (A's data was lossless)
        made = sum(t["counters"]["pfc_tx_xoff"] + t["counters"]["pfc_tx_xon"]
                   for t in st["tm"] if t["port"] == "p0")
        if n == 2 and crossed != 50 + made:
            errs.append("%d PFC frames crossed between workers, want 50 + %d" % (crossed, made))
        for e in errs:
            print("  " + e)
        if errs:
            print(p.stdout[-2500:], p.stderr[-1000:])
            raise SystemExit("FAIL: pfc-rx with %d worker(s)" % n)
        print("ok: pfc-rx, %d worker(s): 50 PFC frames received on p1 paused its egress for "
              "%.1f ms%s" % (n, pr3["paused_ns"] / 1e6, "" if n == 1 else
                             ", each crossing to p1's owner (longest %.1f us)" %
                             (max(w["handoff_pfc_delay_max_ns"] for w in st["workers"]) / 1e3)))


def learning(rocemu, tmp):
    """A learning bridge of four ports on two workers (p0, p2 owned by worker 0; p1, p3 by
    worker 1; p0's queue polled by worker 1, p1's by worker 0, as the default map gives them):
    host A (MAC ..:01) behind p0 and host B (..:02) behind p1 send each other frames for 2 s
    (net_pcap reading each file in a loop). A is learned where p0 is polled, B where p1 is:
    with one table per worker neither would ever be known to the worker that forwards to it,
    and every frame would flood (p2 and p3 get a copy). The table is one: but for the first
    moments (the other worker may start a little later) every frame goes to its host's port
    alone, as with one worker. Checks both runs: flooded under 1 % of the frames forwarded;
    both MACs learned."""
    recs = {0: [], 1: []}
    for i in range(512):
        recs[0].append((i * 1000, frame(1, 2, 0x100 + i % 8, i // 8, 0x07, 64)))
        recs[1].append((i * 1000, frame(2, 1, 0x200 + i % 8, i // 8, 0x11, 0)))
    ins = []
    for p in range(4):
        path = os.path.join(tmp, "l_in%d.pcap" % p)
        write_pcap(path, recs.get(p, []))
        ins.append(path)
    pl = {"description": "run_workers learning: four ports, MAC learning",
          "ports": [{"name": "p%d" % p, "dev": "net_pcap%d" % p} for p in range(4)],
          "ingress": [{"type": "parse"}, {"type": "forward", "mode": "learning"}],
          "tm": {"ports": [{"port": "p%d" % p, "rate_gbps": 1600} for p in range(4)]}}
    with open(os.path.join(tmp, "learning.json"), "w") as f:
        json.dump(pl, f)
    errs = []
    for tag, nw in (("l1", 1), ("l2", 2)):
        stats = os.path.join(tmp, tag + ".json")
        cmd = [rocemu] + (["-l", "0-1"] if nw == 1 else ["--lcores", "0@(0,1),1@0,2@1"]) + [
            "--no-huge", "-m", "1024", "--no-pci", "--file-prefix=rw%d_%s" % (os.getpid(), tag),
            "--log-level=lib.eal:error"]
        for p in range(4):
            # p0 and p1 send their file over and over; p2 and p3 only listen
            cmd += ["--vdev", "net_pcap%d,rx_pcap=%s,tx_pcap=/dev/null%s" %
                    (p, ins[p], ",infinite_rx=1" if p < 2 else "")]
        cmd += ["--", "--pipeline", os.path.join(tmp, "learning.json"), "--workers", str(nw),
                "--duration", "2", "--stats", stats]
        run_ok(cmd, tag)
        st = json.load(open(stats))
        ctr = st["stages"][1]["counters"]
        fwd, fl = ctr["forwarded"], ctr["flooded"]
        if fwd < 10000 or fl > 0.01 * fwd:
            errs.append("%s: %d frames forwarded to their host's port, %d flooded: a MAC "
                        "learned on one worker was unknown to the other" % (tag, fwd, fl))
        if ctr["learned"] < 2:
            errs.append("%s: learned %d MACs, want 2" % (tag, ctr["learned"]))
        print("ok: %s: forwarded %d, flooded %d, learned %d" % (tag, fwd, fl, ctr["learned"]))
    for e in errs:
        print("  " + e)
    if errs:
        raise SystemExit("FAIL: learning")
    print("learning: one MAC table for both workers: floods only in the first moments")


def main():
    rocemu, _src, what = sys.argv[1:4]
    if os.geteuid() != 0:
        print("SKIP: run_workers needs root (DPDK EAL); NOT TESTED")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as tmp:
        {"qp-order": qp_order, "ring-full": ring_full, "pfc-rx": pfc_rx,
         "capture": capture, "learning": learning}[what](rocemu, tmp)


if __name__ == "__main__":
    main()
