#!/usr/bin/env bash
# The RoCE settings of a GPU server that decide what happens on the wire through rocemu, and
# its NIC counters before and after a run. Run it on each server (read-only; root is needed
# for debugfs and for some sysfs files).
#
#   server-check.sh [show] [-i IF] [--prio N] [--json FILE]
#       prints MTU and speed, PFC per priority, the priority trust (pcp/dscp), ECN enable per
#       priority (OFED sysfs roce_np/enable/N, roce_rp/enable/N), the DCQCN parameters in
#       NVIDIA's names (OFED sysfs ecn/roce_rp|roce_np, or upstream debugfs
#       mlx5/PCI/cc_params rp_*|np_*), RoCE v2 GIDs (for NCCL_IB_GID_INDEX) and the rdma_cm
#       default RoCE mode; warns about the common mistakes; --json FILE writes the DCQCN
#       parameters as a JSON object `rocestat --dcqcn FILE` takes.
#   server-check.sh snapshot [-i IF] FILE
#       saves the counters (`ethtool -S IF` and the RDMA port's hw_counters) as `name value` lines
#   server-check.sh diff [--all] BEFORE AFTER
#       prints the change of the counters that matter (pause frames per priority, CNPs, ECN
#       marks, sequence errors, timeouts, discards); --all: of every counter that changed.
#       BEFORE/AFTER are snapshot files or raw `ethtool -S` outputs.
#
# --prio N: the priority NCCL's traffic uses (default: from NCCL_IB_TC's DSCP through the
# DSCP-to-priority map, else 3).
#
# Every input can be redirected, so it runs on recorded data (tests/lab):
#   SYSFS_ROOT (/sys), DEBUGFS_ROOT ($SYSFS_ROOT/kernel/debug), CONFIGFS_ROOT ($SYSFS_ROOT/kernel/config)
#   ETHTOOL (command, "ethtool") or ETHTOOL_S_FILE (a recorded `ethtool -S IF`)
#   MLNX_QOS (command, "mlnx_qos") or MLNX_QOS_FILE (a recorded `mlnx_qos -i IF`)
#   DCB (command, "dcb") or DCB_PFC_FILE / DCB_APPTRUST_FILE (recorded `dcb pfc show dev IF`,
#   `dcb apptrust show dev IF`)
#   NCCL_IB_TC, NCCL_IB_GID_INDEX: as NCCL would see them
#
# Exit: 0 read and nothing to warn about; 1 a warning or something could not be read; 2 bad usage.
set -u

SYSFS_ROOT=${SYSFS_ROOT:-/sys}
DEBUGFS_ROOT=${DEBUGFS_ROOT:-$SYSFS_ROOT/kernel/debug}
CONFIGFS_ROOT=${CONFIGFS_ROOT:-$SYSFS_ROOT/kernel/config}
ETHTOOL=${ETHTOOL:-ethtool}
MLNX_QOS=${MLNX_QOS:-mlnx_qos}
DCB=${DCB:-dcb}

PROG=server-check
problems=0

usage() {
	sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}
bad_usage() { echo "$PROG: $*" >&2; echo "usage: server-check.sh [show|snapshot|diff] ... (--help)" >&2; exit 2; }
warn() { echo "WARN: $*"; problems=$((problems + 1)); }
missing() { echo "MISSING: $*"; problems=$((problems + 1)); }
info() { echo "  $*"; }

# readval FILE: the file's first line, or nothing (unreadable).
readval() { [ -r "$1" ] && head -n1 "$1" 2>/dev/null | tr -d '\r'; }

# ---- interface, device, PCI address ----

