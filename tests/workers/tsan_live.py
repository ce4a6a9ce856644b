#!/usr/bin/env python3
"""ThreadSanitizer on rocemu live with two workers (scripts/tsan.sh runs it with the TSan build):
net_null ports, two RX queues a port with one of them crossing a ring, --stats-interval 1,
--prometheus, --timeline, and while it runs: telemetry queries of every command from two
clients at once, a profile reload by SIGHUP and one by telemetry. Passes when rocemu exits 0
with the conservation line OK and ThreadSanitizer reported nothing (reports inside DPDK's own
libraries only are suppressed by scripts/tsan.supp, each with its reason).

  tsan_live.py ROCEMU [WORKERS [spread]]  (as root; default 2 workers)
  spread: one RX queue a port and --rx-spread (the poller pushes part of its frames to the
  other worker's ingress over a ring) instead of two RX queues, and a MAC learning forward
  stage (one table for both workers) instead of pairs
"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

CMDS = ["/rocemu/ports", "/rocemu/stages", "/rocemu/tm", "/rocemu/tm,p1", "/rocemu/drops",
        "/rocemu/fabric", "/rocemu/capture", "/rocemu/conservation", "/rocemu/workers",
        "/rocemu/nic", "/rocemu/profile"]


def ask(path, cmd):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(10)
    s.connect(path)
    json.loads(s.recv(65536).decode())
    s.send(cmd.encode())
    r = json.loads(s.recv(1 << 20).decode())
    s.close()
    return r


def main():
    rocemu = sys.argv[1]
    nw = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    spread = len(sys.argv) > 3 and sys.argv[3] == "spread"
    if os.geteuid() != 0:
        print("SKIP: tsan_live needs root (DPDK EAL); NOT TESTED")
        sys.exit(77)
    tmp = tempfile.mkdtemp()
    pl = {"description": "tsan_live",
          "ports": [{"name": "p0", "dev": ("net_pcap0" if spread else "net_null0")},
                    {"name": "p1", "dev": ("net_pcap1" if spread else "net_null1")}],
          "ingress": [{"type": "parse"},
                      # spread: a MAC learning table shared by the workers
                      ({"type": "forward", "mode": "learning"} if spread else
                       {"type": "forward", "mode": "pairs", "pairs": [["p0", "p1"]]}),
                      {"type": "impair", "events": [
                          {"name": "loss", "action": "drop",
                           "loss": {"model": "bernoulli", "p": 0.001}}]}],
          # an annotated capture of every frame leaving and every drop: with 2 workers each
          # worker's replica pushes into a ring of its own, the main lcore writes one file
          "egress": [{"type": "capture", "file": os.path.join(tmp, "cap.pcapng"),
                      "snaplen": 128, "annotate": "all", "drops": True,
                      "rotate_mb": 16, "rotate_files": 2}],
          "tm": {"ports": [{"port": "p0", "rate_gbps": 10, "lossless": [0]},
                           {"port": "p1", "rate_gbps": 10, "lossless": [0]}]}}
    json.dump(pl, open(os.path.join(tmp, "pl.json"), "w"))
    prof = {"phases": [{"at_s": 0, "tm": {"p1": {"rate_gbps": 5}}},
                       {"at_s": 1, "tm": {"p1": {"rate_gbps": 8}}}]}
    json.dump(prof, open(os.path.join(tmp, "prof.json"), "w"))
    json.dump(prof, open(os.path.join(tmp, "prof2.json"), "w"))
    vdevs = ["--vdev", "net_null0,size=256,copy=1", "--vdev", "net_null1,size=256,copy=1"]
    if spread:
        # RoCE frames (net_null's are zeros, which --rx-spread keeps on the poller): 64 QPs
        # each way, read in a loop
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from run_workers import frame, write_pcap
        vdevs = []
        for port, (src, dst, base, op, size) in enumerate(((1, 2, 0x100, 0x07, 256),
                                                           (2, 1, 0x200, 0x11, 0))):
            path = os.path.join(tmp, "in%d.pcap" % port)
            write_pcap(path, [(i * 1000, frame(src, dst, base + i % 64, i // 64, op, size))
                              for i in range(4096)])
            vdevs += ["--vdev", "net_pcap%d,rx_pcap=%s,tx_pcap=/dev/null,infinite_rx=1" %
                      (port, path)]
    prefix = "tsl%d" % os.getpid()
    lc = ["-l", "0-1"] if nw == 1 else ["--lcores", "0@(0,1),1@0,2@1"]
    cmd = [rocemu] + lc + ["--no-huge", "-m", "1024", "--no-pci",
           "--file-prefix=" + prefix, "--log-level=lib.eal:error",
           ] + vdevs + ["--",
           "--pipeline", os.path.join(tmp, "pl.json"), "--profile", os.path.join(tmp, "prof.json"),
           "--workers", str(nw)] + (["--rx-queues", "1", "--rx-spread"] if spread else
                                    ["--rx-queues", "2"]) + [
           "--duration", "6", "--stats-interval", "1",
           "--prometheus", os.path.join(tmp, "prom.txt"), "--timeline",
           os.path.join(tmp, "tl.csv"), "--stats", os.path.join(tmp, "stats.json")]
    env = dict(os.environ)
    env["TSAN_OPTIONS"] = "halt_on_error=0 exitcode=66 second_deadlock_stack=1 suppressions=%s" % \
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "tsan.supp")
    errf = open(os.path.join(tmp, "stderr"), "w+")
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errf, text=True, env=env)
    sock = "/var/run/dpdk/%s/dpdk_telemetry.v2" % prefix
    lines = []

    def reader():
        for ln in p.stdout:
            lines.append(ln)

    rd = threading.Thread(target=reader)
    rd.start()
    # forwarding (and the telemetry commands) start with the "running" line; setting up takes
    # seconds under TSan
    for _ in range(600):
        if any(ln.startswith("rocemu: running") for ln in lines) or p.poll() is not None:
            break
        time.sleep(0.1)
    errors = []
    answered = [0]
    reload_reply = [None]

    def client(k):
        end = time.time() + 4
        while time.time() < end and p.poll() is None:
            for c in CMDS:
                try:
                    r = ask(sock, c)
                    if c.split(",")[0] in r:
                        answered[0] += 1
                except (OSError, ValueError) as e:
                    if p.poll() is None:
                        errors.append("client %d: %s: %s" % (k, c, e))
                    return
            time.sleep(0.05)

    time.sleep(1.0)
    th = [threading.Thread(target=client, args=(k,)) for k in (0, 1)]
    for t in th:
        t.start()
    time.sleep(0.5)
    p.send_signal(signal.SIGHUP)
    time.sleep(0.5)
    try:
        r = ask(sock, "/rocemu/profile,%s" % os.path.join(tmp, "prof2.json"))
        if (r.get("/rocemu/profile") or {}).get("result") != "loaded":
            errors.append("telemetry reload: %s" % r)
        reload_reply[0] = r
    except (OSError, ValueError) as e:
        errors.append("telemetry reload: %s" % e)
    for t in th:
        t.join()
    p.wait(timeout=120)
    errf.seek(0)
    err = errf.read()
    rd.join()
    out = "".join(lines)
    races = err.count("WARNING: ThreadSanitizer")
    if races:
        errors.append("%d ThreadSanitizer reports" % races)
    if p.returncode != 0:
        errors.append("rocemu exited %d" % p.returncode)
    if "conservation: " not in out or ": OK" not in out.split("conservation: ")[-1]:
        errors.append("conservation not OK")
    if spread:
        try:
            ws = json.load(open(os.path.join(tmp, "stats.json")))["workers"]
            if sum(w["spread_out"] for w in ws) == 0:
                errors.append("--rx-spread: no frame crossed to the other worker's ingress")
        except (OSError, ValueError, KeyError) as e:
            errors.append("--stats: %s" % e)
    if out.count("profile reloaded") < 2:
        errors.append("%d reloads, want 2" % out.count("profile reloaded"))
    if answered[0] < 20:
        errors.append("only %d telemetry answers" % answered[0])
    if "capture: " not in out or "packets written to" not in out.split("capture: ")[-1]:
        errors.append("the annotated capture wrote no file")
    if errors:
        print(err[-12000:])
        print(out[-3000:])
        for e in errors:
            print("  " + e)
        sys.exit(1)
    print("tsan-live: %d worker(s), %d telemetry answers, 2 reloads, interval stats, prometheus, "
          "timeline, an annotated capture: no race reported" % (nw, answered[0]))


if __name__ == "__main__":
    main()
