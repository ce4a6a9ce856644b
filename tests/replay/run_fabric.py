#!/usr/bin/env python3
"""The emulated fabric (pipelines/README.md, "fabric") on the virtual clock.

A. ECMP over 4 x 25 Gb/s (pipelines/ecmp-4x25.json): 4 RC flows from p0 at 100 Gb/s each keep
   one path (every frame of a flow carries the same path= annotation), the links' routed
   counters are the flows' packets on them, and the last departure is what the assignment
   predicts: a path carrying j flows of the 100 Gb/s input gets j x 25 Gb/s and drains its
   bytes at 25 Gb/s, so the run ends when the busiest path has sent its share.
B. Per-packet round robin (the same fabric with "route": "round_robin"): every path carries a
   quarter of every flow, the aggregate reaches the 100 Gb/s the links allow, and the four
   path delays (2, 4, 6, 8 us) reorder each flow at p1.
H. Spraying only matched traffic (spray_match, one flow of five): that flow takes every path,
   the others keep the path ECMP gives them.
C. Polarization: two tiers of hashing (leaf0 -> 4 spines -> 2 parallel links to leaf1): the
   same function and seed at both tiers use one of each spine's two links; Murmur3 with a
   different seed per tier uses all eight.
D. A link down (profile): the flows it carried rehash over the three spines left; nothing
   crosses it afterwards; conservation holds.
G. The fabric's own drops: a lossy link and no link up towards the egress leaf, each under
   its reason.
F. pipelines/spray-4x25.json: the same spraying with the reorder stage in front of p1: every
   flow leaves in PSN order, exactly, every packet accounted.
E. Lossless across the fabric: a 2:1 bottleneck inside the fabric (spine0 -> leaf1 at
   10 Gb/s behind 25 Gb/s) on priority 3 loses nothing, pauses the link before it and sends
   real PFC out of p0 (the sender's port); on a lossy priority the bottleneck drops, under
   the named reason tm.spine0-leaf1.drop_queue_full.
"""
import copy
import json
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pcapdump  # noqa: E402
import roceframes  # noqa: E402

T0 = 1_000_000_000_000
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)
    return cond


def frame(sport, psn, payload=1024, dscp=26, dqp=0x45):
    """RC RDMA WRITE ONLY 10.0.0.1 -> 10.0.0.2, ECT(0), ICRC right."""
    bth = struct.pack(">BBHII", 0x0A, 0, 0xFFFF, dqp, psn & 0xFFFFFF)
    udp = struct.pack(">HHHH", sport, 4791, 8 + len(bth) + payload + 4, 0)
    ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, (dscp << 2) | 2,
                               20 + len(udp) + len(bth) + payload + 4, 0, 0x4000, 64, 17, 0,
                               bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])))
    ip[10:12] = struct.pack(">H", roceframes.ip_cksum(bytes(ip)))
    body = bytes(ip) + udp + bth + bytes(payload)
    return bytes.fromhex("020000000002" "020000000001") + b"\x08\x00" + body + \
        roceframes.icrc(body)


def crc16_ccitt(data, crc=0xFFFF):
    """CRC-16/CCITT-FALSE, bit by bit (independent of lib/fabric's table)."""
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def wire_ps(length, gbps):
    return (length + 24) * 8 * 1000 // gbps


