#!/usr/bin/env python3
"""The per-packet trace, checked field by field against the virtual clock.

20 RDMA WRITE frames (1024 B, DSCP 26 -> priority 3, ECT(0), PSN 0..19) arrive on p0 at once,
at t0. The switch: parse, forward, an impair event dropping PSN 3, a delay stage holding PSN
10-12 for 50 us (reordering: the others do not wait behind them), and p1's TM at 10 Gb/s marking CE at enqueue above 4 KB (pmax 1, kmax 5 KB: a
frame with 5 KB or more ahead of it is marked, one with 4 KB or less is not). At t0 + 5.2 us a
PFC frame arrives on p1 pausing priority 3 for 100 quanta (5.12 us at 10 Gb/s).

A model written here (a FIFO serialising at 838.4 ns a frame, picoseconds exact, paused from
the PFC frame's arrival for 5.12 us) gives every frame's queue depth at enqueue, wait and
departure. The replay's pcapng (--annotate all) must carry for every frame exactly: in=p0
out=p1 t_in=t0 prio=3 qdepth wait, ce=red exactly when the model says (and the frame's ECN bits
say CE), delayed=50000ns on PSN 10-12, and its timestamp must be the model's departure. The
--drops pcapng holds PSN 3 alone, "drop=impair.drop_d3". With the default --annotate events,
only the frames something happened to have a comment. tshark reads the comments
(frame.comment) and finds no malformed packet. A capture stage on egress with "drops": true
writes the same 19 annotated frames and the dropped one (on its "drop" interface). The
Prometheus textfile is well-formed and holds the run's numbers; the --timeline CSV shows the
queue paused during the PFC pause and ends with the port's 19 frames and CE marks."""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import roceframes  # noqa: E402

T0 = 1_000_000_000_000
RATE = 10e9
FRAME = 1024
PAUSE_AT = 5200           # ns after t0
PAUSE_NS = 100 * 512 // 10  # 100 quanta x 512 bit at 10 Gb/s = 5120 ns


def write_frame(psn):
    payload = bytes(FRAME - 14 - 20 - 8 - 12 - 16 - 4)
    bth = struct.pack(">BBHII", 0x0A, 0x40, 0xFFFF, 0x45, psn)
    reth = struct.pack(">QII", 0x1000 + psn * len(payload), 0x1234, len(payload))
    udp_len = 8 + len(bth) + len(reth) + len(payload) + 4
    ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, (26 << 2) | 2, 20 + udp_len, 0, 0x4000, 64,
                               17, 0, bytes([198, 18, 0, 11]), bytes([198, 18, 0, 12])))
    ip[10:12] = struct.pack(">H", roceframes.ip_cksum(bytes(ip)))
    body = bytes(ip) + struct.pack(">HHHH", 49152, 4791, udp_len, 0) + bth + reth + payload
    eth = b"\x02\x00\x00\x00\x00\x12" + b"\x02\x00\x00\x00\x00\x11" + b"\x08\x00"
    f = eth + body + roceframes.icrc(body)
    assert len(f) == FRAME
    return f


def pfc_frame():
    # 01:80:c2:00:00:01, opcode 0x0101, class-enable vector bit 3, quanta[3] = 100
    quanta = [0] * 8
    quanta[3] = 100
    f = b"\x01\x80\xc2\x00\x00\x01" + b"\x02\x00\x00\x00\x00\x12" + b"\x88\x08" + \
        struct.pack(">HH", 0x0101, 1 << 3) + struct.pack(">8H", *quanta)
    return f + bytes(60 - len(f))


