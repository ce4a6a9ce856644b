#!/usr/bin/env bash
# Builds rocemu and runs every test (unit, fuzz-corpus replay, replay cases, end-to-end lab),
# then prints exactly one closing line: "N passed, N failed" (", N skipped" when some were).
#
#   scripts/test.sh              normal build in build/
#   scripts/test.sh --sanitize   ASan+UBSan build in build-asan/
#   BUILD=dir scripts/test.sh    another build directory
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD

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
	# DPDK reserves large virtual areas and its PMDs leak on purpose at exit.
	export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}
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

meson test -C "$BUILD" --no-rebuild --print-errorlogs --num-processes 2
python3 - "$BUILD/meson-logs/testlog.json" <<'PY'
import json, sys
passed = failed = skipped = 0
names = []
with open(sys.argv[1]) as f:
    for line in f:
        r = json.loads(line)
        res = r.get("result")
        if res in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif res == "SKIP":
            skipped += 1
            names.append("SKIPPED: " + r["name"])
        else:
            failed += 1
            names.append("FAILED: " + r["name"] + " (" + str(res) + ")")
for n in names:
    print(n)
tail = ", %d skipped" % skipped if skipped else ""
print("%d passed, %d failed%s" % (passed, failed, tail))
sys.exit(1 if failed or passed == 0 else 0)
PY
