#!/usr/bin/env python3
"""The demo's closing report: the two rocegen processes' nccl-tests tables (left) next to what
rocemu did (right), then the checks. Exits 1 when a check fails, saying which and why.

  demo_report.py WORK PIPELINE PROFILE RC_A RC_B

WORK holds a.out/a.json (rocegen in namespace A), b.out/b.json (B), rocemu.out and stats.json
(rocemu). PIPELINE is the pipeline file: a check is made only for what it configures: with
"ecn" on a TM port, CE marks, CNPs, and the DCQCN cut (A's rate below 60 % of its line rate
and back above 90 % at the end); with "pfc", no lossless frame lost (a pause, when a queue
reached XOFF, is reported; DCQCN may keep every queue below it). PROFILE may be "".
"""
import json
import os
import re
import sys
import textwrap

LEFT = 71    # the verify line and TABLE_FMT fit in 70 columns
RIGHT = 60


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def text(path):
    try:
        with open(path) as f:
            return f.read().splitlines()
    except OSError:
        return []


# rocegen's table narrowed to the left column (GB/s for algbw and busbw)
TABLE_FMT = "%10s %9s %5s %5s %10s %6s %6s"


def rocegen_column(tag, ns_ip, out, js, rc):
    """The process's own table lines (verbatim), then its counters in three lines."""
    col = ["rocegen %s (%s), exit %d" % (tag, ns_ip, rc), "-" * (LEFT - 1)]
    table = False
    for line in out:
        if line.startswith("rocegen: verify"):
            col.append(line.replace("rocegen: ", "", 1).replace(" from the wire", ""))
        elif "size(B)" in line:
            table = True
            col.append(TABLE_FMT % ("size(B)", "count", "type", "redop", "time(us)",
                                    "algbw", "busbw"))
        elif line.startswith("# per-QP"):
            table = False
        elif table and line.strip() and not line.startswith("#"):
            f = line.split()
            col.append(TABLE_FMT % tuple(f[:7]) if len(f) >= 7 else line)
    if js is None:
        col.append("(no JSON: rocegen stopped before its report; last lines:)")
        col += [l[:LEFT - 1] for l in out[-4:]]
        return col, None
    qps = js["qps"]

    def s(k):
        return sum(q.get(k, 0) for q in qps)
    d = {k: s(k) for k in ("tx_data_packets", "retransmitted_packets", "timeouts",
                           "naks_sent", "naks_received", "rx_ce_packets", "cnps_sent",
                           "cnps_suppressed_by_pacing", "cnps_received", "paused_ns")}
    d["min_rate_mbps"] = min(q["min_rate_mbps"] for q in qps)
    d["final_rate_mbps"] = min(q["final_rate_mbps"] for q in qps)
    d["pfc_received"] = js.get("pfc_received", 0)
    d["line_mbps"] = max(q.get("final_rate_mbps", 0) for q in qps)
    senders = [q for q in qps if q.get("requester") and q.get("cnps_received", 0) > 0]
    d["cut_min_mbps"] = min((q["min_rate_mbps"] for q in senders), default=None)
    d["cut_final_mbps"] = min((q["final_rate_mbps"] for q in senders), default=None)
    col.append("sent %d data frames, %d resent (%d timeouts, %d NAKs in)"
               % (d["tx_data_packets"], d["retransmitted_packets"], d["timeouts"],
                  d["naks_received"]))
    col.append("NP: %d CE-marked frames in -> %d CNPs out (%d held by pacing)"
               % (d["rx_ce_packets"], d["cnps_sent"], d["cnps_suppressed_by_pacing"]))
    col.append("RP: %d CNPs in, DCQCN rate min %.1f final %.1f Mb/s"
               % (d["cnps_received"], d["min_rate_mbps"], d["final_rate_mbps"]))
    col.append("PFC: %d frames in, data paused %.2f ms"
               % (d["pfc_received"], d["paused_ns"] / 1e6))
    return col, d