pick_if() {
	local n found=()
	[ -d "$SYSFS_ROOT/class/net" ] || { echo "$PROG: $SYSFS_ROOT/class/net does not exist (SYSFS_ROOT?)" >&2; exit 1; }
	for n in "$SYSFS_ROOT"/class/net/*; do
		[ -d "$n/device/infiniband" ] && found+=("$(basename "$n")")
	done
	if [ ${#found[@]} -eq 1 ]; then
		IFACE=${found[0]}
	elif [ ${#found[@]} -eq 0 ]; then
		echo "$PROG: no RDMA-capable interface under $SYSFS_ROOT/class/net (none has device/infiniband); name one with -i IF" >&2
		exit 1
	else
		echo "$PROG: several RDMA interfaces (${found[*]}); name one with -i IF" >&2
		exit 2
	fi
}

dev_info() {
	NETDIR=$SYSFS_ROOT/class/net/$IFACE
	[ -d "$NETDIR" ] || { echo "$PROG: no interface $IFACE ($NETDIR does not exist)" >&2; exit 1; }
	PCI=""
	DRIVER=""
	if [ -r "$NETDIR/device/uevent" ]; then
		PCI=$(sed -n 's/^PCI_SLOT_NAME=//p' "$NETDIR/device/uevent")
		DRIVER=$(sed -n 's/^DRIVER=//p' "$NETDIR/device/uevent")
	fi
	if [ -z "$PCI" ] && [ -L "$NETDIR/device" ]; then
		PCI=$(basename "$(readlink "$NETDIR/device")")
	fi
	IBDEV=""
	if [ -d "$NETDIR/device/infiniband" ]; then
		IBDEV=$(ls "$NETDIR/device/infiniband" 2>/dev/null | head -n1)
	fi
}

# ---- PFC and trust ----

qos_output() {
	if [ -n "${MLNX_QOS_FILE:-}" ]; then
		cat "$MLNX_QOS_FILE" 2>/dev/null
	elif command -v "${MLNX_QOS%% *}" >/dev/null 2>&1; then
		$MLNX_QOS -i "$IFACE" 2>/dev/null
	fi
}
dcb_pfc_output() {
	if [ -n "${DCB_PFC_FILE:-}" ]; then
		cat "$DCB_PFC_FILE" 2>/dev/null
	elif [ -z "${MLNX_QOS_FILE:-}" ] && command -v "${DCB%% *}" >/dev/null 2>&1; then
		$DCB pfc show dev "$IFACE" 2>/dev/null
	fi
}
dcb_trust_output() {
	if [ -n "${DCB_APPTRUST_FILE:-}" ]; then
		cat "$DCB_APPTRUST_FILE" 2>/dev/null
	elif [ -z "${MLNX_QOS_FILE:-}" ] && command -v "${DCB%% *}" >/dev/null 2>&1; then
		$DCB apptrust show dev "$IFACE" 2>/dev/null
	fi
}

# Sets PFC[0..7] (on/off/?), TRUST (pcp/dscp/""), DSCP2PRIO[0..63], QOS_SRC.
read_qos() {
	local q line p i
	PFC=(? ? ? ? ? ? ? ?)
	TRUST=""
	DSCP2PRIO=()
	for ((i = 0; i < 64; i++)); do DSCP2PRIO[i]=$((i >> 3)); done
	QOS_SRC=""
	q=$(qos_output)
	if [ -n "$q" ]; then
		QOS_SRC="mlnx_qos"
		TRUST=$(echo "$q" | sed -n 's/^[[:space:]]*Priority trust state:[[:space:]]*\([a-z]*\).*/\1/p' | head -n1)
		# "enabled     0   0   0   1 ..." under "PFC configuration:"
		line=$(echo "$q" | awk '/PFC configuration/ {f=1} f && $1 == "enabled" {for (i = 2; i <= 9; i++) printf "%s ", $i; exit}')
		if [ -n "$line" ]; then
			i=0
			for p in $line; do
				[ "$p" = 1 ] && PFC[i]=on || PFC[i]=off
				i=$((i + 1))
			done
		fi
		# "prio:3 dscp:31,30,29,28,27,26,25,24,"
		while read -r p line; do
			for i in ${line//,/ }; do
				i=$((10#$i))
				[ "$i" -ge 0 ] && [ "$i" -lt 64 ] && DSCP2PRIO[i]=$p
			done
		done < <(echo "$q" | sed -n 's/^[[:space:]]*prio:\([0-7]\)[[:space:]]*dscp:\([0-9,]*\).*/\1 \2/p')
		return
	fi
	q=$(dcb_pfc_output)
	if [ -n "$q" ]; then
		QOS_SRC="dcb"
		for p in $(echo "$q" | grep -o '[0-7]:\(on\|off\)'); do
			PFC[${p%%:*}]=${p#*:}
		done
		q=$(dcb_trust_output)
		if echo "$q" | grep -qw dscp; then TRUST=dscp
		elif echo "$q" | grep -qw pcp; then TRUST=pcp; fi
	fi
}

# ---- DCQCN parameters ----

# debugfs name -> NVIDIA's sysfs name (the names rocestat --dcqcn documents)
debugfs_name() {
	case "$1" in
	rp_clamp_tgt_rate) echo clamp_tgt_rate ;;
	rp_clamp_tgt_rate_ati) echo clamp_tgt_rate_after_time_inc ;;
	rp_rate_to_set_on_first_cnp) echo rate_to_set_on_first_cnp ;;
	rp_dce_tcp_g) echo dce_tcp_g ;;
	rp_dce_tcp_rtt) echo dce_tcp_rtt ;;
	rp_rate_reduce_monitor_period) echo rate_reduce_monitor_period ;;
	rp_initial_alpha_value) echo initial_alpha_value ;;
	rp_*) echo "rpg_${1#rp_}" ;;
	np_cnp_prio) echo cnp_802p_prio ;;
	np_*) echo "${1#np_}" ;;
	*) echo "$1" ;;
	esac
}

