#!/usr/bin/env bash
# The one-machine test lab: two network namespaces stand for the two GPU servers, each joined
# by a veth pair to the root namespace. rocemu attaches to the root ends (remu-a0, remu-b0)
# with net_af_packet, so the namespaces can talk only through rocemu.
#
#   scripts/lab/lab.sh up      create (idempotent: tears down leftovers first)
#   scripts/lab/lab.sh down    remove (idempotent)
#   scripts/lab/lab.sh status  show what exists
#   scripts/lab/lab.sh eal     print the EAL arguments that attach rocemu to the lab
#
# Environment: LAB_PREFIX (default "remu") names everything, so two labs can coexist.
# Addresses are from 198.18.0.0/15 (RFC 2544 benchmarking), only inside the namespaces.
set -u

P=${LAB_PREFIX:-remu}
NS_A=${P}-a
NS_B=${P}-b
IF_A=${P}-a0 # root-namespace end, rocemu port p0
IF_B=${P}-b0 # root-namespace end, rocemu port p1
IP_A=198.18.0.1
IP_B=198.18.0.2
MAC_A=02:72:6d:00:00:01
MAC_B=02:72:6d:00:00:02

die() { echo "lab: $*" >&2; exit 1; }

need() {
	[ "$(id -u)" -eq 0 ] || die "must run as root (network namespaces and veth pairs)"
	command -v ip >/dev/null || die "ip (iproute2) is not installed"
}

down() {
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	ip link del "$IF_A" 2>/dev/null
	ip link del "$IF_B" 2>/dev/null
	return 0
}

# Frames leaving a namespace must carry full checksums: rocemu forwards them byte for byte
# through an AF_PACKET socket, which does not complete a checksum the kernel left partial.
no_offload() {
	local ns=$1 dev=$2
	if command -v ethtool >/dev/null; then
		ip netns exec "$ns" ethtool -K "$dev" tx off rx off tso off gso off gro off \
			>/dev/null 2>&1 || true
	fi
}

side() {
	local ns=$1 rootif=$2 ip=$3 mac=$4
	ip netns add "$ns" || die "cannot create namespace $ns"
	ip link add "$rootif" type veth peer name eth0 netns "$ns" || die "cannot create veth $rootif"
	ip netns exec "$ns" ip link set lo up
	ip netns exec "$ns" ip link set eth0 address "$mac"
	ip netns exec "$ns" ip addr add "$ip/24" dev eth0
	ip netns exec "$ns" ip link set eth0 up
	no_offload "$ns" eth0
	# The root end is a bare wire for rocemu: no addresses, no IPv6 chatter of its own.
	sysctl -qw "net.ipv6.conf.$rootif.disable_ipv6=1" 2>/dev/null || true
	ip link set "$rootif" promisc on
	ip link set "$rootif" up
	if command -v ethtool >/dev/null; then
		ethtool -K "$rootif" tx off rx off tso off gso off gro off >/dev/null 2>&1 || true
	fi
}

up() {
	need
	down
	side "$NS_A" "$IF_A" "$IP_A" "$MAC_A"
	side "$NS_B" "$IF_B" "$IP_B" "$MAC_B"
	echo "lab: $NS_A ($IP_A, $MAC_A) <-> $IF_A [rocemu p0]  |  [rocemu p1] $IF_B <-> $NS_B ($IP_B, $MAC_B)"
}

status() {
	ip netns list | grep -E "^($NS_A|$NS_B)( |$)" || echo "lab: no namespaces"
	ip -br link show "$IF_A" 2>/dev/null
	ip -br link show "$IF_B" 2>/dev/null
	return 0
}

case "${1:-}" in
up) up ;;
down) need; down; echo "lab: down" ;;
status) status ;;
eal) echo "--vdev=net_af_packet0,iface=$IF_A,framecnt=4096 --vdev=net_af_packet1,iface=$IF_B,framecnt=4096" ;;
env) echo "NS_A=$NS_A NS_B=$NS_B IF_A=$IF_A IF_B=$IF_B IP_A=$IP_A IP_B=$IP_B MAC_A=$MAC_A MAC_B=$MAC_B" ;;
*) echo "usage: $0 up|down|status|eal|env" >&2; exit 2 ;;
esac