def model():
    """(qdepth, wait_ns, departure_ns) per PSN on the virtual clock, and the CE set."""
    wire_ps = (FRAME + 24) * 8 * 1000 * 1_000_000_000 // int(RATE)  # 838400 ps
    out = {}
    link_free_ps = 0
    pause = (T0 + PAUSE_AT, T0 + PAUSE_AT + PAUSE_NS)
    first = [p for p in range(20) if p != 3 and not 10 <= p <= 12]
    later = [10, 11, 12]
    for group, enq in ((first, T0), (later, T0 + 50_000)):
        for k, psn in enumerate(group):
            qdepth = k * FRAME
            start_ps = max(link_free_ps, enq * 1000)
            if pause[0] * 1000 <= start_ps < pause[1] * 1000:
                start_ps = pause[1] * 1000
            finish_ps = start_ps + wire_ps
            link_free_ps = finish_ps
            out[psn] = (qdepth, start_ps // 1000 - enq, -(-finish_ps // 1000))
    return out


def main():
    rocemu, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        roceframes.write_pcap(os.path.join(tmp, "a.pcap"), [(0, write_frame(p)) for p in range(20)],
                              T0)
        roceframes.write_pcap(os.path.join(tmp, "b.pcap"), [(PAUSE_AT, pfc_frame())], T0)
        pl = {
            "ports": [{"name": "p0", "mtu": 1500}, {"name": "p1", "mtu": 1500}],
            "ingress": [
                {"type": "parse"},
                {"type": "forward"},
                {"type": "impair", "events": [{"name": "d3", "action": "drop",
                                               "match": {"psn": 3}}]},
                {"type": "delay", "reorder": True, "rules": [
                    {"match": {"psn": [10, 12]}, "dist": "constant", "delay_us": 50}]},
            ],
            "tm": {"ports": [
                {"port": "p0", "rate_gbps": 10},
                {"port": "p1", "rate_gbps": 10, "lossless": [3],
                 "ecn": {"kmin_kb": 4, "kmax_kb": 5, "pmax": 1.0, "mark_at": "enqueue"}}]},
        }
        with open(os.path.join(tmp, "pl.json"), "w") as f:
            json.dump(pl, f)
        base = [rocemu, "replay", "--pipeline", "pl.json", "--in", "a.pcap:p0",
                "--in", "b.pcap:p1"]
        r = subprocess.run(base + ["--out", "all.pcapng:p1", "--annotate", "all",
                                   "--drops", "drops.pcapng"],
                           cwd=tmp, capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            print("FAIL: replay exit %d: %s %s" % (r.returncode, r.stdout[-500:], r.stderr))
            return 1
        t = subprocess.run(["tshark", "-r", "all.pcapng", "-T", "fields", "-e", "frame.time_epoch",
                            "-e", "ip.dsfield.ecn", "-e", "infiniband.bth.psn", "-e",
                            "frame.comment", "-E", "separator=|"],
                           cwd=tmp, capture_output=True, text=True, timeout=120)
        if t.returncode != 0:
            print("FAIL: tshark: " + t.stderr)
            return 1
        want = model()
        want_model = want
        seen = set()
        for line in t.stdout.splitlines():
            ts, ecn, psn, comment = line.split("|", 3)
            psn = int(psn)
            seen.add(psn)
            q, wait, dep = want[psn]
            sec, frac = ts.split(".")
            ts_ns = int(sec) * 10**9 + int(frac.ljust(9, "0")[:9])
            kv = dict(x.split("=", 1) for x in comment.split()[1:] if "=" in x)
            delayed = 10 <= psn <= 12
            enq = T0 + (50_000 if delayed else 0)
            exp = {"in": "p0", "out": "p1", "t_in": str(T0), "prio": "3", "qdepth": str(q),
                   "wait": "%dns" % wait}
            if q >= 5 * 1024:
                exp["ce"] = "red"
            if delayed:
                exp["delayed"] = "50000ns"
            if kv != exp:
                fails.append("PSN %d: comment %r, want %r" % (psn, kv, exp))
            if ts_ns != dep:
                fails.append("PSN %d: departure %d, want %d (enqueued %d)" % (psn, ts_ns, dep, enq))
            if (int(ecn) == 3) != (q >= 5 * 1024):
                fails.append("PSN %d: ECN bits %s with %d B ahead" % (psn, ecn, q))
        if seen != set(want):
            fails.append("PSNs out %s, want %s" % (sorted(seen), sorted(want)))
        d = subprocess.run(["tshark", "-r", "drops.pcapng", "-T", "fields", "-e",
                            "infiniband.bth.psn", "-e", "frame.comment", "-E", "separator=|"],
                           cwd=tmp, capture_output=True, text=True, timeout=60)
        lines = d.stdout.splitlines()
        if len(lines) != 1 or not lines[0].startswith("3|rocemu: drop=impair.drop_d3 in=p0 "):
            fails.append("drops.pcapng: %r, want PSN 3 with drop=impair.drop_d3" % lines)
        # default: comments only where something happened (CE or delayed)
        r2 = subprocess.run(base + ["--out", "ev.pcapng:p1"], cwd=tmp, capture_output=True,
                            text=True, timeout=120)
        e = subprocess.run(["tshark", "-r", "ev.pcapng", "-Y", "frame.comment", "-T", "fields",
                            "-e", "infiniband.bth.psn"], cwd=tmp, capture_output=True, text=True)
        marked = sorted(int(x) for x in e.stdout.split())
        exp_marked = sorted(p for p, (q, _, _) in want.items() if q >= 5 * 1024 or 10 <= p <= 12)
        if r2.returncode != 0 or marked != exp_marked:
            fails.append("--annotate events: comments on %s, want %s" % (marked, exp_marked))
        x = subprocess.run(["tshark", "-r", "all.pcapng", "-z", "expert,error", "-q"], cwd=tmp,
                           capture_output=True, text=True)
        if re.search(r"Malformed|Errors \(", x.stdout):
            fails.append("tshark expert errors: " + x.stdout)
        # The capture stage writes the same annotations: egress frames of both ports and every
        # dropped frame on a "drop" interface, identical to replay's --out and --drops.
        pl["egress"] = [{"type": "capture", "file": "cap.pcapng", "drops": True,
                         "annotate": "all"}]
        with open(os.path.join(tmp, "plcap.json"), "w") as f:
            json.dump(pl, f)
        r3 = subprocess.run([rocemu, "replay", "--pipeline", "plcap.json", "--in", "a.pcap:p0",
                             "--in", "b.pcap:p1", "--out", "every.pcapng", "--annotate", "all",
                             "--drops", "drops2.pcapng"], cwd=tmp, capture_output=True,
                            text=True, timeout=120)

        def comments(path):
            c = subprocess.run(["tshark", "-r", path, "-T", "fields", "-e", "frame.time_epoch",
                                "-e", "frame.interface_name", "-e", "frame.comment",
                                "-E", "separator=|"], cwd=tmp, capture_output=True, text=True)
            return c.stdout.splitlines()
        cap = comments("cap.pcapng")
        want_cap = [l for l in comments("every.pcapng")] + \
            comments("drops2.pcapng")
        if r3.returncode != 0 or sorted(cap) != sorted(want_cap) or len(cap) != 20:
            fails.append("capture stage: %d records, want the %d of --out and --drops:\n%s\n%s"
                         % (len(cap), len(want_cap), "\n".join(cap[:4]),
                            "\n".join(want_cap[:4])))
        if not any("|drop|rocemu: drop=impair.drop_d3 " in l for l in cap):
            fails.append("capture stage: no drop record for PSN 3 on the drop interface")
        # The same capture alone (no annotated --out, no --drops: the stage is the trace's
        # only reader, and the switch must still write it): the same records.
        r3b = subprocess.run([rocemu, "replay", "--pipeline", "plcap.json", "--in", "a.pcap:p0",
                              "--in", "b.pcap:p1", "--out", "every.pcapng",
                              "--annotate", "none"], cwd=tmp,
                             capture_output=True, text=True, timeout=120)
        cap_alone = comments("cap.pcapng")
        if r3b.returncode != 0 or sorted(cap_alone) != sorted(cap):
            fails.append("capture stage alone: %d records differ from the run with --out and "
                         "--drops:\n%s" % (len(cap_alone), "\n".join(cap_alone[:4])))
        # The Prometheus textfile of the same run: well-formed, and its numbers are the run's.
        import promcheck
        r4 = subprocess.run(base + ["--prometheus", "m.prom", "--stats", "s.json"], cwd=tmp,
                            capture_output=True, text=True, timeout=120)
        text = open(os.path.join(tmp, "m.prom")).read() if r4.returncode == 0 else ""
        errs, sm = promcheck.check(text)
        st = json.load(open(os.path.join(tmp, "s.json"))) if r4.returncode == 0 else {}
        p1 = [p for p in st.get("ports", []) if p["name"] == "p1"]
        if errs or not p1:
            fails.append("prometheus: %s" % (errs[:5] or r4.stderr))
        else:
            want = {("rocemu_port_tx_packets_total", (("port", "p1"),)): p1[0]["tx_pkts"],
                    ("rocemu_drops_total", (("reason", "impair.drop_d3"),)): 1,
                    ("rocemu_tm_events_total", (("port", "p1"), ("counter", "ecn_marked"))):
                        sum(1 for q, _, _ in want_model.values() if q >= 5 * 1024),
                    ("rocemu_tm_events_total", (("port", "p1"), ("counter", "pfc_rx"))): 1,
                    ("rocemu_conservation_unaccounted_packets", ()): 0}
            for (name, labels), v in want.items():
                got = promcheck.value(sm, name, **dict(labels))
                if got != v:
                    fails.append("prometheus %s%s = %r, want %r" % (name, dict(labels), got, v))
        # The timeline of the same run (1 us grid): the pause shows, the counters end right.
        r5 = subprocess.run(base + ["--timeline", "tl.csv", "--timeline-us", "1"], cwd=tmp,
                            capture_output=True, text=True, timeout=120)
        rows = []
        if r5.returncode == 0:
            import csv
            rows = list(csv.DictReader(open(os.path.join(tmp, "tl.csv"))))
        q3 = [x for x in rows if x["port"] == "p1" and x["prio"] == "3"]
        allr = [x for x in rows if x["port"] == "p1" and x["prio"] == "all"]
        paused = [int(x["t_ns"]) - T0 for x in q3 if x["paused"] == "1"]
        n_ce = sum(1 for q, _, _ in want_model.values() if q >= 5 * 1024)
        if not (q3 and allr and paused and PAUSE_AT <= paused[0] < PAUSE_AT + PAUSE_NS and
                int(allr[-1]["tx_pkts"]) == 19 and int(allr[-1]["ecn_marked"]) == n_ce and
                max(int(x["queue_bytes"]) for x in q3) <= 15 * FRAME and
                all(int(a["t_ns"]) <= int(b["t_ns"]) for a, b in zip(rows, rows[1:]))):
            fails.append("timeline: %d rows, paused at %s, last p1 row %s" %
                         (len(rows), paused[:3], allr[-1] if allr else None))
    for f in fails:
        print("FAIL: " + f)
    if fails:
        return 1
    print("ok: 19 frames' traces (t_in, qdepth, wait, ce=red, delayed) and departures equal the "
          "model through an impair drop, a 50 us delay and a PFC pause; the drop capture holds "
          "PSN 3 with its reason; default annotations only where something happened")
    return 0


if __name__ == "__main__":
    sys.exit(main())
