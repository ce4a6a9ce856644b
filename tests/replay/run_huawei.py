#!/usr/bin/env python3
"""Replay test: the real Huawei RC capture through bump-in-wire at 10 Gb/s.

Asserts: the parse stage finds the 105 RoCEv2 frames and every ICRC valid; every frame comes out byte-identical and in order; departures are spaced by at
least one frame wire time at 10 Gb/s and never precede arrival + wire time; a second run
gives a byte-identical output file; the text description matches expected.txt."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pcapdump  # noqa: E402

RATE_BPS = 10_000_000_000


def wire_ns(length):
    return (max(length, 60) + 24) * 8 * 1e9 / RATE_BPS


def check_capture(rocemu, here, inp, fin, fout, tmp):
    """The capture stage: the ingress tap (snaplen 64) holds every input frame truncated, with
    its arrival time and original length; the egress tap holds exactly the output frames with
    their departure times."""
    errs = []
    r = subprocess.run([rocemu, "replay", "--pipeline",
                        os.path.join(here, "pipeline-capture.json"), "--in", inp + ":p0",
                        "--out", os.path.join(tmp, "cap-out.pcap") + ":p1"],
                       capture_output=True, text=True, timeout=120, cwd=tmp)
    if r.returncode != 0:
        return ["capture replay exited %d: %s" % (r.returncode, r.stderr)]
    if "capture: 123 packets written to ingress.pcap" not in r.stdout or \
            "capture: 123 packets written to egress.pcap" not in r.stdout:
        errs.append("capture summary lines missing:\n" + r.stdout)
    _, cin = pcapdump.read_pcap(os.path.join(tmp, "ingress.pcap"))
    _, cout = pcapdump.read_pcap(os.path.join(tmp, "egress.pcap"))
    # The real capture is not quite time-ordered (frame 67 is 1 us older than frame 66): the
    # virtual clock never runs backwards, so such a frame arrives at the current time.
    want, clock = [], 0
    for t, l, p in fin:
        clock = max(clock, t)
        want.append((clock, l, p[:64]))
    if want != cin:
        errs.append("ingress capture differs from the input (arrival time, length, first 64 B)")
    if fout != cout:
        errs.append("egress capture differs from the replay output (departure time or bytes)")
    return errs


def main():
    rocemu, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    here = os.path.join(src, "tests", "replay", "huawei-bump-10g")
    # The copy of ../shared/testdata/real kept in the repository (see its PROVENANCE.md).
    inp = os.path.join(src, "tests", "unit", "proto", "data", "real", "huawei_rc_send.pcap")
    if not os.path.exists(inp):
        print("FAIL: real capture missing: %s" % inp)
        return 1
    pipeline = os.path.join(here, "pipeline.json")
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        outs = []
        for run in (1, 2):
            out = os.path.join(tmp, "out%d.pcap" % run)
            r = subprocess.run([rocemu, "replay", "--pipeline", pipeline, "--in", inp + ":p0",
                                "--out", out + ":p1", "--stats", os.path.join(tmp, "s.json")],
                               capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                print(r.stdout, r.stderr)
                print("FAIL: rocemu replay exited %d" % r.returncode)
                return 1
            if "conservation: rx 123 + created 0 = tx 123 + drops 0 + held 0 + consumed 0: OK" not in r.stdout:
                failures.append("conservation line missing or wrong:\n" + r.stdout)
            outs.append(out)
            with open(os.path.join(tmp, "s.json")) as f:
                stats = json.load(f)
            parse = [x for x in stats["stages"] if x["type"] == "parse"][0]["counters"]
            if parse["class_rocev2"] != 105 or parse["icrc_bad"] != 0:
                failures.append("parse: %d RoCEv2 frames (want 105), %d bad ICRCs (want 0)"
                                % (parse["class_rocev2"], parse["icrc_bad"]))
        with open(outs[0], "rb") as a, open(outs[1], "rb") as b:
            if a.read() != b.read():
                failures.append("two runs gave different output files")
        _, fin = pcapdump.read_pcap(inp)
        ns, fout = pcapdump.read_pcap(outs[0])
        if not ns:
            failures.append("output is not a nanosecond pcap")
        if len(fin) != len(fout) or len(fin) != 123:
            failures.append("frame count: in %d, out %d, expected 123" % (len(fin), len(fout)))
        prev = None
        lines = []
        for i, ((tin, _, pin), (tout, lout, pout)) in enumerate(zip(fin, fout)):
            if pin != pout:
                failures.append("frame %d: bytes differ" % (i + 1))
            w = wire_ns(len(pout))
            if tout < tin + int(w):
                failures.append("frame %d departs at %d, before arrival %d + wire %.1f ns"
                                % (i + 1, tout, tin, w))
            if prev is not None and tout - prev < int(w):
                failures.append("frame %d: spacing %d ns < wire time %.1f ns"
                                % (i + 1, tout - prev, w))
            prev = tout
            lines.append("%d %s %d %s" % (tout - fin[0][0], "p1", lout, pcapdump.describe(pout)))
        got = "\n".join(lines) + "\n"
        with open(os.path.join(here, "expected.txt")) as f:
            want = f.read()
        if got != want:
            with open(os.path.join(tmp, "got.txt"), "w") as f:
                f.write(got)
            d = subprocess.run(["diff", "-u", os.path.join(here, "expected.txt"),
                                os.path.join(tmp, "got.txt")], capture_output=True, text=True)
            failures.append("output differs from expected.txt:\n" + d.stdout[:4000])
        failures += check_capture(rocemu, here, inp, fin, fout, tmp)
    for f in failures:
        print("FAIL:", f)
    print("huawei-bump-10g: %d frames checked, %s" % (len(fin), "ok" if not failures else
                                                        "%d failures" % len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
