#!/usr/bin/env bash
# Soak and faults (issue 34, item 2): usage soak.sh ROCEMU ROCEGEN SRC [SECONDS] [WORKERS]
# (default 60 s, 2 workers; CI runs 60 s with 2 workers and with 1; tests/soak/README.md has
# the design, the bounds and a 30-minute run's figures).
#
# rocemu live on WORKERS worker lcores in the netns lab, with pipelines/incast-closed-loop.json,
# --stats-interval 1 and --prometheus, writing a file into a 64 MB tmpfs of its own: with one
# worker an annotated capture stage (pcapng, drops, 128-byte headers, rotating), with two the
# --timeline CSV (written when a capture ran on one worker only; workers-capture tests two). Two
# rocegen (A and B) run ring all-reduce loops through it for the whole time, one pair of
# processes after another, each checking every byte. Meanwhile tests/soak/driver.py, every
# PERIOD (4 s): reloads a profile, in turn the closed-loop incast (tests/soak/incast.json)
# over telemetry, the link flap (tests/soak/flap.json: p1 then p0 down for 0.3 s each, well
# under rocegen's retry budget of 7 x 268 ms) by SIGHUP, the incast by SIGHUP, the flap over
# telemetry; then queries every /rocemu/* telemetry command from two clients at once; at 85 %
# of the run it fills the tmpfs, and the file meets ENOSPC.
#
# Checks (each "ok: ..." or "FAIL: ..." with the evidence):
#   - memory flat after warm-up (the first 20 % of the run), sampled at every stats
#     interval; the warm-up value is the largest seen in the warm-up; bounds on the growth
#     after it: rocemu's resident memory outside DPDK's (VmRSS - RssShmem: the C heap and
#     the libraries; telemetry answers, reloads, JSON), RSS_BOUND_KB = 8 MB; the packet
#     pool's mbufs in use (rocemu_mbufs_in_use), MBUF_BOUND = 1024 mbufs (an eighth of the
#     switch's 8 MB buffer in 1 KB frames; a leak of one mbuf per frame, reload or query
#     passes it within the run). VmRSS and RssShmem are printed, not bounded: DPDK's memory
#     (memfd-backed with --no-huge) becomes resident as each of the pool's 20864 mbufs is
#     first used, which the incasts' bursts reach a few MB at a time (it stays under EAL's
#     -m 1024);
#   - conservation (rocemu_conservation_unaccounted_packets = 0) in every stats interval, and
#     rocemu's conservation line OK at exit;
#   - drops: only tm.PORT.drop_link_down, each in an interval overlapping an outage of that
#     PORT the flap profile made (named with their counts); any other drop, on any class
#     (the lossless priority 3 included), fails;
#   - the disk: the data up to the disk-full point (the temporary file the message names, and
#     any file rotation put in place) is readable: by tshark, with frames (capture), or as
#     CSV with whole rows (timeline); rocemu exits with status 1 and exactly one error line,
#     naming the file and "No space left on device";
#   - every rocegen run (A and B) exited 0 and verified its data: "verify N bytes: data ok,
#     N of N bytes placed", and left no EAL runtime directory behind.
# Then one summary line of figures. Exits 77 (a loud SKIP) only without root or netns.
set -u
ROCEMU=$(realpath "$1")
ROCEGEN=$(realpath "$2")
SRC=$(realpath "$3")
SECS=${4:-60}
WORKERS=${5:-2}
RSS_BOUND_KB=8192
MBUF_BOUND=1024
PERIOD=4
LAB_PREFIX=sk$$
. "$SRC/tests/e2e/lab_common.sh"
lab_begin "the soak"
command -v tshark >/dev/null || fail "tshark is not installed (scripts/test.sh installs it)"

