#!/usr/bin/env bash
# scripts/lab/server-check.sh on the recorded/reconstructed data in tests/lab/data
# (PROVENANCE.md says where each file comes from): the printed settings and warnings, the
# --json file and rocestat taking it (its JSON report shows the values), snapshot and diff.
#
#   test_server_check.sh SRCDIR ROCESTAT GEN_DCQCN
set -u
SRC=${1:?SRCDIR}
ROCESTAT=${2:?ROCESTAT}
GEN=${3:?GEN_DCQCN}
SC=$SRC/scripts/lab/server-check.sh
D=$SRC/tests/lab/data
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
n=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
has() { grep -qF -- "$2" "$1" || { echo "  '$2' not in $1:"; sed 's/^/  | /' "$1"; return 1; }; }
hasnt() { ! grep -qF -- "$2" "$1" || { echo "  '$2' unexpectedly in $1"; return 1; }; }
rc_is() { [ "$1" = "$2" ] || { echo "  exit $1, expected $2"; return 1; }; }
# rocestat exits 1 when a check fails (the synthetic sender does not run NVIDIA's defaults), 2 when
# it refuses its arguments: taken = not 2, nothing said about --dcqcn, a report written
taken() { local rc=$1 err=$2; [ "$rc" != 2 ] && ! grep -q -- --dcqcn "$err" || { echo "  rocestat exit $rc:"; sed 's/^/  | /' "$err"; return 1; }; }
jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"d": d}))' "$@"; }

# The scripts must run with a clean environment for what they read
unset NCCL_IB_TC NCCL_IB_GID_INDEX MLNX_QOS_FILE DCB_PFC_FILE DCB_APPTRUST_FILE ETHTOOL_S_FILE DEBUGFS_ROOT CONFIGFS_ROOT
export MLNX_QOS=false DCB=false ETHTOOL=false # never the real tools

# ---- 1. a well-set OFED server: no warnings, every parameter into the JSON ----
cp -r "$D/sysfs-ofed" "$T/ofed"
echo 7 >"$T/ofed/class/net/ens1f0np0/ecn/roce_rp/rpg_ai_rate" # not the default: is it read?
SYSFS_ROOT=$T/ofed MLNX_QOS_FILE=$D/mlnx_qos-dscp-pfc3.txt bash "$SC" show --json "$T/ofed.json" >"$T/o1" 2>"$T/e1"
check "good OFED server: exit 0" rc_is $? 0
check "good: PFC read per priority" has "$T/o1" "pfc (mlnx_qos): 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off"
check "good: trust dscp" has "$T/o1" "trust: dscp"
check "good: ECN enable per priority" has "$T/o1" "ecn np enable: 0:0 1:0 2:0 3:1 4:0 5:0 6:0 7:0"
check "good: no warning" hasnt "$T/o1" "WARN"
check "good: IPv4 RoCE v2 GID 3" has "$T/o1" "IPv4: 3 (NCCL_IB_GID_INDEX=3)"
check "good: rdma_cm mode" has "$T/o1" "rdma_cm default_roce_mode: RoCE v2"
check "good: MTU and speed" has "$T/o1" "mtu 9000, speed 100000 Mb/s"
check "json: 19 parameters" [ "$(jget "$T/ofed.json" 'len(d)')" = 19 ]
check "json: rpg_ai_rate as read (7)" [ "$(jget "$T/ofed.json" 'd["rpg_ai_rate"]')" = 7 ]
check "json: min_time_between_cnps" [ "$(jget "$T/ofed.json" 'd["min_time_between_cnps"]')" = 4 ]

# rocestat takes it and validates with it: its report shows our values
"$GEN" "$T/dc.pcap" "$T/truth.txt" "$T/wrong.txt" >/dev/null 2>&1 || nok "gen_dcqcn"
"$ROCESTAT" --quiet --json "$T/r.json" --link-gbps 10 --dcqcn "$T/ofed.json" "$T/dc.pcap" 2>"$T/re"
check "rocestat --dcqcn takes the OFED JSON" taken $? "$T/re"
check "rocestat validated with rpg_ai_rate 7" [ "$(jget "$T/r.json" 'd["dcqcn"][0]["params"]["rpg_ai_rate_mbps"]')" = 7.0 ]
check "rocestat validated with rpg_time_reset 300 us" [ "$(jget "$T/r.json" 'd["dcqcn"][0]["params"]["rpg_time_reset_us"]')" = 300.0 ]
# the control: a name rocestat does not know is refused, so the check above can fail
echo '{"rp_clamp_tgt_rate_ati": 1}' >"$T/unknown.json"
"$ROCESTAT" --quiet --json "$T/r2.json" --dcqcn "$T/unknown.json" "$T/dc.pcap" 2>"$T/re2"
rc=$?
check "control: rocestat refuses a raw debugfs-only name" [ $rc = 2 ]
check "control: the taken() check sees it" eval '! taken $rc "$T/re2" >/dev/null'

