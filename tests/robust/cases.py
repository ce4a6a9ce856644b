#!/usr/bin/env python3
"""Hostile inputs and ordinary mistakes, one case each: a command line run in a fresh
directory holding the fixtures below, with the exit status and the first line of stderr it
must give (expected.txt, readable by eye; regenerate with run_robust.py --record and review
the diff). Paths in the command lines are relative, so the messages are the same everywhere.

Fixtures (made by run_robust.py in the case's directory):
  bump.json        pipelines/bump-in-wire.json          dcqcn.json  pipelines/dcqcn-lab.json
  impair.json      pipelines/impair-lab.json             in.pcap     20 RoCE frames p0 -> p1
  out.pcap         an existing output (must survive refusals)
and every file a case lists in "files" (name -> bytes, or a JSON object written as JSON)."""
import copy
import json
import os
import struct

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "pipelines",
                       "bump-in-wire.json")) as _f:
    BUMP = json.load(_f)


def pl(**changes):
    """bump-in-wire.json with top-level keys replaced (None deletes)."""
    d = copy.deepcopy(BUMP)
    for k, v in changes.items():
        if v is None:
            d.pop(k, None)
        else:
            d[k] = v
    return d


def pl_tm(port_changes):
    d = copy.deepcopy(BUMP)
    d["tm"]["ports"][0].update(port_changes)
    return d


def pl_egress(*stages):
    return pl(egress=list(stages))


def pcap_hdr(magic=0xA1B23C4D, snap=65535, link=1):
    return struct.pack("<IHHiIII", magic, 2, 4, 0, 0, snap, link)


def rec(sec, nsec, caplen, origlen, data=None):
    if data is None:
        data = bytes(caplen)
    return struct.pack("<IIII", sec, nsec, caplen, origlen) + data


def eth_frame(n=60):
    return b"\x02\x00\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x00\x01" + b"\x08\x00" + \
        bytes(n - 14)


R = "rocemu"
RP = ["rocemu", "replay", "--pipeline", "bump.json"]
IN = ["--in", "in.pcap:p0"]

# (name, argv, files)
CASES = []


def case(name, argv, files=None):
    CASES.append((name, argv, files or {}))


# ---- command lines: replay
case("replay-no-in", RP)
case("replay-unknown-option", RP + IN + ["--bogus"])
case("replay-extra-arg", RP + IN + ["extra"])
case("replay-in-empty", RP + ["--in", ""])
case("replay-in-empty-with-port", RP + ["--in", ":p0"])
case("replay-in-missing", RP + ["--in", "missing.pcap"])
case("replay-in-directory", RP + ["--in", "."])
case("replay-in-bad-port", RP + ["--in", "in.pcap:p9"])
case("replay-out-bad-port", RP + IN + ["--out", "o.pcap:p7"])
case("replay-out-empty", RP + IN + ["--out", ""])
case("replay-out-is-in", RP + ["--in", "in.pcap:p0", "--out", "in.pcap:p1"])
case("replay-out-is-in-other-name", RP + ["--in", "in.pcap:p0", "--out", "./in.pcap:p1"])
case("replay-out-is-in-hardlink", RP + ["--in", "in.pcap:p0", "--out", "hard.pcap:p1"],
     {"hard.pcap": "@link:in.pcap"})
case("replay-out-is-in-symlink", RP + ["--in", "in.pcap:p0", "--out", "sym.pcap:p1"],
     {"sym.pcap": "@symlink:in.pcap"})
case("replay-two-outs-same-file", RP + IN + ["--out", "o.pcap:p0", "--out", "o.pcap:p1"])
case("replay-two-outs-same-port", RP + IN + ["--out", "a.pcap:p1", "--out", "b.pcap:p1"])
case("replay-out-missing-dir", RP + IN + ["--out", "nodir/o.pcap:p1"])
case("replay-out-is-dir", RP + IN + ["--out", "sub:p1"], {"sub/keep": b"x"})
case("replay-stats-is-in", RP + IN + ["--stats", "in.pcap"])
case("replay-stats-is-out", RP + IN + ["--out", "o.pcap:p1", "--stats", "o.pcap"])
case("replay-stats-missing-dir", RP + IN + ["--stats", "nodir/s.json"])
case("replay-stats-dir-name", RP + IN + ["--stats", "news/"])
case("replay-annotate-no-pcapng", RP + IN + ["--out", "o.pcap:p1", "--annotate", "all"])
case("replay-out-is-pipeline", RP + IN + ["--out", "bump.json:p1"])
case("replay-out-is-profile", RP + IN + ["--profile", "prof.json", "--out", "prof.json:p1"],
     {"prof.json": {"phases": [{"at_s": 0, "tm": {"p1": {"rate_gbps": 10}}}]}})
