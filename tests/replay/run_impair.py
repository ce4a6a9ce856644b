#!/usr/bin/env python3
"""Replay test of the impair stage, see impair-targeted/gen.py for the scenario (an RC flow
retransmitted go-back-N twice). Two runs on the same generated input:

1. impair-targeted/pipeline.json: "drop PSN 17 at iteration 2" on QP 0x45 drops exactly the
   frame at t=28000 (nothing else, not PSN 17 at iteration 2 on QP 0x46); every 5th data
   packet of QP 0x45 gets DSCP 10; the 2nd NAK gets CE; frames arriving in [10 us, 15 us)
   after the first one get UDP source port 1111 with the ICRC recomputed. Every output frame,
   one line each, equals impair-targeted/expected.txt; counters and conservation checked.
2. pipelines/impair-lab.json + profiles/psn-targeted-drop.json (as shipped): the profile arms
   the psn17_it2 event; the same single frame is dropped.
3. impair-lab.json plus a delay stage holding p0's frames 100 us: p1's output is the undelayed
   output shifted by exactly 100 us, p0's is unchanged, nothing is left held.
4. The same with an impair "delay" event ("direction": "p0->p1", delay_us 100) instead of the
   delay stage: the same output, counted per event.
5. impair-lab.json plus a disabled "cut" event (drop everything) and a profile phase enabling
   it at 10 us for duration_s 5 us: exactly the frames that arrive in [10 us, 15 us) after the
   first one are dropped, in both directions.
7. The delay stage and an impair delay event on egress (after the TM): p1's output is the
   undelayed output 100 us later, p0's unchanged.
6. A Bernoulli loss drops the same frames (seed 7) with and without capture stages added before
   and after the impair stage (each stage's random stream comes from its name); seed 8 differs."""
import json
import os
import struct
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "impair-targeted"))
import gen  # noqa: E402
import pcapdump  # noqa: E402
import roceframes  # noqa: E402


def run(rocemu, pipeline, tmp, tag, extra=()):
    return roceframes.replay_two_ports(rocemu, pipeline, tmp, tag, "impair", extra)[:3]


def extra(p):
    """DSCP, UDP source port and ICRC check of an untagged IPv4 RoCEv2 frame."""
    tot = struct.unpack(">H", p[16:18])[0]
    body = p[14:14 + tot - 4]
    ok = roceframes.icrc(body) == p[14 + tot - 4:14 + tot]
    ipok = roceframes.ip_cksum(p[14:24] + b"\0\0" + p[26:34]) == struct.unpack(">H", p[24:26])[0]
    return " dscp=%d sport=%d icrc=%s ipcsum=%s" % (p[15] >> 2, struct.unpack(">H", p[34:36])[0],
                                                   "ok" if ok else "BAD", "ok" if ipok else "BAD")


def lines(frames):
    out = sorted((t, port, "%d %s %d %s%s" % (t - gen.T0, port, len(p), pcapdump.describe(p),
                                             extra(p)))
                 for port in ("p0", "p1") for t, _, p in frames[port])
    return "".join(x[2] + "\n" for x in out)


