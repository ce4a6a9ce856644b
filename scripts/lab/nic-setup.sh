#!/usr/bin/env bash
# Gets the lab box's NICs ready for rocemu, and says what it does and why.
#
#   nic-setup.sh [--dry-run | --apply] [--hugepages N] [--pipeline FILE] [PCI ...]
#
# --dry-run (the default) changes nothing: it checks and prints the commands it would run.
# --apply sets the 2 MB hugepages (N, default 1024 = 2 GB), turns link flow control off on the
# ports a kernel driver owns, and binds the Intel ports NAMED ON THE COMMAND LINE to vfio-pci
# (never a port it found by itself: that could be the one you are logged in through).
#
# It checks the IOMMU (vfio-pci needs it: /sys/kernel/iommu_groups, the kernel command line),
# the hugepages, finds the Ethernet NICs under /sys/bus/pci/devices, and per port says: Intel
# (bind to vfio-pci; dpdk-devbind.py), NVIDIA/Mellanox mlx5 (bifurcated: stays on mlx5_core,
# DPDK's mlx5 PMD needs rdma-core; no binding), others; the speed, MTU and link flow control
# (PAUSE/PFC consumed by the NIC while it is on); the port carrying the default route is left
# out. Last it prints the rocemu command line for the ports found.
#
# Inputs can be redirected (tests/lab make fake trees): SYSFS_ROOT (/sys), PROC_CMDLINE
# (/proc/cmdline), PROC_MOUNTS (/proc/mounts), DEVBIND (dpdk-devbind.py), ETHTOOL (ethtool),
# MODPROBE (modprobe), IP (ip), ROCEMU (build/app/rocemu/rocemu).
#
# Exit: 0 ready (nothing to fix), 1 something to fix or that failed, 2 bad usage.
set -u

SYSFS_ROOT=${SYSFS_ROOT:-/sys}
PROC_CMDLINE=${PROC_CMDLINE:-/proc/cmdline}
PROC_MOUNTS=${PROC_MOUNTS:-/proc/mounts}
DEVBIND=${DEVBIND:-dpdk-devbind.py}
ETHTOOL=${ETHTOOL:-ethtool}
MODPROBE=${MODPROBE:-modprobe}
IP=${IP:-ip}
ROCEMU=${ROCEMU:-build/app/rocemu/rocemu}

PROG=nic-setup
apply=0
hugepages=1024
pipeline=pipelines/dcqcn-lab.json
named=()
problems=0

usage() { sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
bad_usage() { echo "$PROG: $*" >&2; echo "usage: nic-setup.sh [--dry-run|--apply] [--hugepages N] [--pipeline FILE] [PCI ...] (--help)" >&2; exit 2; }
fix() { echo "FIX: $*"; problems=$((problems + 1)); }
say() { echo "  $*"; }
readval() { [ -r "$1" ] && head -n1 "$1" 2>/dev/null | tr -d '\r'; }

# run CMD...: print it; run it only with --apply
run() {
	if [ $apply -eq 1 ]; then
		echo "  run: $*"
		"$@" || { echo "FAILED: $*"; problems=$((problems + 1)); return 1; }
	else
		echo "  would run: $*"
	fi
}

while [ $# -gt 0 ]; do
	case "$1" in
	--dry-run) apply=0; shift ;;
	--apply) apply=1; shift ;;
	--hugepages) [ $# -ge 2 ] && [[ "$2" =~ ^[0-9]+$ ]] || bad_usage "--hugepages needs a number of 2 MB pages"; hugepages=$2; shift 2 ;;
	--pipeline) [ $# -ge 2 ] || bad_usage "--pipeline needs a file"; pipeline=$2; shift 2 ;;
	-h | --help) usage ;;
	-*) bad_usage "unknown option '$1'" ;;
	*)
		[[ "$1" =~ ^([0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$ ]] || bad_usage "'$1' is not a PCI address (0000:3b:00.0)"
		p=$1; [[ "$p" =~ ^[0-9a-fA-F]{4}: ]] || p=0000:$p
		named+=("${p,,}"); shift ;;
	esac
done

echo "nic-setup: $([ $apply -eq 1 ] && echo "applying" || echo "dry run (nothing is changed; --apply to do it)")"

# ---- IOMMU ----
check_iommu() {
	local groups=0 cmd
	echo "iommu:"
	if [ -d "$SYSFS_ROOT/kernel/iommu_groups" ]; then
		groups=$(find "$SYSFS_ROOT/kernel/iommu_groups" -mindepth 1 -maxdepth 1 | wc -l)
	fi
	cmd=$(cat "$PROC_CMDLINE" 2>/dev/null)
	say "kernel command line: ${cmd:-(unreadable: $PROC_CMDLINE)}"
	if [ "$groups" -gt 0 ]; then
		say "$groups IOMMU groups: vfio-pci can take Intel ports"
		case " $cmd " in *" iommu=pt "*) ;; *) say "note: iommu=pt on the kernel command line keeps the kernel's own devices fast (passthrough)" ;; esac
		IOMMU=1
	else
		IOMMU=0
		echo "  no IOMMU groups under $SYSFS_ROOT/kernel/iommu_groups: the IOMMU is off or not in the kernel."
		echo "  vfio-pci (Intel ports) needs it; mlx5 ports do not. To turn it on, add to the kernel"
		echo "  command line (GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub, reboot):"
		case " $cmd " in
		*intel_iommu=on* | *amd_iommu=on*) echo "  the command line asks for it already: is VT-d/AMD-Vi on in the BIOS?" ;;
		*) echo "  'intel_iommu=on iommu=pt' (Intel CPU) or 'amd_iommu=on iommu=pt' (AMD), and VT-d/AMD-Vi in the BIOS" ;;
		esac
	fi
}