CAPDIR=$WORK/capfs
mkdir -p "$CAPDIR" "$WORK/rg"
# The capture's file system: a rotation of 4 files of CAP_MB/8 MB fits with room to spare;
# the driver fills the rest near the end.
CAP_MB=64
mount -t tmpfs -o size=${CAP_MB}m soakcap "$CAPDIR" || fail "cannot mount a tmpfs on $CAPDIR"
RG_PID=
soak_cleanup() {
	if [ -n "$RG_PID" ]; then
		pkill -INT -P "$RG_PID" 2>/dev/null
		kill "$RG_PID" 2>/dev/null
		wait "$RG_PID" 2>/dev/null
	fi
	if [ -n "$ROCEMU_PID" ]; then
		kill -INT "$ROCEMU_PID" 2>/dev/null && sleep 1
		kill -9 "$ROCEMU_PID" 2>/dev/null
		wait "$ROCEMU_PID" 2>/dev/null
		ROCEMU_PID=
	fi
	# SOAK_KEEP=DIR: keep the run's files (rocemu's output, the driver's samples) there
	[ -n "${SOAK_KEEP:-}" ] && rm -rf "$SOAK_KEEP" && cp -a "$WORK" "$SOAK_KEEP"
	umount "$CAPDIR" 2>/dev/null
	lab_cleanup
}
trap soak_cleanup EXIT

# With one worker the pipeline has the annotated capture, writing into the tmpfs; with two,
# the file that meets the full disk is the --timeline CSV, written there instead (the soak
# predates captures on several workers, which tests/workers' capture mode checks).
if [ "$WORKERS" -eq 1 ]; then
	CAPFILE=$CAPDIR/soak.pcapng
	CAPRE="$CAPDIR/soak(-[0-9]+)?\.pcapng" # the file, or one it rotated to
	OUT_ARGS=()
	LEAVE_KB=256
else
	CAPFILE=$CAPDIR/soak-timeline.csv
	CAPRE="$CAPDIR/soak-timeline\.csv"
	OUT_ARGS=(--timeline "$CAPFILE")
	LEAVE_KB=0
fi
# rocemu reserves an output's blocks ahead, a megabyte or more (lib/base/emu_out.c), which a
# file would take long to use up once the disk is full (the CSV: minutes): it opens the file
# with 960 KB free (under its first 1 MB reservation, and room for three of the writer's
# 256 KB flushes before the driver must make more), so its reservation is refused, and it tries no more; the driver then
# keeps 4-12 MB free (shrinking the filler) until it fills the tmpfs near the end
python3 "$SRC/tests/soak/driver.py" prefill "$CAPDIR" 960 || fail "cannot prefill $CAPDIR"
python3 - "$SRC/pipelines/incast-closed-loop.json" "$WORK/pipeline.json" "$CAPFILE" \
	$((CAP_MB / 8)) "$WORKERS" <<'PY' || fail "cannot make the pipeline"
import json, sys
p = json.load(open(sys.argv[1]))
if sys.argv[5] != "1":
    json.dump(p, open(sys.argv[2], "w"), indent=1)
    sys.exit(0)
p["description"] = ("tests/soak: pipelines/incast-closed-loop.json with an annotated, "
                    "rotating capture of every frame leaving either port and every drop")
p["egress"] = p.get("egress", []) + [{"type": "capture", "name": "cap", "file": sys.argv[3],
    "snaplen": 128, "ring_size": 65536, "drops": True, "annotate": "events",
    "rotate_mb": float(sys.argv[4]), "rotate_files": 4}]
json.dump(p, open(sys.argv[2], "w"), indent=1)
PY
# rocemu starts with a profile that changes nothing: a reload cancels the put-back of the
# running profile's timed phases (profiles/README.md: a reload never reads the running
# switch), so the driver reloads only when the last profile is over (PERIOD > 2.5 s)
echo '{"description": "tests/soak: nothing until the driver reloads", "phases": []}' \
	>"$WORK/cur.json"

