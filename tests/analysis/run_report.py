#!/usr/bin/env python3
"""rocestat report: text, JSON, CSV, PNGs (scripts/plot.py) and index.html in one directory;
each PNG exists, is non-empty and has the pixel size asked for (read from its IHDR).

    run_report.py ROCESTAT GEN_DCQCN"""
import atexit
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

ROCESTAT, GEN = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def png_size(path):
    with open(path, "rb") as f:
        b = f.read(24)
    if len(b) < 24 or b[:8] != b"\x89PNG\r\n\x1a\n" or b[12:16] != b"IHDR":
        fail("%s: not a PNG" % path)
    return struct.unpack(">II", b[16:24])


tmp = tempfile.mkdtemp(prefix="rocestat-report-")
atexit.register(shutil.rmtree, tmp, True)  # on every exit, failed or not
cap = os.path.join(tmp, "cap")
subprocess.run([sys.executable, os.path.join(HERE, "gen_captures.py"), cap], check=True,
               capture_output=True)
d = os.path.join(tmp, "d.pcap")
subprocess.run([GEN, d, os.path.join(tmp, "truth.txt"), os.path.join(tmp, "wrong.txt")],
               check=True, capture_output=True)
cases = [(d, ["--link-gbps", "10", "--dcqcn", os.path.join(tmp, "truth.txt")], 0, (640, 360)),
         (os.path.join(cap, "pfc.pcap"), [], 0, (800, 300)),
         (os.path.join(cap, "drop_gbn_annot.pcapng"), [], 0, (1200, 700))]
for capture, opts, want_rc, (w, h) in cases:
    out = os.path.join(tmp, os.path.basename(capture) + ".report")
    r = subprocess.run([ROCESTAT, "report", "--png", "%dx%d" % (w, h)] + opts + [capture, out],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != want_rc:
        fail("%s: exit %d: %s" % (capture, r.returncode, r.stderr))
    for name in ("report.txt", "report.json", "index.html", "csv/rate.csv", "csv/cnp.csv",
                 "csv/events.csv", "csv/pfc.csv", "csv/qdepth.csv", "csv/ce.csv"):
        if not os.path.isfile(os.path.join(out, name)):
            fail("%s: %s missing" % (capture, name))
    for png in ("rate.png", "pfc.png", "qdepth.png"):
        p = os.path.join(out, png)
        if not os.path.isfile(p) or os.path.getsize(p) < 1000:
            fail("%s: %s missing or empty" % (capture, png))
        if png_size(p) != (w, h):
            fail("%s: %s is %dx%d, asked %dx%d" % ((capture, png) + png_size(p) + (w, h)))
    with open(os.path.join(out, "report.json")) as f:
        rep = json.load(f)
    with open(os.path.join(out, "index.html")) as f:
        idx = f.read()
    if "rate.png" not in idx or "report.json" not in idx:
        fail("%s: index.html does not link the report" % capture)
    print("%s: report with 3 PNGs of %dx%d, %d packets" % (os.path.basename(capture), w, h,
                                                          rep["capture"]["packets"]))
# the PFC rows reach the CSV the plot reads
with open(os.path.join(tmp, "pfc.pcap.report", "csv", "pfc.csv")) as f:
    if len(f.read().strip().splitlines()) != 1 + 4:
        fail("pfc.csv: expected 4 paused intervals")
# CE over time: the cnp_train capture's 100 CE-marked packets
out = os.path.join(tmp, "ce.report")
r = subprocess.run([ROCESTAT, "report", os.path.join(cap, "cnp_train.pcap"), out],
                   capture_output=True, text=True, timeout=300)
with open(os.path.join(out, "csv", "ce.csv")) as f:
    rows = f.read().strip().splitlines()[1:]
if sum(int(x.split(",")[2]) for x in rows) != 100:
    fail("ce.csv: %d CE marks, want 100" % sum(int(x.split(",")[2]) for x in rows))
# bad size: one message, non-zero
r = subprocess.run([ROCESTAT, "report", "--png", "10x10", d, os.path.join(tmp, "x")],
                   capture_output=True, text=True)
if r.returncode != 2 or "--png" not in r.stderr:
    fail("--png 10x10: exit %d %r" % (r.returncode, r.stderr))
print("report: ok")
