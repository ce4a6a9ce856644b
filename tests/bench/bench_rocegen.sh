#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# How many 4 KB RoCE packets per second one rocegen core sends and receives, as ratios against
# baselines measured in the same run (machines are noisy, see README.md):
#   - two rocegen back to back over a net_memif pair (server on lcore 0, client on lcore 1,
#     bsize=8192 so a 4170 B frame is one buffer), --test p2p --mtu 4096: both write --size
#     bytes to each other per iteration, so each core sends AND receives; packets/s each way =
#     size / 4096 / time of one iteration (from --json), for DCQCN on (default) and off;
#   - baseline 1: dpdk-testpmd txonly (4170 B frames, lcore 0) -> memif -> dpdk-testpmd rxonly
#     (lcore 1): the memif pair's own rate on this machine, one way, no RoCE work;
#   - baseline 2: rocemu's switch forwarding 4 KB RoCE frames (bench_switch, write4k, "full"
#     side: parse + forward + TM, net_null ports): the goal is that one rocegen core saturates
#     what rocemu forwards on the same machine;
#   - rocegen --workers 2 --poll-yield (two shards per process, lcores 0 and 1 each: four
#     lcores on this machine's two CPUs, yielding when idle), DCQCN on: pps each way against
#     the one-lcore pairs of the same run (w2_vs_w1). The scaling from 1 to 2 lcores needs a CPU per lcore (four here):
#     on two CPUs the ratio measures what oversubscription costs, not what a core adds;
#   - a rate-capped run: p2p with --line-rate-mbps R (default 2000) back to back, busbw against
#     the link rate, with DCQCN on and off (rocegen paces its port at the line rate, as a NIC).
# The rocegen and testpmd runs alternate (order swapped every run); the table gives medians.
# Reports; fails only when a side does not work (a rocegen exits non-zero or does not verify
# its data, testpmd moves nothing). Exit 77 (skipped, said loudly) when not root, dpdk-testpmd
# is missing or the memif PMD cannot be used.
#
# usage: bench_rocegen.sh [--build DIR] [--runs N] [--size N[M]] [--cap-mbps R] [--seconds S]
#                         [--quick]
#        --quick: --runs 1 --size 8M --seconds 5, the rate-capped runs 8 MB and bench_switch
#        --quick (a smoke test: every side runs and is checked, the numbers are rough)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../../build}
runs=3
size=128M
cap=2000
secs=8
quick=0
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	--cap-mbps) cap=$2; shift 2 ;;
	--seconds) secs=$2; shift 2 ;;
	--quick) quick=1; runs=1; size=8M; secs=5; shift ;;
	-h|--help) sed -n '3,30p' "$0"; exit 0 ;;
	*) echo "bench_rocegen: unknown argument $1" >&2; exit 2 ;;
	esac