# ---- 2. upstream kernel: debugfs cc_params, dcb instead of mlnx_qos ----
SYSFS_ROOT=$D/sysfs-upstream DCB_PFC_FILE=$D/dcb-pfc-show.txt DCB_APPTRUST_FILE=$D/dcb-apptrust-show.txt \
	NCCL_IB_TC=106 bash "$SC" -i ens1f0np0 --json "$T/up.json" >"$T/o2" 2>"$T/e2"
check "upstream: exit 0" rc_is $? 0
check "upstream: debugfs source" has "$T/o2" "dcqcn (debugfs $D/sysfs-upstream/kernel/debug/mlx5/0000:3b:00.0/cc_params)"
check "upstream: NCCL_IB_TC 106 -> DSCP 26 -> priority 3" has "$T/o2" "NCCL priority 3 (NCCL_IB_TC=106: DSCP 26)"
check "upstream: PFC from dcb" has "$T/o2" "pfc (dcb): 0:off 1:off 2:off 3:on"
check "upstream: no per-priority ECN sysfs said" has "$T/o2" "ecn enable per priority: no OFED sysfs"
check "upstream json: rp_clamp_tgt_rate_ati -> clamp_tgt_rate_after_time_inc" [ "$(jget "$T/up.json" 'd["clamp_tgt_rate_after_time_inc"]')" = 1 ]
check "upstream json: np_cnp_prio -> cnp_802p_prio" [ "$(jget "$T/up.json" 'd["cnp_802p_prio"]')" = 6 ]
check "upstream json: no rp_/np_ names left" [ "$(jget "$T/up.json" 'sum(k[:3] in ("rp_", "np_") for k in d)')" = 0 ]
check "upstream json: same parameters as OFED" [ "$(jget "$T/up.json" 'sorted(d)')" = "$(jget "$T/ofed.json" 'sorted(d)')" ]
"$ROCESTAT" --quiet --json "$T/r3.json" --link-gbps 10 --dcqcn "$T/up.json" "$T/dc.pcap" 2>"$T/re3"
check "rocestat --dcqcn takes the debugfs JSON" taken $? "$T/re3"

# ---- 3. the common mistakes ----
cp -r "$D/sysfs-ofed" "$T/bad"
echo 0 >"$T/bad/class/net/ens1f0np0/ecn/roce_np/enable/3"
echo 0 >"$T/bad/class/net/ens1f0np0/ecn/roce_rp/enable/3"
echo 5 >"$T/bad/class/net/ens1f0np0/ecn/roce_rp/rate_to_set_on_first_cnp"
echo 1500 >"$T/bad/class/net/ens1f0np0/mtu"
SYSFS_ROOT=$T/bad MLNX_QOS_FILE=$D/mlnx_qos-pcp-nopfc.txt NCCL_IB_GID_INDEX=2 \
	bash "$SC" show --json "$T/bad.json" >"$T/o3" 2>"$T/e3"
check "mistakes: exit 1" rc_is $? 1
check "mistakes: PFC off on 3" has "$T/o3" "WARN: PFC is off on priority 3"
check "mistakes: the mlnx_qos fix" has "$T/o3" "--pfc 0,0,0,1,0,0,0,0"
check "mistakes: trust pcp" has "$T/o3" "WARN: priority trust is pcp while NCCL marks DSCP"
check "mistakes: ECN NP off" has "$T/o3" "WARN: ECN notification point off on priority 3"
check "mistakes: ECN RP off" has "$T/o3" "WARN: ECN reaction point off on priority 3"
check "mistakes: GID index 2 is RoCE v1" has "$T/o3" "WARN: NCCL_IB_GID_INDEX=2 is not a RoCE v2 GID of mlx5_0 port 1 (use 3)"
check "mistakes: MTU 1500 note" has "$T/o3" "RoCE path MTU is at most 1024"
check "mistakes: 5 problems counted" has "$T/o3" "5 problem(s)"
check "mistakes: rate_to_set_on_first_cnp 5 left out, said" has "$T/e3" "rate_to_set_on_first_cnp = 5 not written"
"$ROCESTAT" --quiet --json "$T/r4.json" --dcqcn "$T/bad.json" "$T/dc.pcap" 2>"$T/re4"
check "mistakes: JSON still taken by rocestat" taken $? "$T/re4"

# ---- 4. nothing there: one line per missing thing ----
mkdir -p "$T/bare/class/net/eth0/device/infiniband/mlx5_1"
SYSFS_ROOT=$T/bare bash "$SC" show --json "$T/none.json" >"$T/o4" 2>&1
check "bare: exit 1" rc_is $? 1
check "bare: PFC missing, one line" [ "$(grep -c '^MISSING: PFC and trust' "$T/o4")" = 1 ]
check "bare: DCQCN missing names both places" has "$T/o4" "MISSING: DCQCN parameters: neither $T/bare/class/net/eth0/ecn/roce_rp (OFED) nor"
check "bare: no JSON written" [ ! -e "$T/none.json" ]
SYSFS_ROOT=$T/nowhere bash "$SC" >"$T/o5" 2>&1
check "no sysfs: exit 1" rc_is $? 1
check "no sysfs: says so" has "$T/o5" "$T/nowhere/class/net does not exist"
check "no sysfs: one line" [ "$(wc -l <"$T/o5")" = 1 ]
bash "$SC" show --bogus >/dev/null 2>&1
check "bad usage: exit 2" rc_is $? 2
bash "$SC" diff only-one >/dev/null 2>&1
check "diff with one file: exit 2" rc_is $? 2

