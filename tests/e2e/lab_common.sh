# Sourced by the e2e tests that run rocemu in the netns lab (scripts/lab/lab.sh). Before
# sourcing, set ROCEMU, SRC and LAB_PREFIX (unique per test process: tests may overlap).
# Gives: LAB, WORK (a temporary directory, removed at exit), fail MSG (prints MSG and every
# $WORK/*.out, prefixed with its name, then exits 1), lab_begin WHAT (skips loudly, exit 77,
# without root or network namespaces; else brings the lab up and sets NS_A, NS_B, IP_A, ...),
# rocemu_start ARGS... (starts "$ROCEMU" ARGS with its output in $WORK/rocemu.out, waits for
# "rocemu: running") and rocemu_stop (SIGINT, waits, fails on a non-zero exit). At exit a
# still running rocemu is stopped and the lab taken down.
export LAB_PREFIX
LAB="$SRC/scripts/lab/lab.sh"
WORK=$(mktemp -d)
ROCEMU_PID=

lab_cleanup() {
	[ -n "$ROCEMU_PID" ] && kill -INT "$ROCEMU_PID" 2>/dev/null && sleep 1
	[ -n "$ROCEMU_PID" ] && kill -9 "$ROCEMU_PID" 2>/dev/null
	"$LAB" down >/dev/null 2>&1
	rm -rf "$WORK"
}
trap lab_cleanup EXIT

fail() {
	local f
	echo "FAIL: $*"
	for f in "$WORK"/*.out; do
		[ -f "$f" ] && sed "s/^/  $(basename "$f" .out)| /" "$f"
	done
	exit 1
}

lab_begin() {
	if [ "$(id -u)" -ne 0 ] || ! ip netns add "$LAB_PREFIX-probe" 2>/dev/null; then
		echo "SKIP: $1 needs root and network namespaces (ip netns); NOT TESTED"
		exit 77
	fi
	ip netns del "$LAB_PREFIX-probe"
	eval "$("$LAB" env)"
	"$LAB" up >/dev/null || fail "lab setup"
}

rocemu_start() {
	"$ROCEMU" "$@" >"$WORK/rocemu.out" 2>&1 &
	ROCEMU_PID=$!
	for _ in $(seq 100); do
		grep -q "^rocemu: running" "$WORK/rocemu.out" && return 0
		kill -0 "$ROCEMU_PID" 2>/dev/null || fail "rocemu exited at start"
		sleep 0.1
	done
	fail "rocemu did not start within 10 s"
}

rocemu_stop() {
	kill -INT "$ROCEMU_PID"
	wait "$ROCEMU_PID" || fail "rocemu exited non-zero"
	ROCEMU_PID=
}
