#!/usr/bin/env python3
"""The demo's DCQCN picture in text: A's sending rate as rocemu received it, in 100 ms steps:
the mean of each step and the lowest of its five 20 ms means, against the same of the rate
DCQCN's model predicts for the same CNPs, from a rocestat report directory (report.json and
csv/rate.csv: the rates of rocestat's --bin-us bins), then rocestat's verdict.

  demo_rate.py REPORT_DIR LINE_MBPS

Exits 1 when the report is missing or holds no validated flow (no CNP reached a sender: no
DCQCN cut to show); the checks on the cut itself are demo_report.py's.
"""
import csv
import json
import os
import sys

STEP_US = 100000
SUB_US = 20000
BAR = 40


def main():
    rdir, line = sys.argv[1], float(sys.argv[2])
    try:
        with open(os.path.join(rdir, "report.json")) as f:
            rep = json.load(f)
    except (OSError, ValueError) as e:
        print("demo: FAILED: no rocestat report in %s (%s)" % (rdir, e))
        return 1
    val = [v for v in rep.get("dcqcn", []) if v.get("cnps", 0) > 0]
    if not val:
        print("demo: FAILED: rocestat validated no flow (no CNP reached a sender)")
        return 1
    v = max(val, key=lambda x: x["cnps"])
    flows = {f["id"]: f for f in rep.get("flows", [])}
    fl = flows.get(v["flow"], {})
    bins = {}
    with open(os.path.join(rdir, "csv", "rate.csv")) as f:
        for row in csv.DictReader(f):
            if int(row["flow"]) != v["flow"]:
                continue
            b = int(float(row["t_us"]) // SUB_US)
            m = float(row["measured_mbps"])
            p = float(row["predicted_mbps"]) if row.get("predicted_mbps") not in (None, "") else m
            s = bins.setdefault(b, [0.0, 0.0, 0])
            s[0] += m
            s[1] += p
            s[2] += 1
    steps = {}
    for b, (m, p, n) in bins.items():   # 20 ms means -> 100 ms rows
        st = steps.setdefault(b * SUB_US // STEP_US, [])
        st.append((m / n, p / n))
    print("flow %s:0x%x -> %s:0x%x, %d CNPs to its sender; line rate %.0f Mb/s; '#' the lowest "
          "20 ms mean in each 100 ms, '|' the model's" % (fl.get("src_ip", "?"), fl.get("src_qp", 0), fl.get("dst_ip", "?"),
                             fl.get("dest_qp", 0), v["cnps"], line))
    print("%8s %9s %9s %9s %9s" % ("t (s)", "lowest", "model", "mean", "model"))
    for b in sorted(steps):
        st = steps[b]
        m, p = min(x[0] for x in st), min(x[1] for x in st)
        mm, pm = sum(x[0] for x in st) / len(st), sum(x[1] for x in st) / len(st)
        col = min(BAR, int(round(m / line * BAR)))
        mark = min(BAR, int(round(p / line * BAR)))
        bar = list("#" * col + " " * (BAR - col + 1))
        bar[mark] = "|"
        print("%8.1f %9.1f %9.1f %9.1f %9.1f  %s" % (b * STEP_US / 1e6, m, p, mm, pm,
                                                     "".join(bar).rstrip()))
    print("rocestat: %s: %s" % (v.get("verdict", "?"), v.get("why", "")))
    print("plots: %s (rate.png: measured and model over time)"
          % os.path.join(rdir, "index.html"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