# ---- hugepages ----
check_hugepages() {
	local d=$SYSFS_ROOT/kernel/mm/hugepages/hugepages-2048kB n free
	echo "hugepages:"
	if [ ! -d "$d" ]; then
		fix "no 2 MB hugepages ($d missing): the kernel lacks hugetlbfs; rocemu would need --no-huge (slow at 100G)"
		return
	fi
	n=$(readval "$d/nr_hugepages")
	free=$(readval "$d/free_hugepages")
	say "2 MB pages: ${n:-?} (${free:-?} free), wanted $hugepages ($((hugepages * 2)) MB)"
	if [ "${n:-0}" -lt "$hugepages" ]; then
		if [ $apply -eq 1 ]; then
			echo "  run: echo $hugepages > $d/nr_hugepages"
			if echo "$hugepages" >"$d/nr_hugepages" 2>/dev/null; then
				n=$(readval "$d/nr_hugepages")
				[ "${n:-0}" -ge "$hugepages" ] || fix "asked for $hugepages hugepages, the kernel gave ${n:-?} (memory fragmented: set them at boot, hugepages=$hugepages on the command line)"
			else
				fix "cannot write $d/nr_hugepages (root?)"
			fi
		else
			echo "  would run: echo $hugepages > $d/nr_hugepages"
			problems=$((problems + 1))
		fi
	fi
	if [ -r "$PROC_MOUNTS" ] && ! grep -q hugetlbfs "$PROC_MOUNTS"; then
		fix "no hugetlbfs mounted ($PROC_MOUNTS): mount -t hugetlbfs nodev /dev/hugepages"
	fi
}

# ---- NICs ----
default_route_if() { $IP -o route show default 2>/dev/null | sed -n 's/.* dev \([^ ]*\).*/\1/p' | head -n1; }

