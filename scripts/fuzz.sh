#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (build-fuzz/, -Dfuzz=true) and runs each
# on its committed corpus plus a short bounded fuzzing time, two targets at a time, failing on
# any finding (crash, sanitizer report, leak, timeout, out-of-memory). The corpus replay under
# gcc stays in scripts/test.sh (meson suite `fuzz`); this is what only clang can do.
#
#   scripts/fuzz.sh                 every target, FUZZ_SECONDS (10) each
#   FUZZ_SECONDS=60 scripts/fuzz.sh longer;  BUILD=dir scripts/fuzz.sh  another build dir
#
# The targets are the tests/fuzz/fuzz_*.c files, each with its corpus tests/fuzz/corpus/NAME;
# a file without its built binary fails. Each run reads the committed corpus and writes what it
# finds to build-fuzz/fuzz-run/NAME/corpus (never to the committed one); a finding is kept as
# build-fuzz/fuzz-run/NAME/crash-* (leak-*, timeout-*, oom-*) and its path printed, with the
# command that reproduces it. One result per target, then the closing line "N passed, N failed".
# Without clang or libFuzzer the step is skipped, except under CI=true, where it fails.
# Measured 2026-12-05 on the 2-vCPU VM (shared): the run itself 60-70 s for 10 targets; the
# first build of build-fuzz/ (every library under ASan + UBSan + coverage) a few minutes.
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
CI=${CI:-false}
BUILD=${BUILD:-build-fuzz}
FUZZ_SECONDS=${FUZZ_SECONDS:-10}
JOBS=${FUZZ_JOBS:-2}

. scripts/deps.sh
rocemu_install_deps || echo "fuzz: could not install every dependency (continuing)" >&2

# clang and libFuzzer: a one-line fuzz target must link
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
	>"$probe/t.c"
if ! command -v clang >/dev/null 2>&1 || ! clang -fsanitize=fuzzer,address,undefined \
		"$probe/t.c" -o "$probe/t" 2>"$probe/err"; then
	if [ "$CI" = true ]; then
		echo "fuzz: clang with libFuzzer is missing (CI=true: a failure, not a skip):" \
			"$(head -n 3 "$probe/err" 2>/dev/null)"
		echo "0 passed, 1 failed"
		exit 1
	fi
	echo "SKIP: fuzz: clang with libFuzzer is missing (apt-get install clang libfuzzer-14-dev)"
	echo "0 passed, 0 failed, 1 skipped"
	exit 77
fi

if [ -f "$BUILD/build.ninja" ]; then
	meson configure "$BUILD" -Dfuzz=true >/dev/null || { echo "0 passed, 1 failed"; exit 1; }
else
	CC=clang meson setup "$BUILD" -Dfuzz=true -Db_lundef=false >"$probe/setup.log" 2>&1 ||
		{ cat "$probe/setup.log"; echo "fuzz: meson setup $BUILD failed"
		  echo "0 passed, 1 failed"; exit 1; }
fi
if ! ninja -C "$BUILD" -j2 fuzz; then
	echo "fuzz: building the fuzz targets in $BUILD failed"
	echo "0 passed, 1 failed"
	exit 1
fi

targets=()
for f in tests/fuzz/fuzz_*.c; do
	t=${f#tests/fuzz/fuzz_}
	targets+=("${t%.c}")
done

# a 16 MB quarantine instead of 256: a use after free is still caught among recent frees, and
# freed memory is reused instead of fresh pages faulted in (fuzz_rocestat ran 4x faster)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:quarantine_size_mb=16}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/scripts/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# run_one NAME: corpus + FUZZ_SECONDS of fuzzing; exit status 0 when nothing was found
run_one() {
	local t=$1 dir="$BUILD/fuzz-run/$1" bin="$BUILD/tests/fuzz/fuzz_$1"
	rm -rf "$dir"
	mkdir -p "$dir/corpus"
	if [ ! -x "$bin" ]; then
		echo "fuzz: $bin was not built" >"$dir.log"
		return 1
	fi
	if [ ! -d "tests/fuzz/corpus/$t" ]; then
		echo "fuzz: tests/fuzz/corpus/$t is missing" >"$dir.log"
		return 1
	fi
	# -timeout: one input taking longer is a finding; the outer timeout only bounds a hang
	# of libFuzzer itself
	timeout -k 10 $((FUZZ_SECONDS + 60)) "$bin" -max_total_time="$FUZZ_SECONDS" \
		-timeout=30 -rss_limit_mb=2560 -print_final_stats=1 \
		-artifact_prefix="$dir/" "$dir/corpus" "tests/fuzz/corpus/$t" >"$dir.log" 2>&1
}

pass=0 fail=0
t0=$(date +%s)
report() {
	local t=$1 rc=$2 dir="$BUILD/fuzz-run/$1" runs arts a
	runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$dir.log" | grep -Eo '[0-9]+$')
	arts=$(ls "$dir"/crash-* "$dir"/leak-* "$dir"/timeout-* "$dir"/oom-* 2>/dev/null || true)
	if [ "$rc" -eq 0 ] && [ -z "$arts" ]; then
		echo "PASS fuzz_$t: ${runs:-?} runs (corpus + ${FUZZ_SECONDS} s), nothing found"
		pass=$((pass + 1))
		return
	fi
	fail=$((fail + 1))
	echo "FAIL fuzz_$t (exit $rc): ${runs:-?} executions; log $dir.log"
	grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|.*invariant violated)' "$dir.log" |
		head -n 5 | sed 's/^/    /'
	for a in $arts; do
		echo "    finding kept: $a"
		echo "    reproduce:    $BUILD/tests/fuzz/fuzz_$t $a"
	done
	[ -n "$arts" ] || tail -n 5 "$dir.log" | sed 's/^/    /'
}

mkdir -p "$BUILD/fuzz-run"
for t in "${targets[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
		wait -n
	done
	rm -f "$BUILD/fuzz-run/$t.rc"
	{ run_one "$t"; echo $? >"$BUILD/fuzz-run/$t.rc"; } &
done
wait
for t in "${targets[@]}"; do
	report "$t" "$(cat "$BUILD/fuzz-run/$t.rc" 2>/dev/null || echo 1)"
done
echo "fuzz: ${#targets[@]} targets in $(( $(date +%s) - t0 )) s ($JOBS at a time, $BUILD/fuzz-run/)"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
