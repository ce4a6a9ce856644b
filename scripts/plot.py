#!/usr/bin/python3
"""PNGs from rocestat's CSV time series and JSON report (python3-matplotlib from Debian).

    plot.py --csv DIR --json REPORT.json --out DIR [--size WxH] [--index] [--window-us US]

Writes OUT/rate.png (measured rate per data flow over a sliding window, the rate lib/dcqcn
predicts where the flow was validated, CNP ticks, retransmission markers), OUT/pfc.png (pause
timeline per port and priority), OUT/qdepth.png (queue depth from rocemu's annotations),
OUT/bandwidth.png (where the bandwidth went: each IP pair's time stacked by part) and,
with --index, OUT/index.html linking them with the text, JSON and CSV files. Every PNG is
WxH pixels (default 1000x500). Each file is written beside its target and renamed over it
when complete. Exits 1 with one message line on bad input or a failed write."""
import argparse
import csv
import html
import json
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

DPI = 100


def die(msg):
    print("plot.py: " + msg, file=sys.stderr)
    sys.exit(1)


def read_csv(path):
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError as e:
        die("%s: %s" % (path, e.strerror))


def smooth(ts, vs, window_us):
    """Mean over a sliding window of window_us (the bins are equally spaced)."""
    if len(ts) < 2:
        return vs
    step = ts[1] - ts[0] if ts[1] > ts[0] else 1.0
    w = max(1, int(round(window_us / step)))
    out, s = [], 0.0
    for i, v in enumerate(vs):
        s += v
        if i >= w:
            s -= vs[i - w]
        out.append(s / w)
    return out


def fig(size):
    w, h = size
    return plt.figure(figsize=(w / DPI, h / DPI), dpi=DPI)


def replace_atomically(path, write):
    """write(file) into a temporary file beside @path, then rename it over @path (over the
    file a symbolic link leads to, so the link stays a link): a failed write leaves the old
    file as it was and no temporary file, as rocemu's outputs do."""
    target = os.path.realpath(path) if os.path.islink(path) else path
    d, base = os.path.split(os.path.abspath(target))
    tmp = os.path.join(d, ".%s.plot-%d" % (base, os.getpid()))
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException as e:  # an interrupt too: no temporary file left behind
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if not isinstance(e, (OSError, ValueError)):
            raise
        die("%s: %s" % (path, getattr(e, "strerror", None) or e))


def save(f, path):
    replace_atomically(path, lambda out: f.savefig(out, dpi=DPI, format="png"))
    plt.close(f)


def rate_unit(peak_mbps):
    """Gb/s above 1 Gb/s, else Mb/s: the axis reads in the unit of the data."""
    return ("Gb/s", 1e-3) if peak_mbps >= 1000 else ("Mb/s", 1.0)


