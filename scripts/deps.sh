#!/usr/bin/env bash
# Installs what rocemu needs to build and test, with apt-get, only if something is missing.
# Idempotent; sourced by test.sh and demo.sh, or run alone.
set -u

# Everything a test needs, so that nothing skips (under CI=true a skip is a failure):
# libcmocka-dev (unit tests are not built without it), tshark and its dumpcap (Wireshark
# cross-checks in proto-tshark-*, replay-switch-cnp, e2e-rocegen), dpdk (dpdk-testpmd: the
# benchmarks' baseline), the PMDs the tests open by name (net_null, net_pcap, net_af_packet,
# net_memif: rocegen-args, e2e, benchmarks), clang + libFuzzer (-Dfuzz=true builds),
# python3-jsonschema (config-schema validates files against `rocemu schema`).
ROCEMU_DEB_PACKAGES=(
	build-essential pkg-config meson ninja-build python3
	dpdk dpdk-dev libdpdk-dev libjansson-dev libpcap-dev libibverbs-dev rdma-core
	librte-net-null23 librte-net-pcap23 librte-net-af-packet23 librte-net-memif23
	libcmocka-dev clang libfuzzer-14-dev python3-matplotlib python3-jsonschema
	tshark wireshark-common iproute2 iputils-ping ethtool
)

rocemu_install_deps() {
	local missing=() p
	for p in "${ROCEMU_DEB_PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	echo "deps: installing ${missing[*]}"
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: need root to apt-get install: ${missing[*]}" >&2
		return 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null || { echo "deps: apt-get update failed" >&2; return 1; }
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
		{ echo "deps: apt-get install failed: ${missing[*]}" >&2; return 1; }
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	rocemu_install_deps
fi
