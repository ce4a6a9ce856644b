#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# rocemu live on 1 and 2 worker lcores, alternating, same vdevs (net_null: it makes frames
# from its pool as fast as it is polled and frees what it is given, so the switch's CPU is
# the limit), same pipeline (parse + forward pairs + a full TM at 1600 Gb/s, or the fabric).
# Cases, each a ratio of 2-worker Mpps to 1-worker Mpps measured in this run:
#   bidir    both directions of a 2-port bump-in-wire (p0 -> p1 and p1 -> p0)
#   oneway   p0 -> p1 only, p0 with 2 RX queues: with 2 workers one queue is polled by the
#            owner of p1, the other by the other worker, which hands its frames over a ring
#   fabric   pipelines/ecmp-4x25.json (a 2-leaf, 4-spine fabric) both ways
#   capture  bidir with an annotated header capture of both ports' egress (snaplen 128,
#            rotated over two 64 MB files): with 2 workers each pushes into a ring of its
#            own and the main lcore writes the one file; frames the writer cannot keep up
#            with are counted not_captured_ring_full (the datapath never waits for it)
# and the cost of one handoff between workers: CPU ns per frame summed over both workers
# (busy cycles / frames) with every frame forced through a ring (--rxq-map gives each port's
# RX queue to the worker that does not own the other port), minus the same with none.
# Rates: the interval line's tx Mpps (--stats-interval 1), first sample dropped, median of the
# rest; runs alternate 1 and 2 workers; medians over the runs.
# After each run's handoff pair, bench_xcore measures the floor in the same minute: the same
# handoff with DPDK's parts alone (ring, pool, the frame's lines; no switch work), which moves
# 5x with where the hypervisor puts the two vCPUs.
# Prints one line:
#   RESULT bench=workers bidir_ratio=X oneway_ratio=Y fabric_ratio=Z capture_ratio=C handoff_ns=H
#          handoff_floor_ns=F
# Reports; fails only when nothing is forwarded or a run's conservation check fails.
#
# usage: bench_workers.sh [--build DIR] [--runs N] [--seconds S] [--quick]
#        --quick: --runs 1 --seconds 3 (a smoke test: same checks, rough numbers)
#        exit 77 (a line starting "SKIP:") when not root.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD:-$root/build}
runs=5
secs=6
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--seconds) secs=$2; shift 2 ;;
	--quick) runs=1; secs=3; shift ;;
	-h|--help) sed -n '3,24p' "$0"; exit 0 ;;
	*) echo "bench_workers: unknown argument $1" >&2; exit 2 ;;
	esac
done
if [ "$secs" -lt 3 ]; then
	echo "bench_workers: --seconds must be >= 3 (the first rate sample is dropped)" >&2
	exit 2
fi
rocemu=$build/app/rocemu/rocemu
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: bench_workers needs root (DPDK EAL); NOT MEASURED"
	exit 77