# The names rocestat --dcqcn accepts (lib/analysis/ana_params.c, docs/rocestat.md).
ROCESTAT_NAMES=" rpg_time_reset rpg_byte_reset rpg_threshold rpg_ai_rate rpg_hai_rate rpg_min_dec_fac
 rpg_min_rate rpg_gd rpg_max_rate rate_to_set_on_first_cnp dce_tcp_g dce_tcp_rtt
 rate_reduce_monitor_period initial_alpha_value clamp_tgt_rate clamp_tgt_rate_after_time_inc
 min_time_between_cnps cnp_dscp cnp_802p_prio "

# Sets PNAME[] / PVAL[] (in NVIDIA's sysfs names) and DCQCN_SRC.
read_dcqcn() {
	local d f n v
	PNAME=()
	PVAL=()
	DCQCN_SRC=""
	if [ -d "$NETDIR/ecn/roce_rp" ] || [ -d "$NETDIR/ecn/roce_np" ]; then
		DCQCN_SRC="OFED sysfs $NETDIR/ecn"
		for d in roce_rp roce_np; do
			for f in "$NETDIR/ecn/$d"/*; do
				[ -f "$f" ] || continue
				n=$(basename "$f")
				v=$(readval "$f")
				PNAME+=("$n")
				PVAL+=("$v")
			done
		done
		return
	fi
	d=$DEBUGFS_ROOT/mlx5/$PCI/cc_params
	if [ -n "$PCI" ] && [ -d "$d" ]; then
		DCQCN_SRC="debugfs $d"
		for f in "$d"/rp_* "$d"/np_*; do
			[ -f "$f" ] || continue
			v=$(readval "$f")
			PNAME+=("$(debugfs_name "$(basename "$f")")")
			PVAL+=("$v")
		done
	fi
}

pval() {
	local i
	for i in "${!PNAME[@]}"; do
		[ "${PNAME[i]}" = "$1" ] && { echo "${PVAL[i]}"; return 0; }
	done
	return 1
}

write_json() {
	local out=$1 i n v first=1 tmp
	tmp=$(mktemp) || return 1
	{
		echo "{"
		for i in "${!PNAME[@]}"; do
			n=${PNAME[i]}
			v=${PVAL[i]}
			case " $(echo $ROCESTAT_NAMES) " in *" $n "*) ;; *) echo "  note: $n not written to $out (rocestat does not know it)" >&2; continue ;; esac
			[[ "$v" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "  note: $n = '$v' is not a number, not written" >&2; continue; }
			if [ "$n" = rate_to_set_on_first_cnp ] && [ "$v" != 0 ]; then
				echo "  note: rate_to_set_on_first_cnp = $v not written (rocestat models only 0)" >&2
				continue
			fi
			[ $first -eq 1 ] || echo ","
			printf '  "%s": %s' "$n" "$v"
			first=0
		done
		echo ""
		echo "}"
	} >"$tmp"
	mv "$tmp" "$out" || return 1
	echo "wrote $out (rocestat --dcqcn $out)"
}

# ---- RoCE GIDs ----

read_gids() {
	local port t g nd idx gi any=0
	GID_V2=()
	[ -n "$IBDEV" ] || { missing "no RDMA device for $IFACE ($NETDIR/device/infiniband): rdma-core / mlx5_ib not loaded? no RoCE GIDs"; return; }
	for port in "$SYSFS_ROOT/class/infiniband/$IBDEV/ports"/*; do
		[ -d "$port/gid_attrs/types" ] || continue
		for t in "$port/gid_attrs/types"/*; do
			idx=$(basename "$t")
			gi=$(readval "$t") || continue
			[ -n "$gi" ] || continue
			g=$(readval "$port/gids/$idx")
			nd=$(readval "$port/gid_attrs/ndevs/$idx")
			[ "$g" = "0000:0000:0000:0000:0000:0000:0000:0000" ] && continue
			info "gid $(basename "$port")/$idx  $gi  $g  ${nd:-?}"
			any=1
			case "$gi" in *v2*) [ "$(basename "$port")" = 1 ] && GID_V2+=("$idx:$g") ;; esac
		done
	done
	[ $any -eq 1 ] || missing "no GIDs under $SYSFS_ROOT/class/infiniband/$IBDEV/ports/*/gid_attrs (no IP address on $IFACE?)"
}