case("replay-capture-is-in", ["rocemu", "replay", "--pipeline", "cap.json"] + IN,
     {"cap.json": "@pl_egress:{\"type\": \"capture\", \"file\": \"in.pcap\"}"})
case("replay-capture-is-out", ["rocemu", "replay", "--pipeline", "cap.json"] + IN +
     ["--out", "c.pcap:p1"],
     {"cap.json": "@pl_egress:{\"type\": \"capture\", \"file\": \"c.pcap\"}"})
case("replay-two-captures-same-file", ["rocemu", "replay", "--pipeline", "cap2.json"] + IN,
     {"cap2.json": "@pl_egress:{\"type\": \"capture\", \"name\": \"a\", \"file\": \"c.pcap\"},"
                   "{\"type\": \"capture\", \"name\": \"b\", \"file\": \"./c.pcap\"}"})
# a rotating capture also writes c-1.pcap, c-2.pcap, ...: none of them may be another file
ROT = "@pl_egress:{\"type\": \"capture\", \"file\": \"c.pcap\", \"rotate_mb\": 0.1%s}"
case("replay-capture-rotated-is-in", ["rocemu", "replay", "--pipeline", "rot.json",
                                      "--in", "c-1.pcap:p0"],
     {"rot.json": ROT % "", "c-1.pcap": "@link:in.pcap"})
case("replay-capture-rotated-is-out", ["rocemu", "replay", "--pipeline", "rot.json"] + IN +
     ["--out", "c-2.pcap:p1"], {"rot.json": ROT % ", \"rotate_files\": 3"})
case("replay-capture-rotated-symlink-is-in", ["rocemu", "replay", "--pipeline", "rot.json",
                                              "--in", "x.pcap:p0"],
     {"rot.json": ROT % "", "c-12.pcap": "@link:in.pcap", "x.pcap": "@symlink:c-12.pcap"})
# a delay table is an input
TAB = "@pl_egress:{\"type\": \"delay\", \"rules\": [{\"dist\": \"table\", \"table\": \"tab.txt\"}]}"
case("replay-out-is-delay-table", ["rocemu", "replay", "--pipeline", "tab.json"] + IN +
     ["--out", "tab.txt:p1"], {"tab.json": TAB, "tab.txt": "@raw:1 0.5\n2 1\n"})
case("replay-stats-is-delay-table", ["rocemu", "replay", "--pipeline", "tab.json"] + IN +
     ["--stats", "tab.txt"], {"tab.json": TAB, "tab.txt": "@raw:1 0.5\n2 1\n"})
case("replay-timeline-us-zero", RP + IN + ["--timeline", "t.csv", "--timeline-us", "0"])
case("replay-capture-missing-dir", ["rocemu", "replay", "--pipeline", "capd.json"] + IN,
     {"capd.json": "@pl_egress:{\"type\": \"capture\", \"file\": \"nodir/c.pcap\"}"})
case("replay-seed-hex", RP + IN + ["--seed", "0x10"])
case("replay-seed-negative", RP + IN + ["--seed", "-5"])
case("replay-seed-too-big", RP + IN + ["--seed", "9223372036854775808"])
case("replay-seed-empty", RP + IN + ["--seed", ""])
case("replay-seed-plus", RP + IN + ["--seed", "+5"])
case("replay-seed-space", RP + IN + ["--seed", " 5"])
case("replay-max-mem-zero", RP + IN + ["--max-mem", "0"])
case("replay-max-mem-text", RP + IN + ["--max-mem", "lots"])
case("replay-max-mem-too-small", RP + IN + ["--max-mem", "1"])
case("replay-too-many-in", RP + ["--in", "in.pcap"] * 33)
case("replay-pipeline-missing", ["rocemu", "replay", "--pipeline", "nope.json"] + IN)
case("replay-pipeline-dir", ["rocemu", "replay", "--pipeline", "."] + IN)
case("replay-pipeline-empty-name", ["rocemu", "replay", "--pipeline", ""] + IN)
case("replay-profile-missing", RP + IN + ["--profile", "nope.json"])
case("replay-profile-dir", RP + IN + ["--profile", "."])
case("replay-profile-syntax", RP + IN + ["--profile", "bad.json"], {"bad.json": b"{\"phases\": [}"})

