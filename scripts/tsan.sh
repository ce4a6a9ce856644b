#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ThreadSanitizer run of the tests where threads share a switch: profile reload under
# traffic (tests/unit/test_reload.c: the main thread loads, validates and offers profiles
# while a worker thread forwards), and rocemu live on 1 and 2 worker lcores with interval
# stats, Prometheus, a timeline, telemetry queries from two clients and profile reloads
# (tests/workers/tsan_live.py). A report of a data race fails the run. Debian's DPDK is not
# built with TSan: scripts/tsan.supp suppresses frames inside DPDK's own code only, each with
# its reason.
#
#   scripts/tsan.sh [BUILD_DIR]      (default build-tsan/); ends with "N passed, N failed"
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build-tsan}
"$ROOT/scripts/deps.sh" >/dev/null || { echo "tsan: dependencies missing (scripts/deps.sh)"; echo "0 passed, 1 failed"; exit 1; }
if [ ! -f "$BUILD/build.ninja" ]; then
	setup_log=$(mktemp)
	meson setup "$BUILD" "$ROOT" -Db_sanitize=thread -Db_lundef=false -Dbuildtype=debugoptimized \
		>"$setup_log" 2>&1 || { cat "$setup_log"; rm -f "$setup_log"; echo "0 passed, 1 failed"; exit 1; }
	rm -f "$setup_log"
fi
ninja -C "$BUILD" tests/unit/test_reload app/rocemu/rocemu >/dev/null || { echo "tsan: build failed"; echo "0 passed, 1 failed"; exit 1; }
pass=0; fail=0
for t in test_reload; do
	log=$(mktemp)
	# halt on the first race; exit code 66 tells a race from a failed assertion
	if TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
		"$BUILD/tests/unit/$t" >"$log" 2>&1 && ! grep -q "WARNING: ThreadSanitizer" "$log"; then
		echo "PASS tsan-$t: $(grep -m1 '^reload:' "$log")"
		pass=$((pass + 1))
	else
		echo "FAIL tsan-$t:"; tail -60 "$log"
		fail=$((fail + 1))
	fi
	rm -f "$log"
done
for nw in 1 2 "2 spread"; do
	log=$(mktemp)
	# (unquoted: "2 spread" is the worker count and the mode)
	# shellcheck disable=SC2086
	if python3 "$ROOT/tests/workers/tsan_live.py" "$BUILD/app/rocemu/rocemu" $nw >"$log" 2>&1; then
		echo "PASS tsan-live-w${nw// /-}: $(tail -1 "$log")"
		pass=$((pass + 1))
	else
		# the first report whole (both stacks), then how the run ended
		echo "FAIL tsan-live-w${nw// /-}:"
		if grep -q "WARNING: ThreadSanitizer" "$log"; then
			sed -n '/WARNING: ThreadSanitizer/,/^SUMMARY: ThreadSanitizer/p' "$log" | head -120
		fi
		tail -15 "$log"
		fail=$((fail + 1))
	fi
	rm -f "$log"
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
