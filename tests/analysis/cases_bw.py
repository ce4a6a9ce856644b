"""rocestat's "where the bandwidth went" against 64-byte-header captures with one known cause
each (gen_captures.py bw_*), and the ranks and rails of the IP pairs from an NCCL_DEBUG=INFO
log (--nccl-log) or rocegen's --json (--rocegen-json). Called by run_cases.py."""
import json
import os
import subprocess


def check(cap, run, fail, ROCESTAT):
    # where the bandwidth went, per IP pair, on 64-byte-header captures with one known cause
    # each (gen_captures.py bw_*): each named, with the likely layer; nothing on a clean run.
    # The ranks and the rail come from an NCCL_DEBUG=INFO log.
    nl = os.path.join(cap, "nccl-info.log")
    for name, opts, kinds, part in (
            ("bw_clean", ["--expect-qps", "1"], [], "line_rate"),
            ("bw_clean4", ["--expect-qps", "4"], [], "line_rate"),
            ("bw_clean", ["--expect-qps", "4"], ["qps"], "line_rate"),
            ("bw_host", [], ["host_cap"], "host_limited"),
            ("bw_pfc", [], ["pfc"], "pfc_paused"),
            ("bw_dcqcn", [], ["dcqcn"], "dcqcn_limited"),
            ("bw_idle", [], ["idle"], "idle")):
        d = run(os.path.join(cap, name + ".pcap"), "--line-rate-gbps", "100", "--nccl-log", nl,
                *opts)
        bw = d["bandwidth"]
        if len(bw["pairs"]) != 1:
            fail("%s: %d IP pairs, want 1" % (name, len(bw["pairs"])))
        p = bw["pairs"][0]
        got = [x["kind"] for x in p["findings"]]
        if got != kinds:
            fail("%s %r: findings %r, want %r: %r" % (name, opts, got, kinds, p["findings"]))
        t = p["time_ns"]
        # the parts add up to the span; the cause is the largest part besides the line rate
        # (a clean run: the line rate is nearly all of it)
        lost = {k: v for k, v in t.items() if k != "line_rate"}
        if abs(sum(t.values()) - p["span_ns"]) > 10 or \
                (part == "line_rate" and t["line_rate"] < 0.99 * p["span_ns"]) or \
                (part != "line_rate" and max(lost, key=lost.get) != part):
            fail("%s: time split %r, span %d, want %s" % (name, t, p["span_ns"], part))
        if (p["src_rank"], p["dst_rank"], p["rail"]) != (0, 1, 1):
            fail("%s: ranks and rail %r" % (name, (p["src_rank"], p["dst_rank"], p["rail"])))
        print("bandwidth %s %s: %s; %.1f Gb/s wire, %s" % (
            name, " ".join(opts), ", ".join(got) or "nothing found", p["wire_gbps"],
            ", ".join("%s %.0f%%" % (k, 100.0 * v / p["span_ns"]) for k, v in t.items() if v)))
    # the figures behind the findings
    d = run(os.path.join(cap, "bw_host.pcap"))
    p = d["bandwidth"]["pairs"][0]
    if not 30 < p["wire_gbps"] < 32 or not 30 < p["peak_gbps"] < 36 or \
            "never above %.1f Gb/s" % p["peak_gbps"] not in p["findings"][0]["text"] or \
            p["qps"] != 1 or p["src_rank"] is not None:
        fail("bw_host: %r" % p)
    d = run(os.path.join(cap, "bw_pfc.pcap"))
    t = d["bandwidth"]["pairs"][0]["time_ns"]
    # (the fifth pause comes after the last data packet: not within the pair's time)
    if abs(t["pfc_paused"] - 4 * 100000) > 4 * 1000:
        fail("bw_pfc: paused %d ns, want 4 x 100 us" % t["pfc_paused"])
    r = subprocess.run([ROCESTAT, "--nccl-log", os.path.join(cap, "nccl-tests.log"),
                        os.path.join(cap, "bw_clean.pcap")], capture_output=True, text=True)
    if r.returncode != 2 or "--nccl-log" not in r.stderr:
        fail("--nccl-log of an nccl-tests output: exit %d %r" % (r.returncode, r.stderr))
    # the ranks and rail from rocegen's --json instead (hosts, ranks_per_process, rails):
    # 10.0.0.1 -> 10.0.0.2 is rank 0 -> 1 with one rank per process; with two ranks per process
    # from 10.0.0.0 and two rails, rank 1 (local 1, rail 1) -> rank 2
    tmp = os.path.dirname(cap)
    for hosts, per, rails, want in ((["10.0.0.1", "10.0.0.2"], 1, 1, (0, 1, 0)),
                                    (["10.0.0.0", "10.0.0.2"], 2, 2, (1, 2, 1))):
        rj = os.path.join(tmp, "rocegen-%d.json" % per)
        with open(rj, "w") as f:
            json.dump({"test": "allreduce", "hosts": hosts, "ranks_per_process": per,
                       "rails": rails}, f)
        d = run(os.path.join(cap, "bw_clean.pcap"), "--rocegen-json", rj)
        p = d["bandwidth"]["pairs"][0]
        if (p["src_rank"], p["dst_rank"], p["rail"]) != want or \
                not d["bandwidth"]["ranks_from_rocegen_json"]:
            fail("--rocegen-json %r: ranks and rail %r, want %r" % (
                hosts, (p["src_rank"], p["dst_rank"], p["rail"]), want))
    # a file that is not rocegen's report: one line naming the JSON path, exit 2
    for text, word in (('{"hosts": "10.0.0.1", "ranks_per_process": 1, "rails": 1}', "hosts:"),
                       ('{"hosts": ["10.0.0.x"], "ranks_per_process": 1, "rails": 1}',
                        "hosts[0]:"),
                       ('{"hosts": ["10.0.0.1"], "ranks_per_process": 2, "rails": 3}',
                        "rails:"),
                       ('{"hosts": ["10.0.0.1"], "rails": 1}', "ranks_per_process:"),
                       ('{"hosts": [', "line 1")):
        rj = os.path.join(tmp, "bad-rocegen.json")
        with open(rj, "w") as f:
            f.write(text)
        r = subprocess.run([ROCESTAT, "--rocegen-json", rj, os.path.join(cap, "bw_clean.pcap")],
                           capture_output=True, text=True)
        if r.returncode != 2 or len(r.stderr.strip().splitlines()) != 1 or \
                ("--rocegen-json %s: %s" % (rj, word)) not in r.stderr:
            fail("--rocegen-json %r: exit %d %r" % (text, r.returncode, r.stderr))
