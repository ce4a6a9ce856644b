#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ThreadSanitizer run of the tests where threads share a switch: profile reload under
# traffic (tests/unit/test_reload.c: the main thread loads, validates and offers profiles
# while a worker thread forwards), and rocemu live on 1 and 2 worker lcores with interval
# stats, Prometheus, a timeline, telemetry queries from two clients and profile reloads
# (tests/workers/tsan_live.py), the RX guard on 2 workers (tests/workers/rx_guard.py w2), and
# rocegen on two lcores per process (--workers 2): frames handed between shards over
# af_packet's two queue pairs (tests/e2e/test_rocegen_workers.sh af_packet), and pause
# frames copied to every shard in the PFC loop through rocemu (test_rocegen_loop.sh pfc).
# A report of a data race fails the run. Debian's DPDK is not
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
ninja -C "$BUILD" tests/unit/test_reload app/rocemu/rocemu app/rocegen/rocegen \
	tests/workers/pfc_peer >/dev/null || { echo "tsan: build failed"; echo "0 passed, 1 failed"; exit 1; }
pass=0; fail=0
# verdict NAME OK LOG SUMMARY: count a run, print its line; on a failure the first race report
# whole (both stacks), then how the run ended
verdict() {
	if [ "$2" -eq 0 ] && ! grep -q "WARNING: ThreadSanitizer" "$3"; then
		echo "PASS $1: $4"
		pass=$((pass + 1))
	else
		echo "FAIL $1:"
		if grep -q "WARNING: ThreadSanitizer" "$3"; then
			sed -n '/WARNING: ThreadSanitizer/,/^SUMMARY: ThreadSanitizer/p' "$3" | head -120
		fi
		tail -40 "$3"
		fail=$((fail + 1))
	fi
	rm -f "$3"
}
log=$(mktemp)
# halt on the first race; exit code 66 tells a race from a failed assertion
TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
	"$BUILD/tests/unit/test_reload" >"$log" 2>&1
verdict tsan-test_reload $? "$log" "$(grep -m1 '^reload:' "$log")"
for nw in 1 2 "2 spread"; do
	log=$(mktemp)
	# (unquoted: "2 spread" is the worker count and the mode)
	# shellcheck disable=SC2086
	python3 "$ROOT/tests/workers/tsan_live.py" "$BUILD/app/rocemu/rocemu" $nw >"$log" 2>&1
	verdict "tsan-live-w${nw// /-}" $? "$log" "$(tail -1 "$log")"
done
# the RX guard on two workers (vhost-user, a PFC-honouring peer): its per-port word shared by
# the pollers of the port's queues, its frames handed to the port's owner
log=$(mktemp)
TSAN_OPTIONS="halt_on_error=1 exitcode=66 suppressions=$ROOT/scripts/tsan.supp" \
	python3 "$ROOT/tests/workers/rx_guard.py" \
	"$BUILD/app/rocemu/rocemu" "$BUILD/tests/workers/pfc_peer" w2 >"$log" 2>&1
verdict tsan-rx-guard-w2 $? "$log" "$(grep '^ok:' "$log" | tail -1)"
# rocegen --workers 2 (the scripts print their processes' output, TSan's report too, when
# a process fails; halt_on_error makes a race a failure)
log=$(mktemp)
TSAN_OPTIONS="halt_on_error=1 exitcode=66 suppressions=$ROOT/scripts/tsan.supp" \
	bash "$ROOT/tests/e2e/test_rocegen_workers.sh" "$BUILD/app/rocegen/rocegen" af_packet \
	>"$log" 2>&1
verdict tsan-rocegen-workers $? "$log" "$(grep '^ok: af_packet: a' "$log" | tail -1)"
log=$(mktemp)
ROCEGEN_WORKERS=2 TSAN_OPTIONS="halt_on_error=1 exitcode=66 suppressions=$ROOT/scripts/tsan.supp" \
	bash "$ROOT/tests/e2e/test_rocegen_loop.sh" "$BUILD/app/rocemu/rocemu" \
	"$BUILD/app/rocegen/rocegen" "$ROOT" pfc >"$log" 2>&1
verdict tsan-rocegen-pfc-rg2 $? "$log" "$(grep '^ok: a.json: every' "$log" | tail -1)"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