export ROCEMU_WORKERS=$WORKERS
PREFIX=sk_$$
# one worker: EAL's -l 0-1, the switch on its own lcore (CPU 1), the main lcore on CPU 0
# sleeping between chores; two: workers.sh's map (see there)
[ "$WORKERS" -eq 1 ] && LCORES=0-1 || LCORES=0
rocemu_start -l $LCORES --no-huge --no-pci -m 1024 --file-prefix=$PREFIX $("$LAB" eal) -- \
	--pipeline "$WORK/pipeline.json" --profile "$WORK/cur.json" --stats-interval 1 \
	--prometheus "$WORK/rocemu.prom" --stats "$WORK/stats.json" "${OUT_ARGS[@]}"
echo "ok: rocemu running, $WORKERS worker(s), pid $ROCEMU_PID, writing $CAPFILE"

# rocegen: all-reduce loops, one pair after another until the soak's end; each process floats
# over both CPUs and sleeps when idle, so rocemu's two spinning workers leave it CPU time.
RG_ARGS=(--test allreduce --size 1M --iters 20 --warmup 1 --line-rate-mbps 1000 --timeout 16
	--time-limit 60 --poll-sleep-us 20)
rg_one() {
	local n=$1 s ip ipp pa pb ok=0
	for s in a b; do
		if [ $s = a ]; then ip=198.18.0.11 ipp=198.18.0.12 ns=$NS_A; else
			ip=198.18.0.12 ipp=198.18.0.11 ns=$NS_B; fi
		ip netns exec "$ns" "$ROCEGEN" --lcores '0@(0,1)' --no-huge -m 512 --no-pci \
			--file-prefix="${LAB_PREFIX}$s" --vdev=net_af_packet0,iface=eth0,framecnt=2048 -- \
			--ip "$ip" --peer-ip "$ipp" --json "$WORK/rg/$s.$n.json" "${RG_ARGS[@]}" \
			>"$WORK/rg/$s.$n.log" 2>&1 &
		[ $s = a ] && pa=$! || pb=$!
	done
	wait $pa || ok=1
	wait $pb || ok=$((ok | 2))
	for s in a b; do
		[ ! -e "/var/run/dpdk/${LAB_PREFIX}$s" ] || ok=$((ok | 4))
		grep -Eq "verify [0-9]+ bytes: data ok, ([0-9]+) of \1 bytes placed" \
			"$WORK/rg/$s.$n.log" || ok=$((ok | 8))
	done
	return $ok
}
rg_loop() {
	local n=0 t0 end=$1 rc last=0
	while :; do
		t0=$(date +%s)
		# start another run only when it should end before the soak does
		[ $((t0 + last)) -lt "$end" ] || break
		n=$((n + 1))
		rg_one $n
		rc=$?
		if [ $rc -ne 0 ]; then
			echo "rocegen run $n failed (bits: 1 A exit, 2 B exit, 4 EAL dir left, 8 not verified)" \
				>"$WORK/rg/failed"
			return 1
		fi
		last=$(($(date +%s) - t0))
		rm -f "$WORK/rg/"[ab].$((n - 1)).log
		echo $n >"$WORK/rg/runs"
	done
	return 0
}
T_START=$(date +%s)
T_END=$((T_START + SECS))
rg_loop $T_END &
RG_PID=$!

python3 "$SRC/tests/soak/driver.py" --pid "$ROCEMU_PID" \
	--sock "/var/run/dpdk/$PREFIX/dpdk_telemetry.v2" --cur "$WORK/cur.json" \
	--incast "$SRC/tests/soak/incast.json" --flap "$SRC/tests/soak/flap.json" \
	--flap-outages p1:0.3:0.3,p0:1.5:0.3 --prom "$WORK/rocemu.prom" --log "$WORK/rocemu.out" \
	--fill-dir "$CAPDIR" --fill-at "$(echo "$SECS * 0.85" | bc)" --fill-leave-kb $LEAVE_KB \
	--seconds "$SECS" --period $PERIOD --out "$WORK/driver.json" >"$WORK/driver.out" 2>&1
