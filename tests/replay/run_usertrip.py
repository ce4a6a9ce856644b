#!/usr/bin/env python3
"""What a new user tripped on (issue 34, item 5), rocemu's part, on the virtual clock.

The switch is pipelines/capture-annotated.json (lossless priority 3, an annotated egress capture
with "drops": true) with its capture file in the test's directory. The input: 200 RoCE RDMA
WRITE frames (DSCP 26 -> priority 3) into p0 towards p1, one every 5 us from t0. A profile turns
incast8 on (8 virtual senders at 100 Gb/s into p1 priority 3) from t0 + 100 us to t0 + 300 us:
the virtual senders' frames overflow p1's lossless headroom and are dropped by the thousand.
Checks, one section per fix:
- virtual: neither the capture stage nor --drops writes a virtual incast frame unless asked
  ("virtual": true, --drops-virtual), and the summary says how many it left out.
- snaplen: --drops writes 128-byte headers by default (--drops-snaplen B to change it), each
  with its length on the wire."""
import copy
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import capfile  # noqa: E402
import roceframes  # noqa: E402

T0 = 1_000_000_000_000
FAILS = []


def check(cond, what):
    print("%s %s" % ("ok  " if cond else "FAIL", what))
    if not cond:
        FAILS.append(what)


class Lab:
    def __init__(self, rocemu, src, tmp):
        self.rocemu, self.src, self.tmp = rocemu, src, tmp
        with open(os.path.join(src, "pipelines", "capture-annotated.json")) as f:
            self.base = json.load(f)
        self.inp = os.path.join(tmp, "in.pcap")
        roceframes.write_pcap(self.inp, [(i * 5000, roceframes.rc_frame(i)) for i in range(200)],
                              T0)
        self.prof = os.path.join(tmp, "incast.json")
        with open(self.prof, "w") as f:
            json.dump({"phases": [
                {"at_s": 0.0001, "incast": {"incast8": {"enabled": True}}},
                {"at_s": 0.0003, "incast": {"incast8": {"enabled": False}}}]}, f)

    def pipeline(self, name, every_nth=None, **capture):
        """capture-annotated.json with its capture stage's keys changed (None deletes) and its
        impair event dropping every_nth data frame."""
        d = copy.deepcopy(self.base)
        if every_nth is not None:
            d["ingress"][2]["events"][0]["match"]["every_nth"] = every_nth
        cap = d["egress"][0]
        cap["file"] = os.path.join(self.tmp, name + ".pcapng")
        for k, v in capture.items():
            if v is None:
                cap.pop(k, None)
            else:
                cap[k] = v
        p = os.path.join(self.tmp, name + ".json")
        with open(p, "w") as f:
            json.dump(d, f)
        return p

    def replay(self, pipeline, *extra, profile=True):
        argv = [self.rocemu, "replay", "--pipeline", pipeline, "--in", self.inp + ":p0"]
        if profile:
            argv += ["--profile", self.prof]
        r = subprocess.run(argv + list(extra), capture_output=True, text=True, timeout=240,
                           cwd=self.tmp)
        return r

    def check_ok(self, r, what):
        check(r.returncode == 0, "%s: exit status %d%s" % (
            what, r.returncode, "" if r.returncode == 0 else "\n" + r.stdout + r.stderr))


def virtual_frames(recs):
    return sum(1 for r in recs if r[4] is not None and "created=incast" in r[4])


def section_virtual(lab):
    print("== virtual incast frames are captured only when asked")
    pl = lab.pipeline("cap")
    drops = os.path.join(lab.tmp, "drops.pcapng")
    r = lab.replay(pl, "--drops", drops)
    lab.check_ok(r, "replay with the incast profile, capture stage and --drops")
    if r.returncode != 0:
        return
    _, cap = capfile.read(os.path.join(lab.tmp, "cap.pcapng"))
    _, drp = capfile.read(drops)
    check(virtual_frames(cap) == 0, "capture stage: %d virtual frames (none without "
          "\"virtual\")" % virtual_frames(cap))
    check(virtual_frames(drp) == 0, "--drops: %d virtual frames (none without --drops-virtual)"
          % virtual_frames(drp))
    check(len(cap) < 1000 and len(drp) < 1000,
          "files hold real frames only: capture %d, drops %d records" % (len(cap), len(drp)))
    check("dropped virtual incast frames not captured" in r.stdout and
          "dropped virtual incast frames not written: --drops-virtual" in r.stdout,
          "the summary says what was left out and how to include it")
    pl = lab.pipeline("capv", virtual=True)
    r = lab.replay(pl, "--drops", drops, "--drops-virtual")
    lab.check_ok(r, "replay with \"virtual\": true and --drops-virtual")
    if r.returncode != 0:
        return
    _, cap = capfile.read(os.path.join(lab.tmp, "capv.pcapng"))
    _, drp = capfile.read(drops)
    check(virtual_frames(cap) > 1000, "\"virtual\": true: %d virtual frames captured" %
          virtual_frames(cap))
    check(virtual_frames(drp) == virtual_frames(cap),
          "--drops-virtual: %d virtual frames written, as the capture stage" %
          virtual_frames(drp))
    r = lab.replay(lab.pipeline("capbad", virtual=True, drops=None), profile=False)
    check(r.returncode == 2 and r.stderr.startswith("egress[0].virtual: needs \"drops\""),
          "\"virtual\" without \"drops\" is refused: %r" % r.stderr.split("\n")[0])


def section_snaplen(lab):
    print("== --drops writes headers")
    pl = lab.pipeline("snap", every_nth=50)
    drops = os.path.join(lab.tmp, "snap-drops.pcapng")
    r = lab.replay(pl, "--drops", drops, profile=False)
    lab.check_ok(r, "replay dropping every 50th frame")
    if r.returncode != 0:
        return
    _, drp = capfile.read(drops)
    check(len(drp) == 4 and all(x[2] == 128 and x[3] == 1082 for x in drp),
          "--drops: 4 records of 128 of 1082 bytes: %s" % [(x[2], x[3]) for x in drp])
    r = lab.replay(pl, "--drops", drops, "--drops-snaplen", "300", profile=False)
    _, drp = capfile.read(drops)
    check(r.returncode == 0 and len(drp) == 4 and all(x[2] == 300 for x in drp),
          "--drops-snaplen 300: 4 records of 300 bytes: %s" % [(x[2], x[3]) for x in drp])
    r = lab.replay(pl, "--drops", drops, "--drops-snaplen", "10", profile=False)
    check(r.returncode == 2 and r.stderr.startswith(
        "rocemu replay: --drops-snaplen: must be a number of bytes from 64 to 65535, got \"10\""),
        "--drops-snaplen 10 refused: %r" % r.stderr.split("\n")[0])
    r = lab.replay(pl, "--drops-snaplen", "200", profile=False)
    check(r.returncode == 2 and r.stderr.startswith(
        "rocemu replay: --drops-snaplen: needs --drops FILE.pcapng"),
        "--drops-snaplen without --drops refused: %r" % r.stderr.split("\n")[0])


def main():
    rocemu, src = os.path.abspath(sys.argv[1]), sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        lab = Lab(rocemu, src, tmp)
        section_virtual(lab)
        section_snaplen(lab)
    if FAILS:
        print("FAILED: %d checks" % len(FAILS))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
