#!/usr/bin/env python3
"""rocestat against captures with known ground truth (gen_captures.py) and real NIC captures.

    run_cases.py ROCESTAT SRCDIR

Each case states what the capture holds (see gen_captures.py) and checks rocestat's JSON and
exit status against it. Prints one line per case; exits 1 on the first mismatch."""
import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import cases_bw

HERE = os.path.dirname(os.path.abspath(__file__))
ROCESTAT, SRC = sys.argv[1], sys.argv[2]
REAL = os.path.join(SRC, "tests", "unit", "proto", "data", "real")
REAL2 = os.path.join(HERE, "data", "real")
A_FLOW = "10.0.0.1:0x100->10.0.0.2:0x200"
B_FLOW = "10.0.0.2:0x200->10.0.0.1:0x100"


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cap, *opts, want_rc=None):
    r = subprocess.run([ROCESTAT, "--quiet", "--json", "-"] + list(opts) + [cap],
                       capture_output=True, text=True, timeout=300)
    if r.returncode not in (0, 1):
        fail("%s: rocestat exited %d: %s" % (cap, r.returncode, r.stderr))
    if want_rc is not None and r.returncode != want_rc:
        fail("%s: exit status %d, want %d" % (cap, r.returncode, want_rc))
    return json.loads(r.stdout)


def flow(d, label):
    for f in d["flows"]:
        if f["label"] == label:
            return f
    fail("no flow %s in %s" % (label, [f["label"] for f in d["flows"]]))


def expect(case, got, want):
    for k, v in want.items():
        g = got[k]
        if isinstance(v, float):
            if abs(g - v) > 1e-6 * max(1, abs(v)):
                fail("%s: %s = %r, want %r" % (case, k, g, v))
        elif g != v:
            fail("%s: %s = %r, want %r" % (case, k, g, v))


def events(f, t):
    return [e for e in f["events"] if e["type"] == t]


def gbn_common(case, d):
    a, b = flow(d, A_FLOW), flow(d, B_FLOW)
    if a["peer"] is None or d["flows"][a["peer"]]["label"] != B_FLOW:
        fail("%s: the two directions are not paired" % case)
    q = [x for x in d["qps"] if x["a"] in (a["id"], b["id"])][0]
    if q["udp_sport_linux_rule"] is not True or q["udp_sport_expected"] != 49160 or \
            q["udp_sport_rule"] != "linux":
        fail("%s: UDP source port rule: %r" % (case, q))
    return a, b


def read(path):
    with open(path, "rb") as f:
        return f.read()


def refused(args, roles, keep):
    """One same-file run: exit 2, one line naming both roles, every file of keep unchanged."""
    before = {p: read(p) for p in keep}
    r = subprocess.run([ROCESTAT] + args, capture_output=True, text=True, timeout=60)
    lines = r.stderr.strip().splitlines()
    if r.returncode != 2 or len(lines) != 1 or "is the same file as" not in lines[0] or \
            not all(x in lines[0] for x in roles):
        fail("same file %r: exit %d, stderr %r" % (args, r.returncode, r.stderr))
    for p, b in before.items():
        if read(p) != b:
            fail("same file %r: %s was changed" % (args, p))
    if r.stdout:
        fail("same file %r: it wrote a report to stdout" % args)


