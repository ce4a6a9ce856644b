#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# rocemu live against dpdk-testpmd --forward-mode=io, same vdevs, same lcores (main on 0,
# forwarding on 1), same mbuf pool (count and data room), alternating the two 3 times per
# frame size. Input: net_pcap with infinite_rx=1 replaying a pcap of RoCEv2 frames (it copies
# every frame into a fresh mbuf: the realistic baseline of DESIGN.md); output: net_null
# (copy=0, no-rx=1), which frees what it is given. The pipeline (bench-pcap-null.json) is
# parse + forward pairs + TM at 1600 Gb/s.
#
# Rates are self-timed on both sides: testpmd's "Tx-pps" of port 1 (--stats-period 1) and
# rocemu's p1 "tx ... Mpps" (--stats-interval 1), first sample dropped (start-up), median of
# the rest. rocemu's tx_pkts/duration from --stats is printed as a cross-check.
# Reports; fails only when nothing is forwarded or rocemu's conservation check fails.
#
# usage: bench_testpmd.sh [--build DIR] [--runs N] [--seconds S] [--sizes "ack64 write1k write4k"]
#                         [--quick]
#        --quick: --runs 1 --seconds 3, every size (a smoke test: same checks, rough numbers)
#        exit 77 (skipped, a line starting "SKIP:") when not root or dpdk-testpmd is missing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../../build}
runs=3
secs=8
sizes="ack64 write1k write4k"
# rocemu's pool for bench-pcap-null.json: emu_pipeline_mbufs_needed(pl, 1024, 1024) mbufs of
# emu_pipeline_data_room(pl) bytes (MTU 9216); testpmd gets the same.
pool_mbufs=17536
data_room=9408

while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--seconds) secs=$2; shift 2 ;;
	--sizes) sizes=$2; shift 2 ;;
	--quick) runs=1; secs=3; shift ;;
	-h|--help) sed -n '3,20p' "$0"; exit 0 ;;
	*) echo "bench_testpmd: unknown argument $1" >&2; exit 2 ;;
	esac
done
if [ "$secs" -lt 3 ]; then
	echo "bench_testpmd: --seconds must be >= 3 (testpmd prints its first rate after ~2 s)" >&2
	exit 2
fi

rocemu=$build/app/rocemu/rocemu
testpmd=$(command -v dpdk-testpmd || true)
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: bench_testpmd needs root (DPDK EAL); NOT MEASURED"
	exit 77
fi
if [ -z "$testpmd" ]; then
	echo "SKIP: bench_testpmd: dpdk-testpmd not found (apt-get install dpdk); NOT MEASURED"
	exit 77
fi
if [ ! -x "$rocemu" ]; then
	echo "bench_testpmd: $rocemu not built (ninja -C $build)" >&2
	exit 1
fi

work=$(mktemp -d /tmp/bench_testpmd.XXXXXX)
# DPDK leaves /var/run/dpdk/PREFIX behind even after a clean exit: remove ours.
trap 'rm -rf "$work" /var/run/dpdk/rb_$$_* /var/run/dpdk/tp_$$_*' EXIT
python3 "$here/gen_roce_pcap.py" "$work" > /dev/null

eal_common="-l 0-1 --no-huge -m 1024 --no-pci"

vdevs() {
	echo "--vdev net_pcap0,rx_pcap=$work/roce_$1.pcap,tx_pcap=/dev/null,infinite_rx=1" \
	     "--vdev net_null0,copy=0,no-rx=1"
}

# median of the numbers on stdin (one per line), or "nan" when there are none
median() {
	python3 -c '
import sys
v = sorted(float(x) for x in sys.stdin.read().split())
print("nan" if not v else "%.3f" % (v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2))'
}

