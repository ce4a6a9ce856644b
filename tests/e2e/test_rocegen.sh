#!/usr/bin/env bash
# rocegen back to back: two network namespaces joined by one veth pair, one rocegen in each on
# net_af_packet (no emulator between them). Asserts, for a 64 MB point-to-point exchange and a
# 64 MB ring all-reduce over the 2 processes: both finish, every byte placed and checked, the
# nccl-tests-shaped line and the JSON report a busbw; the all-reduce again over 4 ranks (2 per
# process), as a double binary tree, and a size sweep. First, a small
# captured exchange: ICRC of every frame, tshark dissection.
# Exits 77 (skip, said loudly) only when the machine cannot make namespaces.
set -u
ROCEGEN=$1
P=rg$$
WORK=$(mktemp -d)
NS_A=$P-a
NS_B=$P-b

cleanup() {
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	for s in a b; do [ -f "$WORK/$s.out" ] && sed "s/^/  rocegen-$s| /" "$WORK/$s.out"; done
	exit 1
}

if [ "$(id -u)" -ne 0 ] || ! ip netns add "$NS_A" 2>/dev/null; then
	echo "SKIP: rocegen back-to-back needs root and network namespaces (ip netns); NOT TESTED"
	exit 77
fi
ip netns add "$NS_B" || fail "cannot create namespace $NS_B"
ip link add "${P}a" type veth peer name "${P}b" || fail "cannot create a veth pair"
ip link set "${P}a" netns "$NS_A"
ip link set "${P}b" netns "$NS_B"
for s in a b; do
	ns=$P-$s
	# no addresses in the kernel: rocegen answers ARP itself; no IPv6 chatter
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip netns exec "$ns" ip link set lo up
	ip netns exec "$ns" ip link set "$P$s" up
done

# run NAME ARGS...: both rocegen at once, each on its own core; outputs in $WORK/{a,b}.out
run() {
	local name=$1 vdev_extra=$2
	shift 2
	ip netns exec "$NS_A" "$ROCEGEN" -l 0 --no-huge -m 512 --no-pci --file-prefix="${P}a" \
		--vdev="net_af_packet0,iface=${P}a,framecnt=2048$vdev_extra" -- \
		--ip 198.18.0.1 --peer-ip 198.18.0.11 --json "$WORK/a.json" "$@" \
		>"$WORK/a.out" 2>&1 &
	local pa=$!
	ip netns exec "$NS_B" "$ROCEGEN" -l 1 --no-huge -m 512 --no-pci --file-prefix="${P}b" \
		--vdev="net_af_packet0,iface=${P}b,framecnt=2048$vdev_extra" -- \
		--ip 198.18.0.11 --peer-ip 198.18.0.1 --json "$WORK/b.json" "$@" \
		>"$WORK/b.out" 2>&1 &
	local pb=$!
	wait $pa || { wait $pb; fail "$name: rocegen A exited non-zero"; }
	wait $pb || fail "$name: rocegen B exited non-zero"
	for s in a b; do
		grep -Eq "verify [0-9]+ bytes: data ok, ([0-9]+) of \1 bytes placed" "$WORK/$s.out" ||
			fail "$name: process $s did not place and verify every byte"
	done
	echo "ok: $name: both processes done, every byte placed and checked"
	grep -A1 "# size" "$WORK/a.out" | sed "s/^/  $name| /"
	python3 - "$WORK/a.json" "$WORK/b.json" "$name" <<'PY' || fail "$name: JSON report"
import json, sys
name = sys.argv[3]
for f in sys.argv[1:3]:
    d = json.load(open(f))
    r = d["results"][-1]
    assert r["size"] == 64 << 20, r
    for row in d["results"]:
        assert row["busbw_GBps"] > 0 and row["time_us"] > 0, row
    keys = ("tx_packets", "retransmitted_packets", "naks_received", "naks_sent", "timeouts",
            "cnps_received", "cnps_sent", "paused_ns", "final_rate_mbps")
    q = {k: sum(x[k] for x in d["qps"]) for k in keys}
    print("  %s| %s: %d ranks, busbw %.3f GB/s, retransmitted %d, NAKs sent %d received %d, "
          "timeouts %d, in-process bytes %d"
          % (name, f.split("/")[-1], d["ranks"], r["busbw_GBps"], q["retransmitted_packets"],
             q["naks_sent"], q["naks_received"], q["timeouts"], d["local_bytes"]))
PY
}

