#!/usr/bin/env bash
# rocestat end to end: the netns lab with rocemu between two rocegen, rocemu capturing every
# frame as it arrives (ingress.pcap, before its drops) and as it leaves (egress.pcap); rocestat
# on both captures must agree exactly with rocegen's and rocemu's own counters.
#   loss:   tests/analysis/loss-1pct-capture.json (1% of data each way and 1% of ACKs dropped),
#           ring all-reduce of 16 MB over 2 ranks (one per process, so every ring step
#           crosses rocemu), one iteration, no warm-up. Per QP: data packets at
#           ingress = the sender's tx_data_packets; at egress = the receiver's rx_packets;
#           ingress - egress summed per direction = rocemu's drops; NAKs at ingress = the
#           receiver's naks_sent, at egress = the sender's naks_received; rocestat's busbw of
#           the iteration within 2% of rocegen's table.
#   incast: the DCQCN lab at 50 Mb/s: tests/analysis/dcqcn-lab-50m-capture.json, switched to
#           profiles/incast-8to1-50m.json once both rocegen are up (p1, the link to B, at
#           55 Mb/s; from 0.3 s to 2.3 s an 8:1 incast, 8 virtual senders at 13.75 Mb/s, 10 ms
#           on / 190 ms off, sharing B's queue with A's ECN-marked traffic); rocegen at
#           --line-rate-mbps 50 with --dcqcn profiles/dcqcn-50m.conf; one ring
#           all-reduce of 16 MB (about 3 s; A has data but between the ring's two steps,
#           5-52 ms here, which rocestat finds and leaves out as idle time). The counters as
#           in loss (CNPs at ingress = B's cnps_sent, at egress = A's cnps_received, CE at
#           egress = B's rx_ce_packets), busbw within 2%; and the DCQCN validation
#           (--window-us 50000) of every requester QP that received CNPs (A's, at least):
#           PASS against the
#           parameters rocegen ran, FAIL against the same file with rpg_time_reset 60 ms
#           instead of 20 ms, with --fit naming rpg_time_reset first as the parameter that,
#           changed alone, explains the trace, at 20 ms within 10%.
#           Why rpg_time_reset: the trace shows it directly: after each incast burst the
#           sender climbs back in steps one rpg_time_reset apart (rpg_byte_reset is 0), over
#           about 100 ms; tripled, the model recovers a third as fast (trajectory error 0.3-0.8,
#           against 0.005-0.08 with 20 ms). rpg_min_dec_fac is not shown by this trace: a
#           cut of Rc (1 - alpha / 2) never goes below 50%, so 50 and 80 predict the same.
#           Why these settings (measured on this 2-core VM with neighbours' builds running):
#           - 50 Mb/s, not 1 Gb/s: at 1 Gb/s rocegen is CPU- and window-limited (132 Mb/s
#             on average), its rate is not its DCQCN rate; at 100 Mb/s, sending and receiving
#             100 Mb/s at once, it fell below its DCQCN rate for the first ~0.5 s in some runs
#             under load (2 of 6 failed so);
#           - --poll-sleep-us 20: a busy-polling rocegen shares CPU 1 with the other one and
#             the switch, loses whole scheduler slices and reached 25-60 Mb/s of 100 in bursts
#             of 32 frames; sleeping when idle it keeps 90-99 Mb/s at 10 ms resolution;
#           - rocemu -l 0-1 (a worker lcore): with one lcore the ingress timestamps came in
#             bursts 30-50 ms apart in some runs (the main loop's capture writing and telemetry
#             between polls); with the worker they follow A's sending within a few ms;
#           - CPU 1 for rocemu's busy-polling worker alone: both rocegen (ROCEGEN_LCORE=0)
#             and this shell's children on CPU 0, with rocemu's main lcore, which sleeps 10 ms
#             between its services. With the rocegen on CPU 1 the worker lost whole slices to
#             them, and under ASan 2 of 4 runs failed (trajectory error up to 0.117, 346 of 386
#             cuts within 10%, rpg_time_reset fitted to 18.0 ms); moved, 13 of 13 passed
#             (errors 0.005-0.066, fits 19.9-20.4 ms). A CPU-bound process on CPU 1 still
#             fails it (4 of 4: rocemu's "polling:" line then shows gaps of up to 28 ms, the
#             capture's arrival times are that late); on CPU 0 it does not (2 of 2 passed);
#           - the DCQCN parameters: NVIDIA's defaults are timed for 100 Gb/s; at these rates
#             alpha decays between CNPs and the cuts are too small to matter, PFC holds the
#             sender back instead (the file's header says more); its timers are NVIDIA's
#             times 100 (rpg_time_reset 20 ms, not 30), min_time_between_cnps 1 ms above the
#             0.4 ms monitor period so that the software path cannot move two CNPs into one
#             period (with the two equal the sender ran 3-6% above the model);
#           - p1 10% faster than rocegen's line rate: rocegen, descheduled for a few ms,
#             catches up in a burst (up to 64 KB of its pacer's credit); at exactly the
#             link's rate the queue such a burst leaves never drains and the sender marks
#             itself, so that it never gets back to the line rate (seen: 1.4 s at 10-20% above
#             the model). Back at the line rate between incast bursts, the model and the
#             sender meet again; an early difference in Rc or in the target rate otherwise
#             persists (cuts and the averaging towards the target keep ratios);
#           - 50 ms windows: the capture's timestamps still move by up to ~10-20 ms (a stall of
#             rocemu or of rocegen, then a burst); the DCQCN dynamics here take ~100 ms.
#           - repeats: the lab is two vCPUs shared with the host, and nearly every run has
#             the sender stall inside a message (rocestat's "stalls", 5-30 ms) or rocemu's
#             worker miss its polls for a few ms. A host stall delays the CNPs that arrive
#             meanwhile, and coalesces them into one cut at the sender where the capture
#             predicts several (the sender then runs 10-30% above the model for ~50 ms). With
#             the settings above 1 of 16 runs missed a timing check in a loop of this test
#             alone (89.8% of the cuts within 10%, against 90%), and two in a row did within
#             scripts/test.sh (88.9%: 35 stalls, 157 ms in all). A run that misses one (PASS
#             with the parameters run, FAIL with rpg_time_reset tripled, the fit naming it) is
#             repeated from the start, up to three runs, when its stalls explain the miss
#             (rocestat's stall intervals: 90% of the cuts off by more than 10% come within
#             250 ms after a stall of 2 ms or more; with every cut right, a stall of 5 ms or
#             more; exit 3 from the checks below); one they do not explain, or a third miss,
#             fails. The counter checks are not repeated (but see below).
#           In both modes a frame rocemu sent (in egress.pcap) that the receiving QP never
#           saw, recovered by the sender's retransmission timer, is a loss in the lab's kernel
#           (veth or af_packet), which no counter of rocemu or rocegen can see: the run is
#           repeated like a stalled one. Seen once, in the first run after the VM booted
#           (egress 3 frames of a control QP, the receiver 2, the sender 1 timeout), then in
#           none of 12 runs in a row; a difference without as many timeouts still fails.
#           rocegen's table leaves out its check of the result (between the last step and the
#           end barrier, 20-400 ms here): the wire's iteration is compared with the table's
#           time plus that check's time, which rocegen prints (both modes).
# Exits 77 (skip, said loudly) only when the machine cannot make namespaces.
set -u
ROCEMU=$(readlink -f "$1")
ROCEGEN=$(readlink -f "$2")
ROCESTAT=$(readlink -f "$3")
SRC=$(readlink -f "$4")
MODE=${5:-loss}
ARGS0=("$ROCEMU" "$ROCEGEN" "$ROCESTAT" "$SRC" "$MODE") # absolute: for a repeat
CPUS0=
LAB_PREFIX=rst$$
DCQCN_CONF=$SRC/profiles/dcqcn-50m.conf
WINDOW_US=50000
. "$SRC/tests/e2e/lab_common.sh"
lab_begin "rocestat end to end ($MODE)"
cd "$WORK" || fail "cd $WORK"

