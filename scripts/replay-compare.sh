#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Do two rocemu binaries replay alike? For speed work that must not change behaviour: every
# shipped pipeline and profile pair below replays two inputs (20 000 frames of 4 KB and of
# 64 B, in bursts over 6 s) with --annotate all, --drops and --stats in both binaries, and the
# outputs, drop captures and stats (without the run's own timing) are compared byte for byte.
#
#   scripts/replay-compare.sh OLD_ROCEMU NEW_ROCEMU
#
# Prints one line per case and "N differ"; exits 1 when any case differs. Needs about 1 GB in
# the scratch directory ($TMPDIR). Takes 5-10 minutes.
set -u
A=$(realpath "${1:?old rocemu}")
B=$(realpath "${2:?new rocemu}")
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 "$src/tests/bench/gen_roce_pcap.py" "$tmp/gen" --count 20000 --distinct 64 \
	--kinds "ack64 write4k" >/dev/null
# the same frames, in bursts at one instant each, spread over 6 s (profiles act in seconds)
python3 - "$tmp" <<'PY'
import struct, sys
tmp = sys.argv[1]
for kind, burst in (("write4k", 64), ("ack64", 32)):
    d = open(f"{tmp}/gen/roce_{kind}.pcap", "rb").read()
    out, off, recs = [d[:24]], 24, []
    while off < len(d):
        _, _, cl, ol = struct.unpack("<IIII", d[off:off + 16])
        recs.append((cl, ol, d[off + 16:off + 16 + cl]))
        off += 16 + cl
    nb = (len(recs) + burst - 1) // burst
    for i, (cl, ol, b) in enumerate(recs):
        t_us = (i // burst) * 6_000_000 // nb
        out.append(struct.pack("<IIII", 1700000000 + t_us // 1_000_000, t_us % 1_000_000, cl, ol) + b)
    open(f"{tmp}/{kind}.pcap", "wb").write(b"".join(out))
PY

cases=(
	"dcqcn-lab:" "dcqcn-lab:rate-steps" "dcqcn-lab:pfc-storm" "dcqcn-lab:demo-incast"
	"dcqcn-lab:incast-on-off" "impair-lab:lossy-gilbert" "impair-lab:psn-targeted-drop"
	"ecmp-4x25:spine-down" "ecmp-4x25:spine-hotspot" "spray-4x25:" "reorder-example:"
	"bump-in-wire:flap" "long-rtt:long-rtt-30ms" "incast-closed-loop:" "capture-annotated:"
)
differ=0
for c in "${cases[@]}"; do
	pl=${c%%:*}
	pr=${c#*:}
	for inp in write4k ack64; do
		for who in A B; do
			d=$tmp/out.$who
			rm -rf "$d"
			mkdir -p "$d"
			args=(replay --pipeline "$src/pipelines/$pl.json" --in "$tmp/$inp.pcap:p0"
			      --out out.pcapng --annotate all --drops drops.pcapng --stats stats.json)
			[ -n "$pr" ] && args+=(--profile "$src/profiles/$pr.json")
			(cd "$d" && "${!who}" "${args[@]}" >log 2>&1; echo "exit $?" >>log)
			python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
for k in ("run", "duration_s"):
    d.pop(k, None)
print(json.dumps(d, sort_keys=True))' "$d/stats.json" >"$d/stats.norm" 2>/dev/null
		done
		same=yes
		for f in out.pcapng drops.pcapng stats.norm; do
			cmp -s "$tmp/out.A/$f" "$tmp/out.B/$f" || same=no
		done
		tail -1 "$tmp/out.A/log" | grep -q "exit 0" || same=no
		if [ $same = yes ]; then
			echo "same    $pl ${pr:--} $inp"
		else
			echo "DIFFER  $pl ${pr:--} $inp ($(tail -1 "$tmp/out.A/log") / $(tail -1 "$tmp/out.B/log"))"
			differ=$((differ + 1))
		fi
	done
done
echo "$differ differ"
[ $differ = 0 ]
