#!/usr/bin/env bash
# The demo: the one-machine lab with a ring all-reduce crossing rocemu, and DCQCN at work.
#
# Installs what is missing (apt-get), builds, creates two network namespaces joined through
# rocemu (net_af_packet on veth) and runs rocemu as the RoCE switch of
# pipelines/demo-dcqcn.json: the link towards B at 55 Mb/s with ECN marking, scaled so that a
# software sender's rate is set by DCQCN and not by its CPU, capturing every frame it
# receives. Then: ping and ARP, a UDP burst each way (non-RoCE traffic passes untouched), and
# a ring all-reduce between two rocegen processes, one per namespace (software RoCE RC
# endpoints with DCQCN and PFC at --line-rate-mbps 50, with DCQCN's timers scaled to that
# rate: profiles/dcqcn-50m.conf). Once both are up the profile is switched in over telemetry
# (profiles/incast-8to1-50m.json: 8 virtual senders burst into B's queue for 2 s), so its
# time zero is when traffic flows. rocemu marks A's frames CE, B's notification point answers
# with CNPs, A's reaction point cuts its rate and recovers between and after the bursts. At the
# end: rocegen's nccl-tests tables next to rocemu's summary; A's sending rate over time as the
# capture shows it against DCQCN's model (rocestat, in text); rocestat's report with its plots
# (build/demo/report/index.html, rate.png); then checks: the demo exits non-zero, saying why,
# when the all-reduce fails, rocemu's conservation check fails, or (for a pipeline that
# configures them) no CE mark, no CNP or no DCQCN cut happened, or a lossless frame was lost
# where PFC should have paused. Idempotent; tears the lab down on exit, also on failure.
# The earlier 100 Gb/s scenario (PFC pauses, the cut too small to bite in software):
#   scripts/demo.sh --pipeline pipelines/dcqcn-lab.json --profile profiles/demo-incast.json \
#                   --line-rate-mbps 100000 --dcqcn nvidia --size 32M --iters 3
#
#   scripts/demo.sh [--pipeline FILE] [--profile FILE] [--size N[K|M|G]] [--iters N]
#                   [--line-rate-mbps R] [--dcqcn nvidia|FILE]
# Environment: BUILD (build directory, default build), LAB_PREFIX (default remu: names the
# namespaces, veths and DPDK file prefixes, so a demo can run next to other labs).
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
PIPELINE=$ROOT/pipelines/demo-dcqcn.json
PROFILE=$ROOT/profiles/incast-8to1-50m.json
SIZE=16M
ITERS=1
LINE_MBPS=50
DCQCN=$ROOT/profiles/dcqcn-50m.conf
usage() {
	echo "usage: scripts/demo.sh [--pipeline FILE] [--profile FILE] [--size N[K|M|G]] [--iters N]" \
		"[--line-rate-mbps R] [--dcqcn nvidia|FILE]" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || usage
	case "$1" in
	--pipeline) PIPELINE=$(realpath "$2") || exit 2; shift 2 ;;
	--profile) PROFILE=$(realpath "$2") || exit 2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	--iters) ITERS=$2; shift 2 ;;
	--line-rate-mbps) LINE_MBPS=$2; shift 2 ;;
	--dcqcn) case "$2" in nvidia|paper|off) DCQCN=$2 ;; *) DCQCN=$(realpath "$2") || exit 2 ;; esac
		shift 2 ;;
	*) usage ;;
	esac
done