if [ "$MODE" = loss ]; then
	rocemu_start -l 0 --no-huge --no-pci -m 1024 --file-prefix=rst_$$ $("$LAB" eal) -- \
		--pipeline "$SRC/tests/analysis/loss-1pct-capture.json" --seed 7 \
		--stats "$WORK/stats.json"
	# one untimed-free iteration: the capture holds exactly the iteration rocegen times
	ARGS=(--test allreduce --ranks 1 --size 16M --iters 1 --warmup 0 --window-kb 64
		--timeout 15 --time-limit 200)
	rocegen_pair 198.18.0.11 198.18.0.21 "${ARGS[@]}"
else
	# -l 0-1: the switch on a worker lcore of its own; with one lcore its main loop also
	# writes the captures and serves telemetry between bursts of polling
	rocemu_start -l 0-1 --no-huge --no-pci -m 1024 --file-prefix=rst_$$ $("$LAB" eal) -- \
		--pipeline "$SRC/tests/analysis/dcqcn-lab-50m-capture.json" --stats "$WORK/stats.json"
	# one iteration (the validation wants a backlogged sender: it leaves out the idle time
	# between the ring's two steps), 16 MB: about 3 s
	ARGS=(--test allreduce --size 16M --iters 1 --warmup 0 --line-rate-mbps 50
		--dcqcn "$DCQCN_CONF" --poll-sleep-us 20 --window-kb 1024 --timeout 16
		--time-limit 120)
	# CPU 1 is the switch worker's alone (header): this shell and what it starts (rocegen's
	# control threads, the wait loop below) on CPU 0 until rocemu stops
	CPUS0=$(taskset -pc $$ | sed 's/.*: //')
	taskset -pc 0 $$ >/dev/null || fail "taskset -pc 0 (util-linux)"
	ROCEGEN_LCORE=0 rocegen_pair 198.18.0.11 198.18.0.12 "${ARGS[@]}" &
	RP=$!
	for _ in $(seq 600); do
		[ "$(cat "$WORK/a.out" "$WORK/b.out" 2>/dev/null | grep -c "all 2 processes up")" -eq 2 ] &&
			break
		kill -0 $RP 2>/dev/null || break
		sleep 0.1
	done
	rocemu_profile_switch "rst_$$" "$SRC/profiles/incast-8to1-50m.json"
	wait $RP || exit 1