# run_rocemu SIZE TAG: prints "Mpps_interval_median Mpps_total"
run_rocemu() {
	local log=$work/rocemu_$1_$2.log st=$work/rocemu_$1_$2.json
	# shellcheck disable=SC2046
	if ! "$rocemu" $eal_common --file-prefix="rb_$$_$2" $(vdevs "$1") -- \
		--pipeline "$here/bench-pcap-null.json" --duration "$secs" --stats "$st" \
		--stats-interval 1 > "$log" 2>&1; then
		echo "bench_testpmd: rocemu failed ($1), log:" >&2
		tail -n 20 "$log" >&2
		return 1
	fi
	if ! grep -q "conservation: .*: OK" "$log"; then
		echo "bench_testpmd: rocemu conservation check failed ($1):" >&2
		grep "conservation" "$log" >&2 || true
		return 1
	fi
	local iv tot
	iv=$(sed -n 's/^t=.*| p1 rx [0-9]* ([^)]*) tx [0-9]* (\([0-9.]*\) Mpps.*/\1/p' "$log" |
	     tail -n +2 | median)
	tot=$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
print("%.3f" % (s["ports"][1]["tx_pkts"] / float(sys.argv[2]) / 1e6))' "$st" "$secs")
	echo "$iv $tot"
}

# run_testpmd SIZE TAG: prints the median Tx-pps of port 1 in Mpps
run_testpmd() {
	local log=$work/testpmd_$1_$2.log rc=0
	# shellcheck disable=SC2046
	timeout -s INT $((secs + 3)) "$testpmd" $eal_common --file-prefix="tp_$$_$2" \
		$(vdevs "$1") -- --forward-mode=io --stats-period 1 --no-flush-rx \
		--mbuf-size=$data_room --total-num-mbufs=$pool_mbufs > "$log" 2>&1 || rc=$?
	# 124: stopped by timeout's SIGINT, the normal end of a non-interactive run
	if [ $rc -ne 0 ] && [ $rc -ne 124 ]; then
		echo "bench_testpmd: testpmd failed ($1, rc $rc), log:" >&2
		tail -n 20 "$log" >&2
		return 1
	fi
	sed 's/\x1b\[[0-9;]*[A-Za-z]//g' "$log" | awk '
		/NIC statistics for port/ { port = $6 }
		/Tx-pps:/ && port == 1 { print $2 / 1e6 }' | tail -n +2 | median
}

printf 'bench_testpmd: %s runs x %s s per side and size, net_pcap(infinite_rx) -> net_null, lcores 0-1\n' \
	"$runs" "$secs"
results=()
for size in $sizes; do
	r_iv=() r_tot=() t_pps=()
	for i in $(seq 1 "$runs"); do
		if [ $((i % 2)) -eq 1 ]; then order="rocemu testpmd"; else order="testpmd rocemu"; fi
		for side in $order; do
			if [ "$side" = rocemu ]; then
				read -r a b < <(run_rocemu "$size" "$i") || exit 1
				r_iv+=("$a"); r_tot+=("$b")
			else
				a=$(run_testpmd "$size" "$i") || exit 1
				t_pps+=("$a")
			fi
		done
		printf '  %-8s run %d: rocemu %s Mpps (tx/duration %s), testpmd %s Mpps\n' \
			"$size" "$i" "${r_iv[-1]}" "${r_tot[-1]}" "${t_pps[-1]}"
	done
	rm_med=$(printf '%s\n' "${r_iv[@]}" | median)
	tp_med=$(printf '%s\n' "${t_pps[@]}" | median)
	results+=("$size $rm_med $tp_med")
done

printf '\n%-8s %12s %13s %8s\n' size "rocemu Mpps" "testpmd Mpps" "ratio"
fail=0
for r in "${results[@]}"; do
	read -r size rm tp <<< "$r"
	ratio=$(python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print("%.3f" % (a / b) if b > 0 else "nan")' "$rm" "$tp")
	printf '%-8s %12s %13s %8s\n' "$size" "$rm" "$tp" "$ratio"
	case "$rm $tp" in
	*nan*|0.000*|*" 0.000") fail=1 ;;
	esac
done
echo "(median over $runs runs of each run's median per-second rate; ratio = rocemu/testpmd)"
for r in "${results[@]}"; do
	read -r size rm tp <<< "$r"
	ratio=$(python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print("%.3f" % (a / b) if b > 0 else "nan")' "$rm" "$tp")
	echo "RESULT bench=testpmd size=$size rocemu_mpps=$rm testpmd_mpps=$tp ratio=$ratio"
done
if [ $fail -ne 0 ]; then
	echo "bench_testpmd: a side forwarded nothing (see above)" >&2
	exit 1
fi