def rocemu_column(stats, out, pipeline, profile):
    col = ["rocemu: %s%s" % (os.path.basename(pipeline),
                             " + " + os.path.basename(profile) if profile else ""),
           "-" * (RIGHT - 1)]
    for line in out:
        if line.startswith("rocemu: stopped after"):
            col.append(line.replace("rocemu: ", "", 1))
    if stats is None:
        col.append("(no stats JSON: rocemu did not finish)")
        return col, None
    tm = {t["port"]: t["counters"] for t in stats["tm"]}
    ports = {p["name"]: p for p in stats["ports"]}
    towards = {"p0": "to A", "p1": "to B"}
    for name, p in ports.items():
        col.append("%s (%s): rx %d tx %d frames" % (name, towards.get(name, "?"),
                                                    p["rx_pkts"], p["tx_pkts"]))
    inc_marked = {}
    inc_dropped = {}
    for x in stats.get("incast", []):
        k = x["counters"]
        if x.get("enabled") or k["generated"]:
            inc_marked[x["port"]] = inc_marked.get(x["port"], 0) + k["ecn_marked"]
            inc_dropped[x["port"]] = inc_dropped.get(x["port"], 0) + k["tm_dropped"]
            col.append("incast %s -> %s prio %s: %d virtual frames, %d taken by "
                       "the link, %d dropped, %d CE-marked"
                       % (x["name"], x["port"], x["priority"], k["generated"], k["absorbed"],
                          k["tm_dropped"], k["ecn_marked"]))
    ce_roce = 0
    xoff = 0
    for name, c in tm.items():
        marked = c.get("ecn_marked", 0)
        real = marked - inc_marked.get(name, 0)
        ce_roce += real
        col.append("ECN %s (%s): %d CE marks, %d of them on RoCE frames, max queue %d KB"
                   % (name, towards.get(name, "?"), marked, real,
                      c.get("max_queue_bytes", 0) // 1024))
    for name, c in tm.items():
        xoff += c.get("pfc_tx_xoff", 0)
        col.append("PFC out of %s (%s): %d XOFF + %d XON frames"
                   % (name, towards.get(name, "?"), c.get("pfc_tx_xoff", 0),
                      c.get("pfc_tx_xon", 0)))
    for st in stats["stages"]:
        # parse and forward only classify and count; other stages (impair, delay, cnp, ...)
        # are what the scenario is about
        if st["type"] not in ("parse", "forward"):
            nz = ["%s=%d" % (k, v) for k, v in sorted(st["counters"].items()) if v]
            col.append("stage %s: in %d out %d %s" % (st["name"], st["in_pkts"],
                                                      st["out_pkts"], " ".join(nz)))
    drops = []
    for name, c in tm.items():
        for k, v in sorted(c.items()):
            if k.startswith("drop_") and v:
                inc = inc_dropped.get(name, 0) if k == "drop_queue_full" else 0
                drops.append("tm.%s.%s=%d%s" % (name, k, v,
                                                " (%d incast)" % inc if inc else ""))
    for st in stats["stages"]:
        for k, v in st["counters"].items():
            if k.startswith("drop_") and v:
                drops.append("%s.%s=%d" % (st["name"], k, v))
    col.append("drops: " + (", ".join(drops) if drops else "none"))
    cons = [l for l in out if l.startswith("conservation:")]
    col.append(cons[-1] if cons else "conservation: (no line)")
    # a lossless class loses frames only when PFC came too late (its headroom overflowed)
    lossless = sum(c.get("drop_headroom_overflow", 0) for c in tm.values())
    return col, {"ce_roce": ce_roce, "xoff": xoff, "ok": stats["conservation"]["ok"],
                 "lossless_drops": lossless}


def wrap(lines, width):
    out = []
    for line in lines:
        if len(line) <= width - 1:
            out.append(line)
        else:
            out += textwrap.wrap(line, width - 1, subsequent_indent="    ",
                                 break_on_hyphens=False)
    return out


def main():
    work, pipeline, profile, rc_a, rc_b = sys.argv[1:6]
    rc_a, rc_b = int(rc_a), int(rc_b)
    pl = load(pipeline) or {}
    tm_ports = pl.get("tm", {}).get("ports", [])
    want_ecn = any("ecn" in p for p in tm_ports)
    want_pfc = any("pfc" in p for p in tm_ports)

    a_col, a = rocegen_column("A", "netns A, 198.18.0.11, rank 0", text(work + "/a.out"),
                              load(work + "/a.json"), rc_a)
    b_col, b = rocegen_column("B", "netns B, 198.18.0.12, rank 1", text(work + "/b.out"),
                              load(work + "/b.json"), rc_b)
    e_col, e = rocemu_column(load(work + "/stats.json"), text(work + "/rocemu.out"),
                             pipeline, profile)
    left = wrap(a_col, LEFT) + [""] + wrap(b_col, LEFT)
    right = wrap(e_col, RIGHT)
    for i in range(max(len(left), len(right))):
        l = left[i] if i < len(left) else ""
        r = right[i] if i < len(right) else ""
        print(("%-*s | %s" % (LEFT - 1, l, r)).rstrip())

    print()
    fails = []

    def check(ok, good, bad):
        print("%s %s" % ("ok:    " if ok else "FAILED:", good if ok else bad))
        if not ok:
            fails.append(bad)

    for tag, rc, out in (("A", rc_a, work + "/a.out"), ("B", rc_b, work + "/b.out")):
        verified = any(re.match(r"rocegen: verify \d+ bytes: data ok, (\d+) of \1 bytes placed", l)
                       for l in text(out))
        check(rc == 0 and verified, "all-reduce done in %s, every byte placed and checked" % tag,
              "the all-reduce did not complete in %s (exit %d%s; see %s)"
              % (tag, rc, "" if verified else ", data not verified", out))
    if e is None:
        check(False, "", "rocemu wrote no stats (see %s/rocemu.out)" % work)
    else:
        check(e["ok"], "rocemu's conservation line is OK",
              "rocemu's conservation check failed")
    if a is not None and b is not None and e is not None:
        if want_ecn:
            ce = a["rx_ce_packets"] + b["rx_ce_packets"]
            check(e["ce_roce"] > 0 and ce > 0,
                  "ECN: rocemu CE-marked %d RoCE frames, the receivers saw %d" % (e["ce_roce"], ce),
                  "ECN: no CE mark reached rocegen (rocemu marked %d RoCE frames, receivers saw %d)"
                  % (e["ce_roce"], ce))
            sent = a["cnps_sent"] + b["cnps_sent"]
            rcvd = a["cnps_received"] + b["cnps_received"]
            check(sent > 0 and rcvd > 0,
                  "CNP: rocegen's notification points sent %d CNPs, %d reached the senders"
                  % (sent, rcvd),
                  "CNP: no CNP made it (sent %d, received %d)" % (sent, rcvd))
            # the reaction point: the QPs that got CNPs cut their rate and recovered
            cut = [(t, x) for t, x in (("A", a), ("B", b)) if x["cut_min_mbps"] is not None]
            line = max(a["line_mbps"], b["line_mbps"])
            lo = min((x["cut_min_mbps"] for _, x in cut), default=line)
            fin = min((x["cut_final_mbps"] for _, x in cut), default=line)
            who = ",".join(t for t, _ in cut) or "no sender"
            check(bool(cut) and lo < 0.6 * line and fin >= 0.9 * line,
                  "DCQCN: %s cut its rate to %.1f Mb/s (%.0f %% of %.0f) and was back at %.1f Mb/s"
                  % (who, lo, 100 * lo / line, line, fin),
                  "DCQCN: no cut below 60 %% of the line rate and back (%s: lowest %.1f, final %.1f "
                  "of %.0f Mb/s)" % (who, lo, fin, line))
        else:
            print("--     ECN/CNP: not checked (%s configures no ECN)" % os.path.basename(pipeline))
        if want_pfc:
            got = a["pfc_received"] + b["pfc_received"]
            check(e["lossless_drops"] == 0,
                  "PFC: no lossless frame lost; rocemu sent %d XOFF frames, rocegen received %d "
                  "PFC frames%s" % (e["xoff"], got, "" if e["xoff"] else
                                    " (no queue reached XOFF: DCQCN kept them below it)"),
                  "PFC: %d lossless frames lost (rocemu XOFF %d, rocegen received %d)"
                  % (e["lossless_drops"], e["xoff"], got))
        else:
            print("--     PFC: not checked (%s configures no PFC)" % os.path.basename(pipeline))
    if fails:
        print("\ndemo: FAILED: " + "; ".join(fails))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
