#!/usr/bin/env bash
# Builds rocemu and runs every test (unit, fuzz-corpus replay, replay cases, end-to-end lab),
# then prints exactly one closing line: "N passed, N failed" (", N skipped" when some were).
#
#   scripts/test.sh              normal build in build/
#   scripts/test.sh --sanitize   ASan+UBSan build in build-asan/ (LeakSanitizer on, with
#                                scripts/lsan.supp for DPDK's own allocations)
#   BUILD=dir scripts/test.sh    another build directory
#
# Honesty rules (scripts/test_summary.py applies them and prints the closing line; its
# --self-test, run by .ci/run, checks them; the run fails, whatever meson says, when):
#   - fewer results come back than tests are registered (`meson test --list`): each missing
#     one counts as failed;
#   - under CI=true, a test skipped (exit 77) or a part of a test skipped counts as failed. A
#     test says it skipped a part with a line starting "SKIP (part):" on its output; a whole
#     skip is a line starting "SKIP:" and exit 77. Outside CI they are listed loudly, and a
#     test with a skipped part still counts as passed;
#   - under CI=true, the configuration left a test out (a meson warning saying "NOT built",
#     e.g. cmocka missing) or a suite has no test at all.
# Exit status: 0 when nothing failed and something passed, 1 otherwise, 2 for a bad argument.
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
CI=${CI:-false}

. scripts/deps.sh
rocemu_install_deps || { echo "0 passed, 1 failed"; exit 1; }

sanitize=0
for a in "$@"; do
	case "$a" in
	--sanitize) sanitize=1 ;;
	*) echo "usage: scripts/test.sh [--sanitize]" >&2; exit 2 ;;
	esac
done

opts=()
if [ $sanitize -eq 1 ]; then
	BUILD=${BUILD:-build-asan}
	opts+=(-Db_sanitize=address,undefined -Db_lundef=false)
	# DPDK reserves large virtual areas; leaks are checked, except DPDK's own allocations
	# (scripts/lsan.supp says which and why). abort_on_error: a report fails the test.
	export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
	export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/scripts/lsan.supp:print_suppressions=0}
	export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
else
	BUILD=${BUILD:-build}
fi

if [ -f "$BUILD/build.ninja" ]; then
	meson configure "$BUILD" "${opts[@]}" >/dev/null 2>&1 || true
else
	meson setup "$BUILD" "${opts[@]}" >"$ROOT/.meson-setup.log" 2>&1 ||
		{ cat "$ROOT/.meson-setup.log"; echo "0 passed, 1 failed"; exit 1; }
fi
if ! ninja -C "$BUILD"; then
	echo "build failed"
	echo "0 passed, 1 failed"
	exit 1
fi

list=$(mktemp)
trap 'rm -f "$list"' EXIT
if ! meson test -C "$BUILD" --no-rebuild --list 2>/dev/null | grep ' / ' >"$list"; then
	echo "meson test --list failed or listed no test"
	echo "0 passed, 1 failed"
	exit 1
fi
rm -f "$BUILD/meson-logs/testlog.json"
meson test -C "$BUILD" --no-rebuild --print-errorlogs --num-processes 2
python3 scripts/test_summary.py "$BUILD/meson-logs/testlog.json" "$list" "$CI" \
	"$BUILD/meson-logs/meson-log.txt"
