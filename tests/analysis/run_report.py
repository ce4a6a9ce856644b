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
                 "csv/events.csv", "csv/pfc.csv", "csv/qdepth.csv", "csv/ce.csv",
                 "csv/bandwidth.csv"):
        if not os.path.isfile(os.path.join(out, name)):
            fail("%s: %s missing" % (capture, name))
    for png in ("rate.png", "pfc.png", "qdepth.png", "bandwidth.png"):
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
# the rate plot honours --window-us (it once chose its own window) and says so in index.html
out = os.path.join(tmp, "win.report")
r = subprocess.run([ROCESTAT, "report", "--window-us", "50", os.path.join(cap, "cnp_train.pcap"),
                    out], capture_output=True, text=True, timeout=300)
with open(os.path.join(out, "index.html")) as f:
    idx = f.read()
if r.returncode not in (0, 1) or "mean over 50 us" not in idx:
    fail("--window-us 50: exit %d, index.html %r" % (r.returncode, idx[-400:]))
# axes with units; a model line far above the measurement (100 Gb/s against 0.3 Gb/s) goes on
# its own axis instead of flattening the measurement to zero; close values share one axis
# (in /usr/bin/python3, which has Debian's matplotlib, as rocestat runs plot.py)
PLOT_CHECK = r"""
import os, sys
sys.path.insert(0, sys.argv[1])
import plot
tmp = sys.argv[2]
for meas, model, axis, unit in ((300.0, 100000.0, "right", "Mb/s"),
                                (90000.0, 100000.0, "same", "Gb/s")):
    cd = os.path.join(tmp, "csv-%d" % meas)
    os.makedirs(cd)
    with open(os.path.join(cd, "rate.csv"), "w") as f:
        f.write("flow,t_us,measured_mbps,predicted_mbps\n")
        for i in range(200):
            f.write("0,%d,%g,%g\n" % (i, meas, model))
    for name, head in (("cnp.csv", "flow,data_flow,t_us"),
                       ("events.csv", "flow,type,packet,packet2,t_us,psn,psn2,value")):
        with open(os.path.join(cd, name), "w") as f:
            f.write(head + "\n")
    rep = {"flows": [{"id": 0, "label": "a->b", "counters": {"data_packets": 200}}]}
    fig, facts = plot.rate_figure(cd, rep, (800, 400), 10.0)
    ax = facts["axes"][0]
    top = ax.get_ylim()[1]
    if facts["model_axis"] != axis or facts["unit"] != unit or unit not in ax.get_ylabel() or \
            "(us)" not in ax.get_xlabel() or "10 us" not in ax.get_ylabel():
        sys.exit("rate plot %g/%g: %r, labels %r %r" % (meas, model, facts, ax.get_xlabel(),
                                                        ax.get_ylabel()))
    shown = meas * (1e-3 if unit == "Gb/s" else 1)
    if top > 3 * shown * (model / meas if axis == "same" else 1):
        sys.exit("rate plot %g/%g: the measurement flattened (axis top %g)" % (meas, model, top))
    print("rate plot %g Mb/s measured, %g Mb/s model: model on the %s axis, %s, top %g" % (
        meas, model, axis, unit, top))
"""
r = subprocess.run(["/usr/bin/python3", "-c", PLOT_CHECK,
                    os.path.join(HERE, "..", "..", "scripts"), tmp],
                   capture_output=True, text=True, timeout=120)
if r.returncode != 0:
    fail("rate plot: %s %s" % (r.stdout, r.stderr.strip()[-600:]))
print(r.stdout.strip())

# where the bandwidth went: the stacked-time plot and the finding in index.html
out = os.path.join(tmp, "bw.report")
r = subprocess.run([ROCESTAT, "report", os.path.join(cap, "bw_host.pcap"), out],
                   capture_output=True, text=True, timeout=300)
with open(os.path.join(out, "index.html")) as f:
    idx = f.read()
p = os.path.join(out, "bandwidth.png")
if r.returncode != 0 or "host_cap" not in idx or "bandwidth.png" not in idx or \
        not os.path.isfile(p) or os.path.getsize(p) < 1000 or "FINDING" not in r.stdout:
    fail("bandwidth report: exit %d, stdout %r" % (r.returncode, r.stdout))