# ---- 5. counters: diff of two recorded ethtool -S outputs ----
bash "$SC" diff "$D/mlx5-ethtool-S-before.txt" "$D/mlx5-ethtool-S-after.txt" >"$T/d1" 2>&1
check "diff ethtool: exit 0" rc_is $? 0
check "diff: rx_prio3_pause +1000" grep -Eq '^rx_prio3_pause +12 +1012 +\+1000$' "$T/d1"
check "diff: rx_discards_phy +17" grep -Eq '^rx_discards_phy +0 +17 +\+17$' "$T/d1"
check "diff: tx_prio3_pause unchanged" grep -Eq '^unchanged:.* tx_prio3_pause( |$)' "$T/d1"
check "diff: rx_packets not among those that matter" hasnt "$T/d1" "rx_packets "
check "diff: the pause explained" has "$T/d1" "NOTE: rx_prio3_pause +1000: this NIC was paused on priority 3"
check "diff: the discards warned" has "$T/d1" "WARN: rx_discards_phy +17"
bash "$SC" diff --all "$D/mlx5-ethtool-S-before.txt" "$D/mlx5-ethtool-S-after.txt" >"$T/d2" 2>&1
check "diff --all: rx_packets too" grep -Eq '^rx_packets +1200345 +5400345 +\+4200000$' "$T/d2"

# ---- 6. snapshot before/after a "run" (ethtool -S by a fake ethtool, hw_counters from sysfs) ----
cp -r "$D/sysfs-ofed" "$T/run"
printf '#!/bin/sh\n[ "$1" = -S ] && [ "$2" = ens1f0np0 ] && exec cat "$FAKE_ETHTOOL_OUT"\nexit 1\n' >"$T/ethtool"
chmod +x "$T/ethtool"
FAKE_ETHTOOL_OUT=$D/mlx5-ethtool-S-before.txt SYSFS_ROOT=$T/run ETHTOOL=$T/ethtool bash "$SC" snapshot "$T/before.snap" >"$T/s1" 2>&1
check "snapshot: exit 0" rc_is $? 0
check "snapshot: ethtool and hw_counters" has "$T/s1" "saved 125 counters of ens1f0np0"
H=$T/run/class/infiniband/mlx5_0/ports/1/hw_counters
echo 420 >"$H/np_cnp_sent"; echo 9000 >"$H/np_ecn_marked_roce_packets"; echo 31 >"$H/rp_cnp_handled"
echo 2 >"$H/out_of_sequence"; echo 2 >"$H/packet_seq_err"; echo 1 >"$H/local_ack_timeout_err"
FAKE_ETHTOOL_OUT=$D/mlx5-ethtool-S-after.txt SYSFS_ROOT=$T/run ETHTOOL=$T/ethtool bash "$SC" snapshot -i ens1f0np0 "$T/after.snap" >/dev/null 2>&1
bash "$SC" diff "$T/before.snap" "$T/after.snap" >"$T/d3" 2>&1
check "snapshot diff: exit 0" rc_is $? 0
for kv in "np_cnp_sent 0 420" "np_ecn_marked_roce_packets 0 9000" "rp_cnp_handled 0 31" "out_of_sequence 0 2" \
	"packet_seq_err 0 2" "local_ack_timeout_err 0 1" "rx_prio3_pause 12 1012"; do
	set -- $kv
	check "snapshot diff: $1 $2 -> $3" grep -Eq "^$1 +$2 +$3 +\\+$(($3 - $2))\$" "$T/d3"
done
check "snapshot diff: timeout warned" has "$T/d3" "WARN: local_ack_timeout_err +1"
check "snapshot diff: CNPs explained" has "$T/d3" "NOTE: rp_cnp_handled +31: this server received CNPs"
# a counter that went down: reset, not a negative change
sed 's/rx_prio3_pause 1012/rx_prio3_pause 5/' "$T/after.snap" >"$T/reset.snap"
bash "$SC" diff "$T/before.snap" "$T/reset.snap" >"$T/d4" 2>&1
check "diff: a reset counter said" has "$T/d4" "NOTE: rx_prio3_pause went down (12 -> 5)"
SYSFS_ROOT=$T/bare bash "$SC" snapshot -i eth0 "$T/x.snap" >"$T/s2" 2>&1
check "snapshot without counters: exit 1" rc_is $? 1
check "snapshot without counters: no file" [ ! -e "$T/x.snap" ]

echo "$((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