def full_disk(tmp, capture):
    """A full filesystem: each output fails with the file and ENOSPC named, and the existing
    file (JSON, a CSV, the report's text) is left byte for byte, no temporary file beside it.
    As root on a 256 KB tmpfs (as tests/robust does for rocemu); otherwise the directory is
    made read-only, so that the temporary file cannot be created."""
    mnt = os.path.join(tmp, "small")
    os.makedirs(mnt)
    olds = {os.path.join(mnt, "s.json"): b"the previous report\n",
            os.path.join(mnt, "c", "rate.csv"): b"the previous rate.csv\n",
            os.path.join(mnt, "r", "report.txt"): b"the previous report.txt\n"}
    root = os.geteuid() == 0
    if root:
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mnt]).returncode:
            fail("full disk: cannot mount a 256 KB tmpfs")
    try:
        os.makedirs(os.path.join(mnt, "c"))
        os.makedirs(os.path.join(mnt, "r", "csv"))
        for p, b in olds.items():
            with open(p, "wb") as f:
                f.write(b)
        if root:
            try:
                with open(os.path.join(mnt, "fill"), "wb") as f:
                    while True:
                        f.write(bytes(4096))
                        f.flush()
            except OSError:
                pass
            why = "No space left on device"
        else:
            for d in ("", "c", "r"):
                os.chmod(os.path.join(mnt, d), 0o555)
            why = "Permission denied"
        runs = [(["--quiet", "--json", os.path.join(mnt, "s.json")], "s.json"),
                (["--quiet", "--csv", os.path.join(mnt, "c")], "rate.csv"),
                (["report", capture, os.path.join(mnt, "r")], "report.txt")]
        for args, name in runs:
            if args[0] != "report":
                args = args + [capture]
            r = subprocess.run([ROCESTAT] + args, capture_output=True, text=True, timeout=300)
            if r.returncode != 2 or name not in r.stderr or why not in r.stderr or \
                    (root and ": write failed: " not in r.stderr):
                fail("full disk %r: exit %d, stderr %r" % (args, r.returncode, r.stderr))
        for p, b in olds.items():
            if read(p) != b:
                fail("full disk: %s was changed to %r" % (p, read(p)[:60]))
        left = [os.path.join(d, f) for d, _, fs in os.walk(mnt) for f in fs if ".rocemu-" in f]
        if left:
            fail("full disk: temporary files left: %r" % left)
    finally:
        if root:
            subprocess.run(["umount", mnt])
        else:
            for d in ("", "c", "r"):
                os.chmod(os.path.join(mnt, d), 0o755)
    return "tmpfs" if root else "read-only directory"


def files(tmp, cap):
    """Outputs never replace an input or each other, a failed write leaves the old file, and
    standard output holds the JSON alone when --json - is asked (docs/rocestat.md)."""
    src = os.path.join(cap, "drop_gbn.pcap")
    d = os.path.join(tmp, "files")
    os.makedirs(d)
    same = os.path.join(d, "cx.pcap")
    shutil.copy(src, same)
    nic = os.path.join(d, "nic.txt")
    with open(nic, "w") as f:
        f.write("rpg_time_reset 300\n")
    applog = os.path.join(d, "app.log")
    shutil.copy(os.path.join(cap, "nccl-tests.log"), applog)
    os.symlink("cx.pcap", os.path.join(d, "link.json"))
    os.makedirs(os.path.join(d, "csvdir"))
    os.link(same, os.path.join(d, "csvdir", "events.csv"))
    os.makedirs(os.path.join(d, "rep"))
    os.link(same, os.path.join(d, "rep", "report.json"))
    keep = [same, nic, applog]
    refused(["--quiet", "--json", same, same], ["--json", "CAPTURE"], keep)
    refused(["--json", same, same], ["--json", "CAPTURE"], keep)
    refused(["--dcqcn", nic, "--json", nic, same], ["--json", "--dcqcn"], keep)
    refused(["--app-log", applog, "--quiet", "--json", applog, same], ["--json", "--app-log"],
            keep)
    refused(["--quiet", "--json", os.path.join(d, "link.json"), same], ["--json", "CAPTURE"],
            keep)
    refused(["--quiet", "--csv", os.path.join(d, "csvdir"), same], ["--csv", "CAPTURE"], keep)
    refused(["report", same, os.path.join(d, "rep")], ["report", "CAPTURE"], keep)
    refused(["report", "--dcqcn", os.path.join(d, "rep2", "index.html"), same,
             os.path.join(d, "rep2")], ["report", "--dcqcn"], keep)
    refused(["--quiet", "--json", os.path.join(d, "new", "rate.csv"), "--csv",
             os.path.join(d, "new"), same], ["--json", "--csv"], keep)
    if os.path.exists(os.path.join(d, "new")) or os.path.exists(os.path.join(d, "rep2")):
        fail("same file: a refused run created its output directory")
    # devices may take any number of outputs
    r = subprocess.run([ROCESTAT, "--json", "/dev/null", same], capture_output=True,
                       timeout=60)
    if r.returncode not in (0, 1) or r.stderr:
        fail("--json /dev/null: exit %d %r" % (r.returncode, r.stderr))
    # --json - and the text report: the JSON alone on stdout, the text on stderr
    r = subprocess.run([ROCESTAT, "--json", "-", same], capture_output=True, text=True,
                       timeout=60)
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        fail("--json - without --quiet: stdout is not JSON alone: %r" % r.stdout[:80])
    if rep["capture"]["packets"] != 25 or not r.stderr.startswith("# rocestat: 25 packets"):
        fail("--json -: the text report is not on stderr: %r" % r.stderr[:80])
    return full_disk(tmp, same)


