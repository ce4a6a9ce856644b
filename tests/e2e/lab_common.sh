# Sourced by the e2e tests that run rocemu in the netns lab (scripts/lab/lab.sh). Before
# sourcing, set ROCEMU, SRC and LAB_PREFIX (unique per test process: tests may overlap).
# Gives: LAB, WORK (a temporary directory, removed at exit), fail MSG (prints MSG and every
# $WORK/*.out, prefixed with its name, then exits 1), lab_begin WHAT (skips loudly, exit 77,
# without root or network namespaces; else brings the lab up and sets NS_A, NS_B, IP_A, ...),
# rocemu_start ARGS... (starts "$ROCEMU" ARGS with its output in $WORK/rocemu.out, waits for
# "rocemu: running"; with ROCEMU_WORKERS=N on N worker lcores, workers.sh), rocemu_stop (SIGINT, waits, fails on a non-zero exit), rocegen_pair,
# rocemu_profile_switch and lab_repeat (below). At exit a still running rocemu is stopped, the
# lab taken down.
export LAB_PREFIX
LAB="$SRC/scripts/lab/lab.sh"
WORK=$(mktemp -d)
ROCEMU_PID=

lab_cleanup() {
	[ -n "$ROCEMU_PID" ] && kill -INT "$ROCEMU_PID" 2>/dev/null && sleep 1
	[ -n "$ROCEMU_PID" ] && kill -9 "$ROCEMU_PID" 2>/dev/null
	"$LAB" down >/dev/null 2>&1
	rm -rf "$WORK" "/var/run/dpdk/${LAB_PREFIX}a" "/var/run/dpdk/${LAB_PREFIX}b"
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

. "$SRC/tests/e2e/workers.sh"
rocemu_start() {
	rocemu_workers_args "$@"
	"$ROCEMU" "${RW_ARGS[@]}" >"$WORK/rocemu.out" 2>&1 &
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

# rocegen_pair IP_A IP_B ARGS...: "$ROCEGEN" in A's and B's namespace at once (lcore
# ${ROCEGEN_LCORE:-1}, on the namespace's veth end), process A first at IP_A, B at IP_B,
# outputs $WORK/{a,b}.{out,json};
# fails if either exits non-zero, did not check its result and every byte from the wire, or
# left its EAL runtime directory behind.
# With ROCEGEN_WORKERS=N: each rocegen with --workers N on lcores 0..N-1 (mapped onto the
# CPUs with --lcores) and N af_packet queue pairs, yielding when idle (--poll-yield: with
# rocemu, 2N + 1 pollers share this machine's two CPUs; spinning, a shard's peer went
# without the CPU long enough for a QP to run out of retries).
rocegen_pair() {
	local ip_a=$1 ip_b=$2 pa pb s w=${ROCEGEN_WORKERS:-1} eal
	shift 2
	eal=(-l "${ROCEGEN_LCORE:-1}" --no-huge -m 512 --no-pci)
	if [ "$w" -gt 1 ]; then
		eal=(--lcores "$(seq -s, 0 $((w - 1)))" --no-huge -m 1024 --no-pci)
		set -- "$@" --workers "$w" --poll-yield
	fi
	ip netns exec "$NS_A" "$ROCEGEN" "${eal[@]}" --file-prefix="${LAB_PREFIX}a" \
		--vdev=net_af_packet0,iface=eth0,framecnt=2048,qpairs="$w" -- \
		--ip "$ip_a" --peer-ip "$ip_b" --json "$WORK/a.json" "$@" >"$WORK/a.out" 2>&1 &
	pa=$!
	ip netns exec "$NS_B" "$ROCEGEN" "${eal[@]}" --file-prefix="${LAB_PREFIX}b" \
		--vdev=net_af_packet0,iface=eth0,framecnt=2048,qpairs="$w" -- \
		--ip "$ip_b" --peer-ip "$ip_a" --json "$WORK/b.json" "$@" >"$WORK/b.out" 2>&1 &
	pb=$!
	wait $pa || { wait $pb; fail "rocegen A exited non-zero"; }
	wait $pb || fail "rocegen B exited non-zero"
	# rocegen removes its EAL runtime directory on every exit path (issue 11, item 13)
	for s in a b; do
		[ ! -e "/var/run/dpdk/${LAB_PREFIX}$s" ] ||
			fail "rocegen $s left /var/run/dpdk/${LAB_PREFIX}$s behind"
	done
	for s in a b; do
		grep -Eq "verify [0-9]+ bytes: data ok, ([0-9]+) of \1 bytes placed" "$WORK/$s.out" ||
			fail "rocegen $s did not check its result and place every byte"
	done
}

# lab_repeat RC VAR WHY SCRIPT ARGS...: when RC is 3 (the run was spoiled: WHY) and this was
# not the third attempt, the test again from the start, as attempt $VAR + 1 (VAR unset: this
# was attempt 1): the lab taken down first, then SCRIPT ARGS (absolute paths) exec'd with VAR
# exported; otherwise it returns. For tests that repeat a run a host stall or the lab's kernel
# spoiled.
lab_repeat() {
	local rc=$1 var=$2 why=$3 script=$4 n
	shift 4
	n=${!var:-1}
	[ "$rc" -eq 3 ] && [ "$n" -lt 3 ] || return 0
	echo "attempt $n of 3 $why: the lab again, from the start"
	cd / && lab_cleanup
	trap - EXIT
	export "$var=$((n + 1))"
	exec bash "$script" "$@"
}

# rocemu_profile_switch FILE_PREFIX PROFILE: switch the running rocemu (started with
# --file-prefix=FILE_PREFIX) to PROFILE over its telemetry socket; fails unless it is loaded.
rocemu_profile_switch() {
	python3 "$SRC/scripts/lab/profile_switch.py" "/var/run/dpdk/$1/dpdk_telemetry.v2" "$2" ||
		fail "profile switch to $2"
}
