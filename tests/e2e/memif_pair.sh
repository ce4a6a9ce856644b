# Two rocegen back to back over net_memif pairs, for the rocegen tests that need no namespace
# (sourced by test_rocegen_workers.sh and test_rocegen_rails.sh; they set ROCEGEN, WORK, P).
#
# memif_pair NPORTS LCORES_A LCORES_B ARGS...: process A (memif server, 198.19.0.1) and B
# (client, 198.19.0.3), each with NPORTS memif ports (port r of A wired to port r of B) on
# lcores LCORES_*, rocegen ARGS after theirs; outputs $WORK/{a,b}.{out,json}; sets ra and rb
# (exit statuses). B starts once A's sockets exist. Each process is killed after
# MEMIF_KILL_S (default 100) seconds, or 15 s after its report: a hang fails here, with its
# output, not by the test's time-out.
#
# DPDK 22.11's memif PMD now and then fails a pair for reasons of its own: a process dies
# after its report when one end disconnects while the other still polls or stops (SIGSEGV in
# librte_net_memif or librte_eal; under ASan, exit 1 with ASan's SEGV report), or the link
# never comes up (no ARP reply on a port in the whole time limit), or a pair hangs. Such a
# pair is run again, saying why, up to twice (tests/unit/run_rocegen_args.sh does the same).

# memif_pair_wait_sock PATH PID: until the server PID has made its socket PATH (at most 20 s)
memif_pair_wait_sock() {
	local i
	for i in $(seq 200); do
		[ -S "$1" ] && return 0
		kill -0 "$2" 2>/dev/null || return 0
		sleep 0.1
	done
}

# memif_pair_spoiled OUT RC: the process of OUT failed the memif PMD's way (above)
memif_pair_spoiled() {
	[ "$2" -eq 137 ] && return 0	# killed: a hang
	grep -q "no ARP reply from process" "$1" && return 0
	grep -q "^# port:" "$1" || return 1
	[ "$2" -ge 128 ] && return 0
	grep -q "AddressSanitizer: SEGV.*librte_net_memif\|AddressSanitizer: SEGV.*librte_eal" "$1"
}

# memif_pair_reap PID_A OUT_A PID_B OUT_B: until both processes ended; one that printed its
# report and has not ended 15 s later is killed (exit 137). Under ASan the memif disconnect
# race has shown as a deadlock at exit instead of a crash: LeakSanitizer's check in the main
# thread against the sanitizer's symbolizer in EAL's interrupt thread (gdb, 2026-12-07).
memif_pair_reap() {
	local since_a=0 since_b=0 t
	while kill -0 "$1" 2>/dev/null || kill -0 "$3" 2>/dev/null; do
		sleep 0.5
		t=$(date +%s)
		if kill -0 "$1" 2>/dev/null && grep -q "^# port:" "$2"; then
			[ $since_a -eq 0 ] && since_a=$t
			[ $((t - since_a)) -ge 15 ] && pkill -KILL -P "$1" 2>/dev/null
		fi
		if kill -0 "$3" 2>/dev/null && grep -q "^# port:" "$4"; then
			[ $since_b -eq 0 ] && since_b=$t
			[ $((t - since_b)) -ge 15 ] && pkill -KILL -P "$3" 2>/dev/null
		fi
	done
}

memif_pair() {
	local n=$1 la=$2 lb=$3 try s r role ips lc pa pb
	shift 3
	for try in 1 2 3; do
		rm -f "$WORK"/memif*.sock
		rm -rf /var/run/dpdk/${P}m?
		for s in a b; do
			local v=()
			if [ $s = a ]; then
				role=server ips=(198.19.0.1 198.19.0.3) lc=$la
			else
				role=client ips=(198.19.0.3 198.19.0.1) lc=$lb
			fi
			for r in $(seq 0 $((n - 1))); do
				v+=("--vdev=net_memif$r,role=$role,id=0,socket=$WORK/memif$r.sock,socket-abstract=no,bsize=8192,rsize=11")
			done
			timeout -s KILL "${MEMIF_KILL_S:-100}" "$ROCEGEN" --lcores "$lc" --no-huge \
				-m 1024 --no-pci --file-prefix=${P}m$s "${v[@]}" -- --ip ${ips[0]} \
				--peer-ip ${ips[1]} --json "$WORK/$s.json" --time-limit 60 "$@" \
				>"$WORK/$s.out" 2>&1 &
			if [ $s = a ]; then
				pa=$!
				memif_pair_wait_sock "$WORK/memif$((n - 1)).sock" $pa
			else
				pb=$!
			fi
		done
		memif_pair_reap $pa "$WORK/a.out" $pb "$WORK/b.out"
		ra=0 rb=0
		wait $pa || ra=$?
		wait $pb || rb=$?
		if [ $try -lt 3 ] && { [ $ra -ne 0 ] || [ $rb -ne 0 ]; } &&
			{ memif_pair_spoiled "$WORK/a.out" $ra || memif_pair_spoiled "$WORK/b.out" $rb; }
		then
			echo "NOTE: the memif pair failed the PMD's way (exit $ra/$rb: a death after" \
				"the report, a link that never came up, or a hang): running it again"
			continue
		fi
		break
	done
	rm -rf /var/run/dpdk/${P}m?
}
