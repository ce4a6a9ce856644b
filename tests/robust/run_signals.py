#!/usr/bin/env python3
"""Nothing lost, nothing silent, when a run is stopped: SIGINT/SIGTERM during a replay (the
files completed, the summary and stats written, exit 128 + N), while replay or live is still
setting up (nothing written, the old files kept, no temporary file, no EAL directory), and
while --in - waits on a pipe; and a PFC storm with no end, which ends with the input. The
fixtures are run_behaviour.py's.

usage: run_signals.py ROCEMU SRC"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import run_behaviour as rb
from run_behaviour import (big_input, check, growing, md5, pcap_records, pipeline,  # noqa: F401
                           tshark_ok, write_json)

ROCEMU = SRC = TMP = None


def t_signals():
    """A replay that runs for minutes (a 100 Gb/s incast for 60 virtual seconds after the
    input), stopped by a signal once its output grows, whatever the machine's speed."""
    inp = big_input()
    shutil.copy(os.path.join(SRC, "pipelines", "dcqcn-lab.json"), os.path.join(TMP, "dl.json"))
    write_json("long-incast.json", {"phases": [{"at_s": 0, "duration_s": 60, "incast": {
        "incast8": {"enabled": True}}}]})
    for sig, name in ((signal.SIGINT, "SIGINT"), (signal.SIGTERM, "SIGTERM")):
        out, st = "sig-%s.pcap" % name, "sig-%s.json" % name
        p = subprocess.Popen([ROCEMU, "replay", "--pipeline", "dl.json", "--profile",
                              "long-incast.json", "--in", inp + ":p0",
                              "--out", out + ":p1", "--stats", st], cwd=TMP,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # signalled once it is replaying (its output growing), however long a loaded
        # machine takes to start it
        t_end = time.time() + 60
        while time.time() < t_end and p.poll() is None and not growing(out + ".rocemu-"):
            time.sleep(0.05)
        time.sleep(0.5)
        p.send_signal(sig)
        so, se = p.communicate(timeout=120)
        check(p.returncode == 128 + sig, "%s during replay: exit %d (want %d)" %
              (name, p.returncode, 128 + sig))
        check("stopped by signal" in so and "conservation:" in so and ": OK" in so,
              "%s: summary printed with the conservation line OK" % name)
        n = tshark_ok(os.path.join(TMP, out))
        frames_out = -1
        for line in so.splitlines():
            if line.startswith("replay: out"):
                frames_out = int(line.split(":")[-1].split()[0])
        check(n > 0 and n == frames_out and p.returncode == 128 + sig,
              "%s: the output is complete and readable (%d frames in the file, %d said)" %
              (name, n, frames_out))
        check(os.path.exists(os.path.join(TMP, st)) and
              json.load(open(os.path.join(TMP, st))).get("pipeline") is not None,
              "%s: stats written" % name)
        check(not os.path.exists("/var/run/dpdk/rocemu_offline_%d" % p.pid),
              "%s: runtime directory removed" % name)
        check(not [f for f in os.listdir(TMP) if ".rocemu-" in f],
              "%s: no temporary file left" % name)


def sigint_once(args, ready):
    """Start @args in TMP, send one SIGINT 20 ms after ready() holds (at most 60 s), and
    return the process with its stdout and stderr (text)."""
    p = subprocess.Popen(args, cwd=TMP, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    t_end = time.time() + 60
    while time.time() < t_end and p.poll() is None and not ready(p):
        time.sleep(0.002)
    time.sleep(0.02)
    p.send_signal(signal.SIGINT)
    so, se = p.communicate(timeout=120)
    return p, so, se


def t_signal_setup():
    """A signal while replay or live is still setting up (a 2 GB pool being filled, after the
    EAL's directory appeared): the run stops before its first frame, says so, and leaves the
    old output byte for byte, no temporary file and no EAL directory (before, SIGINT killed
    it there)."""
    d = pipeline("big-pool")
    d["mbufs"] = 100000
    write_json("big-pool.json", d)
    old = os.path.join(TMP, "setup-old.pcap")
    with open(old, "wb") as f:
        f.write(b"an older capture the stopped run must not replace\n")
    before = md5(old)
    p, so, se = sigint_once([ROCEMU, "replay", "--pipeline", "big-pool.json", "--max-mem",
                             "8192", "--in", "in.pcap:p0", "--out", "setup-old.pcap:p1"],
                            lambda p: os.path.exists("/var/run/dpdk/rocemu_offline_%d" % p.pid))
    check(p.returncode == 128 + signal.SIGINT and "before the first frame" in se,
          "SIGINT while setting up: exit %d (want %d), %s" % (p.returncode,
                                                             128 + signal.SIGINT,
                                                             se.strip()[-160:]))
    check(md5(old) == before, "SIGINT while setting up: the old output untouched")
    check(not [f for f in os.listdir(TMP) if ".rocemu-" in f] and
          not os.path.exists("/var/run/dpdk/rocemu_offline_%d" % p.pid),
          "SIGINT while setting up: no temporary file, no EAL directory left")
    # live: the same pool, a capture stage whose file exists
    d["egress"] = [{"type": "capture", "file": "setup-old.pcap", "ports": ["p1"]}]
    write_json("big-pool-live.json", d)
    rundir = "/var/run/dpdk/rbs%d" % os.getpid()
    p, so, se = sigint_once([ROCEMU, "--no-huge", "-m", "2048", "--no-pci", "-l", "0",
                             "--file-prefix=rbs%d" % os.getpid(), "--log-level=lib.eal:error",
                             "--vdev=net_pcap0,rx_pcap=%s" % os.path.join(TMP, "in.pcap"),
                             "--vdev=net_null1,no-rx=1", "--", "--pipeline",
                             "big-pool-live.json", "--duration", "30"],
                            lambda p: os.path.exists(rundir))
    check(p.returncode == 128 + signal.SIGINT and "before forwarding" in se,
          "live, SIGINT while setting up: exit %d (want %d), %s" %
          (p.returncode, 128 + signal.SIGINT, se.strip()[-160:]))
    check(md5(old) == before and not os.path.exists(rundir) and
          not [f for f in os.listdir(TMP) if ".rocemu-" in f],
          "live, SIGINT while setting up: the old capture untouched, no temporary file, no "
          "EAL directory left")


def t_signal_stdin():
    """--in - on a pipe: a stop that cuts the read of the file's header stops the run before
    its first frame; one that cuts the wait for more frames ends that input (neither is an
    unreadable record)."""
    old = os.path.join(TMP, "stdin-old.pcap")
    with open(old, "wb") as f:
        f.write(b"an older capture the stopped run must not replace\n")
    before = md5(old)
    with open(os.path.join(TMP, "in.pcap"), "rb") as f:
        frames = f.read()
    for tag, data, out in (("its header", b"", "stdin-old.pcap"),
                           ("more frames", frames, "pipe-out.pcap")):
        p = subprocess.Popen([ROCEMU, "replay", "--pipeline", "bump.json", "--in", "-:p0",
                              "--out", out + ":p1"], cwd=TMP, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        p.stdin.write(data)
        p.stdin.flush()  # and the pipe stays open: the run waits for more
        if data:
            t_end = time.time() + 60
            while time.time() < t_end and p.poll() is None and \
                    not [f for f in os.listdir(TMP) if f.startswith(out + ".rocemu-")]:
                time.sleep(0.01)
        time.sleep(0.5 if data else 1)
        p.send_signal(signal.SIGINT)
        so, se = (x.decode(errors="replace") for x in p.communicate(timeout=120))
        recs = pcap_records(os.path.join(TMP, out)) if data else []
        check(p.returncode == 128 + signal.SIGINT and "unreadable" not in so + se and
              "Interrupted system call" not in se and
              ("files complete" in so and len(recs) == 20 if data else
               "before the first frame" in se and md5(old) == before),
              "SIGINT while --in - waits for %s: exit %d (want %d), %s" %
              (tag, p.returncode, 128 + signal.SIGINT, (so + se).strip()[-200:]))


def t_endless_storm():
    """A PFC storm with no end ends in replay with the input, as incast sources do (it used to
    keep the virtual clock going for ever: a 2.4 GB capture in 10 s): every storm frame due
    by the last input frame is sent, none after; the storm runs from time zero at 100 000
    frames/s and the input spans 19 us, so two (at 0 and 10 us)."""
    shutil.copy(os.path.join(SRC, "pipelines", "dcqcn-lab.json"), os.path.join(TMP, "dl.json"))
    write_json("storm.json", {"phases": [{"at_s": 0, "tm": {"p0": {"pfc_storm": {
        "priorities": [3], "rate_pps": 100000}}}}]})
    try:
        r = subprocess.run([ROCEMU, "replay", "--pipeline", "dl.json", "--profile", "storm.json",
                            "--in", "in.pcap:p0", "--stats", "storm-stats.json"],
                           capture_output=True, text=True, timeout=120, cwd=TMP,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        check(False, "endless PFC storm: the replay ends with its input (still running after "
              "120 s)")
        return
    m = re.search(r"p0 .*pfc_storm_tx=(\d+)", r.stdout)
    check(r.returncode == 0 and m is not None and int(m.group(1)) == 2 and
          ": OK" in r.stdout,
          "endless PFC storm: the replay ends with its input, 2 storm frames sent (exit %d, "
          "%s)" % (r.returncode, m.group(0) if m else r.stderr.strip()[-200:]))


def main():
    global ROCEMU, SRC, TMP
    ROCEMU, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    TMP = tempfile.mkdtemp(prefix="rocemu-signals-")
    rb.ROCEMU, rb.SRC, rb.TMP = ROCEMU, SRC, TMP
    try:
        shutil.copy(os.path.join(SRC, "pipelines", "bump-in-wire.json"),
                    os.path.join(TMP, "bump.json"))
        rb.roceframes.write_pcap(os.path.join(TMP, "in.pcap"), rb.roce_frames(), t0=10**9)
        for t in (t_signals, t_signal_setup, t_signal_stdin, t_endless_storm):
            print("== " + t.__name__)
            t()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    print("%d signal checks failed" % len(rb.FAILS))
    return 1 if rb.FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