PORTS=()
find_nics() {
	local dev pci class vendor device driver ifc mgmt speed mtu kind sel pause
	mgmt=$(default_route_if)
	echo "nics (${SYSFS_ROOT}/bus/pci/devices, Ethernet class 0x0200):"
	[ -n "$mgmt" ] || say "note: no default route ('$IP -o route show default'): make sure none of these is the port you are logged in through"
	[ -d "$SYSFS_ROOT/bus/pci/devices" ] || { fix "no $SYSFS_ROOT/bus/pci/devices: not a PCI system, or SYSFS_ROOT wrong"; return; }
	for dev in "$SYSFS_ROOT"/bus/pci/devices/*; do
		[ -e "$dev" ] || continue
		pci=$(basename "$dev")
		class=$(readval "$dev/class")
		case "$class" in 0x0200*) ;; *) continue ;; esac
		vendor=$(readval "$dev/vendor")
		device=$(readval "$dev/device")
		driver=""
		[ -L "$dev/driver" ] && driver=$(basename "$(readlink "$dev/driver")")
		ifc=""
		[ -d "$dev/net" ] && ifc=$(ls "$dev/net" 2>/dev/null | head -n1)
		# virtio-net puts it one level down, under the virtio device
		if [ -z "$ifc" ]; then
			for v in "$dev"/virtio*/net; do
				[ -d "$v" ] && { ifc=$(ls "$v" 2>/dev/null | head -n1); break; }
			done
		fi
		sel=1
		if [ ${#named[@]} -gt 0 ]; then
			sel=0
			for p in "${named[@]}"; do [ "$p" = "$pci" ] && sel=1; done
		fi
		case "$vendor" in
		0x8086) kind=intel ;;
		0x15b3) kind=mlx5 ;;
		0x14e4) kind=broadcom ;;
		*) kind=other ;;
		esac
		speed=""
		mtu=""
		if [ -n "$ifc" ]; then
			speed=$(readval "$SYSFS_ROOT/class/net/$ifc/speed")
			mtu=$(readval "$SYSFS_ROOT/class/net/$ifc/mtu")
		fi
		echo "$pci: $kind ($vendor:$device), driver ${driver:-none}, interface ${ifc:--}, speed ${speed:-?} Mb/s, mtu ${mtu:-?}"
		if [ -n "$ifc" ] && [ "$ifc" = "$mgmt" ]; then
			say "carries the default route ($ifc): the management port, left alone"
			continue
		fi
		[ $sel -eq 1 ] || { say "not named on the command line: left out"; continue; }
		if [ -n "$mtu" ] && [ "$mtu" -lt 9000 ] 2>/dev/null && [ "$kind" = mlx5 ]; then
			say "note: MTU $mtu; set it at least as large as the servers' (ip link set $ifc mtu 9000)"
		fi
		# link flow control (802.3x) while a kernel driver owns the port: the NIC consumes PAUSE
		if [ -n "$ifc" ]; then
			pause=$($ETHTOOL -a "$ifc" 2>/dev/null | awk -F: '/^RX:/ {gsub(/[ \t]/, "", $2); rx = $2} /^TX:/ {gsub(/[ \t]/, "", $2); tx = $2} END {if (rx != "") print rx "/" tx}')
			if [ -z "$pause" ]; then
				say "link flow control: unknown ('$ETHTOOL -a $ifc' gave nothing)"
			elif [ "$pause" = off/off ]; then
				say "link flow control: off (PAUSE/PFC frames are not consumed by the NIC)"
			else
				say "link flow control rx/tx: $pause: the NIC consumes PAUSE frames and answers them itself, rocemu would not see them"
				run "$ETHTOOL" -A "$ifc" rx off tx off || true
			fi
		fi
		case "$kind" in
		intel)
			if [ "$driver" = vfio-pci ]; then
				say "bound to vfio-pci: ready for DPDK"
			else
				say "Intel: DPDK takes it through vfio-pci (the kernel loses $ifc while rocemu has it)"
				[ "$IOMMU" = 1 ] || fix "$pci: vfio-pci needs the IOMMU (above)"
				if [ $apply -eq 1 ] && [ ${#named[@]} -eq 0 ]; then
					say "not bound: --apply binds only the PCI addresses named on the command line"
					echo "  to bind: $DEVBIND -b vfio-pci $pci"
					problems=$((problems + 1))
				else
					[ "${VFIO_LOADED:-0}" = 1 ] || { run "$MODPROBE" vfio-pci || true; VFIO_LOADED=1; }
					run "$DEVBIND" -b vfio-pci "$pci" || true
					[ $apply -eq 1 ] || problems=$((problems + 1))
				fi
			fi
			say "PFC: rocemu turns link flow control off and asks for MAC control forwarding when it starts, and prints what the driver accepted (its 'PFC:' line for the port)"
			;;
		mlx5)
			say "mlx5: bifurcated, stays on ${driver:-mlx5_core} (no binding); DPDK's mlx5 PMD needs rdma-core (libibverbs, libmlx5) and the port up"
			[ "$driver" = mlx5_core ] || fix "$pci: mlx5 port not on mlx5_core (driver ${driver:-none}): modprobe mlx5_core; do not bind it to vfio-pci"
			[ -d "$dev/infiniband" ] || [ -z "$driver" ] || say "note: no RDMA device under it: modprobe mlx5_ib (DPDK's mlx5 PMD opens it through verbs)"
			say "PFC: turn the port's own PFC off too, or the NIC answers PFC frames itself: mlnx_qos -i ${ifc:-IF} --pfc 0,0,0,0,0,0,0,0 (rocemu's 'PFC:' line at start says what the PMD accepted)"
			;;
		*)
			say "$kind: not known to this script; DPDK may support it (see DPDK's NIC guides); vfio-pci unless its PMD is bifurcated"
			;;
		esac
		PORTS+=("$pci")
	done
	[ ${#PORTS[@]} -gt 0 ] || fix "no usable Ethernet port found"
	if [ ${#named[@]} -gt 0 ]; then
		for p in "${named[@]}"; do
			[ -e "$SYSFS_ROOT/bus/pci/devices/$p" ] || fix "$p (named) is not under $SYSFS_ROOT/bus/pci/devices"
		done
	fi
}

check_iommu
check_hugepages
find_nics

echo "rocemu:"
if [ ${#PORTS[@]} -gt 0 ]; then
	want=""
	[ -r "$pipeline" ] && want=$(grep -c '"name"' <(sed -n '/"ports"/,/\]/p' "$pipeline"))
	if [ -n "$want" ] && [ "$want" != ${#PORTS[@]} ]; then
		fix "$pipeline has $want ports, found ${#PORTS[@]}: name the ports with PCI arguments"
	fi
	cmd="$ROCEMU -l 0-1"
	for p in "${PORTS[@]}"; do cmd+=" -a $p"; done
	cmd+=" -- --pipeline $pipeline --stats run.json --stats-interval 1"
	echo "  $cmd"
fi
if [ $problems -eq 0 ]; then echo "ready"; else echo "$problems thing(s) to do"; fi
[ $problems -eq 0 ]