fi
[ -x "$rocemu" ] || { echo "bench_workers: $rocemu not built (ninja -C $build)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/pairs.json" <<'J'
{ "description": "bench_workers: parse, forward pairs, a full TM fast enough never to be the limit",
  "ports": [ { "name": "p0", "dev": "net_null0" }, { "name": "p1", "dev": "net_null1" } ],
  "ingress": [ { "type": "parse" }, { "type": "forward", "mode": "pairs", "pairs": [["p0", "p1"]] } ],
  "tm": { "buffer": { "total_kb": 8192, "mode": "dynamic", "alpha": 1 },
          "ports": [ { "port": "p0", "rate_gbps": 1600 }, { "port": "p1", "rate_gbps": 1600 } ] } }
J

cat >"$work/cap.json" <<J
{ "description": "bench_workers: pairs.json with an annotated header capture of every frame leaving",
  "ports": [ { "name": "p0", "dev": "net_null0" }, { "name": "p1", "dev": "net_null1" } ],
  "ingress": [ { "type": "parse" }, { "type": "forward", "mode": "pairs", "pairs": [["p0", "p1"]] } ],
  "egress": [ { "type": "capture", "file": "$work/cap.pcapng", "snaplen": 128, "annotate": "events",
                "rotate_mb": 64, "rotate_files": 2 } ],
  "tm": { "buffer": { "total_kb": 8192, "mode": "dynamic", "alpha": 1 },
          "ports": [ { "port": "p0", "rate_gbps": 1600 }, { "port": "p1", "rate_gbps": 1600 } ] } }
J

# run NAME WORKERS PIPELINE P1_RX RXQ [extra rocemu options...]: prints "MPPS FRAMES HANDOFFS"
run() {
	local name=$1 nw=$2 pl=$3 p1rx=$4 rxq=$5 eal out
	shift 5
	if [ "$nw" -eq 1 ]; then
		eal=(-l 0-1)
	else
		eal=(--lcores "0@(0,1),1@0,2@1")
	fi
	local nul1="net_null1,size=64,copy=1"
	[ "$p1rx" = norx ] && nul1="net_null1,size=64,no-rx=1"
	out=$work/$name-$nw.out
	"$rocemu" "${eal[@]}" --no-huge -m 1024 --no-pci --file-prefix=bw_$$ \
		--log-level=lib.eal:error --vdev "net_null0,size=64,copy=1" --vdev "$nul1" -- \
		--pipeline "$pl" --workers "$nw" --rx-queues "$rxq" --duration "$secs" \
		--stats-interval 1 --stats "$work/$name-$nw.json" "$@" >"$out" 2>&1 ||
		{ echo "bench_workers: $name with $nw workers failed:" >&2; tail -20 "$out" >&2; exit 1; }
	grep -q "^conservation: .*: OK$" "$out" ||
		{ echo "bench_workers: $name: conservation not OK" >&2; tail -5 "$out" >&2; exit 1; }
	python3 - "$out" "$work/$name-$nw.json" <<'PY'
import json, re, statistics, sys
rates = []
for line in open(sys.argv[1]):
    if line.startswith("t="):
        tx = [float(x) for x in re.findall(r"tx \d+ \(([0-9.]+) Mpps", line)]
        rates.append(sum(tx))
rates = rates[1:]  # start-up
if not rates or max(rates) <= 0:
    print("bench_workers: nothing forwarded", file=sys.stderr)
    sys.exit(1)
s = json.load(open(sys.argv[2]))
frames = sum(p["tx_pkts"] for p in s["ports"])
ho = sum(w["handoff_out"] for w in s["workers"])
print("%.3f %d %d" % (statistics.median(rates), frames, ho))
PY
}

declare -A r1 r2
ns_none=() ns_forced=() floors=()
for ((i = 0; i < runs; i++)); do
	for c in bidir oneway fabric capture; do
		case $c in
		bidir) args=("$work/pairs.json" rx 1) ;;
		capture) args=("$work/cap.json" rx 1) ;;
		oneway) args=("$work/pairs.json" norx 2) ;;
		fabric) args=("$root/pipelines/ecmp-4x25.json" rx 1) ;;
		esac
		a=$(run "$c" 1 "${args[@]}")
		b=$(run "$c" 2 "${args[@]}")
		r1[$c]="${r1[$c]:-} ${a%% *}"
		r2[$c]="${r2[$c]:-} ${b%% *}"
		echo "run $i $c: 1 worker ${a%% *} Mpps, 2 workers ${b%% *} Mpps (handoffs ${b##* })"
	done
	# the handoff's cost: 2 workers, none crossing vs every frame crossing
	a=$(run ho-none 2 "$work/pairs.json" rx 1)
	b=$(run ho-forced 2 "$work/pairs.json" rx 1 --rxq-map p0:0:0,p1:0:1)
	ns_none+=("$(python3 -c "print(2e3 / float('${a%% *}'))")")
	ns_forced+=("$(python3 -c "print(2e3 / float('${b%% *}'))")")
	echo "run $i handoff: none ${a%% *} Mpps (handoffs ${a##* }), forced ${b%% *} Mpps (handoffs ${b##* })"
	# the floor in the same minute: where the hypervisor puts the two vCPUs changes it 5x
	if [ -x "$build/tests/bench/bench_xcore" ]; then
		f=$("$build/tests/bench/bench_xcore" -l 0-1 --no-huge -m 64 --no-pci \
			--log-level=lib.eal:error --file-prefix=bwx$$ 2>/dev/null |
			sed -n 's/^RESULT .*line_oneway_ns=\([0-9.]*\) .*dpdk_handoff_ns=\([0-9.-]*\) .*/\1 \2/p')
		if [ -n "$f" ]; then
			floors+=("${f##* }")
			echo "run $i floor: one cache line one way ${f%% *} ns; a handoff with DPDK's parts alone ${f##* } ns"
		fi
	fi
done

# the floor under the handoff figure: a frame's lines between the two CPUs, no switch work
# (bench_xcore.c)
xcore=$build/tests/bench/bench_xcore
if [ -x "$xcore" ]; then
	"$xcore" -l 0-1 --no-huge -m 64 --no-pci --log-level=lib.eal:error \
		--file-prefix=bwx$$ 2>&1 | grep -E "^one cache line|^a frame|^a handoff" ||
		echo "bench_workers: bench_xcore failed"
else
	echo "bench_workers: $xcore not built: no floor for the handoff (ninja -C $build)"
fi
python3 - "${r1[bidir]}" "${r2[bidir]}" "${r1[oneway]}" "${r2[oneway]}" "${r1[fabric]}" \
	"${r2[fabric]}" "${ns_none[*]}" "${ns_forced[*]}" "${r1[capture]}" "${r2[capture]}" \
	"${floors[*]:-}" <<'PY'
import statistics, sys
med = lambda s: statistics.median(float(x) for x in s.split())
floor = med(sys.argv[11]) if sys.argv[11].strip() else -1
b1, b2, o1, o2, f1, f2 = (med(a) for a in sys.argv[1:7])
nn, nf = med(sys.argv[7]), med(sys.argv[8])
c1, c2 = med(sys.argv[9]), med(sys.argv[10])
print("bidir: 1 worker %.2f Mpps, 2 workers %.2f Mpps" % (b1, b2))
print("oneway: 1 worker %.2f Mpps, 2 workers %.2f Mpps (bound: the egress TM on one lcore "
      "plus the handoff)" % (o1, o2))
print("fabric: 1 worker %.2f Mpps, 2 workers %.2f Mpps" % (f1, f2))
print("handoff: %.1f CPU ns a frame with none, %.1f with every frame through a ring "
      "(2 busy CPUs / Mpps)" % (nn, nf))
print("capture: 1 worker %.2f Mpps, 2 workers %.2f Mpps (forwarded; one writer on the main "
      "lcore for both)" % (c1, c2))
if floor >= 0:
    print("handoff: %.1f ns, of which DPDK's ring, pool and the frame's lines alone cost %.1f "
          "ns in the same minutes (bench_xcore, median): rocemu's own part %.1f ns" %
          (nf - nn, floor, nf - nn - floor))
print("RESULT bench=workers bidir_ratio=%.2f oneway_ratio=%.2f fabric_ratio=%.2f "
      "capture_ratio=%.2f handoff_ns=%.1f handoff_floor_ns=%.1f" %
      (b2 / b1, o2 / o1, f2 / f1, c2 / c1, nf - nn, floor))
PY
