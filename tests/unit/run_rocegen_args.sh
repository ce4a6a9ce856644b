#!/usr/bin/env bash
# rocegen refuses bad command lines with a message naming the option, before touching the
# wire: each case below must exit non-zero and print the expected text. The EAL would come up on
# a net_null port with --no-huge (no packets are sent: the checks run before the port is used).
# Then: --help lists rocegen's own options; --json is checked before EAL starts, a failed write
# (/dev/full) fails the run with one line naming the file and errno, a complete one is renamed
# into place with no temporary file left, a refused run leaves an existing file as it was; and
# no run, refused before or after EAL started, leaves its EAL runtime directory behind; an SRD
# pair (--transport srd --qps 2 --split-data-on-qps 1) completes and sprays. The
# --json runs use two rocegen back to back over a net_memif pair (a 4 KB all-reduce, < 1 s).
set -u
ROCEGEN=$1
SRC=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
PREFIX=rgargs$$
EAL=(--no-huge -m 256 --no-pci --log-level=lib.eal:error --file-prefix=$PREFIX
	--vdev=net_null0)
if [ "$(id -u)" -eq 0 ]; then RUNDIR=/var/run/dpdk; else RUNDIR=${XDG_RUNTIME_DIR:-/tmp}/dpdk; fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK" "$RUNDIR/$PREFIX" "$RUNDIR/${PREFIX}"_*' EXIT
pass=0
fail=0
ok() {
	pass=$((pass + 1))
}
bad() {
	fail=$((fail + 1))
	echo "FAIL: $*"
}
# no_rundir WHAT: the EAL runtime directory of prefix $2 (default $PREFIX) must not exist
no_rundir() {
	if [ -e "$RUNDIR/${2:-$PREFIX}" ]; then
		bad "$1: left $RUNDIR/${2:-$PREFIX} behind: $(ls -A "$RUNDIR/${2:-$PREFIX}" | tr '\n' ' ')"
		rm -rf "${RUNDIR:?}/${2:-$PREFIX}"
	else
		ok
	fi
}
check() {
	local want=$1 out rc
	shift
	out=$("$ROCEGEN" "${EAL[@]}" -- "$@" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && grep -qF -- "$want" <<<"$out"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: rocegen $* -> exit $rc, wanted \"$want\" in:"
		sed 's/^/    /' <<<"$out"
	fi
}
IP=(--ip 198.18.0.1 --peer-ip 198.18.0.11)
check "--ip and one of --peer-ip or --hosts are required" --ip 198.18.0.1
check "--ip and one of --peer-ip or --hosts are required" "${IP[@]}" --hosts 198.18.0.1,198.18.0.2
check "--test: p2p, allreduce, allgather" "${IP[@]}" --test allreduc
check "--algo: ring, tree, hier or auto" "${IP[@]}" --algo butterfly
check "--proto: simple, ll128, ll or none" "${IP[@]}" --proto fast
check "--proto: NCCL's net/IB pattern is RC's" "${IP[@]}" --proto simple --transport srd
check "--adaptive-routing: changes NCCL's net/IB pattern: only with --proto" "${IP[@]}" \
	--adaptive-routing 1
check "--adaptive-routing: must be an integer in 0..1" "${IP[@]}" --proto simple \
	--adaptive-routing 2
check "--ar-threshold: must be an integer" "${IP[@]}" --proto simple --ar-threshold -1
check "--algo hier: only with --test allreduce" "${IP[@]}" --algo hier --test allgather
check "--hosts: not an IPv4 address" --ip 198.18.0.1 --hosts 198.18.0.1,nothost
check "--hosts: at least two addresses" --ip 198.18.0.1 --hosts 198.18.0.1
check "is listed twice" --ip 198.18.0.1 --hosts 198.18.0.1,198.18.0.1
check "--ip is not in --hosts" --ip 198.18.0.5 --hosts 198.18.0.1,198.18.1.1
check "overlap process 0's" --ip 198.18.0.1 --peer-ip 198.18.0.2 --ranks 2
check "--ranks: must be an integer in 1..8" "${IP[@]}" --ranks 9
check "--qps: must be an integer in 1..16" "${IP[@]}" --qps 0
check "--mtu: 256, 512, 1024, 2048 or 4096" "${IP[@]}" --mtu 1500
check "--root: must be below the 2 ranks" "${IP[@]}" --root 2
check "needs an even number of processes" --ip 198.18.0.1 --test p2p \
	--hosts 198.18.0.1,198.18.1.1,198.18.2.1
check "at least 128 bytes (64 per rank)" "${IP[@]}" --size 100
check "--size: bytes with an optional K/M/G suffix" "${IP[@]}" --size 12X
check "--dcqcn: nvidia, paper or off" "${IP[@]}" --dcqcn dctcp
check "--rx-loss: percent in 0..50" "${IP[@]}" --rx-loss 60
check "-f: must be an integer in 2..16" "${IP[@]}" -f 1
check "unexpected argument" "${IP[@]}" extra
check "--split-data-on-qps: must be an integer in 0..1" "${IP[@]}" --split-data-on-qps 2
check "--split-data-on-qps: must be an integer in 0..1" "${IP[@]}" --split-data-on-qps yes
check "--transport: rc or srd" "${IP[@]}" --transport ud
check "--srd-paths: must be an integer in 1..64" "${IP[@]}" --transport srd --srd-paths 0
check "--srd-paths: must be an integer in 1..64" "${IP[@]}" --srd-paths 65
check "--srd-spray: must be an integer in 1..1048576" "${IP[@]}" --srd-spray 0
check "--srd-rtt-us: must be an integer in 0..10000000" "${IP[@]}" --srd-rtt-us -1
check "--workers: must be an integer in 1..8" "${IP[@]}" --workers 0
check "--pxn: must be an integer in 0..1" "${IP[@]}" --pxn 2
check "--workers: must be an integer in 1..8" "${IP[@]}" --workers 9
check "-b/--size: at least 512 bytes (64 per rank and worker)" "${IP[@]}" --workers 4 --size 256
# --workers N needs N lcores: refused after EAL started, with one line saying how to give them
out=$("$ROCEGEN" -l 0 "${EAL[@]}" -- "${IP[@]}" --workers 2 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -qF -- "--workers 2 needs 2 lcores, EAL has 1" <<<"$out"; then
	ok
else
	bad "rocegen -l 0 ... --workers 2 -> exit $rc: $out"
fi
no_rundir "the refused command lines above"

# --help: rocegen's own options (not only EAL's), exit 0, on every spelling, no EAL left behind
for how in "--help" "-h" "EAL -- --help" "EAL -l 0 --help"; do
	case "$how" in
	--help|-h) out=$("$ROCEGEN" "$how" 2>&1); rc=$? ;;
	"EAL -- --help") out=$("$ROCEGEN" "${EAL[@]}" -- --help 2>&1); rc=$? ;;
	*) out=$("$ROCEGEN" "${EAL[@]}" -l 0 --help 2>&1); rc=$? ;;
	esac
	miss=
	for opt in --hosts --peer-ip --json --ranks --qps --rx-loss --time-limit \
		--split-data-on-qps --transport --srd-paths --srd-spray --srd-rtt-us \
		--proto --adaptive-routing --ar-threshold; do
		grep -qF -- "  $opt" <<<"$out" || miss="$miss $opt"
	done
	# EAL's --help (EAL options before it) shows EAL's options too, then ours
	if [ "$how" = "EAL -l 0 --help" ] && ! grep -q "EAL common options" <<<"$out"; then
		miss="$miss (EAL's options)"
	fi
	if [ $rc -eq 0 ] && [ -z "$miss" ]; then
		ok
	else
		bad "rocegen $how: exit $rc, missing:$miss in:"
		sed 's/^/    /' <<<"$out" | head -n 20
	fi
	no_rundir "rocegen $how"
