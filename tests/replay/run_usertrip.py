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
  with its length on the wire.
- caps: a capture stage's max_mb and --drops-max-mb stop that capture only (its file complete
  and in place, every frame still forwarded), with one line, and exit status 1; a write error
  likewise; the summary names only files that exist.
- order: every file the run writes (the capture stage's, --out for every port, --drops) is in
  time order, traffic both ways with drops and the incast (capinfos' "strict time order"; the
  live case, records pushed out of order, is tests/unit/test_capture.c test_time_order).
- format: an output's format follows its name (.pcap classic, .pcapng pcapng), for every port
  too; annotations refuse a run whose outputs are all classic pcap.
- prefix: every error line of replay and check starts "rocemu replay:" / "rocemu check:" (a
  pipeline's, a profile's, an option's, getopt's); --version names the git commit and DPDK's
  version, and so do the replay summary and --stats.
- unpausable: replay and check say when a lossless class under PFC is fed by replayed inputs,
  which PFC cannot pause (drop_headroom_overflow on priority 3 follows).
- estimate: check estimates a capture's volume over the profile and warns above 1 GB unless
  max_mb or rotation bounds it (capture-annotated + incast-8to1: about 10.8 GB).
- docs: in a README.md code block with two or more rocegen/rocemu processes, each names its own
  --file-prefix;
  profiles/README.md lists every shipped profile; scripts/demo.sh names the captures it
  leaves in its "full outputs" line and says the next run replaces them."""
import copy
import json
import os
import re
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
    check(r.returncode == 2 and r.stderr.startswith(
        "rocemu replay: egress[0].virtual: needs \"drops\""),
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


def section_caps(lab):
    print("== size caps and write errors stop one capture, not the run")
    out = os.path.join(lab.tmp, "caps-out.pcap")
    pl = lab.pipeline("capped", annotate="all", max_mb=0.02)
    r = lab.replay(pl, "--out", out + ":p1", profile=False)
    capf = os.path.join(lab.tmp, "capped.pcapng")
    lines = [x for x in r.stderr.splitlines() if "size cap" in x]
    check(r.returncode == 1 and len(lines) == 1 and lines[0].startswith(
        "rocemu replay: stage capture: %s: reached its size cap of 0.02 MB: capture stopped "
        "there" % capf), "capture max_mb 0.02: exit 1 and one line: %r" % r.stderr)
    _, recs = capfile.read(capf) if os.path.exists(capf) else (None, [])
    check(0 < len(recs) < 200 and os.path.getsize(capf) <= 20000,
          "the capture stopped at its cap: %d records, %d bytes" % (
              len(recs), os.path.getsize(capf) if os.path.exists(capf) else -1))
    _, fwd = capfile.read(out) if os.path.exists(out) else (None, [])
    check(len(fwd) == 200, "forwarding went on: %d of 200 frames out of p1" % len(fwd))
    check("capture: %d packets written to %s (stopped at max_mb)" % (len(recs), capf) in r.stdout,
          "the summary names the file and says where it stopped")
    drops = os.path.join(lab.tmp, "capped-drops.pcapng")
    r = lab.replay(lab.pipeline("capd"), "--drops", drops, "--drops-virtual", "--drops-max-mb",
                   "0.01", "--out", out + ":p1")
    lines = [x for x in r.stderr.splitlines() if "--drops-max-mb" in x]
    check(r.returncode == 1 and len(lines) == 1 and lines[0].startswith(
        "rocemu replay: --drops %s: reached --drops-max-mb 0.01: capture stopped there" % drops),
        "--drops-max-mb 0.01: exit 1 and one line: %r" % r.stderr)
    _, recs = capfile.read(drops) if os.path.exists(drops) else (None, [])
    check(0 < len(recs) < 100 and os.path.getsize(drops) <= 10000,
          "--drops stopped at its cap: %d records, %d bytes" % (
              len(recs), os.path.getsize(drops) if os.path.exists(drops) else -1))
    _, fwd = capfile.read(out) if os.path.exists(out) else (None, [])
    check(len(fwd) == 200, "forwarding went on: %d of 200 frames out of p1" % len(fwd))
    r = lab.replay(lab.pipeline("capf"), "--drops", "/dev/full", "--drops-virtual")
    check(r.returncode == 1 and "rocemu replay: --drops /dev/full: write failed" in r.stderr,
          "--drops on a full device: exit 1, named: %r" % r.stderr)
    check("drops -> /dev/full" not in r.stdout and "replay: drops: FAILED, not written" in
          r.stdout, "the summary does not name the failed file as written")
    pl = lab.pipeline("capfull")
    with open(pl) as f:
        d = json.load(f)
    d["egress"][0]["file"] = "/dev/full"
    del d["egress"][0]["drops"]
    with open(pl, "w") as f:
        json.dump(d, f)
    r = lab.replay(pl, "--out", out + ":p1", profile=False)
    _, fwd = capfile.read(out) if os.path.exists(out) else (None, [])
    check(r.returncode == 1 and "stage capture: /dev/full: write failed" in r.stderr and
          len(fwd) == 200 and "written to /dev/full" not in r.stdout and
          "capture: FAILED, " in r.stdout,
          "capture stage on a full device: exit 1, forwarding went on, the summary says FAILED: "
          "%r" % [x for x in r.stdout.splitlines() if "capture" in x])


def section_order(lab):
    print("== every capture file in time order")
    b = os.path.join(lab.tmp, "b.pcap")
    roceframes.write_pcap(b, [(i * 3000 + 500, roceframes.rc_frame(i, qp=0x46))
                              for i in range(300)], T0)
    pl = lab.pipeline("ord", every_nth=7, virtual=True)
    out, drops = (os.path.join(lab.tmp, n) for n in ("ord-all.pcapng", "ord-drops.pcapng"))
    r = lab.replay(pl, "--in", b + ":p1", "--out", out, "--drops", drops, "--drops-virtual")
    lab.check_ok(r, "replay both ways with drops and the incast")
    if r.returncode != 0:
        return
    for f in (os.path.join(lab.tmp, "ord.pcapng"), out, drops):
        _, recs = capfile.read(f)
        check(len(recs) > 100 and capfile.backwards(recs) == 0,
              "%s: %d records, time goes backwards %d times" % (
                  os.path.basename(f), len(recs), capfile.backwards(recs)))


def section_format(lab):
    print("== an output's format follows its extension")
    pl = lab.pipeline("fmt", drops=None)
    for name, want in (("x.pcap", "pcap"), ("x.pcapng", "pcapng")):
        for port in ("", ":p1"):
            out = os.path.join(lab.tmp, name)
            r = lab.replay(pl, "--out", out + port, profile=False)
            fmt, recs = capfile.read(out) if r.returncode == 0 else (None, [])
            check(fmt == want and len(recs) == 200,
                  "--out %s%s: %s with %d records (want %s)" % (name, port, fmt, len(recs), want))
    for ann in ("events", "all"):
        r = lab.replay(pl, "--out", os.path.join(lab.tmp, "x.pcap"), "--annotate", ann,
                       profile=False)
        check(r.returncode == 2 and r.stderr.startswith(
            "rocemu replay: --annotate %s: no --out is pcapng, so no frame could carry a "
            "comment (a .pcap file is classic pcap: name a FILE.pcapng)" % ann),
            "--annotate %s with --out x.pcap refused: %r" % (ann, r.stderr.split("\n")[0]))


def section_prefix(lab):
    print("== error lines start \"rocemu MODE:\"; --version")
    bad = os.path.join(lab.tmp, "bad.json")
    with open(bad, "w") as f:
        f.write('{"ports": [')
    cases = [
        (["replay", "--pipeline", bad, "--in", lab.inp], "rocemu replay: "),
        (["replay", "--pipeline", "nope.json", "--in", lab.inp], "rocemu replay: "),
        (["replay", "--pipeline", lab.pipeline("pfx"), "--profile", bad, "--in", lab.inp],
         "rocemu replay: "),
        (["replay", "--bogus"], "rocemu replay: "),
        (["replay", "--seed", "x", "--in", lab.inp], "rocemu replay: "),
        (["replay", "--in", lab.inp, "--stats", lab.inp], "rocemu replay: "),
        (["check", bad], "rocemu check: "),
        (["check", "--bogus"], "rocemu check: "),
        (["check", "--max-mem", "0", bad], "rocemu check: "),
        (["schema", "nothing"], "rocemu schema: "),
    ]
    for argv, want in cases:
        r = subprocess.run([lab.rocemu] + argv, capture_output=True, text=True, timeout=60,
                           cwd=lab.tmp)
        first = r.stderr.split("\n")[0]
        check(r.returncode == 2 and first.startswith(want),
              "%s: %r" % (" ".join(argv[:2]), first[:100]))
    r = subprocess.run([lab.rocemu, "--version"], capture_output=True, text=True, timeout=60)
    dpdk = subprocess.run(["pkg-config", "--modversion", "libdpdk"], capture_output=True,
                          text=True).stdout.strip()
    v = r.stdout.strip()
    m = re.search(r"\(git ([0-9a-f]{7,40})(-dirty)?, ", v)
    # the commit the binary was built from (HEAD may have moved on since)
    known = m is not None and subprocess.run(
        ["git", "-C", lab.src, "cat-file", "-e", m.group(1) + "^{commit}"],
        capture_output=True).returncode == 0
    check(r.returncode == 0 and v.startswith("rocemu ") and m is not None and known and
          ("DPDK " + dpdk) in v, "--version: %r (a commit of this tree; DPDK %s)" % (v, dpdk))
    st = os.path.join(lab.tmp, "pfx-stats.json")
    r = lab.replay(lab.pipeline("pfx"), "--stats", st, profile=False)
    with open(st) as f:
        stats = json.load(f)
    check(r.returncode == 0 and ("replay: " + v + "\n") in r.stdout and stats.get("version") == v,
          "the replay summary and --stats name the version")


def section_unpausable(lab):
    print("== lossless classes fed by inputs PFC cannot pause")
    r = lab.replay(lab.pipeline("unp"), profile=False)
    w = [x for x in r.stderr.splitlines() if "PFC cannot pause" in x]
    check(r.returncode == 0 and w == [
        "rocemu replay: WARNING: port p0: lossless priority 3 (PFC) is fed by a replayed --in, "
        "which PFC cannot pause: when the port's headroom fills, the frames a NIC would have "
        "held back are dropped (drop_headroom_overflow); live, the NIC behind the port is "
        "paused"], "replay into p0 alone: one warning, for p0: %r" % w)
    r = subprocess.run([lab.rocemu, "check", lab.pipeline("unp")], capture_output=True,
                       text=True, timeout=60)
    w = [x for x in r.stderr.splitlines() if "PFC cannot pause" in x]
    check(r.returncode == 0 and len(w) == 2 and w[0].startswith(
        "rocemu check: WARNING: port p0: lossless priority 3 (PFC) in a replay is fed by its "
        "--in, which PFC cannot pause") and "port p1:" in w[1], "check: one per port: %r" % w)
    r = subprocess.run([lab.rocemu, "check", os.path.join(lab.src, "pipelines",
                                                          "bump-in-wire.json")],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and "PFC cannot pause" not in r.stderr,
          "no warning without PFC (bump-in-wire.json)")


def section_estimate(lab):
    print("== check estimates a run's capture volume")
    prof = os.path.join(lab.src, "profiles", "incast-8to1.json")
    for name, keys, want in (
            ("est", {}, "may write about 10.8 GB in the profile's 3 s"),
            ("estmax", {"max_mb": 500}, None),
            ("estrot", {"rotate_mb": 100, "rotate_files": 5}, None),
            ("estframes", {"max_frames": 100000}, None),
            ("estsecs", {"max_seconds": 0.1}, None)):
        r = subprocess.run([lab.rocemu, "check", lab.pipeline(name, **keys), "--profile", prof],
                           capture_output=True, text=True, timeout=60)
        w = [x for x in r.stderr.splitlines() if "may write about" in x]
        if want is None:
            check(r.returncode == 0 and not w, "%s %s: no warning: %r" % (name, keys, w))
        else:
            check(r.returncode == 0 and len(w) == 1 and w[0].startswith(
                "rocemu check: WARNING: egress[0] (") and want in w[0] and "max_mb" in w[0],
                "%s: one warning: %r" % (name, w))
    r = subprocess.run([lab.rocemu, "check", lab.pipeline("estsmall", ports=["p0"],
                                                           snaplen=64, drops=None)],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and any("may write about" in x and "in 60 s" in x
                                    for x in r.stderr.splitlines()),
          "without a profile: a minute at line rate: %r" % r.stderr.splitlines()[-1:])


def section_docs(lab):
    import glob
    import re
    print("== the docs as written")
    # README.md and every docs page (the rocegen examples moved to docs/rocegen.md)
    multi = 0
    for doc in ["README.md"] + sorted(glob.glob(os.path.join(lab.src, "docs", "*.md"))):
        with open(os.path.join(lab.src, doc)) as f:
            readme = f.read()
        for block in re.findall(r"```sh\n(.*?)```", readme, re.S):
            cmds = re.findall(r"^(?:ip netns exec \S+ )?(?:\S*/)?(rocegen|rocemu) "
                              r"((?:-l |\.\.\.).*?)(?:\n(?!\s)|$)", block, re.M | re.S)
            if len(cmds) >= 2:
                multi += 1
                ok = all("--file-prefix" in c[1] for c in cmds)
                check(ok, "%s block with %d DPDK processes: each has its own --file-prefix" %
                      (os.path.basename(doc), len(cmds)))
    check(multi > 0, "the docs have a block with two DPDK processes (%d found)" % multi)
    with open(os.path.join(lab.src, "profiles", "README.md")) as f:
        preadme = f.read()
    missing = [os.path.basename(p) for p in glob.glob(os.path.join(lab.src, "profiles", "*.json"))
               if "`%s`" % os.path.basename(p) not in preadme]
    check(not missing, "profiles/README.md lists every profile (missing: %s)" % missing)
    with open(os.path.join(lab.src, "scripts", "demo.sh")) as f:
        demo = f.read()
    full = demo[demo.index('echo "full outputs:'):]
    full = full[:full.index("exit $rc")]
    check("captures:" in full and "next run" in full and "replacing the previous run" in demo,
          "scripts/demo.sh names its captures and says the next run replaces them")


def main():
    rocemu, src = os.path.abspath(sys.argv[1]), sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        lab = Lab(rocemu, src, tmp)
        section_virtual(lab)
        section_snaplen(lab)
        section_caps(lab)
        section_order(lab)
        section_format(lab)
        section_prefix(lab)
        section_unpausable(lab)
        section_estimate(lab)
        section_docs(lab)
    if FAILS:
        print("FAILED: %d checks" % len(FAILS))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
