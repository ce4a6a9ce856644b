#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Build (if needed) and run rocemu's throughput benchmarks, then print one table:
#   bench_switch       rocemu's switch vs io-forward, in one process on net_null (ratio full/io)
#   bench_testpmd.sh   rocemu live vs dpdk-testpmd io, net_pcap(infinite_rx) -> net_null
# Both report ratios against a baseline measured in the same run (see README.md). Run as root.
#
# usage: tests/bench/run.sh [BUILD_DIR] [--quick]
#        BUILD_DIR defaults to $BUILD or ./build; --quick: each benchmark's quick mode (a smoke
#        run with rough numbers; tests/bench/smoke.sh runs every benchmark that way)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD:-$root/build}
quick=0
for a in "$@"; do
	case "$a" in
	--quick) quick=1 ;;
	-h|--help) sed -n '3,11p' "$0"; exit 0 ;;
	-*) echo "run.sh: unknown option $a" >&2; exit 2 ;;
	*) build=$a ;;
	esac
done

if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" "$root"
fi
ninja -C "$build" tests/bench/bench_switch app/rocemu/rocemu

if [ $quick -eq 1 ]; then
	sw_args=(--quick)
	tp_args=(--quick)
else
	sw_args=(--epochs 30 --epoch-ms 200)
	tp_args=(--runs 3 --seconds 8)
fi

log=$(mktemp /tmp/rocemu_bench.XXXXXX)
trap 'rm -f "$log"' EXIT
echo "== bench_switch ${sw_args[*]}"
"$build/tests/bench/bench_switch" "${sw_args[@]}" 2>&1 | grep -v '^EAL:\|^TELEMETRY:' | tee -a "$log"
echo
echo "== bench_testpmd.sh ${tp_args[*]}"
rc=0
"$here/bench_testpmd.sh" --build "$build" "${tp_args[@]}" 2>&1 | tee -a "$log" || rc=$?
if [ $rc -eq 77 ]; then
	echo "(bench_testpmd SKIPPED: NOT MEASURED)"
elif [ $rc -ne 0 ]; then
	echo "bench_testpmd.sh failed (rc $rc)" >&2
	exit $rc
fi

echo
echo "== summary ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cpus, $(uname -r))"
printf '%-8s | %-30s | %-30s\n' "" "switch vs io-forward (net_null)" "rocemu live vs testpmd io (pcap)"
printf '%-8s | %8s %9s %10s | %8s %9s %10s\n' size "io Mpps" "full Mpps" "full/io" \
	"testpmd" "rocemu" "rocemu/tp"
for size in ack64 write1k write4k; do
	sw=$(grep "^RESULT bench=switch size=$size " "$log" || true)
	tp=$(grep "^RESULT bench=testpmd size=$size " "$log" || true)
	get() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<< "$1"; }
	printf '%-8s | %8s %9s %10s | %8s %9s %10s\n' "$size" \
		"$(get "$sw" io_mpps)" "$(get "$sw" full_mpps)" "$(get "$sw" ratio)" \
		"$(get "$tp" testpmd_mpps)" "$(get "$tp" rocemu_mpps)" "$(get "$tp" ratio)"
done