fi
sleep 0.5
rocemu_stop
[ -n "${CPUS0:-}" ] && { taskset -pc "$CPUS0" $$ >/dev/null || fail "taskset -pc $CPUS0"; }
grep -q "^conservation: .*: OK$" "$WORK/rocemu.out" || fail "no OK conservation line"
for c in ingress egress; do
	[ -s "$WORK/$c.pcap" ] || fail "rocemu wrote no $c.pcap"
done
grep -E "captured|not_captured" "$WORK/rocemu.out" | head -4 | sed 's/^/rocemu| /'

if [ "$MODE" = loss ]; then
	"$ROCESTAT" --quiet --json "$WORK/in.json" "$WORK/ingress.pcap" ||
		[ $? -eq 1 ] || fail "rocestat ingress"
	"$ROCESTAT" --json "$WORK/out.json" --collective allreduce --ranks 2 --idle-gap-us 10000000 \
		--app-log "$WORK/a.out" "$WORK/egress.pcap" >"$WORK/rocestat-egress.txt" ||
		[ $? -eq 1 ] || fail "rocestat egress"
else
	"$ROCESTAT" --json "$WORK/in.json" --link-gbps 0.05 --dcqcn "$DCQCN_CONF" \
		--window-us $WINDOW_US --collective allreduce --ranks 2 --idle-gap-us 10000000 \
		--app-log "$WORK/a.out" --rocegen-json "$WORK/a.json" "$WORK/ingress.pcap" \
		>"$WORK/rocestat-ingress.txt" || [ $? -eq 1 ] || fail "rocestat ingress"
	# the same parameters but one: rpg_time_reset 10 ms instead of 30 ms (header)
	sed 's/^rpg_time_reset .*/rpg_time_reset 60000/' "$DCQCN_CONF" >"$WORK/wrong.conf"
	grep -q '^rpg_time_reset 60000$' "$WORK/wrong.conf" || fail "no rpg_time_reset to change"
	"$ROCESTAT" --quiet --json "$WORK/wrong.json" --link-gbps 0.05 --dcqcn "$WORK/wrong.conf" \
		--window-us $WINDOW_US --fit "$WORK/ingress.pcap" >"$WORK/rocestat-wrong.txt" ||
		[ $? -eq 1 ] || fail "rocestat ingress, wrong parameters"
	"$ROCESTAT" --quiet --json "$WORK/out.json" --link-gbps 0.05 "$WORK/egress.pcap" ||
		[ $? -eq 1 ] || fail "rocestat egress"