def rate_figure(csvdir, rep, size, window_us=None):
    """The rate plot: returns (figure, facts) where facts holds the window used, the units and
    whether the model went on a second axis (for index.html and the tests)."""
    rows = read_csv(os.path.join(csvdir, "rate.csv"))
    cnps = read_csv(os.path.join(csvdir, "cnp.csv"))
    evs = read_csv(os.path.join(csvdir, "events.csv"))
    flows = {}
    for r in rows:
        flows.setdefault(int(r["flow"]), []).append(r)
    labels = {f["id"]: f["label"] for f in rep.get("flows", [])}
    f = fig(size)
    ax = f.add_subplot(1, 1, 1)
    # the busiest data flows (at most 6, at least 10 data packets each)
    nflow = {f["id"]: f["counters"]["data_packets"] for f in rep.get("flows", [])}
    order = sorted((k for k in flows if nflow.get(k, 0) >= 10), key=lambda k: -nflow[k])[:6]
    # rocestat's --window-us when given, else a window holding about 50 packets of the
    # busiest flow (at least 20 us)
    window = 20.0
    if window_us:
        window = window_us
    elif order and nflow.get(order[0]):
        ts0 = [float(r["t_us"]) for r in flows[order[0]]]
        window = max(window, 50.0 * (ts0[-1] - ts0[0]) / max(1, nflow[order[0]]))
    series = []
    for k in order:
        ts = [float(r["t_us"]) for r in flows[k]]
        ms = smooth(ts, [float(r["measured_mbps"]) for r in flows[k]], window)
        ps = None
        if flows[k][0]["predicted_mbps"] != "":
            ps = smooth(ts, [float(r["predicted_mbps"]) for r in flows[k]], window)
        series.append((k, ts, ms, ps))
    peak_m = max([max(ms) for _, _, ms, _ in series if ms] + [0.0])
    peak_p = max([max(ps) for _, _, _, ps in series if ps] + [0.0])
    unit, scale = rate_unit(peak_m)
    # a model far above the measurement (a 100 Gb/s line against 0.3 Gb/s measured) gets
    # its own axis on the right, so the measurement is not flattened to zero
    twin = peak_m > 0 and peak_p > 5 * peak_m
    ax2, unit2, scale2 = None, unit, scale
    if twin:
        ax2 = ax.twinx()
        unit2, scale2 = rate_unit(peak_p)
    for k, ts, ms, ps in series:
        line, = ax.plot(ts, [v * scale for v in ms], lw=1,
                        label="%s measured" % labels.get(k, k))
        if ps is not None:
            (ax2 or ax).plot(ts, [v * scale2 for v in ps], lw=1.2, ls="--", color="black",
                             alpha=0.8, label="%s lib/dcqcn model%s" % (
                                 labels.get(k, k), " (right axis)" if twin else ""))
        ct = [float(c["t_us"]) for c in cnps if c["data_flow"] == str(k)]
        if ct:
            ax.plot(ct, [0] * len(ct), "|", ms=12, color=line.get_color())
        for e in evs:
            if int(e["flow"]) == k and e["type"] in ("gap", "retx", "timeout", "lost_retx"):
                ax.axvline(float(e["t_us"]), color="red", lw=0.6, alpha=0.5)
    ax.set_xlabel("time since the first frame (us)")
    ax.set_ylabel("measured rate (%s, mean over %g us)" % (unit, window))
    if twin:
        ax2.set_ylabel("model rate (%s, mean over %g us)" % (unit2, window))
        ax2.set_ylim(bottom=0)
    ax.set_ylim(bottom=0)
    ax.set_title("rate per QP: CNPs as ticks at 0, retransmissions as red lines")
    if order:
        hs, ls = ax.get_legend_handles_labels()
        if twin:
            h2, l2 = ax2.get_legend_handles_labels()
            hs, ls = hs + h2, ls + l2
        ax.legend(hs, ls, fontsize=7, loc="best")
    else:
        ax.text(0.5, 0.5, "no data packets", ha="center", transform=ax.transAxes)
    f.tight_layout()
    return f, {"window_us": window, "unit": unit, "model_axis": "right" if twin else "same",
               "model_unit": unit2, "axes": [ax, ax2]}


def plot_rate(csvdir, rep, out, size, window_us=None):
    f, facts = rate_figure(csvdir, rep, size, window_us)
    save(f, os.path.join(out, "rate.png"))
    return facts


def plot_pfc(csvdir, out, size):
    rows = read_csv(os.path.join(csvdir, "pfc.csv"))
    f = fig(size)
    ax = f.add_subplot(1, 1, 1)
    lanes = sorted({(r["port"], int(r["priority"])) for r in rows})
    for i, lane in enumerate(lanes):
        iv = [(float(r["start_us"]), float(r["end_us"]) - float(r["start_us"]))
              for r in rows if (r["port"], int(r["priority"])) == lane]
        ax.broken_barh(iv, (i - 0.4, 0.8), color="tab:orange")
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels(["%s prio %d" % (p, q) if q < 8 else "%s PAUSE" % p for p, q in lanes],
                       fontsize=7)
    ax.set_xlabel("time since the first frame (us)")
    ax.set_ylabel("port (source MAC) and priority")
    ax.set_title("PFC / PAUSE: paused intervals")
    if not lanes:
        ax.text(0.5, 0.5, "no PFC or PAUSE frames", ha="center", transform=ax.transAxes)
    f.tight_layout()
    save(f, os.path.join(out, "pfc.png"))


def plot_qdepth(csvdir, out, size):
    rows = read_csv(os.path.join(csvdir, "qdepth.csv"))
    f = fig(size)
    ax = f.add_subplot(1, 1, 1)
    if rows:
        ax.plot([float(r["t_us"]) for r in rows], [float(r["qdepth_max"]) for r in rows],
                ".", ms=2)
    else:
        ax.text(0.5, 0.5, "no rocemu queue-depth annotations", ha="center",
                transform=ax.transAxes)
    ax.set_xlabel("time since the first frame (us)")
    ax.set_ylabel("queue depth (bytes, max per bin)")
    ax.set_title("queue depth (rocemu annotations)")
    f.tight_layout()
    save(f, os.path.join(out, "qdepth.png"))


BW_COLORS = {"line_rate": "tab:green", "retransmitting": "tab:red", "pfc_paused": "tab:orange",
             "dcqcn_limited": "tab:purple", "host_limited": "tab:brown", "idle": "lightgrey"}