# ---- show ----

cmd_show() {
	local json="" prio="" i v np rp mtu speed mode cnpprio ipv4gid
	while [ $# -gt 0 ]; do
		case "$1" in
		-i) [ $# -ge 2 ] || bad_usage "-i needs an interface"; IFACE=$2; shift 2 ;;
		--prio) [ $# -ge 2 ] && [[ "$2" =~ ^[0-7]$ ]] || bad_usage "--prio needs 0..7"; prio=$2; shift 2 ;;
		--json) [ $# -ge 2 ] || bad_usage "--json needs a file"; json=$2; shift 2 ;;
		-h | --help) usage ;;
		*) bad_usage "unknown argument '$1'" ;;
		esac
	done
	[ -n "${IFACE:-}" ] || pick_if
	dev_info
	echo "interface $IFACE: rdma ${IBDEV:-none}, pci ${PCI:-?}, driver ${DRIVER:-?}"
	mtu=$(readval "$NETDIR/mtu")
	speed=$(readval "$NETDIR/speed")
	info "mtu ${mtu:-?}, speed ${speed:-?} Mb/s"
	if [ -n "$mtu" ] && [ "$mtu" -lt 4200 ] 2>/dev/null; then
		info "note: with MTU $mtu the RoCE path MTU is at most $([ "$mtu" -ge 2200 ] && echo 2048 || echo 1024) (4096 needs MTU >= 4200; rocemu's ports need the same MTU)"
	fi

	read_qos
	# NCCL's priority: NCCL_IB_TC is the traffic class (DSCP << 2 | ECN); the DSCP maps to a priority
	local dscp=""
	if [ -n "${NCCL_IB_TC:-}" ] && [[ "$NCCL_IB_TC" =~ ^[0-9]+$ ]]; then
		dscp=$((NCCL_IB_TC >> 2))
	fi
	if [ -z "$prio" ]; then
		if [ -n "$dscp" ]; then prio=${DSCP2PRIO[dscp]}; else prio=3; fi
	fi
	info "NCCL priority $prio${dscp:+ (NCCL_IB_TC=$NCCL_IB_TC: DSCP $dscp)}"
	if [ -z "$QOS_SRC" ]; then
		missing "PFC and trust: neither mlnx_qos nor dcb gave an answer for $IFACE (MLNX_QOS_FILE= / DCB_PFC_FILE= for recorded outputs)"
	else
		info "pfc ($QOS_SRC): $(for i in 0 1 2 3 4 5 6 7; do printf '%s:%s ' $i "${PFC[i]}"; done)"
		info "trust: ${TRUST:-?}"
		if [ "${PFC[prio]}" = off ]; then
			warn "PFC is off on priority $prio, the one NCCL's RoCE traffic uses: a full buffer drops instead of pausing (mlnx_qos -i $IFACE --pfc $(for i in 0 1 2 3 4 5 6 7; do [ $i -gt 0 ] && printf ,; [ $i = "$prio" ] && printf 1 || printf 0; done))"
		fi
		if [ "$TRUST" = pcp ]; then
			warn "priority trust is pcp while NCCL marks DSCP (NCCL_IB_TC): untagged RoCE packets land on priority 0, not $prio (mlnx_qos -i $IFACE --trust dscp)"
		elif [ -z "$TRUST" ]; then
			missing "priority trust state not in the $QOS_SRC output"
		fi
	fi

	if [ -d "$NETDIR/ecn/roce_np/enable" ] || [ -d "$NETDIR/ecn/roce_rp/enable" ]; then
		np=""
		rp=""
		for i in 0 1 2 3 4 5 6 7; do
			np+="$i:$(readval "$NETDIR/ecn/roce_np/enable/$i" || echo '?') "
			rp+="$i:$(readval "$NETDIR/ecn/roce_rp/enable/$i" || echo '?') "
		done
		info "ecn np enable: $np"
		info "ecn rp enable: $rp"
		v=$(readval "$NETDIR/ecn/roce_np/enable/$prio")
		[ "$v" = 1 ] || warn "ECN notification point off on priority $prio (roce_np/enable/$prio = ${v:-?}): this server sends no CNPs for CE-marked packets (echo 1 > $NETDIR/ecn/roce_np/enable/$prio)"
		v=$(readval "$NETDIR/ecn/roce_rp/enable/$prio")
		[ "$v" = 1 ] || warn "ECN reaction point off on priority $prio (roce_rp/enable/$prio = ${v:-?}): this server ignores CNPs, DCQCN does not slow it (echo 1 > $NETDIR/ecn/roce_rp/enable/$prio)"
	else
		info "ecn enable per priority: no OFED sysfs ($NETDIR/ecn/roce_np/enable); upstream mlx5 enables DCQCN per priority in firmware (mlxconfig ROCE_CC_PRIO_MASK_P1)"
	fi

	read_dcqcn
	if [ -z "$DCQCN_SRC" ]; then
		missing "DCQCN parameters: neither $NETDIR/ecn/roce_rp (OFED) nor $DEBUGFS_ROOT/mlx5/${PCI:-PCI}/cc_params (debugfs: root and mounted?)"
	else
		info "dcqcn ($DCQCN_SRC):"
		for i in "${!PNAME[@]}"; do info "  ${PNAME[i]} ${PVAL[i]}"; done
		v=$(pval min_time_between_cnps) && [ "$v" != 4 ] &&
			info "note: min_time_between_cnps is $v us: give rocestat --np-min-time-between-cnps $v"
		cnpprio=$(pval cnp_802p_prio) && [ "$cnpprio" = "$prio" ] &&
			warn "CNPs use priority $cnpprio, the same as the data: a paused data queue delays the CNPs too"
		if [ -n "$json" ]; then
			write_json "$json" || { echo "$PROG: cannot write $json" >&2; exit 1; }
		fi
	fi
	if [ -n "$json" ] && [ -z "$DCQCN_SRC" ]; then
		echo "$PROG: $json not written (no DCQCN parameters)"
	fi

	echo "roce:"
	read_gids
	if [ -n "$IBDEV" ]; then
		mode=$(readval "$CONFIGFS_ROOT/rdma_cm/$IBDEV/ports/1/default_roce_mode")
		[ -n "$mode" ] && info "rdma_cm default_roce_mode: $mode"
		[ -n "$mode" ] && case "$mode" in *v2*) ;; *) warn "rdma_cm default RoCE mode is '$mode' (perftest -R / rdma_cm users get RoCE v1, which rocemu does not parse)" ;; esac
		if [ ${#GID_V2[@]} -eq 0 ]; then
			[ -d "$SYSFS_ROOT/class/infiniband/$IBDEV" ] && warn "no RoCE v2 GID on $IBDEV port 1: NCCL_IB_GID_INDEX has nothing to point at"
		else
			ipv4gid=""
			for v in "${GID_V2[@]}"; do
				case "${v#*:}" in 0000:0000:0000:0000:0000:ffff:*) ipv4gid=${v%%:*}; break ;; esac
			done
			info "RoCE v2 GIDs (port 1): $(for v in "${GID_V2[@]}"; do printf "%s " "${v%%:*}"; done | sed "s/ $//")${ipv4gid:+; IPv4: $ipv4gid (NCCL_IB_GID_INDEX=$ipv4gid)}"
			if [ -n "${NCCL_IB_GID_INDEX:-}" ]; then
				local ok=0
				for v in "${GID_V2[@]}"; do [ "${v%%:*}" = "$NCCL_IB_GID_INDEX" ] && ok=1; done
				[ $ok -eq 1 ] || warn "NCCL_IB_GID_INDEX=$NCCL_IB_GID_INDEX is not a RoCE v2 GID of $IBDEV port 1${ipv4gid:+ (use $ipv4gid)}"
			fi
		fi
	fi
	if [ $problems -eq 0 ]; then echo "ok: nothing to warn about"; else echo "$problems problem(s)"; fi
	[ $problems -eq 0 ]
}