. scripts/deps.sh
rocemu_install_deps || exit 1
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
[ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" >/dev/null || exit 1
ninja -C "$BUILD" >/dev/null || { echo "demo: build failed (run ninja -C $BUILD)"; exit 1; }
ROCEMU=$BUILD/app/rocemu/rocemu
ROCEGEN=$BUILD/app/rocegen/rocegen
ROCESTAT=$BUILD/app/rocestat/rocestat

export LAB_PREFIX=${LAB_PREFIX:-remu}
LAB=$ROOT/scripts/lab/lab.sh
WORK=$BUILD/demo
# Each run starts afresh in $WORK: say what of the last run goes (its captures above all)
if [ -d "$WORK" ]; then
	old=$(cd "$WORK" && ls -- *.pcap *.pcapng 2>/dev/null | tr '\n' ' ')
	[ -n "$old" ] && echo "demo: replacing the previous run's outputs in $WORK, captures" \
		"included: $old(copy them elsewhere to keep them)"
fi
rm -rf "$WORK"
mkdir -p "$WORK"
ROCEMU_PID=
GEN_PIDS=()
CPUS0=$(taskset -pc $$ | sed 's/.*: //')
cleanup() {
	local p
	for p in "${GEN_PIDS[@]}"; do kill -INT "$p" 2>/dev/null; done
	[ -n "$ROCEMU_PID" ] && kill -INT "$ROCEMU_PID" 2>/dev/null && wait "$ROCEMU_PID"
	"$LAB" down >/dev/null 2>&1
	# DPDK leaves /var/run/dpdk/PREFIX behind even after a clean exit
	rm -rf "/var/run/dpdk/${LAB_PREFIX}_emu" "/var/run/dpdk/${LAB_PREFIX}_a" \
		"/var/run/dpdk/${LAB_PREFIX}_b"
	taskset -pc "$CPUS0" $$ >/dev/null 2>&1
}
trap cleanup EXIT
eval "$("$LAB" env)"
"$LAB" up || exit 1

echo
echo "== rocemu between $NS_A and $NS_B: $(basename "$PIPELINE")${PROFILE:+, then $(basename "$PROFILE") once the all-reduce runs}"
args=(--pipeline "$PIPELINE" --stats-interval 1 --stats "$WORK/stats.json")
# 2 CPUs: rocemu's switch on a worker lcore alone on CPU 1 (-l 0-1: its main lcore, which
# sleeps between its services, on CPU 0), both rocegen and this script on CPU 0: a busy
# process beside the worker would delay its polls, and the capture's times with them.
# --no-pci: never touch this machine's own NICs.
taskset -pc 0 $$ >/dev/null || { echo "demo: taskset -pc 0 failed (util-linux)"; exit 1; }
(cd "$WORK" && exec "$ROCEMU" -l 0-1 --no-huge --no-pci -m 1024 --file-prefix="${LAB_PREFIX}_emu" \
	--log-level=lib.eal:warning $("$LAB" eal) -- "${args[@]}") >"$WORK/rocemu.out" 2>&1 &
ROCEMU_PID=$!
for _ in $(seq 100); do
	grep -q "^rocemu: running" "$WORK/rocemu.out" && break
	kill -0 $ROCEMU_PID 2>/dev/null || { cat "$WORK/rocemu.out"; ROCEMU_PID=; exit 1; }
	sleep 0.1
done
grep -q "^rocemu: running" "$WORK/rocemu.out" ||
	{ cat "$WORK/rocemu.out"; echo "demo: FAILED: rocemu did not start within 10 s"; exit 1; }
grep "^rocemu:" "$WORK/rocemu.out"

echo
echo "== traffic: ping, ARP, UDP both ways (not RoCE: passes untouched)"
ip netns exec "$NS_A" ping -c 3 -i 0.2 "$IP_B" | tail -2
ip netns exec "$NS_A" ip neigh show "$IP_B" | sed 's/^/ARP in A: /'
ip netns exec "$NS_B" python3 scripts/lab/udp.py recv 5001 2000 20 >"$WORK/recv_b" &
RB=$!
ip netns exec "$NS_A" python3 scripts/lab/udp.py recv 5001 200 20 >"$WORK/recv_a" &
RA=$!
sleep 0.5
ip netns exec "$NS_A" python3 scripts/lab/udp.py send "$IP_B" 5001 2000 1024 | sed 's/^/A -> B: /'
ip netns exec "$NS_B" python3 scripts/lab/udp.py send "$IP_A" 5001 200 64 | sed 's/^/B -> A: /'
wait $RB; wait $RA
sed 's/^/B: /' "$WORK/recv_b"; sed 's/^/A: /' "$WORK/recv_a"

echo
echo "== traffic: ring all-reduce of $SIZE x $ITERS iteration(s) between rocegen in $NS_A and" \
	"$NS_B at $LINE_MBPS Mb/s"
# The lab's kernels own .1/.2; rocegen takes other addresses so the kernels stay out of it.
# Each rocegen is one DPDK process on the namespace's veth end (net_af_packet, 1024 B MTU).
# --poll-sleep-us 20: a busy poller sharing its CPU loses whole scheduler slices and then
# sends in bursts; one that sleeps when idle keeps its rate at 10 ms resolution.
GEN_ARGS=(--test allreduce --size "$SIZE" --iters "$ITERS" --warmup 0
	--line-rate-mbps "$LINE_MBPS" --dcqcn "$DCQCN" --poll-sleep-us 20 --window-kb 1024
	--timeout 16 --time-limit 100)
t0=$(date +%s.%N)
ip netns exec "$NS_A" "$ROCEGEN" -l 0 --no-huge -m 512 --no-pci --file-prefix="${LAB_PREFIX}_a" \
	--vdev=net_af_packet0,iface=eth0,framecnt=2048 -- --ip 198.18.0.11 --peer-ip 198.18.0.12 \
	--json "$WORK/a.json" "${GEN_ARGS[@]}" >"$WORK/a.out" 2>&1 &
GEN_PIDS+=($!)
ip netns exec "$NS_B" "$ROCEGEN" -l 0 --no-huge -m 512 --no-pci --file-prefix="${LAB_PREFIX}_b" \
	--vdev=net_af_packet0,iface=eth0,framecnt=2048 -- --ip 198.18.0.12 --peer-ip 198.18.0.11 \
	--json "$WORK/b.json" "${GEN_ARGS[@]}" >"$WORK/b.out" 2>&1 &
GEN_PIDS+=($!)
if [ -n "$PROFILE" ]; then
	# the profile's time zero when traffic flows, however long start-up took
	for _ in $(seq 300); do
		[ "$(cat "$WORK/a.out" "$WORK/b.out" 2>/dev/null | grep -c "all 2 processes up")" -eq 2 ] &&
			break
		sleep 0.1
	done
	python3 scripts/lab/profile_switch.py "/var/run/dpdk/${LAB_PREFIX}_emu/dpdk_telemetry.v2" \
		"$PROFILE" ||
		echo "demo: FAILED: rocemu did not load $PROFILE"
fi
rc_a=0 rc_b=0
wait "${GEN_PIDS[0]}" || rc_a=$?
wait "${GEN_PIDS[1]}" || rc_b=$?
GEN_PIDS=()
echo "both rocegen done after $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s" \
	"(exit A $rc_a, B $rc_b)"
sleep 1

kill -INT $ROCEMU_PID
rc_e=0
wait $ROCEMU_PID || rc_e=$?
ROCEMU_PID=
echo
echo "== rocemu, one line per second"
grep "^t=" "$WORK/rocemu.out"
echo
echo "== rocegen's nccl-tests tables (left) | rocemu's summary (right)"
rc=0
python3 scripts/lab/demo_report.py "$WORK" "$PIPELINE" "$PROFILE" "$rc_a" "$rc_b" || rc=1
[ $rc_e -eq 0 ] || { echo "demo: FAILED: rocemu exited with $rc_e"; rc=1; }
cap=$(cd "$WORK" && ls -- ingress.pcap* 2>/dev/null | head -1)
if [ -n "$cap" ] && [ -x "$ROCESTAT" ]; then
	echo
	echo "== A's sending rate as rocemu received it, against DCQCN's model (rocestat)"
	# rocestat's model: the parameters rocegen ran, at its line rate
	gbps=$(awk -v m="$LINE_MBPS" 'BEGIN { printf "%g", m / 1000 }')
	"$ROCESTAT" report --quiet --link-gbps "$gbps" --dcqcn "$DCQCN" --window-us 50000 \
		"$WORK/$cap" "$WORK/report" >"$WORK/rocestat.out" 2>&1
	rs=$?
	python3 scripts/lab/demo_rate.py "$WORK/report" "$LINE_MBPS" || rc=1
	[ $rs -le 1 ] || { echo "demo: FAILED: rocestat exited with $rs (see $WORK/rocestat.out)"; rc=1; }
fi
echo
caps=$(cd "$WORK" && ls -- *.pcap *.pcapng 2>/dev/null | sed "s|^|$WORK/|" | tr '\n' ' ')
echo "full outputs: $WORK/{a,b}.out (rocegen, per-QP counters), $WORK/rocemu.out (per-port," \
	"per-stage, per-queue counters), $WORK/{a,b,stats}.json${caps:+, captures: $caps}," \
	"rocestat's report: $WORK/report/index.html (report.txt, rate.png)" \
	"(the next run of the demo replaces $WORK: copy what you want to keep)"
exit $rc