# A small exchange captured on A's veth (B's frames: af_packet's qdisc bypass hides A's own from
# taps): every RoCE frame must carry a right ICRC (docs/wire.md,
# checked here with zlib independently of lib/proto) and dissect in tshark as InfiniBand.
if command -v dumpcap >/dev/null && command -v tshark >/dev/null; then
	ip netns exec "$NS_A" dumpcap -q -P -i "${P}a" -w "$WORK/small.pcap" \
		>"$WORK/dumpcap.out" 2>&1 &
	DC=$!
	for _ in $(seq 50); do [ -s "$WORK/small.pcap" ] && break; sleep 0.1; done
	sleep 0.5
	ip netns exec "$NS_A" "$ROCEGEN" -l 0 --no-huge -m 512 --no-pci --file-prefix="${P}sa" \
		--vdev="net_af_packet0,iface=${P}a" -- --ip 198.18.0.1 --peer-ip 198.18.0.11 \
		--size 256K --iters 1 --warmup 0 >"$WORK/a.out" 2>&1 &
	pa=$!
	ip netns exec "$NS_B" "$ROCEGEN" -l 1 --no-huge -m 512 --no-pci --file-prefix="${P}sb" \
		--vdev="net_af_packet0,iface=${P}b" -- --ip 198.18.0.11 --peer-ip 198.18.0.1 \
		--size 256K --iters 1 --warmup 0 >"$WORK/b.out" 2>&1
	wait $pa || fail "small run: rocegen A"
	sleep 0.5
	kill -INT $DC
	wait $DC
	python3 - "$WORK/small.pcap" <<'PY' || fail "ICRC of captured rocegen frames"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
off, n, ok = 24, 0, 0
while off + 16 <= len(data):
    caplen = struct.unpack("<I", data[off + 8:off + 12])[0]
    f = data[off + 16:off + 16 + caplen]
    off += 16 + caplen
    if len(f) < 14 + 20 + 8 + 12 or f[12:14] != b"\x08\x00" or f[23] != 17:
        continue
    ihl = (f[14] & 15) * 4
    udp = 14 + ihl
    if struct.unpack(">H", f[udp + 2:udp + 4])[0] != 4791:
        continue
    tot = struct.unpack(">H", f[16:18])[0]
    end = 14 + tot
    ip = bytearray(f[14:udp])
    ip[1] = 0xFF; ip[8] = 0xFF; ip[10:12] = b"\xff\xff"
    rest = bytearray(f[udp:end - 4])
    rest[6:8] = b"\xff\xff"; rest[8 + 4] = 0xFF
    crc = zlib.crc32(b"\xff" * 8 + bytes(ip) + bytes(rest)) & 0xFFFFFFFF
    n += 1
    ok += struct.pack("<I", crc) == f[end - 4:end]
print("ok: %d of %d captured RoCE frames have a right ICRC" % (ok, n))
assert n >= 50 and ok == n, (ok, n)
PY
	ops=$(tshark -r "$WORK/small.pcap" -Y infiniband -T fields -e infiniband.bth.opcode 2>/dev/null |
		sort | uniq -c | tr -s ' ' | tr '\n' ';')
	echo "ok: tshark dissects them as InfiniBand (count opcode): $ops"
	for op in 6 7 9 17; do
		echo "$ops" | grep -q " $op;" || fail "tshark: no frame with BTH opcode $op in: $ops"
	done
else
	echo "SKIP (part): tshark/dumpcap not installed: frame dissection NOT TESTED"
fi

# --timeout 16 (268 ms x 7 retries): a busy 2-core machine can deschedule a polling process for
# hundreds of ms, and a peer that stops answering for longer than the retry budget is an error.
run p2p "" --test p2p --size 64M --iters 2 --timeout 16 --time-limit 100
run allreduce "" --test allreduce --size 64M --iters 2 --timeout 16 --time-limit 100
# 4 ranks: 2 per process, the hops inside a process in memory (counted), 6 steps
run allreduce-4ranks "" --test allreduce --ranks 2 --size 64M --iters 2 --timeout 16 \
	--time-limit 150
python3 - "$WORK/a.json" <<'PY' || fail "4 ranks: JSON"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"][0]
assert d["ranks"] == 4, d["ranks"]
# busbw = algbw x 2(R - 1)/R; in memory: 6 steps x 16 MB per iteration, 3 iterations
assert abs(r["busbw_GBps"] - r["algbw_GBps"] * 1.5) < 1e-9 * r["busbw_GBps"] + 1e-12, r
assert d["local_bytes"] == 3 * 6 * (16 << 20), d["local_bytes"]
print("ok: 4 ranks: busbw = 1.5 x algbw, %d bytes moved inside each process" % d["local_bytes"])
PY

# NCCL's double binary tree over the same 4 ranks
run allreduce-tree-4ranks "" --test allreduce --algo tree --ranks 2 --size 64M --iters 2 \
	--timeout 16 --time-limit 150

# a size sweep like nccl-tests (-b 1M -e 64M -f 8: 1, 8 and 64 MB), each size checked
run sweep "" --test allreduce --ranks 2 -b 1M -e 64M -f 8 --iters 1 --timeout 16 \
	--time-limit 150
[ "$(grep -c "verify.*data ok" "$WORK/a.out")" -eq 3 ] || fail "sweep: 3 sizes not all checked"
python3 -c 'import json, sys; assert [r["size"] for r in json.load(open(sys.argv[1]))["results"]] == [1 << 20, 8 << 20, 64 << 20]' "$WORK/a.json" || fail "sweep: rows"
echo "ok: sweep: 3 sizes, each verified, 3 table rows"

# The same collectives over more processes and loss inserted by rocemu: test_rocegen_multi.sh
# and test_rocegen_loss.sh.
echo "PASS"