def main():
    tmp = tempfile.mkdtemp(prefix="rocestat-cases-")
    atexit.register(shutil.rmtree, tmp, True)  # on every exit, failed or not
    cap = os.path.join(tmp, "cap")
    subprocess.run([sys.executable, os.path.join(HERE, "gen_captures.py"), cap], check=True,
                   capture_output=True)
    n = 0

    # one drop and its go-back-N, in five formats (ns pcap, us pcap, snaplen 64, pcapng with
    # rocemu annotations where the dropped original is present and marked drop=, Linux cooked)
    for var in ("drop_gbn.pcap", "drop_gbn_us.pcap", "drop_gbn_snap64.pcap",
                "drop_gbn_annot.pcapng", "drop_gbn_sll.pcap"):
        d = run(os.path.join(cap, var), want_rc=0)
        a, b = gbn_common(var, d)
        # (the dropped original in the annotated capture counts as a packet, not as data)
        expect(var, a["counters"], {"data_packets": 22,
                                    "packets": 22 if "annot" not in var else 23,
                                    "gaps": 1, "gap_psns": 1, "retx_rounds": 1,
                                    "retx_packets": 3, "timeouts": 0, "duplicates": 0,
                                    "out_of_order": 0, "restart_not_at_nak": 0,
                                    "payload_bytes": 1024 * 22, "goodput_bytes": 1024 * 20})
        expect(var, b["counters"], {"naks_seq_err": 1, "acks": 2, "double_naks": 0,
                                    "acked_psns": 20})
        expect(var, a["checks"], {"gbn_restart_at_nak": "PASS"})
        expect(var, b["checks"], {"one_nak_per_gap": "PASS", "ack_psn_monotonic": "PASS"})
        expect(var, a["retx_latency_us"], {"min": 5.0, "max": 5.0, "n": 1})
        # the NAK 1 us after PSN 8 showed the gap
        expect(var, a["nak_latency_us"], {"max": 1.0, "n": 1})
        g = events(a, "gap")[0]
        expect(var, g, {"psn": 7, "psn2": 7})
        if "annot" in var:
            expect(var, d["annotations"], {"qdepth_max": 65536.0, "drops": {"queue_full": 1}})
            expect(var, a["counters"], {"drops_annotated": 1})
        if "snap64" in var:
            expect(var, a["counters"], {"header_only": 22})
        n += 1

    # times exact: integers of ns after the first frame, the absolute start as a string (a
    # double of absolute us was 102 ms off); the last frame (ACK 19) at 28 us + 1 ns
    d = run(os.path.join(cap, "drop_gbn_late.pcap"), want_rc=0)
    a, b = gbn_common("drop_gbn_late", d)
    expect("drop_gbn_late", d["capture"], {"start": "1796455006.897565912",
                                           "duration_ns": 28001})
    expect("drop_gbn_late", b, {"t_first_ns": 6300, "t_last_ns": 28001, "active_ns": 21701})
    expect("drop_gbn_late", events(a, "gap")[0], {"t_ns": 8000})
    if not all(isinstance(e["t_ns"], int) for f in d["flows"] for e in f["events"]):
        fail("drop_gbn_late: an event time is not an integer")
    print("times exact: start %s, ACK 19 at %d ns" % (d["capture"]["start"], b["t_last_ns"]))
    n += 1

    # a lost retransmission, then the timeout that recovers it
    d = run(os.path.join(cap, "lost_retx.pcap"), want_rc=0)
    a, b = gbn_common("lost_retx", d)
    expect("lost_retx", a["counters"], {"gaps": 1, "lost_retx_psns": 1, "retx_rounds": 2,
                                        "timeouts": 1, "restart_not_at_nak": 0})
    expect("lost_retx", events(a, "lost_retx")[0], {"psn": 7, "psn2": 7})
    expect("lost_retx", events(a, "timeout")[0], {"psn": 7})
    n += 1

    # a timeout seen at the sender (no gap, no NAK)
    d = run(os.path.join(cap, "timeout.pcap"), want_rc=0)
    a, b = gbn_common("timeout", d)
    expect("timeout", a["counters"], {"gaps": 0, "timeouts": 1, "retx_rounds": 1,
                                      "retx_packets": 2})
    expect("timeout", events(a, "timeout")[0], {"psn": 8, "packet": 12, "value": 801000})
    expect("timeout", b["counters"], {"naks_seq_err": 0})
    n += 1

    # two NAKs for one gap: FAIL, naming both packets
    d = run(os.path.join(cap, "double_nak.pcap"), want_rc=1)
    a, b = gbn_common("double_nak", d)
    expect("double_nak", b["counters"], {"naks_seq_err": 2, "double_naks": 1})
    expect("double_nak", b["checks"], {"one_nak_per_gap": "FAIL"})
    expect("double_nak", events(b, "double_nak")[0], {"packet": 9, "packet2": 7, "psn": 5})
    expect("double_nak", a["checks"], {"gbn_restart_at_nak": "PASS"})
    n += 1

    # a CNP sent together with a NAK (slow restart) is counted; a lone one is not
    d = run(os.path.join(cap, "nak_cnp.pcap"))
    expect("nak_cnp", flow(d, B_FLOW)["counters"], {"cnps": 2, "cnps_with_nak": 1,
                                                    "naks_seq_err": 1})
    n += 1

    # a CNP train with 50 us spacing and one violation of 4 us
    d = run(os.path.join(cap, "cnp_train.pcap"), "--np-min-time-between-cnps", "4",
            want_rc=1)
    a, b = flow(d, A_FLOW), flow(d, B_FLOW)
    expect("cnp_train", b["counters"], {"cnps": 6, "cnps_under_min_time": 1,
                                        "cnps_without_becn": 0})
    expect("cnp_train", b["cnp"], {"count": 6, "min_gap_us": 2.0, "dscp": 48, "ecn": 2})
    expect("cnp_train", b["checks"], {"cnp_spacing": "FAIL", "cnp_becn": "PASS"})
    expect("cnp_train", events(b, "cnp_under_min_time")[0], {"value": 2000})
    expect("cnp_train", a["counters"], {"ce": 100})
    expect("cnp_train", a["ce_to_cnp_latency_us"], {"first": 3.0})
    expect("cnp_train", d["cnp_pacing"], {"inferred": "none"})
    # with 1 us allowed, no violation
    d = run(os.path.join(cap, "cnp_train.pcap"), "--np-min-time-between-cnps", "1")
    expect("cnp_train 1us", flow(d, B_FLOW)["checks"], {"cnp_spacing": "PASS"})
    n += 1

    # the spacing to check: the flag, else the --dcqcn file's min_time_between_cnps, else 4 us
    # (the file's was once ignored)
    pf = os.path.join(tmp, "cnp1.txt")
    with open(pf, "w") as f:
        f.write("min_time_between_cnps 1\nrpg_time_reset 300\n")
    for opts, want, src, us in (([], "FAIL", "default", 4.0),
                                (["--dcqcn", pf], "PASS", "dcqcn", 1.0),
                                (["--dcqcn", pf, "--np-min-time-between-cnps", "4"], "FAIL",
                                 "flag", 4.0)):
        d = run(os.path.join(cap, "cnp_train.pcap"), *opts)
        expect("cnp_train %r" % opts, flow(d, B_FLOW)["checks"], {"cnp_spacing": want})
        expect("cnp_train %r" % opts, d["cnp_pacing"], {"min_time_between_cnps_from": src,
                                                        "min_time_between_cnps_us": us})
    n += 1

    # pacing scope: per QP
    d = run(os.path.join(cap, "cnp_scope.pcap"))
    expect("cnp_scope", d["cnp_pacing"], {"inferred": "qp"})
    expect("cnp_scope", d["cnp_pacing"]["qp"], {"violations": 0, "groups": 2})
    expect("cnp_scope", d["cnp_pacing"]["ip_pair"], {"violations": 8, "min_gap_us": 1.0})
    expect("cnp_scope", d["cnp_pacing"]["dst_ip"], {"violations": 8, "groups": 1})
    f2 = flow(d, "10.0.0.2:0x201->10.0.0.1:0x101")
    expect("cnp_scope", f2["counters"], {"cnps": 8})
    n += 1

    # PFC XOFF/XON sequences, expiry, a storm, 802.3x PAUSE
    d = run(os.path.join(cap, "pfc.pcap"), "--link-gbps", "100", "--pfc-storm-us", "10000",
            want_rc=0)
    pr = {p["priority"]: p for p in d["pfc"]}
    expect("pfc", pr[3], {"frames": 4, "xoff": 3, "xon": 1, "paused_ns": 255120, "storms": 0,
                          "longest_ns": 250000})
    if pr[3]["intervals_ns"] != [[0, 250000], [1000000, 1005120]]:
        fail("pfc: prio 3 intervals %r" % pr[3]["intervals_ns"])
    expect("pfc", pr[5], {"xoff": 101, "storms": 1, "paused_ns": 20335539})
    expect("pfc", pr[8], {"frames": 1, "paused_ns": 512})
    # at 25 Gb/s a quantum is 4x longer
    d = run(os.path.join(cap, "pfc.pcap"), "--link-gbps", "25")
    pr = {p["priority"]: p for p in d["pfc"]}
    expect("pfc 25G", pr[8], {"paused_ns": 2048})
    n += 1

    # real NICs: the Huawei RC SEND capture (QPs 0x45 and 0x48 paired; ports 69/72 are not
    # the Linux rule) and the ConnectX-4 Lx CNP
    d = run(os.path.join(REAL, "huawei_rc_send.pcap"), want_rc=0)
    h1 = flow(d, "192.168.70.4:0x45->192.168.70.6:0x48")
    h2 = flow(d, "192.168.70.6:0x48->192.168.70.4:0x45")
    expect("huawei", h1, {"src_qp": 0x45, "dest_qp": 0x48, "udp_sport": 69,
                          "peer": h2["id"]})
    expect("huawei", h2, {"src_qp": 0x48, "dest_qp": 0x45, "udp_sport": 72})
    expect("huawei", h1["counters"], {"packets": 37, "acks": 36, "icrc_bad": 0})
    expect("huawei", h2["counters"], {"packets": 68, "data_packets": 67, "messages": 34,
                                      "icrc_bad": 0, "gaps": 0, "retx_rounds": 0})
    expect("huawei", d["capture"], {"roce_packets": 105, "packets": 123})
    q = [x for x in d["qps"] if h1["id"] in (x["a"], x["b"])][0]
    if q["udp_sport_linux_rule"] is not False or q["udp_sport_rule"] != "per_direction":
        fail("huawei: sport rule %r" % q)
    d = run(os.path.join(REAL, "connectx4lx_cnp.pcap"), want_rc=0)
    c = d["flows"][0]
    expect("cx4lx cnp", c, {"dest_qp": 0x118, "udp_sport": 0})
    expect("cx4lx cnp", c["cnp"], {"count": 1, "dscp": 48, "ecn": 2, "udp_sport": 0})
    expect("cx4lx cnp", c["counters"], {"cnps": 1, "cnps_without_becn": 0, "icrc_bad": 0})
    # the same capture as pcapng written by Wireshark's editcap, with packet comments: the
    # comments are read beside libpcap packet by packet
    ng = os.path.join(tmp, "huawei.pcapng")
    subprocess.run(["editcap", "-F", "pcapng", "-a", "3:rocemu: qdepth=77 wait=5000",
                    "-a", "10:rocemu: drop=test_reason", os.path.join(REAL, "huawei_rc_send.pcap"),
                    ng], check=True, capture_output=True)
    d = run(ng)
    expect("huawei pcapng", d["annotations"], {"packets": 2, "qdepth_max": 77.0,
                                               "wait_max_us": 5.0,
                                               "drops": {"test_reason": 1}})
    expect("huawei pcapng", d["capture"], {"packets": 123, "roce_packets": 105})
    expect("huawei pcapng", flow(d, "192.168.70.4:0x45->192.168.70.6:0x48")["counters"],
           {"packets": 37})
    # UC frames cut to 243 bytes with orig_len 243: malformed (bad IP length), not a crash
    d = run(os.path.join(REAL2, "connectx_uc_truncated.pcap"))
    expect("uc truncated", d["capture"], {"packets": 520, "malformed_roce": 489})
    expect("uc truncated", d["malformed_reasons"], {"bad_ip_length": 489})
    # READ request / response: read responses are not the responder's PSN sequence
    d = run(os.path.join(REAL2, "connectx_write_read.pcap"), want_rc=0)
    r = flow(d, "172.17.242.56:0x169->172.17.242.47:0x139")
    expect("write_read", r["counters"], {"gaps": 0, "retx_rounds": 0, "out_of_order": 0})
    n += 1

    # collectives from the wire: 3 iterations of a 4-rank ring all-reduce of 96 KiB
    for log, kind, alg, bus in (("nccl-tests.log", "float", 1.64, 2.46),
                                ("rocegen.log", "float", 0.687, 1.031)):
        d = run(os.path.join(cap, "allreduce4.pcap"), "--collective", "allreduce", "--ranks",
                "4", "--idle-gap-us", "500", "--app-log", os.path.join(cap, log), want_rc=0)
        it = d["collective"]["iterations"]
        if len(it) != 3:
            fail("allreduce4: %d iterations, want 3" % len(it))
        t = 143.030  # first packet (rank 0, k 0) to last (rank 3, k 143), us
        for x in it:
            expect("allreduce4", x, {"size_bytes": 96.0 * 1024, "time_ns": 143030,
                                     "wire_bytes": 6 * 96 * 1024,
                                     "algbw_gbs": 96 * 1024 / 1e9 / (t * 1e-6),
                                     "busbw_gbs": 96 * 1024 / 1e9 / (t * 1e-6) * 1.5})
        expect("allreduce4 app", d["collective"]["application"],
               {"size_bytes": 98304, "algbw_gbs": alg, "busbw_gbs": bus, "type": kind})
        if d["pattern"] != "ring" or len(d["host_pairs"]) != 4:
            fail("allreduce4: pattern %r, %d host pairs" % (d["pattern"], len(d["host_pairs"])))
        expect("allreduce4 pairs", d["host_pairs"][0], {"qps": 1,
                                                        "goodput_bytes": 3 * 144 * 1024})
    d = run(os.path.join(cap, "allreduce4.pcap"), "--collective", "allgather", "--ranks", "4",
            "--idle-gap-us", "500")
    expect("allgather4", d["collective"]["iterations"][0], {"size_bytes": 2 * 96.0 * 1024})
    n += 1

    # iterations ended by barriers on control QPs, 20 us apart (less than --idle-gap)
    d = run(os.path.join(cap, "allreduce_barrier.pcap"), "--collective", "allreduce", "--ranks",
            "2", "--idle-gap-us", "1000")
    it = d["collective"]["iterations"]
    if len(it) != 4:
        fail("allreduce_barrier: %d iterations, want 4" % len(it))
    for x in it:
        # 2 x 64 KiB on the wire = 2 (N-1) S with N = 2: S = 64 KiB
        expect("allreduce_barrier", x, {"size_bytes": 65536.0, "wire_bytes": 131072})
    n += 1

    # pairing by PSNs when ports and the pair rule cannot tell the QPs apart
    d = run(os.path.join(cap, "psn_pair.pcap"), want_rc=0)
    for data_l, ack_l in (("10.0.0.1:0x300->10.0.0.2:0x400", "10.0.0.2:0x400->10.0.0.1:0x300"),
                          ("10.0.0.1:0x301->10.0.0.2:0x401", "10.0.0.2:0x401->10.0.0.1:0x301")):
        x, y = flow(d, data_l), flow(d, ack_l)
        if x["peer"] != y["id"] or y["peer"] != x["id"]:
            fail("psn_pair: %s and %s not paired" % (data_l, ack_l))
    n += 1

    # where the bandwidth went (cases_bw.py)
    cases_bw.check(cap, run, fail, ROCESTAT)
    n += 1

    # no RoCE frame (ARP and plain UDP): "no RoCE frames", exit 2, no report written; with
    # report too (it once passed with "0 checks FAILED" and empty plots)
    nr = os.path.join(cap, "no_roce.pcap")
    for args in ([nr], ["report", nr, os.path.join(tmp, "no_roce.report")]):
        r = subprocess.run([ROCESTAT] + args, capture_output=True, text=True, timeout=60)
        if r.returncode != 2 or "no RoCE frames" not in r.stderr or \
                "20 frames" not in r.stderr or "checks FAILED" in r.stdout:
            fail("no RoCE %r: exit %d, stdout %r, stderr %r" % (args, r.returncode, r.stdout,
                                                               r.stderr))
    if os.path.exists(os.path.join(tmp, "no_roce.report", "report.json")):
        fail("no RoCE: a report was written")
    # rocestat report prints its summary whatever its exit status: the FAIL line and the
    # verdict when a check fails (it once printed nothing)
    rd = os.path.join(tmp, "double_nak.report")
    r = subprocess.run([ROCESTAT, "report", os.path.join(cap, "double_nak.pcap"), rd],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 1 or "FAIL one NAK per gap" not in r.stdout or \
            "1 checks FAILED" not in r.stdout or rd not in r.stdout:
        fail("report on a FAIL: exit %d, stdout %r, stderr %r" % (r.returncode, r.stdout,
                                                                 r.stderr))
    r = subprocess.run([ROCESTAT, "report", os.path.join(cap, "drop_gbn.pcap"),
                        os.path.join(tmp, "ok.report")], capture_output=True, text=True,
                       timeout=300)
    if r.returncode != 0 or "0 checks FAILED" not in r.stdout or "# rocestat:" not in r.stdout:
        fail("report on a PASS: exit %d, stdout %r" % (r.returncode, r.stdout))
    print("no RoCE frames: exit 2 with the reason, no report; report prints its summary "
          "(exit 1 with the FAIL line, exit 0)")
    n += 1

    # --version: the git commit it was built from and the libraries; the same in report.json
    # (the commit it was built from: one of this checkout's commits, not necessarily HEAD,
    # which may have moved since the build)
    r = subprocess.run([ROCESTAT, "--version"], capture_output=True, text=True, timeout=60)
    m = re.search(r"\(git ([0-9a-f]{7,40})(-dirty)?\)", r.stdout)
    in_git = subprocess.run(["git", "-C", SRC, "rev-parse", "--git-dir"],
                            capture_output=True).returncode == 0
    known = m is not None and subprocess.run(
        ["git", "-C", SRC, "cat-file", "-e", m.group(1) + "^{commit}"],
        capture_output=True).returncode == 0
    if r.returncode != 0 or not r.stdout.startswith("rocestat ") or "DPDK 2" not in r.stdout or \
            "jansson" not in r.stdout or "libpcap" not in r.stdout or (in_git and not known):
        fail("--version: exit %d, %r (a commit of %s expected)" % (r.returncode, r.stdout, SRC))
    v = run(os.path.join(cap, "drop_gbn.pcap"))["version"]
    if "(git %s)" % v["git"] not in r.stdout or not v["dpdk"].startswith("2"):
        fail("report.json version %r, --version %r" % (v, r.stdout))
    print("version: %s" % r.stdout.strip())
    n += 1

    # bad input: one clear line, exit 2, no crash
    bad = os.path.join(tmp, "bad.pcap")
    with open(bad, "wb") as f:
        f.write(b"\xd4\xc3\xb2\xa1" + b"\x00" * 7)
    for args in ([bad], ["/nonexistent.pcap"], ["--link-gbps", "x", bad],
                 ["--dcqcn", "/nonexistent", bad], ["--collective", "foo", bad]):
        r = subprocess.run([ROCESTAT] + args, capture_output=True, text=True, timeout=60)
        if r.returncode != 2 or len(r.stderr.strip().splitlines()) < 1 or \
                not r.stderr.startswith("rocestat: "):
            fail("bad input %r: exit %d, stderr %r" % (args, r.returncode, r.stderr))
    # the bandwidth options: a bad value is refused naming the option, on a good capture
    good = os.path.join(cap, "drop_gbn.pcap")
    for args, word in ((["--expect-qps", "0"], "--expect-qps"),
                       (["--expect-qps", "1.5"], "--expect-qps"),
                       (["--line-rate-gbps", "x"], "--line-rate-gbps"),
                       (["--nccl-log", "/nonexistent"], "--nccl-log")):
        r = subprocess.run([ROCESTAT] + args + [good], capture_output=True, text=True,
                           timeout=60)
        if r.returncode != 2 or word not in r.stderr or r.stdout:
            fail("bad %r: exit %d, stderr %r" % (args, r.returncode, r.stderr))
    # DCQCN parameter files: each bad one is refused with the file, line and name
    bads = {"unknown.txt": ("rpg_time_reset 300\nrpg_bogus 1\n", "rpg_bogus"),
            "range.txt": ("rpg_threshold 0\n", "rpg_threshold"),
            "notnum.txt": ("rpg_ai_rate fast\n", "rpg_ai_rate"),
            "first.txt": ("rate_to_set_on_first_cnp 500\n", "rate_to_set_on_first_cnp"),
            "g.json": ('{"dce_tcp_g": 2000}', "dce_tcp_g"),
            "str.json": ('{"rpg_ai_rate": "5"}', "rpg_ai_rate"),
            "dup.json": ('{"rpg_ai_rate": 5, "rpg_ai_rate": 6}', "duplicate"),
            "tiny.txt": ("rpg_time_reset 0.0000001\n", "at least 0.001 us")}
    for name, (text, word) in bads.items():
        pf = os.path.join(tmp, name)
        with open(pf, "w") as f:
            f.write(text)
        r = subprocess.run([ROCESTAT, "--dcqcn", pf, os.path.join(cap, "drop_gbn.pcap")],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 2 or word not in r.stderr or len(r.stderr.strip().splitlines()) != 1:
            fail("--dcqcn %s: exit %d, stderr %r" % (name, r.returncode, r.stderr))
    # good files in the other accepted forms: debugfs names, grep's path:value, JSON
    goods = {"debugfs.txt": "rp_time_reset 150\nnp_min_time_between_cnps 4\n",
             "grep.txt": "/sys/class/net/eth0/ecn/roce_rp/rpg_ai_rate:7\n",
             "ok.json": '{"rpg_hai_rate": 60, "dce_tcp_rtt": 2}'}
    for name, text in goods.items():
        pf = os.path.join(tmp, name)
        with open(pf, "w") as f:
            f.write(text)
        d = run(os.path.join(cap, "cnp_train.pcap"), "--dcqcn", pf)
        prm = d["dcqcn"][0]["params"]
        want = {"debugfs.txt": ("rpg_time_reset_us", 150.0), "grep.txt": ("rpg_ai_rate_mbps", 7.0),
                "ok.json": ("dce_tcp_rtt_us", 2.0)}[name]
        if abs(prm[want[0]] - want[1]) > 1e-9:
            fail("--dcqcn %s: %s = %r" % (name, want[0], prm[want[0]]))
    # a failed write makes the exit status non-zero
    r = subprocess.run([ROCESTAT, "--quiet", "--json", "/dev/full",
                        os.path.join(cap, "drop_gbn.pcap")], capture_output=True, text=True)
    if r.returncode != 2:
        fail("--json /dev/full: exit %d" % r.returncode)
    r = subprocess.run(ROCESTAT + " " + os.path.join(cap, "drop_gbn.pcap") + " > /dev/full",
                       shell=True, capture_output=True, text=True)
    if r.returncode != 2:
        fail("stdout /dev/full: exit %d" % r.returncode)
    n += 1
    print("files: same-file refusals, --json - alone on stdout, a failed write on a %s" %
          files(tmp, cap))
    n += 1
    print("rocestat cases: %d groups passed" % n)


if __name__ == "__main__":
    main()
