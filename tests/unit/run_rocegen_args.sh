#!/usr/bin/env bash
# rocegen refuses bad command lines with a message naming the option, before touching the
# wire: each case below must exit non-zero and print the expected text. The EAL comes up on a
# net_null port with --no-huge (no packets are sent: the checks run before the port is used).
set -u
ROCEGEN=$1
EAL=(--no-huge -m 256 --no-pci --log-level=lib.eal:error --file-prefix=rgargs$$
	--vdev=net_null0)
pass=0
fail=0
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
check "--algo: ring or tree" "${IP[@]}" --algo butterfly
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
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