done
rocegen=$build/app/rocegen/rocegen
bench_switch=$build/tests/bench/bench_switch
testpmd=$(command -v dpdk-testpmd || true)
skip() {
	echo "SKIP: bench_rocegen: $*; NOT MEASURED"
	exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root (DPDK EAL)"
[ -n "$testpmd" ] || skip "dpdk-testpmd not found (apt-get install dpdk): no baseline"
for f in "$rocegen" "$bench_switch"; do
	[ -x "$f" ] || { echo "bench_rocegen: $f not built (ninja -C $build)" >&2; exit 1; }
done

work=$(mktemp -d /tmp/bench_rocegen.XXXXXX)
tag=brg$$
trap 'rm -rf "$work" /var/run/dpdk/${tag}_*' EXIT
eal="--no-huge -m 512 --no-pci"
# memif: a unix socket in the file system (not the abstract namespace, 22.11's default), 8 KB
# buffers (one 4 KB RoCE frame per descriptor), 2048-entry rings
memif() {
	echo "--vdev=net_memif0,role=$1,id=0,socket=$work/$2.sock,socket-abstract=no,bsize=8192,rsize=11"
}

median() {
	python3 -c '
import sys
v = sorted(float(x) for x in sys.stdin.read().split())
print("nan" if not v else "%.4g" % (v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2))'
}

# run_pair NAME ARGS...: two rocegen over memif; prints "pps_each_way busbw_GBps". DPDK 22.11's
# memif PMD now and then crashes inside rte_eth_dev_stop() when both ends stop at once (SIGSEGV
# in librte_eal under memif's disconnect, after the report): such a pair is run once more,
# saying so on stderr.
run_pair() {
	local ra=0 rb=0
	run_pair_once "$@" || { ra=$?; }
	if [ $ra -eq 3 ]; then
		echo "bench_rocegen: NOTE: a rocegen of pair $1 died of a signal after its report" \
			"(the memif PMD's stop race): running the pair again" >&2
		run_pair_once "${1}r" "${@:2}" || return 1
	elif [ $ra -ne 0 ]; then
		return 1
	fi
}
# returns 3 when a process died of a signal after printing its report
run_pair_once() {
	local name=$1 ra=0 rb=0
	shift
	"$rocegen" -l "${LC_A:-0}" $eal --file-prefix=${tag}_${name}a $(memif server "$name") -- \
		--ip 198.19.0.1 --peer-ip 198.19.0.2 --json "$work/$name.a.json" "$@" \
		>"$work/$name.a.out" 2>&1 &
	local pa=$!
	sleep 0.3
	"$rocegen" -l "${LC_B:-1}" $eal --file-prefix=${tag}_${name}b $(memif client "$name") -- \
		--ip 198.19.0.2 --peer-ip 198.19.0.1 --json "$work/$name.b.json" "$@" \
		>"$work/$name.b.out" 2>&1 &
	local pb=$!
	wait $pa || ra=$?
	wait $pb || rb=$?
	if { [ $ra -ge 128 ] || [ $rb -ge 128 ]; } && grep -q "^# port:" "$work/$name.a.out" &&
		grep -q "^# port:" "$work/$name.b.out"; then
		rm -rf /var/run/dpdk/${tag}_${name}a /var/run/dpdk/${tag}_${name}b
		return 3
	fi
	for s in a b; do
		if ! grep -Eq "verify [0-9]+ bytes: data ok, ([0-9]+) of \1 bytes placed" "$work/$name.$s.out" ||
			[ $ra -ne 0 ] || [ $rb -ne 0 ]; then
			echo "bench_rocegen: FAILED: rocegen pair $name (exit $ra/$rb), process $s:" >&2
			grep "^rocegen: \|^  [0-9]\|# port" "$work/$name.$s.out" >&2
			return 1
		fi
	done
	python3 - "$work/$name.a.json" "$work/$name.b.json" <<'PY'
import json, sys
pps, bw, pmd, tot = [], [], [], []
for f in sys.argv[1:]:
    d = json.load(open(f))
    r = d["results"][0]
    pps.append(r["size"] / 4096 / (r["time_us"] / 1e6))
    bw.append(r["busbw_GBps"])
    # ns of a frame sent plus a frame received: the PMD's part and the whole (rocegen's
    # cycles_per_frame: TSC cycles of work that handled frames, idle polls left out)
    c = d["cycles_per_frame"]
    ns = 1e9 / c["tsc_hz"]
    pmd.append((c["rx_burst"] + c["tx_burst"]) * ns)
    tot.append((c["rx_burst"] + c["rx_proc"] + c["tx_build"] + c["tx_burst"]) * ns)
print("%.0f %.4f %.0f %.0f" % (sum(pps) / 2, sum(bw) / 2, sum(pmd) / 2, sum(tot) / 2))
PY
}

# run_testpmd: txonly 4170 B frames -> memif -> rxonly; prints the receiver's median Rx-pps
run_testpmd() {
	local n=tp$1 rc=0
	timeout -s INT $((secs + 1)) "$testpmd" -l 0,1 --main-lcore 1 $eal --file-prefix=${tag}_${n}a \
		$(memif server "$n") -- --mbuf-size=8320 --forward-mode=txonly --txpkts=4170 \
		--stats-period 1 --no-flush-rx --total-num-mbufs=8192 >"$work/$n.a.log" 2>&1 &
	local pa=$!
	sleep 0.5
	timeout -s INT "$secs" "$testpmd" -l 0,1 --main-lcore 0 $eal --file-prefix=${tag}_${n}b \
		$(memif client "$n") -- --mbuf-size=8320 --forward-mode=rxonly \
		--stats-period 1 --no-flush-rx --total-num-mbufs=8192 >"$work/$n.b.log" 2>&1 || rc=$?
	wait $pa
	if [ $rc -ne 0 ] && [ $rc -ne 124 ]; then
		echo "bench_rocegen: testpmd failed (rc $rc):" >&2
		tail -n 10 "$work/$n.b.log" >&2
		return 1
	fi
	grep -q "packet len=4170" "$work/$n.a.log" ||
		{ echo "bench_rocegen: testpmd txonly did not take 4170 B frames" >&2; return 1; }
	# zeros (not connected yet) and the first non-zero sample (a partial second) dropped, unless
	# it is the only one (a slow memif connect on a loaded machine): "nan", a failure, only
	# when testpmd received nothing at all
	sed 's/\x1b\[[0-9;]*[A-Za-z]//g' "$work/$n.b.log" |
		awk '/Rx-pps:/ && $2 > 0 { v[n++] = $2 }
		     END { for (i = (n > 1); i < n; i++) print v[i] }' | median
}

# Can this DPDK make a memif port? (EAL fails on a vdev whose driver is missing.)
if ! "$rocegen" -l 0 $eal --file-prefix=${tag}_probe $(memif server probe) -- --help \
	>"$work/probe.out" 2>&1; then
	grep -v "^TELEMETRY" "$work/probe.out" | tail -n 3
	skip "net_memif does not work here (see above): no back-to-back port for rocegen"
fi

printf 'bench_rocegen: %s runs, rocegen p2p --mtu 4096 --size %s over net_memif (lcores 0 and 1)\n' \
	"$runs" "$size"
P2P=(--test p2p --mtu 4096 --size "$size" --iters 3 --warmup 1 --time-limit 100)
on=() off=() bw_on=() bw_off=() tp=() w2=() pmd_ns=() pair_ns=()
for i in $(seq 1 "$runs"); do
	if [ $((i % 2)) -eq 1 ]; then order="rocegen testpmd"; else order="testpmd rocegen"; fi
	for side in $order; do
		if [ $side = rocegen ]; then
			read -r a b c d < <(run_pair "on$i" "${P2P[@]}") || exit 1
			on+=("$a"); bw_on+=("$b"); pmd_ns+=("$c"); pair_ns+=("$d")
			read -r a b _ < <(run_pair "off$i" "${P2P[@]}" --dcqcn off) || exit 1
			off+=("$a"); bw_off+=("$b")
			read -r a b _ < <(LC_A=0,1 LC_B=0,1 run_pair "w2$i" "${P2P[@]}" --workers 2 --poll-yield) ||
				exit 1
			w2+=("$a")
		else
			a=$(run_testpmd "$i") || exit 1
			if [ "$a" = nan ]; then
				echo "bench_rocegen: FAILED: testpmd over memif received nothing (run $i;" \
					"--seconds must leave a few per-second samples)" >&2
				exit 1
			fi
			tp+=("$a")
		fi
	done
	printf '  run %d: rocegen DCQCN on %s pps each way (%s GB/s), DCQCN off %s pps (%s GB/s), --workers 2 %s pps, testpmd memif %s pps\n' \
		"$i" "${on[-1]}" "${bw_on[-1]}" "${off[-1]}" "${bw_off[-1]}" "${w2[-1]}" "${tp[-1]}"
done
on_m=$(printf '%s\n' "${on[@]}" | median)
off_m=$(printf '%s\n' "${off[@]}" | median)
tp_m=$(printf '%s\n' "${tp[@]}" | median)
w2_m=$(printf '%s\n' "${w2[@]}" | median)
pmd_m=$(printf '%s\n' "${pmd_ns[@]}" | median)
pair_m=$(printf '%s\n' "${pair_ns[@]}" | median)

echo
sw_args=(--epochs 6 --epoch-ms 100)
[ $quick -eq 1 ] && sw_args=(--quick)
echo "rocemu's 4 KB forwarding rate on this machine now: bench_switch ${sw_args[*]}"
"$bench_switch" "${sw_args[@]}" >"$work/switch.log" 2>&1 ||
	{ echo "bench_rocegen: bench_switch failed:" >&2; tail -n 10 "$work/switch.log" >&2; exit 1; }
sw_full=$(sed -n 's/^RESULT bench=switch size=write4k .*full_mpps=\([0-9.]*\).*/\1/p' "$work/switch.log")
[ -n "$sw_full" ] || { echo "bench_rocegen: no write4k RESULT from bench_switch" >&2; exit 1; }
grep "^RESULT bench=switch size=write4k" "$work/switch.log"

echo
cap_size=64M
[ $quick -eq 1 ] && cap_size=8M
echo "rate cap: p2p --line-rate-mbps $cap, $cap_size x 3, back to back over memif"
CAP=(--test p2p --mtu 4096 --size $cap_size --iters 3 --line-rate-mbps "$cap" --time-limit 100)
read -r cap_on_pps cap_on_bw _ < <(run_pair capon "${CAP[@]}") || exit 1
read -r cap_off_pps cap_off_bw _ < <(run_pair capoff "${CAP[@]}" --dcqcn off) || exit 1

python3 - "$on_m" "$off_m" "$tp_m" "$sw_full" "$cap" "$cap_on_bw" "$cap_off_bw" "$w2_m" \
	"$(nproc)" "$pmd_m" "$pair_m" <<'PY'
import sys
on, off, tp, sw, cap, bw_on, bw_off, w2, cpus, pmd, pair = (float(x) for x in sys.argv[1:])
# wire bytes per 4 KB RDMA WRITE packet: Eth 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 (+ RETH 16
# on the first packet of a message) + payload, plus 24 B preamble/IFG/FCS on the wire
wire = 4096 + 58 + 24
print()
print("%-44s %12s %10s" % ("", "pps", "vs testpmd"))
print("%-44s %12.0f %10s" % ("testpmd txonly -> rxonly, 4170 B, memif", tp, "1"))
print("%-44s %12.0f %10.3f" % ("rocegen p2p 4 KB, DCQCN on, each way", on, on / tp))
print("%-44s %12.0f %10.3f" % ("rocegen p2p 4 KB, DCQCN off, each way", off, off / tp))
print("%-44s %12.0f %10.3f" % ("rocemu forward 4 KB (bench_switch full)", sw * 1e6, sw * 1e6 / tp))
print("%-44s %12.0f %10.3f" % ("rocegen --workers 2, DCQCN on, each way", w2, w2 / tp))
print("rocegen pps / rocemu forward pps: DCQCN on %.3f, off %.3f" % (on / (sw * 1e6), off / (sw * 1e6)))
print("--workers 2 / 1 lcore per process: %.3f (%d lcores spinning on %d CPUs%s)"
      % (w2 / on, 4, cpus, ": oversubscribed, not a scaling figure" if cpus < 4 else ""))
print("(each rocegen core also receives as many 4 KB packets as it sends, and ACKs)")
print("a 4 KB frame sent plus one received, DCQCN on: %.0f ns of work, %.0f ns of it in the "
      "memif PMD (its copies): the PMD alone allows %.0f pps each way per core"
      % (pair, pmd, 1e9 / pmd if pmd > 0 else 0))
goodput = cap * 4096 / wire / 8 / 1000  # GB/s of payload the capped link carries
print("rate cap %d Mb/s: busbw DCQCN on %.4f GB/s = %.3f of the link's 4 KB payload rate "
      "(%.4f GB/s); DCQCN off %.4f GB/s = %.3f (the port paced at the line rate)"
      % (cap, bw_on, bw_on / goodput, goodput, bw_off, bw_off / goodput))
print("RESULT bench=rocegen rocegen_on_pps=%.0f rocegen_off_pps=%.0f testpmd_memif_pps=%.0f "
      "rocemu_fwd4k_pps=%.0f on_vs_testpmd=%.3f on_vs_rocemu=%.3f off_vs_rocemu=%.3f "
      "cap_mbps=%d cap_busbw_on=%.4f cap_ratio_on=%.3f cap_busbw_off=%.4f cap_ratio_off=%.3f "
      "w2_pps=%.0f w2_vs_w1=%.3f cpus=%d pair_ns=%.0f pmd_ns=%.0f pmd_bound_pps=%.0f"
      % (on, off, tp, sw * 1e6, on / tp, on / (sw * 1e6), off / (sw * 1e6), cap, bw_on,
         bw_on / goodput, bw_off, bw_off / goodput, w2, w2 / on, cpus, pair, pmd,
         1e9 / pmd if pmd > 0 else 0))
PY