def line_rate(frames_by_flow, gbps):
    """Interleave the flows' frames round robin, back to back at gbps."""
    out, t = [], 0
    for i in range(max(len(f) for f in frames_by_flow)):
        for f in frames_by_flow:
            if i < len(f):
                out.append((t // 1000, f[i]))
                t += wire_ps(len(f[i]), gbps)
    return out


LAST_SUMMARY = [""]  # the last replay's summary (its standard output)


VIA_SEEN = [0]  # frames whose via= replay() checked


def replay(rocemu, tmp, tag, pipeline, frames, profile=None):
    pl = os.path.join(tmp, tag + ".json")
    with open(pl, "w") as f:
        json.dump(pipeline, f)
    inp = os.path.join(tmp, tag + "-in.pcap")
    roceframes.write_pcap(inp, frames, T0)
    out1, out0 = (os.path.join(tmp, tag + n) for n in ("-p1.pcapng", "-p0.pcap"))
    stats = os.path.join(tmp, tag + "-stats.json")
    cmd = [rocemu, "replay", "--pipeline", pl, "--in", inp + ":p0", "--out", out1 + ":p1",
           "--out", out0 + ":p0", "--annotate", "all", "--stats", stats]
    if profile is not None:
        pp = os.path.join(tmp, tag + "-profile.json")
        with open(pp, "w") as f:
            json.dump(profile, f)
        cmd += ["--profile", pp]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise SystemExit("FAIL: %s: rocemu replay exited %d\n%s%s" % (tag, r.returncode,
                                                                     r.stdout, r.stderr))
    LAST_SUMMARY[0] = r.stdout
    with open(stats) as f:
        st = json.load(f)
    t = subprocess.run(["tshark", "-r", out1, "-T", "fields", "-e", "frame.time_epoch",
                        "-e", "udp.srcport", "-e", "infiniband.bth.psn", "-e", "frame.len",
                        "-e", "frame.comment"], capture_output=True, text=True, check=True)
    rows = []
    lk = {l["name"]: l for l in st.get("fabric", {}).get("links", [])}
    leaf1 = [x["name"] for x in pipeline.get("fabric", {}).get("switches", [])
             if "p1" in x.get("ports", [])]
    bad_via = []
    for line in t.stdout.splitlines():
        ts, sport, psn, ln, comment = (line.split("\t") + [""] * 5)[:5]
        path = [w[5:] for w in comment.split() if w.startswith("path=")]
        # via=: the names of the links taken, first the path's, each ending where the next
        # leaves, the last at p1's leaf
        via = [w[4:].split(",") for w in comment.split() if w.startswith("via=")]
        if path and (not via or via[0][0] != st["fabric"]["links"][int(path[0]) - 1]["name"]
                     or any(lk[a]["to"] != lk[b]["from"] for a, b in zip(via[0], via[0][1:]))
                     or lk[via[0][-1]]["to"] not in leaf1):
            bad_via.append(comment)
        sec, _, frac = ts.partition(".")
        rows.append((int(sec) * 10**9 + int((frac + "000000000")[:9]), int(sport), int(psn),
                     int(ln), int(path[0]) if path else 0))
    check(not bad_via, "%s: via= names the links taken, in order, to p1's leaf (%d frames "
          "wrong, the first: %s)" % (tag, len(bad_via), bad_via[:1]))
    VIA_SEEN[0] += sum(1 for r in rows if r[4])
    p0 = pcapdump.read_pcap(out0)[1]
    return st, rows, p0


def links(st):
    return {l["name"]: l["counters"] for l in st["fabric"]["links"]}


def tm_port(st, name):
    return [p for p in st["tm"] if p["port"] == name][0]


def drops(st):
    return st["conservation"]["drops"]


def link_name_of(st, path):
    return st["fabric"]["links"][path - 1]["name"]


def scenario_ecmp(rocemu, src, tmp):
    with open(os.path.join(src, "pipelines", "ecmp-4x25.json")) as f:
        pl = json.load(f)
    # three of the four flows hash onto one spine (CRC16-CCITT of the 5-tuple, mod 4)
    sports = [0xC000 + 3001 * i % 0x3FFF for i in range(1, 5)]
    flows = [[frame(sp, i) for i in range(200)] for sp in sports]
    st, rows, _ = replay(rocemu, tmp, "ecmp", pl, line_rate(flows, 100))
    check(st["conservation"]["ok"] and drops(st) == 0, "A: conservation with no drops")
    check(len(rows) == 800, "A: 800 frames at p1, got %d" % len(rows))
    paths = {}
    for _, sp, _, _, path in rows:
        paths.setdefault(sp, set()).add(path)
    for sp in sports:
        check(len(paths.get(sp, ())) == 1, "A: flow %#x keeps one path, took %s" %
              (sp, sorted(paths.get(sp, ()))))
    per_path = {}
    for sp in sports:
        p = min(paths.get(sp, {0}))
        per_path[p] = per_path.get(p, 0) + 1
        # the reference: CRC-16/CCITT-FALSE of sip dip protocol sport dport, mod 4 = spine
        want = "leaf0-spine%d" % (crc16_ccitt(bytes([10, 0, 0, 1, 10, 0, 0, 2, 17]) +
                                              struct.pack(">HH", sp, 4791)) % 4)
        check(p > 0 and link_name_of(st, p) == want, "A: flow %#x took %s, the hash says %s"
              % (sp, link_name_of(st, p) if p else "none", want))
    lk = links(st)
    for p, nflows in per_path.items():
        check(p > 0 and lk[link_name_of(st, p)]["routed"] == 200 * nflows,
              "A: link of path %d routed %d flows' packets" % (p, nflows))
    # the busiest path: j flows arriving at j x 25 Gb/s, drained at 25 Gb/s from the first
    # frame's arrival; + both links' delays + one frame at 25 Gb/s (downlink) + at 100 Gb/s
    flen = len(flows[0][0])
    j = max(per_path.values())
    busy = max(per_path, key=lambda p: (per_path[p], p))
    delay_us = int(link_name_of(st, busy)[-1]) + 1  # spineK: links of K + 1 us
    first = sports.index([sp for sp in sports if min(paths[sp]) == busy][0])
    t_first = first * wire_ps(flen, 100) // 1000
    pred = t_first + (200 * j * wire_ps(flen, 25)) // 1000 + 2 * delay_us * 1000 + \
        wire_ps(flen, 25) // 1000 + wire_ps(flen, 100) // 1000
    end = max(r[0] for r in rows) - T0
    # exact but for each TM hop rounding a departure up to the ns (3 hops) and this sum's
    # integer divisions
    check(abs(end - pred) <= 5, "A: last departure %d ns, predicted %d ns (%d flows on "
          "the busiest path)" % (end, pred, j))
    gbps = 800 * (flen + 24) * 8 / end
    print("A: ECMP: flows per path %s; %.1f Gb/s aggregate (last departure %.1f us, "
          "predicted %.1f us)" % (sorted(per_path.values(), reverse=True), gbps, end / 1e3,
                                  pred / 1e3))
    return pl


def scenario_spray(rocemu, tmp, base):
    pl = copy.deepcopy(base)
    for s in pl["fabric"]["switches"]:
        if "hash" in s:
            del s["hash"]
            s["route"] = "round_robin"
    # 5 flows over 4 paths: each flow's packets take every path in turn
    sports = [0xC001, 0xC002, 0xC003, 0xC004, 0xC005]
    flows = [[frame(sp, i) for i in range(160)] for sp in sports]
    st, rows, _ = replay(rocemu, tmp, "spray", pl, line_rate(flows, 100))
    check(st["conservation"]["ok"] and drops(st) == 0, "B: conservation with no drops")
    lk = links(st)
    for k in range(4):
        check(lk["leaf0-spine%d" % k]["routed"] == 200, "B: leaf0-spine%d routed %d, want 200"
              % (k, lk["leaf0-spine%d" % k]["routed"]))
    flen = len(flows[0][0])
    end = max(r[0] for r in rows) - T0
    ideal = 800 * wire_ps(flen, 100) // 1000
    check(end <= ideal + 10_000, "B: last departure %d ns, want within 10 us of %d ns (100 Gb/s)"
          % (end, ideal))
    ooo = 0
    last = {}
    for _, sp, psn, _, _ in sorted(rows):
        if psn < last.get(sp, -1):
            ooo += 1
        last[sp] = max(psn, last.get(sp, -1))
    check(ooo > 0, "B: spraying over 2/4/6/8 us paths reorders the flows")
    gbps = 800 * (flen + 24) * 8 / end
    print("B: round robin: 200 packets on each uplink, %.1f Gb/s aggregate, %d frames "
          "arrived after a later PSN of their flow" % (gbps, ooo))


def scenario_spray_match(rocemu, tmp, base):
    """H: round robin for the matched traffic only (spray_match on the UDP source port of
    one flow): that flow takes every path, the other four (scenario A's) keep one path each,
    the one ECMP with the default hash gives them, over two paths."""
    pl = copy.deepcopy(base)
    for s in pl["fabric"]["switches"]:
        if "hash" in s:
            del s["hash"]
            s["route"] = "round_robin"
            s["spray_match"] = {"udp_sport": 0xC003}
    # scenario A's four flows (paths [3, 1] under ECMP) and the matched one
    sports = [0xC000 + 3001 * i % 0x3FFF for i in range(1, 5)] + [0xC003]
    flows = [[frame(sp, i) for i in range(160)] for sp in sports]
    st, rows, _ = replay(rocemu, tmp, "spraymatch", pl, line_rate(flows, 100))
    check(st["conservation"]["ok"] and drops(st) == 0, "H: conservation with no drops")
    paths = {}
    for _, sp, _, _, path in rows:
        paths.setdefault(sp, set()).add(path)
    check(len(paths.get(0xC003, ())) == 4, "H: the matched flow took all 4 paths (%s)" %
          sorted(paths.get(0xC003, ())))
    one = [sp for sp in sports if sp != 0xC003 and len(paths.get(sp, ())) == 1]
    check(len(one) == 4, "H: the other flows kept one path each (%s)" %
          {hex(k): sorted(v) for k, v in paths.items()})
    # the hashed flows' paths are ECMP's with the default hash (CRC16-CCITT of the 5-tuple)
    st_a, rows_a, _ = replay(rocemu, tmp, "spraymatch-ecmp", base, line_rate(flows, 100))
    paths_a = {}
    for _, sp, _, _, path in rows_a:
        paths_a.setdefault(sp, set()).add(path)
    check(len(set().union(*(paths[sp] for sp in one))) == 2 and
          all(paths[sp] == paths_a[sp] for sp in one),
          "H: each hashed flow on its ECMP path (%s)" %
          {hex(sp): (sorted(paths[sp]), sorted(paths_a[sp])) for sp in one})
    print("H: spray_match: flow 0xc003 over paths %s, the others %s" %
          (sorted(paths[0xC003]), {hex(sp): sorted(paths[sp]) for sp in one}))


def scenario_spray_reorder(rocemu, src, tmp):
    """F: pipelines/spray-4x25.json: sprayed over the skewed paths, the reorder stage in front
    of p1 puts every flow back in PSN order, every packet accounted."""
    with open(os.path.join(src, "pipelines", "spray-4x25.json")) as f:
        pl = json.load(f)
    sports = [0xC001, 0xC002, 0xC003, 0xC004, 0xC005]
    # five QPs (the reorder stage keys on destination IP + DestQP)
    flows = [[frame(sp, i, dqp=0x100 + k) for i in range(160)] for k, sp in enumerate(sports)]
    st, rows, _ = replay(rocemu, tmp, "spray-reorder", pl, line_rate(flows, 100))
    check(st["conservation"]["ok"] and drops(st) == 0 and len(rows) == 800,
          "F: conservation, no drops, 800 frames out (%d)" % len(rows))
    order = {}
    for _, sp, psn, _, _ in sorted(rows):
        order.setdefault(sp, []).append(psn)
    for sp in sports:
        check(order.get(sp) == list(range(160)), "F: flow %#x leaves in PSN order" % sp)
    ro = [x for x in st["stages"] if x["type"] == "reorder"][0]["counters"]
    check(ro["held"] > 0 and ro["timeouts"] == 0 and ro["released_in_order"] == ro["held"],
          "F: the reorder stage held and released in order what spraying reordered (%s)" % ro)
    print("F: spray + reorder: all 5 flows in PSN order at p1, %d packets held and released in "
          "order, no timeout" % ro["held"])


def two_tier(tier2):
    """leaf0 -> spine0..3 -> 2 parallel links each -> leaf1; tier 2's routing given."""
    links = []
    for k in range(4):
        links.append({"from": "leaf0", "to": "spine%d" % k, "rate_gbps": 100})
        links.append({"from": "spine%d" % k, "to": "leaf1", "rate_gbps": 100, "count": 2})
    h1 = {"function": "murmur3", "seed": 1}
    sws = [{"name": "leaf0", "ports": ["p0"], "route": "ecmp", "hash": h1},
           {"name": "leaf1", "ports": ["p1"]}]
    sws += [dict({"name": "spine%d" % k}, **tier2) for k in range(4)]
    return {"ports": [{"name": "p0"}, {"name": "p1"}],
            "ingress": [{"type": "parse"}, {"type": "forward", "mode": "pairs",
                                            "pairs": [["p0", "p1"]]}],
            "tm": {"ports": [{"port": "p1", "rate_gbps": 400}]},
            "fabric": {"switches": sws, "links": links}}


def scenario_polarization(rocemu, tmp):
    flows = [[frame(0xC000 + i * 97 % 0x3FFF, 0)] for i in range(256)]
    frames = line_rate(flows, 10)
    used = {}
    for tag, tier2 in (("same", {"route": "ecmp", "hash": {"function": "murmur3", "seed": 1}}),
                       ("diff", {"route": "ecmp", "hash": {"function": "murmur3", "seed": 2}})):
        st, rows, _ = replay(rocemu, tmp, "polar-" + tag, two_tier(tier2), frames)
        check(st["conservation"]["ok"] and len(rows) == 256, "C: %s: 256 frames out" % tag)
        lk = links(st)
        used[tag] = sorted(n for n, c in lk.items() if n.startswith("spine") and
                           n.endswith(("-leaf1.0", "-leaf1.1")) and c["routed"])
        spines = [n for n, c in lk.items() if n.startswith("leaf0") and c["routed"]]
        check(len(spines) == 4, "C: %s: the first tier uses all 4 spines, used %s" %
              (tag, spines))
    check(len(used["same"]) == 4, "C: same function and seed at both tiers: one link of each "
          "spine's two, used %s" % used["same"])
    check(len(used["diff"]) == 8, "C: different seeds: all 8 second-tier links, used %s" %
          used["diff"])
    print("C: polarization: same hash and seed at both tiers use %d of the 8 second-tier "
          "links, different seeds %d" % (len(used["same"]), len(used["diff"])))


def scenario_link_down(rocemu, tmp, base):
    pl = copy.deepcopy(base)
    sports = [0xC000 + 4099 * i % 0x3FFF for i in range(1, 9)]
    flows = [[frame(sp, i) for i in range(100)] for sp in sports]
    frames = [(t * 20, b) for t, b in line_rate(flows, 100)]  # 5 Gb/s: no queues
    t_down = frames[len(frames) // 2][0]
    prof = {"phases": [{"at_s": t_down / 1e9, "tm": {"leaf0-spine1": {"link": "down"}}}]}
    st0, rows0, _ = replay(rocemu, tmp, "down-before", pl, frames)
    st, rows, _ = replay(rocemu, tmp, "down", pl, frames, prof)
    check(st["conservation"]["ok"], "D: conservation")
    check(len(rows) == len(frames), "D: every frame delivered (%d of %d): nothing was queued "
          "on the link when it went down" % (len(rows), len(frames)))
    path1 = [i + 1 for i, l in enumerate(st["fabric"]["links"]) if l["name"] == "leaf0-spine1"][0]
    after = [r for r in rows if r[0] - T0 > t_down + 20_000 and r[4] == path1]
    check(not after, "D: %d frames crossed leaf0-spine1 after it went down" % len(after))
    check("replay: profile:" not in LAST_SUMMARY[0], "D: no profile change after the input")
    # the stats say which link is down (still, at the end), and only that one
    down = [p["port"] for p in st["tm"] if not p["link_up"]]
    check(down == ["leaf0-spine1"] and all(p["link_up"] for p in st0["tm"]),
          "D: --stats tm[].link_up false for leaf0-spine1 only (down: %s)" % down)
    # a phase after the last frame: the summary says no input frame met it
    late = copy.deepcopy(prof)
    late["phases"].append({"at_s": (frames[-1][0] + 1_000_000) / 1e9,
                           "tm": {"leaf0-spine2": {"rate_gbps": 10}}})
    replay(rocemu, tmp, "down-late", pl, frames, late)
    check("replay: profile: 1 of its 2 changes came after the last input frame" in
          LAST_SUMMARY[0], "D: the summary names the change after the input:\n" + LAST_SUMMARY[0])
    before = links(st0)["leaf0-spine1"]["routed"]
    moved = links(st)["leaf0-spine1"]["routed"]
    check(before > moved, "D: leaf0-spine1 carried %d frames with the link up all the time, "
          "%d with it down from the middle" % (before, moved))
    print("D: link down: leaf0-spine1 routed %d frames (%d without the failure); its flows "
          "rehashed over the 3 spines left" % (moved, before))


def scenario_resilient(rocemu, tmp, base):
    """R: resilient hashing at leaf0 (128 buckets) against plain ECMP, leaf0-spine1 down from
    a third of the run to two thirds: with the table only spine1's flows move, and back up it
    takes a quarter of the buckets from the others (only flows moving onto spine1); plain ECMP
    (hash mod 3, then mod 4) moves flows spine1 never carried."""
    sports = [0xC000 + 4099 * i % 0x3FFF for i in range(1, 33)]
    flows = [[frame(sp, i) for i in range(30)] for sp in sports]
    frames = [(t * 20, b) for t, b in line_rate(flows, 100)]  # 5 Gb/s: no queues
    # eight frames at each instant: replay hands them to the switch as one burst, which a
    # resilient leaf must not take through the plain-ECMP burst path
    frames = [(frames[i - i % 8][0], b) for i, (_, b) in enumerate(frames)]
    t_down, t_up = frames[len(frames) // 3][0], frames[2 * len(frames) // 3][0]
    prof = {"phases": [{"at_s": t_down / 1e9, "tm": {"leaf0-spine1": {"link": "down"}}},
                       {"at_s": t_up / 1e9, "tm": {"leaf0-spine1": {"link": "up"}}}]}
    res = copy.deepcopy(base)
    leaf0 = [x for x in res["fabric"]["switches"] if x["name"] == "leaf0"][0]
    leaf0["hash"]["resilient_buckets"] = 128
    moved = {}
    for tag, pl in (("plain", base), ("resilient", res)):
        st, rows, _ = replay(rocemu, tmp, "res-" + tag, pl, frames, prof)
        check(st["conservation"]["ok"] and len(rows) == len(frames),
              "R: %s: conservation, %d of %d frames delivered" % (tag, len(rows), len(frames)))
        path1 = [i + 1 for i, l in enumerate(st["fabric"]["links"])
                 if l["name"] == "leaf0-spine1"][0]
        span = {}  # flow -> [paths before, while down, after]
        for t, sp, _, _, path in rows:
            t -= T0
            k = 0 if t < t_down else 1 if t_down + 20_000 < t < t_up else \
                2 if t > t_up + 20_000 else None
            if k is not None:
                span.setdefault(sp, [set(), set(), set()])[k].add(path)
        stay = [sp for sp in sports if span[sp][0] and span[sp][0] != {path1}]
        moved[tag] = sum(1 for sp in stay if span[sp][1] != span[sp][0])
        back = [sp for sp in sports if span[sp][2] != span[sp][1]]
        sw = {x["name"]: x["counters"] for x in st["fabric"]["switches"]}
        if tag == "resilient":
            check(moved[tag] == 0, "R: resilient: %d flows spine1 did not carry moved when it "
                  "went down" % moved[tag])
            check(all(span[sp][1] and path1 not in span[sp][1] for sp in sports),
                  "R: resilient: no flow on leaf0-spine1 while it is down")
            check(all(span[sp][2] == {path1} for sp in back) and 0 < len(back) < 16,
                  "R: resilient: back up, the flows that move go onto spine1 (%d of 32)"
                  % len(back))
            check(sw["leaf0"]["buckets_moved"] == 64 and sw["leaf1"]["buckets_moved"] == 0,
                  "R: resilient: leaf0 buckets_moved %d (32 down, 32 back), leaf1 %d"
                  % (sw["leaf0"]["buckets_moved"], sw["leaf1"]["buckets_moved"]))
            print("R: resilient hashing: link down moved none of the %d flows spine1 did not "
                  "carry (plain ECMP moved %d); back up, %d of 32 flows moved onto it; "
                  "leaf0.buckets_moved %d" % (len(stay), moved["plain"], len(back),
                                              sw["leaf0"]["buckets_moved"]))
        else:
            check(moved[tag] > 0, "R: plain ECMP moves flows spine1 did not carry")
            check(sw["leaf0"]["buckets_moved"] == 0, "R: plain ECMP moves no bucket")


def scenario_path_warnings(rocemu, src, tmp, base):
    """W: what `rocemu check` (and replay) warn about a profile's links: spine-down.json (all of
    spine1's links) none; one downlink of spine1 down, a black hole for the flows leaf0 hashes
    there (the fabric withdraws no route), which a replay confirms (some frames dropped as
    fabric.spine1.drop_no_path, the rest delivered); all of leaf0's uplinks, no path; many
    cycles, a few lines and the rest summed up."""
    pipe = os.path.join(src, "pipelines", "ecmp-4x25.json")

    def warnings(prof, tag):
        pp = os.path.join(tmp, "warn-%s.json" % tag)
        with open(pp, "w") as f:
            json.dump(prof, f)
        r = subprocess.run([rocemu, "check", "--pipeline", pipe, "--profile", pp],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, "W: %s: check exits 0 (a warning is no error): %s"
              % (tag, r.stderr))
        # the path warnings (not check's note on lossless inputs a replay cannot pause)
        return [l for l in r.stderr.splitlines() if "WARNING" in l and
                "PFC cannot pause" not in l]

    r = subprocess.run([rocemu, "check", "--pipeline", pipe, "--profile",
                        os.path.join(src, "profiles", "spine-down.json")],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and not [l for l in r.stderr.splitlines() if "WARNING" in l and
                                     "PFC cannot pause" not in l],
          "W: spine-down.json: no warning (%s)" % r.stderr.strip())
    hole = {"phases": [{"at_s": 1, "duration_s": 2, "tm": {"spine1-leaf1": {"link": "down"}}}]}
    w = warnings(hole, "hole")
    check(len(w) == 1 and "from 1 s to 3 s some of leaf0's paths to leaf1 end at spine1" in
          w[0] and "the flows from p0 to p1 routed there are dropped (fabric.spine1."
          "drop_no_path)" in w[0] and w[0].endswith("(after phases[0].tm.spine1-leaf1.link)"),
          "W: black hole: %s" % w)
    cut = {"phases": [{"at_s": 5, "duration_s": 1,
                       "tm": {"leaf0-spine%d" % k: {"link": "down"} for k in range(4)}}]}
    w = warnings(cut, "cut")
    check(len(w) == 1 and "from 5 s to 6 s leaf0 has no path to leaf1: frames from p0 to p1 "
          "are dropped (fabric.leaf0.drop_no_path) (after phases[0].tm.leaf0-spine0.link)"
          in w[0], "W: no path: %s" % w)
    # a static leaf takes the first next hop up only: spine0's downlink down leaves it no
    # path (from a time with nanoseconds), spine1's changes nothing for it
    static = copy.deepcopy(base)
    leaf0 = [x for x in static["fabric"]["switches"] if x["name"] == "leaf0"][0]
    leaf0["route"] = "static"
    leaf0.pop("hash", None)
    pipe_ecmp, pipe = pipe, os.path.join(tmp, "static.json")
    with open(pipe, "w") as f:
        json.dump(static, f)
    w = warnings({"phases": [{"at_s": 1.0000015, "tm": {"spine0-leaf1": {"link": "down"}}}]},
                 "static0")
    check(len(w) == 1 and "from 1.0000015 s leaf0 has no path to leaf1" in w[0] and
          "(fabric.spine0.drop_no_path)" in w[0], "W: static leaf, spine0 down: %s" % w)
    w = warnings({"phases": [{"at_s": 1, "tm": {"spine1-leaf1": {"link": "down"}}}]},
                 "static1")
    check(w == [], "W: static leaf, spine1 down: no warning (%s)" % w)
    pipe = pipe_ecmp
    many = {"phases": [{"at_s": 1, "repeat": 20, "every_s": 1, "phases": [
        {"at_s": 0, "duration_s": 0.5, "tm": {"spine1-leaf1": {"link": "down"}}}]}]}
    w = warnings(many, "many")
    check(len(w) == 7 and "and 14 more times" in w[-1], "W: 20 cycles: 6 lines and a sum: %s"
          % w[-1:])
    # the black hole is real: a replay drops the flows hashed to spine1, delivers the rest
    sports = [0xC000 + 4099 * i % 0x3FFF for i in range(1, 17)]
    frames = [(t * 20, b) for t, b in line_rate([[frame(sp, i) for i in range(20)]
                                                   for sp in sports], 100)]
    prof = {"phases": [{"at_s": 0, "tm": {"spine1-leaf1": {"link": "down"}}}]}
    st, rows, _ = replay(rocemu, tmp, "hole", copy.deepcopy(base), frames, prof)
    sw = {x["name"]: x["counters"] for x in st["fabric"]["switches"]}
    hole_n = sw["spine1"]["drop_no_path"]
    check(st["conservation"]["ok"] and hole_n > 0 and hole_n % 20 == 0 and
          hole_n + len(rows) == len(frames),
          "W: replay: %d frames dropped at spine1 (whole flows), %d delivered, of %d"
          % (hole_n, len(rows), len(frames)))
    print("W: profile path warnings: black hole, no path, 20 cycles summed up; the black hole "
          "in replay: %d of %d frames (%d of 16 flows) dropped as fabric.spine1.drop_no_path"
          % (hole_n, len(frames), hole_n // 20))


def bottleneck(prio_dscp_lossless):
    lossless = [3] if prio_dscp_lossless else []
    link = {"rate_gbps": 25, "buffer_kb": 1024, "lossless": lossless,
            "pfc": {"cable_m": 3}} if lossless else {"rate_gbps": 25, "buffer_kb": 256}
    down = dict(link, rate_gbps=10)
    return {"ports": [{"name": "p0"}, {"name": "p1"}],
            "ingress": [{"type": "parse", "trust": "dscp", "dscp_map": {"26": 3}},
                        {"type": "forward", "mode": "pairs", "pairs": [["p0", "p1"]]}],
            "tm": {"ports": [dict({"port": "p0", "rate_gbps": 25}, **(
                {"lossless": [3], "pfc": {"cable_m": 3}} if lossless else {})),
                {"port": "p1", "rate_gbps": 25}]},
            "fabric": {"switches": [{"name": "leaf0", "ports": ["p0"]},
                                    {"name": "leaf1", "ports": ["p1"]},
                                    {"name": "spine0"}],
                       "links": [dict({"from": "leaf0", "to": "spine0"}, **link),
                                 dict({"from": "spine0", "to": "leaf1"}, **down)]}}


def scenario_lossless(rocemu, tmp):
    flow = [[frame(0xC123, i) for i in range(400)]]          # 433 KB at 25 Gb/s
    st, rows, p0 = replay(rocemu, tmp, "lossless", bottleneck(True), line_rate(flow, 25))
    up = tm_port(st, "leaf0-spine0")
    paused = [p for p in up["priorities"] if p["prio"] == 3][0]["paused_ns"]
    pfc_out = [b for _, _, b in p0 if b[12:14] == b"\x88\x08"]
    check(drops(st) == 0 and len(rows) == 400, "E: lossless: nothing lost (%d drops, %d of 400 "
          "out)" % (drops(st), len(rows)))
    check(paused > 0, "E: the hop before the bottleneck (leaf0-spine0, priority 3) was paused")
    check(len(pfc_out) > 0 and st["runner"]["pfc_created"] == len(pfc_out),
          "E: real PFC frames out of p0 (%d)" % len(pfc_out))
    # twice the burst: 519 KB would queue at the 10 Gb/s link, which has 256 KB
    flow2 = [[frame(0xC123, i) for i in range(800)]]
    st2, rows2, _ = replay(rocemu, tmp, "lossy", bottleneck(False), line_rate(flow2, 25))
    dn = tm_port(st2, "spine0-leaf1")["counters"]
    check(dn.get("drop_queue_full", 0) > 0 and
          drops(st2) == dn["drop_queue_full"] and st2["conservation"]["ok"],
          "E: lossy: the bottleneck drops under tm.spine0-leaf1.drop_queue_full (%s)" % dn)
    print("E: lossless: 0 drops, leaf0-spine0 paused %d ns, %d PFC frames out of p0; lossy: "
          "%d drops (tm.spine0-leaf1.drop_queue_full)" % (paused, len(pfc_out),
                                                         dn.get("drop_queue_full", 0)))


def scenario_drops(rocemu, tmp):
    """G: the fabric's own drop reasons through the one drop path: a lossy link
    (fabric.leaf0-spine0.drop_link_loss, about its loss probability) and no link up towards
    the egress leaf (fabric.leaf0.drop_no_path after a profile takes the only uplink down)."""
    pl = bottleneck(False)
    pl["fabric"]["links"][0]["loss"] = 0.25
    flow = [[frame(0xC123, i) for i in range(400)]]
    st, rows, _ = replay(rocemu, tmp, "linkloss", pl, [(t * 4, b) for t, b in
                                                     line_rate(flow, 25)])
    lost = links(st)["leaf0-spine0"]["drop_link_loss"]
    check(st["conservation"]["ok"] and 60 <= lost <= 140 and len(rows) == 400 - lost and
          drops(st) == lost, "G: link loss 0.25 of 400: %d lost, %d out" % (lost, len(rows)))
    frames = [(t * 4, b) for t, b in line_rate(flow, 25)]
    t_down = frames[200][0]
    prof = {"phases": [{"at_s": t_down / 1e9, "tm": {"leaf0-spine0": {"link": "down"}}}]}
    st2, rows2, _ = replay(rocemu, tmp, "nopath", bottleneck(False), frames, prof)
    sw = {s_["name"]: s_["counters"] for s_ in st2["fabric"]["switches"]}
    nopath = sw["leaf0"]["drop_no_path"]
    check(st2["conservation"]["ok"] and nopath > 150 and
          drops(st2) == nopath + tm_port(st2, "leaf0-spine0")["counters"]["drop_link_down"],
          "G: uplink down: %d dropped as fabric.leaf0.drop_no_path" % nopath)
    print("G: fabric drop reasons: %d of 400 lost on a 25%% lossy link "
          "(fabric.leaf0-spine0.drop_link_loss); %d dropped with no link up "
          "(fabric.leaf0.drop_no_path)" % (lost, nopath))


def main():
    rocemu, src = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        base = scenario_ecmp(rocemu, src, tmp)
        scenario_spray(rocemu, tmp, base)
        scenario_spray_match(rocemu, tmp, base)
        scenario_spray_reorder(rocemu, src, tmp)
        scenario_polarization(rocemu, tmp)
        scenario_link_down(rocemu, tmp, base)
        scenario_resilient(rocemu, tmp, base)
        scenario_path_warnings(rocemu, src, tmp, base)
        scenario_lossless(rocemu, tmp)
        scenario_drops(rocemu, tmp)
    check(VIA_SEEN[0] > 1000, "via= checked on %d frames" % VIA_SEEN[0])
    print("via=: checked on the %d frames that crossed the fabric" % VIA_SEEN[0])
    for f in fails:
        print("FAIL:", f)
    print("fabric: %s" % ("PASS" if not fails else "%d failures" % len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