def main():
    rocemu, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        roceframes.write_pcap(os.path.join(tmp, "a.pcap"), gen.a_frames(), gen.T0)
        roceframes.write_pcap(os.path.join(tmp, "b.pcap"), gen.b_frames(), gen.T0)

        out, ctr, frames = run(rocemu, os.path.join(HERE, "impair-targeted", "pipeline.json"),
                               tmp, "case")
        want = {"psn17_it2_matched": 1, "drop_psn17_it2": 1, "every5_matched": 8,
                "every5_rewritten": 8, "nak2_matched": 1, "nak2_marked": 1, "window_matched": 5,
                "window_rewritten": 5, "window_skipped": 0}
        for k, v in want.items():
            if ctr.get(k) != v:
                failures.append("case: counter %s = %r, want %d" % (k, ctr.get(k), v))
        if "conservation: rx 48 + created 0 = tx 47 + drops 1 + held 0 + consumed 0: OK" not in out:
            failures.append("case: conservation line missing or wrong:\n" + out)
        got = lines(frames)
        d = roceframes.diff_expected(got, os.path.join(HERE, "impair-targeted", "expected.txt"), tmp)
        if d is not None:
            failures.append("case: output differs from expected.txt:\n" + d)

        out, ctr, frames = run(rocemu, os.path.join(src, "pipelines", "impair-lab.json"), tmp,
                               "shipped", ["--profile",
                                           os.path.join(src, "profiles", "psn-targeted-drop.json")])
        if ctr.get("drop_psn17_it2") != 1 or ctr.get("drop_gilbert") != 0:
            failures.append("shipped: drop_psn17_it2 = %r, drop_gilbert = %r, want 1, 0"
                            % (ctr.get("drop_psn17_it2"), ctr.get("drop_gilbert")))
        def qp_psn(p):
            return (struct.unpack(">I", b"\0" + p[47:50])[0],
                    struct.unpack(">I", b"\0" + p[51:54])[0])

        got = [qp_psn(p) for _, _, p in frames["p1"]]
        want_seq = [qp_psn(p) for t, p in gen.a_frames() if t != 28000]
        if got != want_seq:
            failures.append("shipped: frames to p1 (QP, PSN) = %r, want all but t=28000: %r"
                            % (got, want_seq))
        # 3. A delay stage after forward: p0's frames 100 us later, p1's untouched; the replay
        #    clock wakes up for the held frames and all of them leave.
        with open(os.path.join(src, "pipelines", "impair-lab.json")) as f:
            pl = json.load(f)
        pl["ingress"].append({"type": "delay", "rules": [
            {"match": {"ports": ["p0"]}, "dist": "constant", "delay_us": 100}]})
        dpath = os.path.join(tmp, "delay.json")
        with open(dpath, "w") as f:
            json.dump(pl, f)
        _, _, base = run(rocemu, os.path.join(src, "pipelines", "impair-lab.json"), tmp, "nodelay")
        out, _, frames = run(rocemu, dpath, tmp, "delay")
        if "conservation: rx 48 + created 0 = tx 48 + drops 0 + held 0 + consumed 0: OK" not in out:
            failures.append("delay: conservation line missing or wrong:\n" + out)
        shifted = [(t + 100000, p) for t, _, p in base["p1"]]
        if [(t, p) for t, _, p in frames["p1"]] != shifted:
            failures.append("delay: p1 output is not the undelayed output 100 us later")
        if [(t, p) for t, _, p in frames["p0"]] != [(t, p) for t, _, p in base["p0"]]:
            failures.append("delay: p0 output (not matched) changed")
        # 4. The impair delay action does what the delay stage did.
        pl["ingress"].pop()
        imp = [st for st in pl["ingress"] if st["type"] == "impair"][0]
        imp["events"].append({"name": "slow", "action": "delay", "delay_us": 100,
                              "match": {"direction": "p0->p1"}})
        ipath = os.path.join(tmp, "impair-delay.json")
        with open(ipath, "w") as f:
            json.dump(pl, f)
        out, ctr, frames = run(rocemu, ipath, tmp, "impdelay")
        if "conservation: rx 48 + created 0 = tx 48 + drops 0 + held 0 + consumed 0: OK" not in out:
            failures.append("impair delay: conservation line missing or wrong:\n" + out)
        if [(t, p) for t, _, p in frames["p1"]] != shifted:
            failures.append("impair delay: p1 output is not the undelayed output 100 us later")
        if [(t, p) for t, _, p in frames["p0"]] != [(t, p) for t, _, p in base["p0"]]:
            failures.append("impair delay: p0 output (not matched) changed")
        if ctr.get("slow_delayed") != 45 or ctr.get("delay_released") != 45:
            failures.append("impair delay: slow_delayed = %r, delay_released = %r, want 45"
                            % (ctr.get("slow_delayed"), ctr.get("delay_released")))
        # 5. A timed phase: "cut" drops everything in [10 us, 15 us) and nothing else.
        imp["events"].pop()
        imp["events"].append({"name": "cut", "action": "drop", "enabled": False})
        cpath = os.path.join(tmp, "cut.json")
        with open(cpath, "w") as f:
            json.dump(pl, f)
        ppath = os.path.join(tmp, "cut-profile.json")
        with open(ppath, "w") as f:
            json.dump({"phases": [{"at_s": 10e-6, "duration_s": 5e-6,
                                   "stages": {"impair": {"cut": {"enabled": True}}}}]}, f)
        out, ctr, frames = run(rocemu, cpath, tmp, "cut", ["--profile", ppath])
        def kept(fr):
            return [p for t, p in fr if not 10000 <= t < 15000]
        if [p for _, _, p in frames["p1"]] != kept(gen.a_frames()):
            failures.append("cut: frames to p1 are not exactly those outside [10 us, 15 us)")
        if [p for _, _, p in frames["p0"]] != kept(gen.b_frames()):
            failures.append("cut: frames to p0 changed")
        if ctr.get("drop_cut") != 5:
            failures.append("cut: drop_cut = %r, want 5" % ctr.get("drop_cut"))
        # 6. Streams by name: a random loss picks the same frames whatever stages are added
        #    before the impair stage (here a capture and a mirror-less parse-only stage).
        with open(os.path.join(src, "pipelines", "impair-lab.json")) as f:
            pl = json.load(f)
        imp = [st for st in pl["ingress"] if st["type"] == "impair"][0]
        for ev in imp["events"]:
            if ev["name"] == "bernoulli":
                ev["enabled"] = True
                ev["loss"]["p"] = 0.3
        bpath = os.path.join(tmp, "bern.json")
        with open(bpath, "w") as f:
            json.dump(pl, f)
        pl["ingress"].insert(1, {"type": "capture", "name": "tap", "file": "tap.pcap"})
        pl["egress"] = [{"type": "capture", "name": "tap2", "file": "tap2.pcap"}]
        b2path = os.path.join(tmp, "bern-more.json")
        with open(b2path, "w") as f:
            json.dump(pl, f)
        _, c1, f1 = run(rocemu, bpath, tmp, "bern", ["--seed", "7"])
        _, c2, f2 = run(rocemu, b2path, tmp, "bernmore", ["--seed", "7"])
        _, c3, f3 = run(rocemu, bpath, tmp, "bern8", ["--seed", "8"])
        if not c1.get("drop_bernoulli") or c1.get("drop_bernoulli") != c2.get("drop_bernoulli") \
                or f1 != f2:
            failures.append("streams by name: adding capture stages changed impair's drops "
                            "(%r vs %r)" % (c1.get("drop_bernoulli"), c2.get("drop_bernoulli")))
        if f3 == f1:
            failures.append("streams by name: another seed dropped the same frames")
        # 7. Hold and release on egress: the delay stage and an impair delay event after the
        #    TM shift p1's departures by exactly 100 us, p0's not at all.
        with open(os.path.join(src, "pipelines", "impair-lab.json")) as f:
            pl = json.load(f)
        pl["egress"] = [{"type": "delay", "rules": [
            {"match": {"out_ports": ["p1"]}, "dist": "constant", "delay_us": 100}]}]
        epath = os.path.join(tmp, "egress-delay.json")
        with open(epath, "w") as f:
            json.dump(pl, f)
        imp = [st for st in pl["ingress"] if st["type"] == "impair"][0]
        pl["ingress"].remove(imp)  # one impair stage per switch: move it to egress
        imp["events"].append({"name": "slow", "action": "delay", "delay_us": 100,
                              "match": {"out_ports": ["p1"]}})
        pl["egress"] = [imp]
        e2path = os.path.join(tmp, "egress-impair-delay.json")
        with open(e2path, "w") as f:
            json.dump(pl, f)
        for tag, path in (("egress delay stage", epath), ("egress impair delay", e2path)):
            out, _, frames = run(rocemu, path, tmp, tag.replace(" ", "-"))
            if "conservation: rx 48 + created 0 = tx 48 + drops 0 + held 0 + consumed 0: OK" \
                    not in out:
                failures.append("%s: conservation line missing or wrong:\n%s" % (tag, out))
            if [(t, p) for t, _, p in frames["p1"]] != shifted:
                failures.append("%s: p1 output is not the undelayed output 100 us later" % tag)
            if [(t, p) for t, _, p in frames["p0"]] != [(t, p) for t, _, p in base["p0"]]:
                failures.append("%s: p0 output changed" % tag)
    for f in failures:
        print("FAIL: " + f)
    if failures:
        return 1
    print("ok: PSN 17 dropped at iteration 2 only; every-Nth, Nth-only and time-window events "
          "hit exactly the expected frames; the shipped profile arms the same drop; "
          "a delay stage and an impair delay event shift exactly their frames by 100 us; "
          "a phase with duration_s drops exactly the frames in its window; random losses do not "
          "depend on the other stages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
