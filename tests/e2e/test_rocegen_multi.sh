#!/usr/bin/env bash
# rocegen over more than two processes: P network namespaces, one rocegen each on
# net_af_packet, joined by a Linux bridge in a namespace of its own (a plain switch; no
# emulator). Every collective rocegen runs, over 4 processes x 1 rank, then over 3 processes x 2
# ranks (6 ranks: some hops in memory, an odd count for the ring and NCCL's shifted second tree).
# For each run: every process exits 0, checks its ranks' results and that every byte due from
# the wire was placed; the JSON's busbw is algbw x the nccl-tests factor; the bytes posted to
# the wire over all processes are exactly what the algorithm moves between processes.
# Exits 77 (skip, said loudly) only when the machine cannot make namespaces.
set -u
ROCEGEN=$1
P=rm$$
WORK=$(mktemp -d)
N=0

cleanup() {
	local i
	for i in $(seq 0 7); do ip netns del "$P-$i" 2>/dev/null; done
	ip netns del "$P-br" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
	local i
	echo "FAIL: $*"
	for i in $(seq 0 $((N - 1))); do
		[ -f "$WORK/$i.out" ] && sed "s/^/  rocegen-$i| /" "$WORK/$i.out"
	done
	exit 1
}

if [ "$(id -u)" -ne 0 ] || ! ip netns add "$P-br" 2>/dev/null; then
	echo "SKIP: rocegen over several processes needs root and network namespaces; NOT TESTED"
	exit 77
fi
ip netns exec "$P-br" ip link add br0 type bridge || fail "cannot create a bridge"
ip netns exec "$P-br" ip link set br0 up
for i in 0 1 2 3; do
	ip netns add "$P-$i" || fail "cannot create namespace $P-$i"
	ip link add "${P}h$i" type veth peer name "${P}s$i" || fail "cannot create a veth pair"
	ip link set "${P}h$i" netns "$P-$i"
	ip link set "${P}s$i" netns "$P-br"
	ip netns exec "$P-br" ip link set "${P}s$i" master br0
	ip netns exec "$P-br" ip link set "${P}s$i" up
	ip netns exec "$P-$i" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip netns exec "$P-$i" ip link set lo up
	ip netns exec "$P-$i" ip link set "${P}h$i" up
done

# run NAME NPROCS ARGS...: NPROCS rocegen at once (lcores 0 and 1 alternately); then the checks
run() {
	local name=$1 i pids="" hosts=""
	N=$2
	shift 2
	for i in $(seq 0 $((N - 1))); do hosts="$hosts${hosts:+,}198.18.$i.1"; done
	for i in $(seq 0 $((N - 1))); do
		ip netns exec "$P-$i" "$ROCEGEN" -l $((i % 2)) --no-huge -m 512 --no-pci \
			--file-prefix="$P$i" --log-level=lib.eal:warning \
			--vdev="net_af_packet0,iface=${P}h$i,framecnt=2048" -- \
			--ip "198.18.$i.1" --hosts "$hosts" --json "$WORK/$i.json" --timeout 16 \
			--time-limit 120 "$@" >"$WORK/$i.out" 2>&1 &
		pids="$pids $!"
	done
	local rc=0
	for i in $pids; do wait "$i" || rc=1; done
	[ $rc -eq 0 ] || fail "$name: a rocegen exited non-zero"
	for i in $(seq 0 $((N - 1))); do
		grep -Eq "verify [0-9]+ bytes: data ok, ([0-9]+) of \1 bytes placed" "$WORK/$i.out" ||
			fail "$name: process $i did not check its result and every byte from the wire"
	done
	python3 - "$name" "$WORK" "$N" <<'PY' || fail "$name: JSON checks"
import json, sys
name, work, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
ds = [json.load(open("%s/%d.json" % (work, i))) for i in range(n)]
d0 = ds[0]
R, size, test = d0["ranks"], d0["results"][0]["size"], d0["test"]
nl = R // n
iters = 3  # --warmup 1 --iters 2
for d in ds:
    for r in d["results"]:
        assert abs(r["busbw_GBps"] - r["algbw_GBps"] * d["busbw_factor"]) <= 1e-9 * r["busbw_GBps"], r
# bytes between processes per iteration, from the algorithm
def proc(g):
    return g // nl
chunk = size // R
wire = 0
if test in ("allgather", "reducescatter") or (test == "allreduce" and d0["algo"] == "ring"):
    steps = (2 if test == "allreduce" else 1) * (R - 1)
    # ring: each step every rank g sends one chunk to g + 1; only hops between processes count
    wire = steps * chunk * sum(1 for g in range(R) if proc(g) != proc((g + 1) % R))
elif test == "alltoall":
    wire = chunk * sum(1 for g in range(R) for j in range(R) if proc(g) != proc(j))
elif test == "incast":
    wire = size * sum(1 for g in range(R) if proc(g) != proc(0))
elif test == "broadcast":
    wire = size * sum(1 for j in range(1, R) if proc(j - 1) != proc(j))
else:
    wire = None  # tree: checked by the placed-bytes line of every process
got = sum(d["wire_bytes_posted"] for d in ds)
if wire is not None:
    assert got == iters * wire, (got, iters * wire)
qps = [q for d in ds for q in d["qps"]]
retx = sum(q["retransmitted_packets"] for q in qps)
r = d0["results"][0]
print("ok: %s: %d processes x %d ranks, %d bytes: busbw %.4f GB/s (algbw %.4f x %.3f), "
      "%d bytes on the wire%s, %d QPs, %d retransmitted"
      % (name, n, nl, size, r["busbw_GBps"], r["algbw_GBps"], d0["busbw_factor"], got,
         " as the algorithm moves" if wire is not None else "", len(qps), retx))
PY
}

COMMON=(--size 4M --iters 2 --warmup 1)
for t in allreduce allgather reducescatter broadcast alltoall incast p2p; do
	run "$t-4x1" 4 --test "$t" "${COMMON[@]}"
done
run allreduce-tree-4x1 4 --test allreduce --algo tree "${COMMON[@]}"
# N:1 incast, root on process 2: the three others write 4 MB into it at once
run incast-3to1-root2 4 --test incast --root 2 "${COMMON[@]}"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["busbw_factor"] == 3.0, d["busbw_factor"]
rx = sum(q["rx_placed_bytes"] for q in d["qps"])
assert rx >= 3 * 3 * (4 << 20), rx
print("ok: incast root received %d bytes from 3 senders over 3 iterations" % rx)
' "$WORK/2.json" || fail "incast: root counters"
# 6 ranks over 3 processes: an odd count, hops inside a process in memory
for t in "allreduce" "allreduce --algo tree" "alltoall" "broadcast"; do
	# shellcheck disable=SC2086
	run "${t// /-}-3x2" 3 --test $t --ranks 2 "${COMMON[@]}"
done
echo "PASS"