print("bandwidth report: bandwidth.png, host_cap in index.html and the summary")

# bad size: one message, non-zero
r = subprocess.run([ROCESTAT, "report", "--png", "10x10", d, os.path.join(tmp, "x")],
                   capture_output=True, text=True)
if r.returncode != 2 or "--png" not in r.stderr:
    fail("--png 10x10: exit %d %r" % (r.returncode, r.stderr))
# the text, JSON and CSV files of a run are replaced together: csv/ cannot be written (a file
# where the directory goes), so report.txt and report.json stay the previous run's
half = os.path.join(tmp, "half")
os.makedirs(half)
for name, text in (("report.txt", "previous text\n"), ("report.json", "{}\n"),
                   ("csv", "a file, not a directory\n")):
    with open(os.path.join(half, name), "w") as f:
        f.write(text)
r = subprocess.run([ROCESTAT, "report", d, half], capture_output=True, text=True, timeout=300)
with open(os.path.join(half, "report.txt")) as f1, open(os.path.join(half, "report.json")) as f2:
    kept = f1.read() == "previous text\n" and f2.read() == "{}\n"
if r.returncode != 2 or "csv" not in r.stderr or not kept or \
        [f for f in os.listdir(half) if ".rocemu-" in f]:
    fail("csv/ unwritable: exit %d, %r, report.txt and report.json kept: %s" %
         (r.returncode, r.stderr.strip()[-200:], kept))
print("csv/ unwritable: exit 2, %s; report.txt and report.json kept" % r.stderr.strip())
# the files of a run wait for each other without holding the blocks reserved ahead of their
# writes: --json and --csv of a real capture (3.4 MB of CSV) fit an 8 MB filesystem
mnt8 = os.path.join(tmp, "eight")
os.makedirs(mnt8)
if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", mnt8]).returncode != 0:
    fail("cannot mount an 8 MB tmpfs (needs root)")
try:
    real = os.path.join(HERE, "..", "unit", "proto", "data", "real", "huawei_rc_send.pcap")
    r = subprocess.run([ROCESTAT, "--quiet", "--json", os.path.join(mnt8, "a.json"), "--csv",
                        os.path.join(mnt8, "csv"), real], capture_output=True, text=True,
                       timeout=300)
    size = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(mnt8) for f in fs)
    if r.returncode != 0 or size < 3 << 20:
        fail("--json and --csv into 8 MB: exit %d, %d bytes written, %r" %
             (r.returncode, size, r.stderr.strip()[-200:]))
    print("--json and --csv into an 8 MB filesystem: %d bytes, exit 0" % size)
finally:
    subprocess.run(["umount", mnt8])
# plot.py replaces each file whole: a full disk leaves the old PNG and no temporary file
if [f for f in os.listdir(os.path.join(tmp, "pfc.pcap.report")) if ".plot-" in f]:
    fail("a temporary file of plot.py left in the report directory")
mnt = os.path.join(tmp, "small")
os.makedirs(mnt)
if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt]).returncode != 0:
    fail("cannot mount a 64 KB tmpfs (needs root)")
try:
    with open(os.path.join(mnt, "rate.png"), "wb") as f:
        f.write(b"the previous plot")
    src = os.path.join(tmp, "pfc.pcap.report")
    r = subprocess.run([os.path.join(HERE, "..", "..", "scripts", "plot.py"), "--csv",
                        os.path.join(src, "csv"), "--json", os.path.join(src, "report.json"),
                        "--out", mnt, "--size", "4000x3000"],
                       capture_output=True, text=True, timeout=300)
    with open(os.path.join(mnt, "rate.png"), "rb") as f:
        kept = f.read() == b"the previous plot"
    left = [f for f in os.listdir(mnt) if ".plot-" in f]
    if r.returncode != 1 or "No space left" not in r.stderr or not kept or left:
        fail("plot.py on a full disk: exit %d, %r, old rate.png kept: %s, temporary files %s" %
             (r.returncode, r.stderr.strip()[-200:], kept, left))
    print("plot.py on a full disk: exit 1, %s; the old rate.png kept" % r.stderr.strip())
finally:
    subprocess.run(["umount", mnt])
print("report: ok")