# ---- pcap inputs
case("pcap-empty-file", RP + ["--in", "e.pcap"], {"e.pcap": b""})
case("pcap-short-header", RP + ["--in", "e.pcap"], {"e.pcap": b"\xd4\xc3\xb2\xa1\x02\x00"})
case("pcap-garbage", RP + ["--in", "e.pcap"], {"e.pcap": b"this is not a capture file\n" * 3})
case("pcap-text-json", RP + ["--in", "bump.json"])
case("pcap-linktype-raw", RP + ["--in", "e.pcap"], {"e.pcap": pcap_hdr(link=101)})
case("pcap-linktype-loop", RP + ["--in", "e.pcap"], {"e.pcap": pcap_hdr(link=0)})
case("pcap-no-records", RP + ["--in", "e.pcap"], {"e.pcap": pcap_hdr()})
case("pcap-truncated-record-header", RP + ["--in", "e.pcap"],
     {"e.pcap": pcap_hdr() + rec(1, 0, 60, 60, eth_frame()) + b"\x01\x00\x00"})
case("pcap-truncated-record-data", RP + ["--in", "e.pcap"],
     {"e.pcap": pcap_hdr() + rec(1, 0, 60, 60, eth_frame()) +
      struct.pack("<IIII", 1, 5, 60, 60) + eth_frame()[:20]})
case("pcap-truncated-lenient", RP + ["--in", "e.pcap", "--lenient"],
     {"e.pcap": pcap_hdr() + rec(1, 0, 60, 60, eth_frame()) + b"\x01\x00\x00"})
case("pcap-caplen-huge", RP + ["--in", "e.pcap"],
     {"e.pcap": pcap_hdr() + struct.pack("<IIII", 1, 0, 0x7fffffff, 0x7fffffff)})
case("pcap-caplen-above-len", RP + ["--in", "e.pcap"],
     {"e.pcap": pcap_hdr() + rec(1, 0, 60, 40, eth_frame())})
case("pcap-frame-too-short", RP + ["--in", "e.pcap"],
     {"e.pcap": pcap_hdr() + rec(1, 0, 10, 10, bytes(10))})
case("pcap-frame-zero", RP + ["--in", "e.pcap"],
     {"e.pcap": pcap_hdr() + rec(1, 0, 0, 0, b"")})
case("pcap-frame-above-mtu", RP + ["--in", "e.pcap"],
     {"e.pcap": pcap_hdr() + rec(1, 0, 9300, 9300, eth_frame(9300))})
case("pcap-snap-above-mtu", RP + ["--in", "e.pcap"],
     {"e.pcap": pcap_hdr(snap=64) + rec(1, 0, 64, 20000, eth_frame(64))})
case("pcap-pcapng-garbage-block", RP + ["--in", "e.pcapng"],
     {"e.pcapng": b"\x0a\x0d\x0d\x0a" + b"\xff" * 40})
