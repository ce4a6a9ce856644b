#!/usr/bin/env python3
"""A leaf-spine fabric of four real ports on two workers (no namespaces; root for EAL).

  fabric_split.py ROCEMU

Packets cross the fabric on the worker that owns their destination port, which has its own
copy of every link; ports whose packets can share a link therefore share a worker, and rocemu
groups them so (fab_port_groups). Here p0, p1 hang off leaf0 and p2, p3 off leaf1, with two
spines: the links towards leaf0 carry only packets to p0 and p1, those towards leaf1 only
packets to p2 and p3, so worker 0 owns p0 and p1 and worker 1 p2 and p3.

Traffic: host h (10.0.0.h, on port p(h-1)) sends 8 RC QPs of 200 PSNs each to its pair
(h1 <-> h3, h2 <-> h4), through net_pcap (one pcap a port, read once). The pipeline has
nothing random or timed: parse, forward by pairs, static routes at the leaves, links that
never drop. The 2-worker run must give every port the 1-worker run's per-QP sequences and
every link the same packet count, both as the default map gives the RX queues (each port's
queue polled by the owner of its pair in the forward stage: no frame crosses a ring) and with
every frame handed over (--rxq-map).

A fabric of three leaves cannot be split (a leaf's up-links carry packets to both others): on
2 workers, rocemu says so, one worker owns every port, and the run is the 1-worker run.
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "replay"))
from run_workers import frame, lcores, run_ok, sequences  # noqa: E402
from roceframes import write_pcap  # noqa: E402

N_QP, N_PSN = 8, 200
PAIR = {1: 3, 2: 4, 3: 1, 4: 2}


def pipeline(n_leaves):
    ports = ["p0", "p1", "p2", "p3"]
    if n_leaves == 2:
        leaves = [["p0", "p1"], ["p2", "p3"]]
    else:
        leaves = [["p0", "p1"], ["p2"], ["p3"]]
    sws = [{"name": "leaf%d" % i, "ports": ps, "route": "static"} for i, ps in enumerate(leaves)]
    sws += [{"name": "spine0"}, {"name": "spine1"}]
    links = [{"from": "leaf%d" % i, "to": s, "rate_gbps": 400, "buffer_kb": 65536}
             for i in range(len(leaves)) for s in ("spine0", "spine1")]
    return {"description": "fabric_split: %d leaves" % n_leaves,
            "ports": [{"name": p, "dev": "net_pcap%d" % i} for i, p in enumerate(ports)],
            "ingress": [{"type": "parse"},
                        {"type": "forward", "mode": "pairs",
                         "pairs": [["p0", "p2"], ["p1", "p3"]]}],
            "tm": {"buffer": {"total_kb": 262144},
                   "ports": [{"port": p, "rate_gbps": 400, "buffer_kb": 65536}
                             for p in ports]},
            "fabric": {"switches": sws, "links": links}}


def inputs(tmp):
    files = []
    for h in (1, 2, 3, 4):
        frames, t = [], 0
        for psn in range(N_PSN):
            for k in range(N_QP):
                frames.append((t, frame(h, PAIR[h], 0x100 * h + k, psn, 0x0A, 256)))
                t += 1000
        path = os.path.join(tmp, "in%d.pcap" % (h - 1))
        write_pcap(path, frames)
        files.append(path)
    return files


def run(rocemu, tmp, tag, n_leaves, workers, files, extra=()):
    pl = os.path.join(tmp, "fab%d.json" % n_leaves)
    with open(pl, "w") as f:
        json.dump(pipeline(n_leaves), f)
    out = [os.path.join(tmp, "%s_out%d.pcap" % (tag, p)) for p in range(4)]
    stats = os.path.join(tmp, tag + ".json")
    cmd = [rocemu] + lcores(workers) + [
        "--no-huge", "-m", "1024", "--no-pci", "--file-prefix=fs%d_%s" % (os.getpid(), tag),
        "--log-level=lib.eal:error"]
    for p in range(4):
        cmd += ["--vdev", "net_pcap%d,rx_pcap=%s,tx_pcap=%s" % (p, files[p], out[p])]
    cmd += ["--", "--pipeline", pl, "--workers", str(workers), "--duration", "3",
            "--stats", stats] + list(extra)
    p = run_ok(cmd, tag)
    st = json.load(open(stats))
    links = {l["name"]: l["counters"]["routed"] for l in st["fabric"]["links"]}
    return [sequences(o) for o in out], st, links, p.stdout


def main():
    rocemu = sys.argv[1]
    if os.geteuid() != 0:
        print("SKIP: fabric_split needs root (DPDK EAL); NOT TESTED")
        sys.exit(77)
    errs = []
    with tempfile.TemporaryDirectory() as tmp:
        files = inputs(tmp)
        for n_leaves in (2, 3):
            ref, _s1, ref_links, _ = run(rocemu, tmp, "l%dw1" % n_leaves, n_leaves, 1, files)
            for p in range(4):
                h = p + 1
                want = {(h, 0x100 * PAIR[h] + k): list(range(N_PSN)) for k in range(N_QP)}
                if ref[p] != want:
                    errs.append("%d leaves, 1 worker: port p%d carried %d QPs, not its pair's "
                                "%d whole" % (n_leaves, p, len(ref[p]), N_QP))
            # the default map (each port's queue polled by its pair's owner: nothing
            # crosses), and every frame across a ring (each queue polled by its own port's
            # owner, the other worker than its pair's)
            for tag, extra in (("", ()), ("x", ("--rxq-map", "p0:0:0,p1:0:0,p2:0:1,p3:0:1"))):
                if n_leaves == 3 and tag:
                    continue
                got, st, links, text = run(rocemu, tmp, "l%dw2%s" % (n_leaves, tag), n_leaves,
                                           2, files, extra)
                owns = [sorted(w["owns"]) for w in st["workers"]]
                ho = sum(w["handoff_out"] for w in st["workers"])
                what = "%d leaves%s" % (n_leaves, ", every frame across" if tag else "")
                if n_leaves == 2:
                    if owns != [["p0", "p1"], ["p2", "p3"]]:
                        errs.append("%s: workers own %s, want p0 p1 | p2 p3" % (what, owns))
                    if ho != (4 * N_QP * N_PSN if tag else 0):
                        errs.append("%s: %d frames handed over" % (what, ho))
                else:
                    if sorted(owns) != [[], ["p0", "p1", "p2", "p3"]]:
                        errs.append("%s: workers own %s, want one worker all" % (what, owns))
                    if "can both take link" not in text:
                        errs.append("%s: rocemu did not say why one worker owns all" % what)
                for p in range(4):
                    if got[p] != ref[p]:
                        bad = [k for k in set(ref[p]) | set(got[p])
                               if got[p].get(k) != ref[p].get(k)]
                        errs.append("%s: port p%d: %d QPs differ from 1 worker's" %
                                    (what, p, len(bad)))
                if links != ref_links or sum(links.values()) == 0:
                    errs.append("%s: links' packets %s, 1 worker %s" % (what, links, ref_links))
                if not errs:
                    print("ok: %s on 2 workers: owners %s, %d frames handed over, per-QP "
                          "sequences and every link's packets as 1 worker's (%d on the links)"
                          % (what, owns, ho, sum(links.values())))
    for e in errs:
        print("FAIL: " + e)
    if errs:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
