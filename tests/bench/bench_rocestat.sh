#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# rocestat against `tshark -r F -T fields` extracting the same fields (time, length, addresses,
# ECN, UDP source port, BTH opcode, DestQP, PSN, AETH syndrome) from the same header-only
# capture (gen_rocestat_pcap.py: 10^6 records of snaplen 64 by default), timed in the same
# run, alternating the two sides; reports the ratio tshark / rocestat and rocestat's Mpps of
# header records on one core. A benchmark: it reports and never fails on time; it fails only
# when a side does not work (rocestat's packet count or tshark's line count is not N).
#
# usage: bench_rocestat.sh ROCESTAT [--quick] [--count N] [--runs R]
#   --quick: 20000 records, one run each (a smoke test for CI)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
rocestat=${1:?usage: bench_rocestat.sh ROCESTAT [--quick] [--count N] [--runs R]}
shift
count=1000000
runs=2
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) count=20000; runs=1 ;;
	--count) count=$2; shift ;;
	--runs) runs=$2; shift ;;
	*) echo "bench_rocestat: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
command -v tshark >/dev/null || { echo "bench_rocestat: tshark missing"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cap=$work/bench.pcap
python3 "$here/gen_rocestat_pcap.py" "$cap" "$count" || { echo "FAIL: generator"; exit 1; }

now() { date +%s.%N; }
fields=(-e frame.time_epoch -e frame.len -e ip.src -e ip.dst -e ip.dsfield.ecn -e udp.srcport
	-e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn
	-e infiniband.aeth.syndrome)
t_rs=()
t_ts=()
for ((r = 0; r < runs; r++)); do
	for side in rs ts; do
		# alternate which side goes first
		[ $((r % 2)) -eq 1 ] && side=$([ $side = rs ] && echo ts || echo rs)
		if [ $side = rs ]; then
			t0=$(now)
			"$rocestat" --quiet --json "$work/out.json" "$cap"
			rc=$?
			t1=$(now)
			[ $rc -le 1 ] || { echo "FAIL: rocestat exited $rc"; exit 1; }
			got=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['capture']['packets'])" "$work/out.json")
			[ "$got" = "$count" ] || { echo "FAIL: rocestat counted $got packets, want $count"; exit 1; }
			t_rs+=("$(echo "$t1 - $t0" | bc -l)")
		else
			t0=$(now)
			tshark -r "$cap" -T fields "${fields[@]}" >"$work/tshark.txt" 2>"$work/tshark.err"
			rc=$?
			t1=$(now)
			[ $rc -eq 0 ] || { echo "FAIL: tshark exited $rc"; cat "$work/tshark.err"; exit 1; }
			got=$(wc -l <"$work/tshark.txt")
			[ "$got" = "$count" ] || { echo "FAIL: tshark gave $got lines, want $count"; exit 1; }
			t_ts+=("$(echo "$t1 - $t0" | bc -l)")
		fi
	done
done
med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
rs=$(med "${t_rs[@]}")
ts=$(med "${t_ts[@]}")
printf '# rocestat vs tshark -T fields, %d header records (snaplen 64), %d run(s) each, medians\n' "$count" "$runs"
printf '%-34s %10s %10s\n' "side" "seconds" "Mpps"
printf '%-34s %10.3f %10.2f\n' "rocestat --quiet --json" "$rs" "$(echo "$count / $rs / 1000000" | bc -l)"
printf '%-34s %10.3f %10.2f\n' "tshark -T fields (10 fields)" "$ts" "$(echo "$count / $ts / 1000000" | bc -l)"
printf 'ratio tshark / rocestat: %.1f (goal >= 20); rocestat %.2f Mpps (goal >= 5)\n' \
	"$(echo "$ts / $rs" | bc -l)" "$(echo "$count / $rs / 1000000" | bc -l)"