fi
if [ -n "${ROCESTAT_E2E_KEEP:-}" ]; then
	# each run its own directory: attempt-1, attempt-2, ...
	KEEP="$ROCESTAT_E2E_KEEP/attempt-${E2E_ATTEMPT:-1}"
	mkdir -p "$KEEP" && cp "$WORK"/*.pcap "$WORK"/*.json "$WORK"/*.out "$WORK"/*.txt "$KEEP"/ \
		2>/dev/null
fi
PYRC=0
python3 - "$MODE" "$WORK" "$DCQCN_CONF" <<'PY' || PYRC=$?
import json, sys
mode, w, DCQCN_NAME = sys.argv[1], sys.argv[2], sys.argv[3]
ld = lambda f: json.load(open(w + "/" + f))
a, b, st, rin, rout = ld("a.json"), ld("b.json"), ld("stats.json"), ld("in.json"), ld("out.json")
# rocegen's table leaves out the check of the first iteration's result, which runs between its
# last step and the end barrier, so on the wire the iteration is that much longer
import re
verify_us = float(re.search(r"^rocegen: verify \d+ bytes: data ok, .*\(([0-9.]+) us, untimed\)$",
                            open(w + "/a.out").read(), re.M).group(1))
A_IPS, B_IPS = ("198.18.0.11",), ("198.18.0.21",)
if mode != "loss":
    B_IPS = ("198.18.0.12",)
    A_IPS = ("198.18.0.11",)

# flows by both addresses: the lab's kernels and neighbours may put other frames on the wire
def flows(rep, src_ips, dst_ips, dqp):
    return [f for f in rep["flows"] if f["src_ip"] in src_ips and f["dst_ip"] in dst_ips and
            f["dest_qp"] == dqp]

def one(rep, src_ips, dst_ips, dqp, what):
    fl = flows(rep, src_ips, dst_ips, dqp)
    assert len(fl) == 1, (what, dqp, [f["label"] for f in fl],
                          [f["label"] for f in rep["flows"] if f["dest_qp"] == dqp])
    return fl[0]

checked = 0
for snd, rcv, rcv_ips, snd_ips in ((a, b, B_IPS, A_IPS), (b, a, A_IPS, B_IPS)):
    for q in snd["qps"]:
        if not q["requester"] or q["tx_data_packets"] == 0:
            continue
        r = [x for x in rcv["qps"] if x["qpn"] == q["dest_qpn"] and not x["requester"]]
        assert len(r) == 1, ("responder of", q["qpn"])
        r = r[0]
        fin = one(rin, snd_ips, rcv_ips, q["dest_qpn"], "ingress data")
        fout = one(rout, snd_ips, rcv_ips, q["dest_qpn"], "egress data")
        assert fin["counters"]["data_packets"] == q["tx_data_packets"], (
            "ingress", fin["label"], fin["counters"]["data_packets"], q["tx_data_packets"])
        lost = fout["counters"]["data_packets"] - r["rx_packets"]
        if 0 < lost <= q["timeouts"] and q["retransmitted_packets"] >= lost:
            # rocemu sent frames the receiver's QP never saw, and the sender's retransmission
            # timer recovered them: lost in the lab's kernel (veth, af_packet), not by rocemu
            # or rocestat (header); the run again, as a stalled one
            print("lost after rocemu: %s: %d sent, %d received, %d timeouts" % (
                fout["label"], fout["counters"]["data_packets"], r["rx_packets"],
                q["timeouts"]))
            sys.exit(3)
        assert fout["counters"]["data_packets"] == r["rx_packets"], (
            "egress", fout["label"], fout["counters"]["data_packets"], r["rx_packets"])
        # the responses and CNPs to the sender's QPN
        rin_b = one(rin, rcv_ips, snd_ips, q["qpn"], "ingress responses")
        rout_b = one(rout, rcv_ips, snd_ips, q["qpn"], "egress responses")
        assert rin_b["counters"]["naks_seq_err"] == r["naks_sent"], (
            "NAKs sent", rin_b["counters"]["naks_seq_err"], r["naks_sent"])
        assert rout_b["counters"]["naks_seq_err"] == q["naks_received"], (
            "NAKs received", rout_b["counters"]["naks_seq_err"], q["naks_received"])
        assert rin_b["counters"]["cnps"] == r["cnps_sent"], (
            "CNPs sent", rin_b["counters"]["cnps"], r["cnps_sent"])
        assert rout_b["counters"]["cnps"] == q["cnps_received"], (
            "CNPs received", rout_b["counters"]["cnps"], q["cnps_received"])
        assert fout["counters"]["ce"] == r["rx_ce_packets"], (
            "CE", fout["counters"]["ce"], r["rx_ce_packets"])
        print("ok: %s: sent %d (rocegen %d), delivered %d (rocegen %d), NAKs %d/%d, CNPs "
              "%d/%d, CE %d" % (fin["label"], fin["counters"]["data_packets"],
                                q["tx_data_packets"], fout["counters"]["data_packets"],
                                r["rx_packets"], rin_b["counters"]["naks_seq_err"],
                                rout_b["counters"]["naks_seq_err"], rin_b["counters"]["cnps"],
                                rout_b["counters"]["cnps"], fout["counters"]["ce"]))
        checked += 1
assert checked >= 2, checked
if mode == "loss":
    ctr = next(s["counters"] for s in st["stages"] if s["name"] == "loss")
    for ev, src, ips in (("data_from_a", A_IPS, B_IPS), ("data_from_b", B_IPS, A_IPS)):
        sin = sum(f["counters"]["data_packets"] for f in rin["flows"]
                  if f["src_ip"] in src and f["dst_ip"] in ips)
        sout = sum(f["counters"]["data_packets"] for f in rout["flows"]
                   if f["src_ip"] in src and f["dst_ip"] in ips)
        assert sin - sout == ctr["drop_" + ev], (ev, sin, sout, ctr["drop_" + ev])
        print("ok: %s: rocestat sees %d - %d = %d dropped, rocemu counted %d" % (
            ev, sin, sout, sin - sout, ctr["drop_" + ev]))
    it = rout["collective"]["iterations"]
    app = rout["collective"]["application"]
    assert app is not None and len(it) >= 1, (it, app)
    assert len(it) == 1, it
    wire = it[0]["busbw_gbs"]
    # rocegen's table rounds busbw to 3 decimals: compare with its size / time(us), the
    # time with its untimed check of the result added (above)
    busbw = app["size_bytes"] / 1e9 / ((app["time_us"] + verify_us) * 1e-6)  # x 2 (N-1)/N = 1
    print("busbw: wire %.5f GB/s (size %.0f B, %.1f us), rocegen %.5f GB/s (%d B, %.1f us "
          "+ %.1f us checking the result)" % (wire, it[0]["size_bytes"], it[0]["time_ns"] / 1e3,
                                              busbw, app["size_bytes"], app["time_us"],
                                              verify_us))
    # (each PSN counted once; under load rocegen's sender may put a few more on the wire)
    assert abs(it[0]["size_bytes"] - app["size_bytes"]) <= 0.01 * app["size_bytes"], it
    assert abs(wire - busbw) <= 0.02 * busbw, (wire, busbw)
else:
    # one iteration, as in the loss mode
    it = rin["collective"]["iterations"]
    app = rin["collective"]["application"]
    assert app is not None and len(it) == 1, (len(it), app)
    wire = it[0]["busbw_gbs"]
    # rocegen's table rounds busbw to 3 decimals: compare with its size / time(us), the
    # time with its untimed check of the result added (above)
    busbw = app["size_bytes"] / 1e9 / ((app["time_us"] + verify_us) * 1e-6)  # x 2 (N-1)/N = 1
    print("busbw: wire %.5f GB/s (size %.0f B, %.1f us), rocegen %.5f GB/s (%d B, %.1f us "
          "+ %.1f us checking the result)" % (wire, it[0]["size_bytes"], it[0]["time_ns"] / 1e3,
                                              busbw, app["size_bytes"], app["time_us"],
                                              verify_us))
    assert abs(it[0]["size_bytes"] - app["size_bytes"]) <= 0.01 * app["size_bytes"], it
    assert abs(wire - busbw) <= 0.02 * busbw, (wire, busbw)
    # DCQCN: every requester QP that received CNPs is validated; with the parameters rocegen
    # ran it passes, with rpg_time_reset changed it fails and rpg_time_reset is named
    wrong = ld("wrong.json")
    want = {}
    for snd, rcv_ips, snd_ips in ((a, B_IPS, A_IPS), (b, A_IPS, B_IPS)):
        for q in snd["qps"]:
            if q["requester"] and q["tx_data_packets"] > 0 and q["cnps_received"] > 0:
                want[one(rin, snd_ips, rcv_ips, q["dest_qpn"], "dcqcn")["id"]] = q
    assert any(q["qpn"] in [x["qpn"] for x in a["qps"]] for q in want.values()), (
        "A's QP got no CNPs: no incast?", want)
    for rep, name in ((rin, "right"), (wrong, "wrong")):
        got = {v["flow"]: v for v in rep["dcqcn"]}
        assert set(want) <= set(got), (name, sorted(want), sorted(got))
    for fl, q in sorted(want.items()):
        v, w = {x["flow"]: x for x in rin["dcqcn"]}[fl], {x["flow"]: x for x in wrong["dcqcn"]}[fl]
        print("dcqcn: QP 0x%x (%d CNPs): %s: %s (%s)" % (q["qpn"], v["cnps"], DCQCN_NAME,
                                                      v["verdict"], v["why"]))
        ex = w["fit"]["explained_by"]
        print("dcqcn: QP 0x%x: rpg_time_reset 60000: %s (%s); explained by %s" % (
            q["qpn"], w["verdict"], w["why"],
            ", ".join("%s = %.6g (error %.3f)" % (x["name"], x["value"], x["error"])
                      for x in ex) or "nothing"))
        print("dcqcn: QP 0x%x: idle between messages: %.1f ms in %d gap(s), %d of %d windows "
              "left out" % (q["qpn"], v["idle"]["idle_us"] / 1000, v["idle"]["gaps"],
                            v["idle"]["windows_idle"], v["idle"]["windows"]))
        assert v["cnps"] == q["cnps_received"], (v["cnps"], q["cnps_received"])
        # the ring's step boundary (A's second message waits for the first step to end) is
        # idle time when it comes after the first CNP; it must not take a quarter of the trace
        assert v["idle"]["windows_idle"] < v["idle"]["windows"] / 4, v["idle"]
        print("dcqcn: QP 0x%x: stalls inside messages: %d, %.1f ms in all, the longest %.1f ms"
              % (q["qpn"], v["stalls"]["gaps"], v["stalls"]["total_ns"] / 1e6,
                 v["stalls"]["longest_ns"] / 1e6))
        # the timing checks: a run whose sender or switch stalled may fail them (header);
        # exit 3 asks for a repeat (up to three runs), only when it did
        timing = [(v["verdict"] == "PASS", "PASS with the parameters run: " + v["why"]),
                  (w["verdict"] == "FAIL", "FAIL with rpg_time_reset 60 ms: " + w["why"]),
                  (bool(ex) and ex[0]["name"] == "rpg_time_reset" and
                   abs(ex[0]["value"] - 20000) <= 0.1 * 20000,
                   "rpg_time_reset named first, within 10%% of 20 ms: %r" % ex)]
        missed = [what for ok, what in timing if not ok]
        if missed:
            # a repeat only when stalls explain the miss: 90% of the cuts off by more than
            # 10% come at most 250 ms after a stall of 2 ms or more (the sender, its CNPs
            # merged, is above the model until it is back at the line rate; the incast's
            # bursts are 200 ms apart) or within its own window (50 ms); a miss with every
            # cut right needs a stall of 5 ms or more (the sender's or rocemu's worker's)
            sl = [(a0 / 1e3, a1 / 1e3) for a0, a1 in v["stalls"]["intervals_ns"]
                  if a1 - a0 >= 2000000]
            bad = [c["t_ns"] / 1e3 for c in v["cuts"] if not c["ok"]]
            near = [t for t in bad if any(a0 <= t + 50000 and a1 >= t - 250000
                                          for a0, a1 in sl)]
            worst = max(v["stalls"]["longest_ns"] / 1e6, st["polling"]["longest_gap_ns"] / 1e6)
            print("timing checks missed: " + "; ".join(missed))
            print("stalls of 2 ms or more: %d; cuts off by more than 10%%: %d, %d of them "
                  "after one; the longest stall %.1f ms" % (len(sl), len(bad), len(near), worst))
            if (bad and sl and len(near) >= 0.9 * len(bad)) or (not bad and worst >= 5.0):
                print("stalled: the misses follow the stalls")
                sys.exit(3)
            assert False, "the stalls do not explain the miss"
PY
lab_repeat $PYRC E2E_ATTEMPT "stalled and missed a timing check, or lost a frame after rocemu" \
	"$SRC/tests/analysis/test_e2e.sh" "${ARGS0[@]}"
[ $PYRC -eq 0 ] || fail "rocestat against rocegen and rocemu"
if [ "$MODE" != loss ]; then
	# rocegen's own --json names the ranks of the bandwidth section's IP pairs
	python3 - "$WORK/in.json" <<'PY' || fail "rocestat --rocegen-json: ranks of the IP pairs"
import json, sys
bw = json.load(open(sys.argv[1]))["bandwidth"]
assert bw["ranks_from_rocegen_json"], bw
want = {("198.18.0.11", "198.18.0.12"): (0, 1), ("198.18.0.12", "198.18.0.11"): (1, 0)}
got = {(p["src"], p["dst"]): (p["src_rank"], p["dst_rank"], p["rail"]) for p in bw["pairs"]
       if (p["src"], p["dst"]) in want}
assert got and all(v == want[k] + (0,) for k, v in got.items()), got
print("ok: rocestat --rocegen-json: %s" % got)
PY
fi
if [ "$MODE" = incast ]; then
	for f in rocestat-ingress rocestat-wrong; do
		sed -n '/^# DCQCN validation/p; /^  trajectory error/,/^#/p' "$WORK/$f.txt" |
			grep -v '^#$' | sed "s/^/$f| /"
	done
fi
echo "PASS"