done

# --json into a directory that does not exist: refused before EAL starts (EAL, which would fail
# on the bogus vdev, is never reached), one line naming the file
out=$("$ROCEGEN" "${EAL[@]}" --vdev=net_bogus0 -- "${IP[@]}" --json "$WORK/nodir/x.json" 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -qF -- "--json $WORK/nodir/x.json: cannot create a file in $WORK/nodir: No such file or directory" <<<"$out" &&
	! grep -q "EAL" <<<"$out"; then
	ok
else
	bad "--json to a missing directory: exit $rc, wanted a refusal before EAL in:"
	sed 's/^/    /' <<<"$out"
fi
no_rundir "--json to a missing directory"
out=$("$ROCEGEN" "${EAL[@]}" -- "${IP[@]}" --json "$WORK" 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -qF -- "--json $WORK: is a directory" <<<"$out"; then ok; else
	bad "--json to a directory: exit $rc:"; sed 's/^/    /' <<<"$out"; fi
no_rundir "--json to a directory"

# a run refused after EAL started (EAL fails on a bogus vdev; no port at all) removes the
# runtime directory too
out=$("$ROCEGEN" "${EAL[@]}" --vdev=net_bogus0 -- "${IP[@]}" 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -q "EAL initialisation failed" <<<"$out"; then ok; else
	bad "bogus vdev: exit $rc:"; sed 's/^/    /' <<<"$out"; fi
no_rundir "a run whose EAL failed"
out=$("$ROCEGEN" --no-huge -m 256 --no-pci --log-level=lib.eal:error --file-prefix=$PREFIX -- \
	"${IP[@]}" 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -q "no DPDK port" <<<"$out"; then ok; else
	bad "no port: exit $rc:"; sed 's/^/    /' <<<"$out"; fi
no_rundir "a run refused after EAL started (no port)"
# one port per rail: no more ports than ranks; --pxn needs two rails or more
out=$("$ROCEGEN" "${EAL[@]}" --vdev=net_null1 --vdev=net_null2 -- "${IP[@]}" --ranks 2 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -q "3 DPDK port(s): one per rail, 1..8 and at most --ranks (2)" <<<"$out"
then ok; else bad "3 ports, 2 ranks: exit $rc:"; sed 's/^/    /' <<<"$out"; fi
out=$("$ROCEGEN" "${EAL[@]}" -- "${IP[@]}" --pxn 1 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -q "1 DPDK port(s): .*--pxn needs two rails or more" <<<"$out"
then ok; else bad "--pxn 1 on one port: exit $rc:"; sed 's/^/    /' <<<"$out"; fi
no_rundir "runs refused for their ports"

# A run refused because another process holds the same --file-prefix must not remove that
# process's runtime directory; the holder removes it when it ends.
"$ROCEGEN" "${EAL[@]}" -l 0 -- "${IP[@]}" --time-limit 2 >"$WORK/holder.out" 2>&1 &
holder=$!
for _ in $(seq 50); do
	[ -e "$RUNDIR/$PREFIX/mp_socket" ] && break
	sleep 0.1
done
out=$("$ROCEGEN" "${EAL[@]}" -l 1 -- "${IP[@]}" 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -q "EAL initialisation failed" <<<"$out" &&
	[ -e "$RUNDIR/$PREFIX/config" ] && kill -0 $holder 2>/dev/null; then
	ok
else
	bad "a second rocegen on a busy --file-prefix: exit $rc, $RUNDIR/$PREFIX/config" \
		"$([ -e "$RUNDIR/$PREFIX/config" ] && echo kept || echo REMOVED):"
	sed 's/^/    /' <<<"$out"
fi
wait $holder
no_rundir "the holder of the busy --file-prefix, at its end"

# An existing --json file is left as it was by a refused run.
echo keep >"$WORK/old.json"
"$ROCEGEN" "${EAL[@]}" -- "${IP[@]}" --qps 0 --json "$WORK/old.json" >/dev/null 2>&1
if [ "$(cat "$WORK/old.json")" = keep ]; then ok; else bad "a refused run changed its --json file"; fi

# pair JSON_A JSON_B: rocegen A (memif server, lcore 0) and B (client, lcore 1), a 4 KB
# all-reduce; sets rca, rcb and $WORK/{a,b}.out. DPDK 22.11's memif PMD crashes now and then
# (about 1 run in 30 on a loaded machine) when one end disconnects while the other still polls
# or stops (SIGSEGV in librte_net_memif's rx burst or in librte_eal under memif's disconnect;
# under ASan the SEGV is reported and the exit status is 1). A pair in which a process died that
# way after its report, or did not end within 40 s (killed: a hang must fail here, with its
# output, not time the whole test out), is run again, saying so, up to twice.
memif_died() { # OUT RC: the process of OUT died of the memif race after its report
	grep -q "^# port:" "$1" || return 1
	[ "$2" -ge 128 ] && return 0
	grep -q "AddressSanitizer: SEGV.*librte_net_memif\|AddressSanitizer: SEGV.*librte_eal" "$1"
}
pair() {
	local try
	for try in 1 2 3; do
		pair_once "$@"
		if memif_died "$WORK/a.out" $rca || memif_died "$WORK/b.out" $rcb; then
			[ $try -lt 3 ] || break
			echo "NOTE: a rocegen of the memif pair died after its report (exit $rca/$rcb:" \
				"the memif PMD's disconnect race): running the pair again"
			rm -rf "${RUNDIR:?}/${PREFIX}_a" "${RUNDIR:?}/${PREFIX}_b"
			continue
		fi
		break
	done
}
pair_once() {
	local memif=$WORK/memif.sock pa ja=$1 jb=$2
	shift 2
	rm -f "$memif"
	timeout -s KILL 40 "$ROCEGEN" -l 0 --no-huge -m 256 --no-pci --log-level=lib.eal:error \
		--file-prefix=${PREFIX}_a --vdev=net_memif0,role=server,id=0,socket=$memif,socket-abstract=no \
		-- --ip 198.19.0.1 --peer-ip 198.19.0.2 --size 4K --iters 1 --warmup 0 \
		--time-limit 20 --json "$ja" "$@" >"$WORK/a.out" 2>&1 &
	pa=$!
	sleep 0.3
	timeout -s KILL 40 "$ROCEGEN" -l 1 --no-huge -m 256 --no-pci --log-level=lib.eal:error \
		--file-prefix=${PREFIX}_b --vdev=net_memif0,role=client,id=0,socket=$memif,socket-abstract=no \
		-- --ip 198.19.0.2 --peer-ip 198.19.0.1 --size 4K --iters 1 --warmup 0 \
		--time-limit 20 --json "$jb" "$@" >"$WORK/b.out" 2>&1
	rcb=$?
	wait $pa
	rca=$?
}
# a complete run: both files in place, valid JSON with the result row, no temporary left over
# (B's file existed before: replaced only at the end, by a complete one)
echo old >"$WORK/b.json"
pair "$WORK/a.json" "$WORK/b.json"
if [ $rca -eq 0 ] && [ $rcb -eq 0 ] &&
	python3 -c 'import json, sys
for f in sys.argv[1:]:
    d = json.load(open(f))
    assert d["results"][0]["size"] == 4096, f' "$WORK/a.json" "$WORK/b.json" &&
	[ -z "$(find "$WORK" -name '.*.json.*')" ]; then
	ok
else
	bad "memif pair with --json: exit $rca/$rcb, temporaries: $(find "$WORK" -name '.*.json.*')"
	sed 's/^/    a| /' "$WORK/a.out"; sed 's/^/    b| /' "$WORK/b.out"
fi
# A's --json is /dev/full: the run itself succeeds (B exits 0), A's write fails: A exits
# non-zero with one line naming the file and errno
pair /dev/full "$WORK/b2.json"
if [ $rca -ne 0 ] && [ $rcb -eq 0 ] &&
	grep -qxF "rocegen: --json /dev/full: write failed: No space left on device" "$WORK/a.out" &&
	grep -q "verify 4096 bytes: data ok" "$WORK/a.out"; then
	ok
else
	bad "--json /dev/full: exit $rca (want non-zero), peer $rcb (want 0), message:"
	sed 's/^/    a| /' "$WORK/a.out"
fi
# --transport srd with two QPs per pair, each message split over both: both ends verify the
# data; the JSON says so and every data QP sprayed its packets over the 4 paths
pair "$WORK/s_a.json" "$WORK/s_b.json" --transport srd --qps 2 --split-data-on-qps 1 \
	--srd-paths 4
if [ $rca -eq 0 ] && [ $rcb -eq 0 ] && grep -q "verify 4096 bytes: data ok" "$WORK/a.out" &&
	grep -q "verify 4096 bytes: data ok" "$WORK/b.out" &&
	python3 -c 'import json, sys
for f in sys.argv[1:]:
    d = json.load(open(f))
    assert d["transport"] == "srd" and d["split_data_on_qps"] == 1, f
    data = [q for q in d["qps"] if q["requester"] and q["tx_data_packets"] > 0]
    assert len(data) >= 3, (f, len(data))
    for q in data:
        assert q["transport"] == "srd" and len(q["path_packets"]) == 4, q
        assert sum(q["path_packets"]) == q["tx_data_packets"], q' "$WORK/s_a.json" "$WORK/s_b.json"; then
	ok
else
	bad "memif pair with --transport srd --qps 2 --split-data-on-qps 1: exit $rca/$rcb"
	sed 's/^/    a| /' "$WORK/a.out"; sed 's/^/    b| /' "$WORK/b.out"
fi
# the node model (--node with flags over it): Gen1 x1 caps each NIC at the model's figure
# (2.5 GT/s x 8b/10b / 8 x TLP share x MPS 256 write efficiency = 1.753 Gb/s), the JSON carries
# it per NIC with the node and each row's intra-node phase time; the data still verifies
pair "$WORK/n_a.json" "$WORK/n_b.json" --node "$SRC/nodes/pcie-only.json" --gpus 1 --nics 1 --pcie 1x1
if [ $rca -eq 0 ] && [ $rcb -eq 0 ] && grep -q "verify 4096 bytes: data ok" "$WORK/a.out" &&
	grep -q "host cap 1.8 Gb/s per NIC (by pcie)" "$WORK/a.out" &&
	python3 -c 'import json, sys
for f in sys.argv[1:]:
    d = json.load(open(f))
    assert d["node"]["pcie"] == {"gen": 1, "lanes": 1, "mps": 256}, d["node"]
    assert d["node"]["fabric"] == "pcie-acs" and not d["node"]["gdr"], d["node"]
    assert len(d["host_cap_gbps"]) == 1 and abs(d["host_cap_gbps"][0] - 1.7535) < 0.001, d
    assert d["results"][0]["intra_node_us"] == 0, d["results"]' "$WORK/n_a.json" "$WORK/n_b.json"; then
	ok
else
	bad "memif pair with --node: exit $rca/$rcb"
	sed 's/^/    a| /' "$WORK/a.out"; sed 's/^/    b| /' "$WORK/b.out"
fi
# --algo auto: NCCL's tuning picks ring/LL for 4 KB over 2 nodes of 1 GPU (every candidate's
# time in the JSON); the run uses it, with the NCCL wire pattern of that protocol, and verifies
pair "$WORK/t_a.json" "$WORK/t_b.json" --algo auto
if [ $rca -eq 0 ] && [ $rcb -eq 0 ] && grep -q "verify 4096 bytes: data ok" "$WORK/a.out" &&
	grep -q "^rocegen: --algo auto: ring/ll for 4096 bytes over 2 nodes x 1" "$WORK/a.out" &&
	python3 -c 'import json, sys
for f in sys.argv[1:]:
    d = json.load(open(f))
    assert d["algo"] == "ring" and d["proto"] == "ll", (d["algo"], d["proto"])
    t = d["algo_auto_times_us"]
    assert min(v for v in t.values() if v >= 0) == t["ring_ll"], t
    assert d["cts_writes_posted"] == d["nccl_messages_posted"] > 0, d' "$WORK/t_a.json" "$WORK/t_b.json"; then
	ok
else
	bad "memif pair with --algo auto: exit $rca/$rcb"
	sed 's/^/    a| /' "$WORK/a.out"; sed 's/^/    b| /' "$WORK/b.out"
fi
# --proto ll / ll128 over 2 QPs, messages split: NCCL's line formats on the wire. A 4 KB ring
# all-reduce of 2 ranks sends 2 messages of 2048 data bytes a process: LL 2 x 4096 wire bytes
# (16-byte lines of 8 data bytes), LL128 2 x 18 x 128 = 4608 (120 data bytes a line); the
# receiver checks every line's flag, decodes, verifies
for proto in ll:8192 ll128:4608; do
	pair "$WORK/l_a.json" "$WORK/l_b.json" --proto ${proto%:*} --qps 2 --split-data-on-qps 1
	if [ $rca -eq 0 ] && [ $rcb -eq 0 ] && grep -q "verify 4096 bytes: data ok, 4096 of 4096" \
		"$WORK/a.out" && python3 -c 'import json, sys
for f in sys.argv[2:]:
    d = json.load(open(f))
    assert d["proto"] == sys.argv[1].split(":")[0], d["proto"]
    assert d["wire_bytes_posted"] == int(sys.argv[1].split(":")[1]), d["wire_bytes_posted"]
    assert d["cts_writes_posted"] == 2 and d["nccl_messages_posted"] == 4, d' "$proto" \
		"$WORK/l_a.json" "$WORK/l_b.json"; then
		ok
	else
		bad "memif pair with --proto ${proto%:*}: exit $rca/$rcb"
		sed 's/^/    a| /' "$WORK/a.out"; sed 's/^/    b| /' "$WORK/b.out"
	fi
done
no_rundir "the memif pair (A)" ${PREFIX}_a
no_rundir "the memif pair (B)" ${PREFIX}_b

echo "$pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
