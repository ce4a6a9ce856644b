#!/usr/bin/env bash
# docs/real-lab.md: every fenced command block says whether it needs real hardware or which
# test runs it; the blocks marked "# run by tests/lab/test_real_lab_doc.sh" are run here, as
# written (build/app/rocemu/rocemu replaced by the build's rocemu), in the source tree; the
# scripts and files the guide names exist.
#
#   test_real_lab_doc.sh SRCDIR ROCEMU
set -u
SRC=${1:?SRCDIR}
ROCEMU=${2:?ROCEMU}
ROCEMU=$(cd "$(dirname "$ROCEMU")" && pwd)/$(basename "$ROCEMU") # the blocks run elsewhere
DOC=$SRC/docs/real-lab.md
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }

# split the blocks: T/block.N holds block N (without the fences)
awk -v d="$T" '/^```/ { if (inb) { inb = 0; close(f) } else { inb = 1; k++; f = d "/block." k; printf "" > f }; next }
               inb { print > f }' "$DOC"
blocks=$(ls "$T"/block.* 2>/dev/null | wc -l)
[ "$blocks" -ge 8 ] && ok "docs/real-lab.md has $blocks blocks" || nok "docs/real-lab.md has only $blocks blocks"
ran=0
for k in $(seq 1 "$blocks"); do
	b=$T/block.$k
	first=$(grep -m1 -v '^[[:space:]]*$' "$b")
	# the cabling picture is not a command
	if [ "$k" = 1 ] && grep -q "lab box: rocemu" "$b"; then continue; fi
	case "$first" in
	"# needs real hardware; tests/lab/"*)
		t=${first#*tests/lab/}; t=${t%% *}
		[ -f "$SRC/tests/lab/$t" ] && ok "block $k: on recorded data by tests/lab/$t" || nok "block $k: names tests/lab/$t, which does not exist"
		;;
	"# needs real hardware")
		ok "block $k: needs real hardware"
		;;
	"# run by tests/lab/test_real_lab_doc.sh")
		sed "s#build/app/rocemu/rocemu#$ROCEMU#g" "$b" >"$T/run.sh"
		# in a scratch directory that shows the tree's top-level entries: the guide's
		# relative paths work, and what the commands write (a capture file) lands here,
		# not in the source tree (which may be read-only, as in scripts/compat.sh's root)
		mkdir -p "$T/wd.$k"
		for e in "$SRC"/*; do ln -s "$e" "$T/wd.$k/"; done
		if (cd "$T/wd.$k" && bash -e "$T/run.sh") >"$T/out.$k" 2>&1; then
			ok "block $k: ran"
		else
			nok "block $k: failed:"; sed 's/^/  | /' "$T/out.$k"
		fi
		ran=$((ran + 1))
		;;
	*)
		nok "block $k: first line '$first' says neither 'needs real hardware' nor which test runs it"
		;;
	esac
done
[ $ran -ge 1 ] && ok "$ran block(s) run here" || nok "no block is run by this test"

# every repository file the guide names exists
for f in $(grep -o '\(scripts\|pipelines\|profiles\|tests\)/[A-Za-z0-9_./-]*\.\(sh\|json\|md\)' "$DOC" | sort -u); do
	[ -e "$SRC/$f" ] && ok "exists: $f" || nok "the guide names $f, which does not exist"
done
# the options the guide gives rocemu (after --) and rocestat are ones their --help lists
RSTAT=$(dirname "$(dirname "$ROCEMU")")/rocestat/rocestat
"$ROCEMU" --help >"$T/help.rocemu" 2>&1
[ -x "$RSTAT" ] && "$RSTAT" --help >"$T/help.rocestat" 2>&1
for o in $(grep -E '^ +--pipeline ' "$DOC" | grep -o -- '--[a-z][a-z-]*' | sort -u); do
	grep -q -- "^ *$o " "$T/help.rocemu" && ok "rocemu knows $o" || nok "the guide gives rocemu $o, which rocemu --help does not list"
done
if [ -s "$T/help.rocestat" ]; then
	for o in $(grep 'rocestat/rocestat ' "$DOC" | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		grep -q -- "^ *$o " "$T/help.rocestat" && ok "rocestat knows $o" || nok "the guide gives rocestat $o, which rocestat --help does not list"
	done
fi

# the NCCL variables the issue asks for
for v in NCCL_IB_HCA NCCL_IB_GID_INDEX NCCL_IB_TC NCCL_IB_QPS_PER_CONNECTION NCCL_IB_SPLIT_DATA_ON_QPS; do
	grep -q "\`$v\`" "$DOC" && ok "explains $v" || nok "does not explain $v"
done

echo "$((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
