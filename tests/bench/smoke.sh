#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Every benchmark once, in its quick mode, as a smoke test: it fails only when a benchmark
# reports a functional error (nothing forwarded, packets unaccounted, a rocegen that does not
# verify its data, a crash), never on time. Run as root (DPDK EAL), ~1-2 minutes on 2 cores:
#   bench_switch --quick      rocemu's switch vs io-forward on net_null (3 x 20 ms per size)
#   bench_impair --quick      impair stage cost on the virtual clock (3 x 20000 packets)
#   bench_fabric --quick      one fabric hop (ECMP) and a leaf-spine against the single link (3 x 20000 packets)
#   bench_reorder --quick     egress reorder stage cost on in-order traffic (3 x 20000 packets)
#   bench_proto --quick       lib/proto parse/ICRC/CRC/qpmap loops (1/100 of the iterations)
#   bench_testpmd.sh --quick  rocemu live vs dpdk-testpmd io (1 run x 3 s per size)
#   bench_rocegen.sh --quick  rocegen back to back over memif vs testpmd (8 MB, 1 run)
#   bench_capture --quick     the switch without, with a 128 B capture, annotated; the writer (2 x 50 ms)
#   bench_workers.sh --quick  rocemu live on 1 and 2 workers: bidir, oneway, fabric, handoff (1 run x 3 s)
# Prints each benchmark's output, its wall time and PASS/FAIL/SKIP, then the closing line
# "N passed, N failed" (", N skipped" when some were; under CI=true a skip is a failure).
# Exit status: 0 when none failed, 1 otherwise, 2 for a bad argument.
#
# usage: tests/bench/smoke.sh [BUILD_DIR]      (default $BUILD or ./build; built if needed)
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD:-$root/build}
CI=${CI:-false}
case "${1:-}" in
-h|--help) sed -n '3,18p' "$0"; exit 0 ;;
-*) echo "smoke.sh: unknown option $1" >&2; exit 2 ;;
"") ;;
*) build=$1 ;;
esac
build=$(cd "$build" 2>/dev/null && pwd || echo "$build")

if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" "$root" >/dev/null || { echo "0 passed, 1 failed"; exit 1; }
fi
if ! ninja -C "$build" tests/bench/bench_switch tests/bench/bench_impair tests/bench/bench_fabric tests/bench/bench_proto \
	tests/bench/bench_capture tests/bench/bench_reorder app/rocemu/rocemu app/rocegen/rocegen >/dev/null; then
	echo "smoke.sh: build failed"
	echo "0 passed, 1 failed"
	exit 1
fi

pass=0 fail=0 skip=0
summary=()
# bench NAME CMD...: run, time, classify by exit status (77: skipped)
bench() {
	local name=$1 t0 t1 rc=0
	shift
	echo "== $name: $*"
	t0=$(date +%s.%N)
	"$@" 2>&1 | grep -v '^EAL:\|^TELEMETRY:' || true
	rc=${PIPESTATUS[0]}
	t1=$(date +%s.%N)
	local dt
	dt=$(python3 -c "print('%.1f' % ($t1 - $t0))")
	if [ "$rc" -eq 0 ]; then
		pass=$((pass + 1)); summary+=("PASS $name (${dt} s)")
	elif [ "$rc" -eq 77 ] && [ "$CI" != true ]; then
		skip=$((skip + 1)); summary+=("SKIPPED $name (${dt} s): NOT MEASURED")
	else
		fail=$((fail + 1))
		summary+=("FAIL $name (exit $rc$([ "$rc" -eq 77 ] && echo ', skipped under CI=true'), ${dt} s)")
	fi
	echo
}

bench bench_switch "$build/tests/bench/bench_switch" --quick
bench bench_impair "$build/tests/bench/bench_impair" --quick
bench bench_fabric "$build/tests/bench/bench_fabric" --quick
bench bench_reorder "$build/tests/bench/bench_reorder" --quick
bench bench_proto "$build/tests/bench/bench_proto" --quick
bench bench_testpmd "$here/bench_testpmd.sh" --build "$build" --quick
bench bench_rocegen "$here/bench_rocegen.sh" --build "$build" --quick
bench bench_capture "$build/tests/bench/bench_capture" --quick
bench bench_workers "$here/bench_workers.sh" --build "$build" --quick

echo "== smoke summary"
printf '%s\n' "${summary[@]}"
tail=
[ $skip -gt 0 ] && tail=", $skip skipped"
echo "$pass passed, $fail failed$tail"
[ $fail -eq 0 ]