case("pcap-big-endian-truncated", RP + ["--in", "e.pcap"],
     {"e.pcap": struct.pack(">IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1) + b"\x00" * 7})
case("pcap-version-bad", RP + ["--in", "e.pcap"],
     {"e.pcap": struct.pack("<IHHiIII", 0xA1B23C4D, 9, 9, 0, 0, 65535, 1)})
case("pcap-stdin-empty", RP + ["--in", "-"])
case("pcap-second-in-bad", RP + ["--in", "in.pcap:p0", "--in", "e.pcap:p1"], {"e.pcap": b"xx"})

# ---- check
case("check-file-missing", ["rocemu", "check", "nope.json"])
case("check-file-truncated", ["rocemu", "check", "t.json"], {"t.json": b"{\"ports\": [{\"na"})
case("check-file-empty", ["rocemu", "check", "t.json"], {"t.json": b""})
case("check-file-dir", ["rocemu", "check", "."])
case("check-two-files", ["rocemu", "check", "bump.json", "impair.json"])
case("check-file-and-pipeline", ["rocemu", "check", "--pipeline", "bump.json", "impair.json"])
case("check-binary", ["rocemu", "check", "t.json"], {"t.json": bytes(range(256))})
case("check-utf16", ["rocemu", "check", "t.json"],
     {"t.json": "{\"ports\": []}".encode("utf-16")})
case("check-array-root", ["rocemu", "check", "t.json"], {"t.json": []})
case("check-string-root", ["rocemu", "check", "t.json"], {"t.json": "@raw:\"p0\""})
case("check-deep-nesting", ["rocemu", "check", "t.json"], {"t.json": b"[" * 5000 + b"]" * 5000})
case("check-nan", ["rocemu", "check", "t.json"], {"t.json": b"{\"mbufs\": NaN}"})
case("check-duplicate-key", ["rocemu", "check", "t.json"],
     {"t.json": b"{\"ports\": [], \"ports\": []}"})
case("check-no-ports", ["rocemu", "check", "t.json"], {"t.json": pl(ports=None)})
case("check-zero-ports", ["rocemu", "check", "t.json"], {"t.json": pl(ports=[])})
case("check-delay-10s", ["rocemu", "check", "t.json"], {"t.json": pl_tm({"delay_us": 10000000})})
case("check-delay-1ms-max-mem", ["rocemu", "check", "t.json", "--max-mem", "512"],
     {"t.json": pl_tm({"delay_us": 1000})})
case("check-delay-negative", ["rocemu", "check", "t.json"], {"t.json": pl_tm({"delay_us": -1})})
case("check-rate-zero", ["rocemu", "check", "t.json"], {"t.json": pl_tm({"rate_gbps": 0})})
case("check-rate-string", ["rocemu", "check", "t.json"], {"t.json": pl_tm({"rate_gbps": "100"})})
case("check-rate-huge", ["rocemu", "check", "t.json"], {"t.json": pl_tm({"rate_gbps": 1e300})})
case("check-queue-pkts-huge", ["rocemu", "check", "t.json"],
     {"t.json": pl_tm({"queue_pkts": 5000000000})})
case("check-mbufs-huge", ["rocemu", "check", "t.json"], {"t.json": pl(mbufs=4000000000)})
case("check-mbufs-max-mem", ["rocemu", "check", "t.json", "--max-mem", "100"],
     {"t.json": pl(mbufs=1000000)})
case("check-capture-ring-10g", ["rocemu", "check", "t.json", "--max-mem", "4096"],
     {"t.json": pl_egress({"type": "capture", "file": "c.pcap", "ring_size": 1048576})})
case("check-capture-missing-dir", ["rocemu", "check", "t.json"],
     {"t.json": pl_egress({"type": "capture", "file": "nodir/c.pcap"})})
case("check-capture-file-is-dir", ["rocemu", "check", "t.json"],
     {"t.json": pl_egress({"type": "capture", "file": "."})})
case("check-capture-empty-file", ["rocemu", "check", "t.json"],
     {"t.json": pl_egress({"type": "capture", "file": ""})})
case("check-capture-same-file", ["rocemu", "check", "t.json"],
     {"t.json": pl_egress({"type": "capture", "name": "a", "file": "c.pcap"},
                          {"type": "capture", "name": "b", "file": "c.pcap"})})
case("check-capture-is-pipeline", ["rocemu", "check", "t.json"],
     {"t.json": pl_egress({"type": "capture", "file": "t.json"})})
case("check-capture-ring-small", ["rocemu", "check", "t.json"],
     {"t.json": pl_egress({"type": "capture", "file": "c.pcap", "ring_size": 1})})
case("check-cnp-max-qps-max-mem", ["rocemu", "check", "t.json", "--max-mem", "64"],
     {"t.json": pl_egress({"type": "cnp", "max_qps": 16777216})})
case("check-stage-unknown", ["rocemu", "check", "t.json"],
     {"t.json": pl(ingress=[{"type": "teleport"}])})
case("check-stage-no-type", ["rocemu", "check", "t.json"], {"t.json": pl(ingress=[{}])})
case("check-stage-not-object", ["rocemu", "check", "t.json"], {"t.json": pl(ingress=[5])})
case("check-unknown-key", ["rocemu", "check", "t.json"], {"t.json": pl(colour="blue")})
case("check-port-name-bad", ["rocemu", "check", "t.json"],
     {"t.json": pl(ports=[{"name": "p 0"}, {"name": "p1"}])})
case("check-port-mtu-huge", ["rocemu", "check", "t.json"],
     {"t.json": pl(ports=[{"name": "p0", "mtu": 100000}, {"name": "p1"}])})
case("check-profile-missing", ["rocemu", "check", "bump.json", "--profile", "nope.json"])
case("check-profile-syntax", ["rocemu", "check", "bump.json", "--profile", "bad.json"],
     {"bad.json": b"{\"phases\": [1,]}"})
case("check-profile-dir", ["rocemu", "check", "bump.json", "--profile", "."])
case("check-profile-empty", ["rocemu", "check", "bump.json", "--profile", "e.json"],
     {"e.json": b""})
case("check-profile-seed-negative", ["rocemu", "check", "bump.json", "--profile", "p.json"],
     {"p.json": {"seed": -1, "phases": []}})
case("check-profile-seed-string", ["rocemu", "check", "bump.json", "--profile", "p.json"],
     {"p.json": {"seed": "7", "phases": []}})
case("check-profile-unknown-port", ["rocemu", "check", "bump.json", "--profile", "p.json"],
     {"p.json": {"phases": [{"at_s": 0, "tm": {"p9": {"rate_gbps": 1}}}]}})
case("check-profile-negative-time", ["rocemu", "check", "bump.json", "--profile", "p.json"],
     {"p.json": {"phases": [{"at_s": -1, "tm": {"p1": {"rate_gbps": 1}}}]}})
case("check-profile-delay-beyond-line", ["rocemu", "check", "bump.json", "--profile", "p.json"],
     {"p.json": {"phases": [{"at_s": 0, "tm": {"p1": {"delay_us": 100000}}}]}})
case("check-unknown-option", ["rocemu", "check", "--frobnicate"])

# ---- warnings for runs that cannot do what the user wants (exit 0, a WARNING line)
case("check-no-forward", ["rocemu", "check", "t.json"],
     {"t.json": pl(ingress=[{"type": "parse"}])})
case("check-pairs-empty", ["rocemu", "check", "t.json"],
     {"t.json": pl(ingress=[{"type": "parse"}, {"type": "forward", "pairs": []}])})
case("check-one-port", ["rocemu", "check", "t.json"],
     {"t.json": {"ports": [{"name": "p0"}],
                 "ingress": [{"type": "forward", "mode": "learning"}]}})
case("check-three-ports-one-pair", ["rocemu", "check", "t.json"],
     {"t.json": {"ports": [{"name": "p0"}, {"name": "p1"}, {"name": "p2"}],
                 "ingress": [{"type": "forward", "pairs": [["p0", "p1"]]}]}})
case("replay-out-port-silent", RP + IN + ["--out", "o0.pcap:p0"])
case("replay-no-forward", ["rocemu", "replay", "--pipeline", "nf.json"] + IN,
     {"nf.json": pl(ingress=[{"type": "parse"}])})

# ---- live mode command lines (refused before or right after EAL)
LIVE = ["rocemu", "--no-huge", "-m", "256", "--no-pci", "--file-prefix=robust_{pid}",
        "--log-level=lib.eal:error", "--vdev=net_null0", "--vdev=net_null1", "--"]
case("live-unknown-option", LIVE + ["--bogus"])
case("live-extra-arg", LIVE + ["extra"])
case("live-seed-hex", LIVE + ["--seed", "0x1"])
case("live-duration-negative", LIVE + ["--duration", "-1"])
case("live-duration-text", LIVE + ["--duration", "soon"])
case("live-stats-interval-nan", LIVE + ["--stats-interval", "nan"])
case("live-drain-inf", LIVE + ["--drain", "inf"])
case("live-pipeline-missing", LIVE + ["--pipeline", "nope.json"])
case("live-stats-missing-dir", LIVE + ["--pipeline", "bump.json", "--stats", "nodir/s.json"])
case("live-stats-is-pipeline", LIVE + ["--pipeline", "bump.json", "--stats", "bump.json"])
case("live-max-mem-too-small", LIVE + ["--pipeline", "bump.json", "--max-mem", "1"])
case("live-capture-missing-dir", LIVE + ["--pipeline", "capd.json"],
     {"capd.json": "@pl_egress:{\"type\": \"capture\", \"file\": \"nodir/c.pcap\"}"})
case("live-port-missing", ["rocemu", "--no-huge", "-m", "256", "--no-pci",
                           "--file-prefix=robust_{pid}", "--log-level=lib.eal:error",
                           "--vdev=net_null0", "--", "--pipeline", "bump.json"])
case("live-eal-bad", ["rocemu", "--no-such-eal-option"])