DRV=$?
cat "$WORK/driver.out"
[ $DRV -eq 0 ] || fail "the driver failed"
wait $RG_PID
RG_RC=$?
RG_PID=
RG_RUNS=$(cat "$WORK/rg/runs" 2>/dev/null || echo 0)
if [ $RG_RC -ne 0 ]; then
	cat "$WORK/rg/failed"
	for f in "$WORK"/rg/*.log; do tail -15 "$f" | sed "s/^/  $(basename "$f")| /"; done
	fail "rocegen failed after $RG_RUNS good runs"
fi
[ "$RG_RUNS" -ge 2 ] || fail "only $RG_RUNS rocegen runs"
VERIFIED=$(cat "$WORK"/rg/a.*.log "$WORK"/rg/b.*.log | grep -c "data ok")
echo "ok: rocegen: $RG_RUNS all-reduce runs of A and B, each exited 0, verified its data and placed every byte"

# stop rocemu: it must exit 1, with one error line, the capture's disk
kill -INT "$ROCEMU_PID"
wait "$ROCEMU_PID"
EMU_RC=$?
ROCEMU_PID=
grep -E "^(rocemu: stopped|rocemu: polling|conservation:|drops by reason|capture:|stage cap)" \
	"$WORK/rocemu.out" | cut -c1-300
[ $EMU_RC -eq 1 ] || fail "rocemu exited $EMU_RC, not 1 (the disk of $CAPFILE filled)"
ERRS=$(grep -E "^rocemu: (stage |conservation MISMATCH|--prometheus|--stats|--timeline|LOST)" \
	"$WORK/rocemu.out")
N_ERRS=$(printf '%s\n' "$ERRS" | grep -c .)
[ "$N_ERRS" -eq 1 ] || fail "rocemu printed $N_ERRS error lines, not one: $ERRS"
echo "$ERRS" | grep -Eq "^rocemu: (stage cap: |--timeline )$CAPRE: write failed[^:]*: No space left on device" ||
	fail "the one error line does not name $CAPFILE and the full disk: $ERRS"
echo "ok: rocemu exited 1 with one error line: $ERRS"
grep -q "^conservation: .*: OK$" "$WORK/rocemu.out" || fail "conservation line not OK at exit"
echo "ok: conservation line OK at exit"

# what was written up to the disk-full point stays readable: the file cut by the full disk
# is the temporary one (NAME.rocemu-XXXXXX, the name is put in place only when complete)
ls "$CAPDIR"/*.rocemu-* >/dev/null 2>&1 ||
	fail "no temporary file (the one cut by the disk) in $CAPDIR: $(ls "$CAPDIR")"
FRAMES=0
NFILES=0
ANN=0
if [ "$WORKERS" -eq 1 ]; then
	for f in "$CAPDIR"/soak*; do
		[ -f "$f" ] || continue
		n=$(tshark -r "$f" 2>&1 >"$WORK/tshark.out" | grep -v "^Running as user" >"$WORK/tshark.err"
			wc -l <"$WORK/tshark.out")
		# a file cut by the full disk may end in a partial record: tshark reads every
		# whole one before it and says the rest is cut short
		[ "$n" -gt 0 ] || fail "tshark read no frame from $f: $(head -3 "$WORK/tshark.err")"
		echo "ok: tshark reads $n frames from $(basename "$f") ($(stat -c %s "$f") bytes)$(grep -q . \
			"$WORK/tshark.err" && echo ", then: $(head -1 "$WORK/tshark.err" | cut -c1-120)")"
		FRAMES=$((FRAMES + n))
		NFILES=$((NFILES + 1))
	done
	ANN=$(tshark -r "$(ls "$CAPDIR"/*.rocemu-* | head -1)" -Y 'frame.comment contains "rocemu:"' \
		2>/dev/null | wc -l)
	WHAT="$FRAMES frames captured before disk-full in $NFILES files ($ANN annotated in the cut one)"
else
	CUT=$(ls "$CAPDIR"/*.rocemu-* | head -1)
	FRAMES=$(python3 - "$CUT" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
head, body = rows[0], rows[1:]
assert head[:3] == ["t_ns", "port", "prio"], head
# every whole row has all the columns; only the last may be cut by the disk
whole = [r for r in body if len(r) == len(head)]
assert len(whole) >= len(body) - 1 and whole, (len(whole), len(body))
print(len(whole))
PY
) || fail "the timeline cut by the full disk is not readable: $CUT"
	echo "ok: the timeline cut by the full disk reads as CSV: $FRAMES whole rows ($(stat -c %s "$CUT") bytes)"
	WHAT="$FRAMES timeline rows written before disk-full"
fi

# An ASan build (scripts/test.sh --sanitize): its resident memory holds ASan's quarantine of
# freed blocks and their shadow, which grow for minutes whatever the program does, so the
# heap's bound does not apply; LeakSanitizer checks rocemu's heap at its exit instead (a leak
# changes the exit status, which must be 1 above).
ASAN=0
ldd "$ROCEMU" 2>/dev/null | grep -q libasan && ASAN=1
python3 - "$WORK/driver.json" "$SECS" "$RSS_BOUND_KB" "$MBUF_BOUND" "$ASAN" <<'PY' || fail "soak checks"
import json, re, sys
d = json.load(open(sys.argv[1]))
secs, rss_bound, mbuf_bound = float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
asan = sys.argv[5] == "1"
S = d["samples"]
bad = []
if d["sampler_errors"]:
    bad.append("sampler: " + "; ".join(d["sampler_errors"][:3]))
if len(S) < secs * 0.8:
    bad.append("only %d stats intervals sampled in %.0f s" % (len(S), secs))
warm = [s for s in S if s["t"] <= 0.2 * secs]
after = [s for s in S if s["t"] > 0.2 * secs]
if not warm or not after:
    print("FAIL: no samples in the warm-up or after it"); sys.exit(1)
figs = {}
for key, bound, unit in (("heap_kb", rss_bound, "kB"), ("mbufs_in_use", mbuf_bound, "mbufs"),
                         ("rss_kb", None, "kB"), ("shm_kb", None, "kB")):
    w = max(s[key] for s in warm)
    m = max(s[key] for s in after)
    at = max(after, key=lambda s: s[key])["t"]
    figs[key] = (w, m)
    if key == "heap_kb" and asan:
        print("ok: heap under ASan: warm-up max %d, then max %d (+%d kB): no bound (ASan's "
              "quarantine and shadow); LeakSanitizer checked rocemu's exit (status 1 above)"
              % (w, m, m - w))
    elif bound is None:
        print("info: %s after the warm-up: warm-up max %d, then max %d (+%d %s)"
              % (key, w, m, m - w, unit))
    elif m - w > bound:
        bad.append("%s grew by %d %s after the warm-up (warm-up max %d, max %d at %.1f s), "
                   "bound %d" % (key, m - w, unit, w, m, at, bound))
    else:
        print("ok: %s flat after the warm-up: warm-up max %d, then max %d (+%d %s, bound %d)"
              % (key, w, m, m - w, unit, bound))
# conservation in every interval
nb = [s for s in S if s["conservation_unaccounted_packets"] != 0]
if nb:
    bad.append("conservation broken in %d of %d intervals, first at %.1f s: unaccounted %d"
               % (len(nb), len(S), nb[0]["t"], nb[0]["conservation_unaccounted_packets"]))
else:
    print("ok: conservation held in all %d stats intervals (unaccounted 0)" % len(S))
# drops: only link-down drops of a port, in intervals overlapping that port's outage
outs = d["outages"]
explained, unexplained = {}, []
prev = {"t": 0.0, "drops": {}}
for s in S:
    for r, v in s["drops"].items():
        dv = v - prev["drops"].get(r, 0)
        if dv <= 0:
            continue
        m = re.fullmatch(r"tm\.(p[01])\.drop_link_down", r)
        # the sample is read up to 0.1 s after rocemu took it, and a profile's phase starts
        # up to a main-loop pass (10 ms) after its time: 0.5 s of slack either side
        hit = m and [o for o in outs if o["port"] == m.group(1) and
                     o["from"] - 0.5 <= s["t"] and o["to"] + 0.5 >= prev["t"]]
        if hit:
            for o in hit[:1]:
                explained[r] = explained.get(r, 0) + dv
        else:
            unexplained.append("%s +%d in (%.1f s, %.1f s]" % (r, dv, prev["t"], s["t"]))
    prev = s
if unexplained:
    bad.append("drops no fault explains: " + "; ".join(unexplained[:10]))
else:
    print("ok: every drop explained by a link outage: %s (%d outages); none on any other "
          "reason, lossless priority 3 included" % (", ".join("%s %d" % kv for kv in
          sorted(explained.items())) or "none", len(outs)))
f = d["fill"]
if f is None or f["failed_at"] is None:
    bad.append("the capture's file system did not fill: %s" % f)
else:
    print("ok: the driver filled the tmpfs at %.1f s (a filler of %d MB), no page was free "
          "from %.1f s" % (f["t"], f["filler_bytes"] >> 20, f["failed_at"]))
# a telemetry answer "a worker did not answer in 1 s" (its lcore descheduled that long on
# this shared machine) is rocemu telling the truth; more than 2 % of them is a failure
if len(d["slow"]) > 0.02 * (d["queries"] + len(d["slow"])):
    bad.append("%d of %d telemetry answers were '%s'" % (len(d["slow"]),
               d["queries"] + len(d["slow"]), "a worker did not answer in 1 s"))
elif d["slow"]:
    print("info: %d of %d telemetry answers were 'a worker did not answer in 1 s': %s"
          % (len(d["slow"]), d["queries"] + len(d["slow"]), ", ".join(sorted(set(d["slow"])))))
# one reload every PERIOD (4 s) but in the last 4 s; each cycle is a little longer (the
# queries take their time): 445 of 1800 s / 4 in the 30-minute run
if len(d["reloads"]) < max(4, 0.9 * (secs - 5) / 4):
    bad.append("only %d reloads" % len(d["reloads"]))
if bad:
    for b in bad:
        print("FAIL: " + b)
    sys.exit(1)
json.dump({"intervals": len(S), "rss_warm_kb": figs["rss_kb"][0], "rss_max_kb": figs["rss_kb"][1],
           "heap_warm_kb": figs["heap_kb"][0], "heap_max_kb": figs["heap_kb"][1],
           "shm_warm_kb": figs["shm_kb"][0], "shm_max_kb": figs["shm_kb"][1],
           "mbufs_warm": figs["mbufs_in_use"][0], "mbufs_max": figs["mbufs_in_use"][1],
           "reloads": len(d["reloads"]), "queries": d["queries"], "outages": len(outs),
           "link_down_drops": sum(explained.values()), "fill_t": f["t"]},
          open(sys.argv[1] + ".figs", "w"))
PY
read -r INTERVALS RSSW RSSM HEAPW HEAPM SHMW SHMM MBW MBM RELOADS QUERIES OUTAGES LDD < <(python3 -c '
import json, sys; f = json.load(open(sys.argv[1]))
print(f["intervals"], f["rss_warm_kb"], f["rss_max_kb"], f["heap_warm_kb"], f["heap_max_kb"],
      f["shm_warm_kb"], f["shm_max_kb"], f["mbufs_warm"], f["mbufs_max"],
      f["reloads"], f["queries"], f["outages"], f["link_down_drops"])' "$WORK/driver.json.figs")
echo "soak: ${SECS} s, rocemu --workers ${WORKERS}: RSS warm-up ${RSSW} kB max ${RSSM} kB (of which DPDK memory ${SHMW} and ${SHMM} kB; the rest ${HEAPW} and ${HEAPM} kB, bound +${RSS_BOUND_KB}), mbufs in use warm-up ${MBW} max ${MBM} (bound +${MBUF_BOUND}), ${INTERVALS} intervals conserved, ${RELOADS} reloads, ${QUERIES} telemetry queries, ${OUTAGES} link outages (${LDD} link-down drops), ${WHAT}, rocegen ${RG_RUNS} runs x 2 verified"
echo "PASS"