# ---- counters ----

# the counters that matter, as an extended regular expression on the name
KEY_RE='^((rx|tx)_prio[0-7]_pause(_duration)?|(rx|tx)_pause_ctrl_phy|rx_prio[0-7]_discards|rx_discards_phy|tx_discards_phy|rx_out_of_buffer|rx_symbol_err_phy|rx_crc_errors_phy|np_cnp_sent|np_ecn_marked_roce_packets|rp_cnp_handled|rp_cnp_ignored|out_of_sequence|packet_seq_err|local_ack_timeout_err|implied_nak_seq_err|duplicate_request|out_of_buffer|rnr_nak_retry_err|roce_adp_retrans|roce_slow_restart|roce_slow_restart_cnps|req_cqe_error|resp_cqe_error)$'

cmd_snapshot() {
	local out="" tmp port f n=0
	while [ $# -gt 0 ]; do
		case "$1" in
		-i) [ $# -ge 2 ] || bad_usage "-i needs an interface"; IFACE=$2; shift 2 ;;
		-h | --help) usage ;;
		-*) bad_usage "unknown option '$1'" ;;
		*) [ -z "$out" ] || bad_usage "one FILE only"; out=$1; shift ;;
		esac
	done
	[ -n "$out" ] || bad_usage "snapshot needs a FILE"
	[ -n "${IFACE:-}" ] || pick_if
	dev_info
	local eth
	if [ -n "${ETHTOOL_S_FILE:-}" ]; then
		eth=$(cat "$ETHTOOL_S_FILE" 2>/dev/null)
	else
		eth=$($ETHTOOL -S "$IFACE" 2>/dev/null)
	fi
	[ -n "$eth" ] || echo "MISSING: '$ETHTOOL -S $IFACE' gave nothing${ETHTOOL_S_FILE:+ ($ETHTOOL_S_FILE)}: no pause or discard counters in $out" >&2
	tmp=$(mktemp) || exit 1
	{
		echo "# server-check snapshot of $IFACE (${IBDEV:-no rdma device}) at $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "$eth" | awk -F: 'NF == 2 && $2 ~ /^[ \t]*-?[0-9]+[ \t]*$/ { gsub(/[ \t]/, "", $1); gsub(/[ \t]/, "", $2); print $1, $2 }'
		if [ -n "$IBDEV" ]; then
			for port in "$SYSFS_ROOT/class/infiniband/$IBDEV/ports"/*; do
				for f in "$port/hw_counters"/* "$port/counters"/*; do
					[ -f "$f" ] && echo "$(basename "$f") $(readval "$f")"
				done
			done
		fi
	} >"$tmp"
	n=$(grep -vc '^#' "$tmp")
	if [ "$n" -eq 0 ]; then
		rm -f "$tmp"
		echo "$PROG: no counters for $IFACE: '$ETHTOOL -S $IFACE' gave nothing${ETHTOOL_S_FILE:+ ($ETHTOOL_S_FILE)} and no hw_counters under $SYSFS_ROOT/class/infiniband/${IBDEV:-?}" >&2
		exit 1
	fi
	mv "$tmp" "$out" || exit 1
	echo "saved $n counters of $IFACE to $out"
}

# normalize FILE: `name value` per line from a snapshot or a raw `ethtool -S` output
norm() {
	awk '/^#/ { next }
	     { sub(/^[ \t]+/, "") }
	     /:/ { n = split($0, a, ":"); if (n != 2) next; name = a[1]; v = a[2]; gsub(/[ \t]/, "", name); gsub(/[ \t]/, "", v) }
	     !/:/ { if (NF != 2) next; name = $1; v = $2 }
	     v ~ /^-?[0-9]+$/ { print name, v }' "$1"
}

cmd_diff() {
	local all=0 a="" b=""
	while [ $# -gt 0 ]; do
		case "$1" in
		--all) all=1; shift ;;
		-h | --help) usage ;;
		-*) bad_usage "unknown option '$1'" ;;
		*) if [ -z "$a" ]; then a=$1; elif [ -z "$b" ]; then b=$1; else bad_usage "diff takes BEFORE AFTER"; fi; shift ;;
		esac
	done
	[ -n "$b" ] || bad_usage "diff needs BEFORE and AFTER"
	[ -r "$a" ] || { echo "$PROG: cannot read $a" >&2; exit 1; }
	[ -r "$b" ] || { echo "$PROG: cannot read $b" >&2; exit 1; }
	# name before after delta, for the counters that matter (every one in --all that changed)
	local out
	out=$(awk -v all=$all -v re="$KEY_RE" '
		FNR == NR { before[$1] = $2; next }
		{ after[$1] = $2; order[++n] = $1 }
		END {
			for (i = 1; i <= n; i++) {
				k = order[i]
				if (!(k in before)) { if (k ~ re || all) printf "%s - %s new\n", k, after[k]; continue }
				d = after[k] - before[k]
				if (d < 0) { printf "%s %s %s reset\n", k, before[k], after[k]; continue }
				if (k ~ re) { printf "%s %s %s %d\n", k, before[k], after[k], d }
				else if (all && d != 0) printf "%s %s %s %d\n", k, before[k], after[k], d
			}
			for (k in before) if (!(k in after) && k ~ re) printf "%s %s - gone\n", k, before[k]
		}' <(norm "$a") <(norm "$b"))
	if [ -z "$out" ]; then
		echo "$PROG: none of the counters that matter in $a and $b (not mlx5 ethtool -S / snapshot files?)"
		exit 1
	fi
	local k x y d changed=0 zero=() gone=() new=()
	printf '%-32s %14s %14s %12s\n' counter before after change
	while read -r k x y d; do
		if [ "$d" = 0 ]; then zero+=("$k"); continue; fi
		if [ "$d" = gone ]; then gone+=("$k"); continue; fi
		if [ "$d" = new ]; then new+=("$k"); continue; fi
		printf '%-32s %14s %14s %12s\n' "$k" "$x" "$y" "$( [[ "$d" =~ ^[0-9]+$ ]] && echo "+$d" || echo "$d")"
		changed=$((changed + 1))
	done <<<"$out"
	[ ${#zero[@]} -eq 0 ] || echo "unchanged: ${zero[*]}"
	[ ${#gone[@]} -eq 0 ] || echo "NOTE: ${#gone[@]} counter(s) in $a are not in $b (taken another way?): ${gone[*]}"
	[ ${#new[@]} -eq 0 ] || echo "NOTE: ${#new[@]} counter(s) in $b are not in $a: ${new[*]}"
	# what the changes mean
	while read -r k x y d; do
		[[ "$d" =~ ^[0-9]+$ ]] && [ "$d" -gt 0 ] || { [ "$d" = reset ] && echo "NOTE: $k went down ($x -> $y): counters were reset (driver reload, port reset?); the difference is meaningless"; continue; }
		case "$k" in
		rx_prio[0-7]_pause) echo "NOTE: $k +$d: this NIC was paused on priority ${k:7:1} (PFC from the lab box: rocemu's pfc-storm, or its switch stage)" ;;
		tx_prio[0-7]_pause) echo "NOTE: $k +$d: this NIC paused its peer on priority ${k:7:1} (its receive buffer filled)" ;;
		np_cnp_sent) echo "NOTE: np_cnp_sent +$d: CE-marked packets arrived and this server answered with CNPs (DCQCN notification point)" ;;
		rp_cnp_handled) echo "NOTE: rp_cnp_handled +$d: this server received CNPs and cut its rate (DCQCN reaction point)" ;;
		np_ecn_marked_roce_packets) echo "NOTE: np_ecn_marked_roce_packets +$d: RoCE packets arrived with CE set (rocemu's ECN marking)" ;;
		out_of_sequence | packet_seq_err | implied_nak_seq_err) echo "WARN: $k +$d: packets were lost or reordered on the way (go-back-N resends)" ;;
		local_ack_timeout_err) echo "WARN: local_ack_timeout_err +$d: a QP waited for an ACK past its timeout (losses without a NAK; many: a blackhole or a long pause)" ;;
		rx_discards_phy | rx_prio[0-7]_discards | rx_out_of_buffer | out_of_buffer) echo "WARN: $k +$d: the NIC dropped received packets for lack of buffer (PFC not on for that traffic?)" ;;
		rx_symbol_err_phy | rx_crc_errors_phy) echo "WARN: $k +$d: bit errors on the link (cable, optics)" ;;
		esac
	done <<<"$out"
	return 0
}

case "${1:-show}" in
show) [ $# -gt 0 ] && shift; cmd_show "$@" ;;
snapshot) shift; cmd_snapshot "$@" ;;
diff) shift; cmd_diff "$@" ;;
-h | --help) usage ;;
-*) cmd_show "$@" ;;
*) bad_usage "unknown command '$1'" ;;
esac