def plot_bandwidth(csvdir, out, size):
    """Where the bandwidth went: per IP pair a bar of its time, stacked by part (% of span)."""
    rows = read_csv(os.path.join(csvdir, "bandwidth.csv"))
    pairs, parts = [], []
    for r in rows:
        if r["label"] not in pairs:
            pairs.append(r["label"])
        if r["part"] not in parts:
            parts.append(r["part"])
    share = {(r["label"], r["part"]): 100.0 * float(r["share"]) for r in rows}
    f = fig(size)
    ax = f.add_subplot(1, 1, 1)
    left = [0.0] * len(pairs)
    for part in parts:
        w = [share.get((p, part), 0.0) for p in pairs]
        ax.barh(range(len(pairs)), w, left=left, color=BW_COLORS.get(part), label=part,
                height=0.6)
        left = [a + b for a, b in zip(left, w)]
    ax.set_yticks(range(len(pairs)))
    ax.set_yticklabels(pairs, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of the pair's time, first data packet to the end of the last (%)")
    ax.set_ylabel("IP pair (sender -> receiver)")
    ax.set_title("where the bandwidth went")
    if pairs:
        ax.legend(fontsize=7, loc="lower right", ncol=3)
    else:
        ax.text(0.5, 0.5, "no data packets", ha="center", transform=ax.transAxes)
    f.tight_layout()
    save(f, os.path.join(out, "bandwidth.png"))


def write_index(out, rep, rate=None):
    fails = rep.get("failures", 0)
    parts = ["<!doctype html><meta charset=utf-8><title>rocestat report</title>",
             "<h1>rocestat report</h1>",
             "<p>%d packets from %s s (epoch) over %.6f s, %d checks failed</p>" % (
                 rep["capture"]["packets"], html.escape(rep["capture"].get("start", "?")),
                 rep["capture"].get("duration_ns", 0) / 1e9, fails),
             "<p><a href=report.txt>report.txt</a> | <a href=report.json>report.json</a> | "
             "CSV: " + " ".join("<a href=csv/%s>%s</a>" % (c, c) for c in
                                ("rate.csv", "cnp.csv", "events.csv", "pfc.csv",
                                 "qdepth.csv", "ce.csv", "bandwidth.csv")) + "</p>"]
    ver = rep.get("version")
    if ver:
        parts.append("<p>%s</p>" % html.escape(
            "rocestat %s (git %s); DPDK %s, jansson %s, %s" % (
                ver["rocestat"], ver["git"], ver["dpdk"], ver["jansson"], ver["libpcap"])))
    for v in rep.get("dcqcn", []):
        parts.append("<p>DCQCN flow %d: <b>%s</b> %s</p>" % (v["flow"], v["verdict"],
                                                           html.escape(v["why"])))
    if rate:
        parts.append("<p>rate.png: mean over %g us, measured in %s%s</p>" % (
            rate["window_us"], rate["unit"], ", the model on the right axis in %s" %
            rate["model_unit"] if rate["model_axis"] == "right" else ""))
    for p in rep.get("bandwidth", {}).get("pairs", []):
        for x in p["findings"]:
            parts.append("<p>%s: <b>%s</b> [%s] %s</p>" % (
                html.escape(p["label"]), html.escape(x["kind"]), html.escape(x["layer"]),
                html.escape(x["text"])))
        if not p["findings"]:
            parts.append("<p>%s: nothing found (%.0f%% of the line rate)</p>" % (
                html.escape(p["label"]), 100 * p["line_fraction"]))
    for png in ("rate.png", "pfc.png", "qdepth.png", "bandwidth.png"):
        parts.append("<h2>%s</h2><img src=%s>" % (png, png))
    replace_atomically(os.path.join(out, "index.html"),
                       lambda f: f.write(("\n".join(parts) + "\n").encode()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--size", default="1000x500")
    ap.add_argument("--index", action="store_true")
    ap.add_argument("--window-us", type=float, default=None,
                    help="rate window (default: about 50 packets of the busiest flow)")
    a = ap.parse_args()
    try:
        w, h = (int(x) for x in a.size.split("x"))
        if not (100 <= w <= 10000 and 100 <= h <= 10000):
            raise ValueError
    except ValueError:
        die("--size: expected WxH (100..10000), got %r" % a.size)
    try:
        with open(a.json) as f:
            rep = json.load(f)
    except (OSError, ValueError) as e:
        die("%s: %s" % (a.json, e))
    os.makedirs(a.out, exist_ok=True)
    rate = plot_rate(a.csv, rep, a.out, (w, h), a.window_us)
    plot_pfc(a.csv, a.out, (w, h))
    plot_qdepth(a.csv, a.out, (w, h))
    plot_bandwidth(a.csv, a.out, (w, h))
    if a.index:
        write_index(a.out, rep, rate)


if __name__ == "__main__":
    main()
