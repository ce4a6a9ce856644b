#!/usr/bin/env bash
# scripts/lab/nic-setup.sh against fake sysfs/pci trees made here (SYSFS_ROOT), with fake
# ethtool, ip, modprobe and dpdk-devbind.py that only log what they were asked: it never
# touches the real system.
#
#   test_nic_setup.sh SRCDIR
set -u
SRC=${1:?SRCDIR}
NS=$SRC/scripts/lab/nic-setup.sh
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

# a fake tree: R/bus/pci/devices/PCI/{class,vendor,device,driver->,net/IF}, R/class/net/IF/{speed,mtu}
mkdev() { # root pci vendor device driver ifname speed mtu [class]
	local r=$1 d=$1/bus/pci/devices/$2
	mkdir -p "$d" "$r/bus/pci/drivers/$5"
	echo "${9:-0x020000}" >"$d/class"; echo "$3" >"$d/vendor"; echo "$4" >"$d/device"
	ln -s "../../../bus/pci/drivers/$5" "$d/driver"
	if [ "$6" != - ]; then
		mkdir -p "$d/net/$6" "$r/class/net/$6"
		echo "$7" >"$r/class/net/$6/speed"; echo "$8" >"$r/class/net/$6/mtu"
	fi
}
mktree() { # root iommu(0/1) hugepages
	local r=$1
	mkdir -p "$r/kernel/mm/hugepages/hugepages-2048kB" "$r/kernel/iommu_groups"
	echo "$3" >"$r/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
	echo "$3" >"$r/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"
	[ "$2" = 1 ] && mkdir -p "$r/kernel/iommu_groups/"{0,1,2,17}
	mkdev "$r" 0000:00:1f.6 0x8086 0x15bc e1000e eno1 1000 1500        # management (default route)
	mkdev "$r" 0000:3b:00.0 0x8086 0x159b ice ens2f0 100000 9000        # Intel E810
	mkdev "$r" 0000:3b:00.1 0x8086 0x159b ice ens2f1 100000 9000
	mkdev "$r" 0000:5e:00.0 0x15b3 0x101d mlx5_core ens3f0np0 100000 4200 # ConnectX-6 Dx
	mkdir -p "$r/bus/pci/devices/0000:5e:00.0/infiniband/mlx5_0"
	mkdev "$r" 0000:00:17.0 0x8086 0xa352 ahci - - - 0x010601          # SATA: not a NIC
}
# fakes: log their arguments; ethtool -a says flow control on for ens2f0, off for the rest
mkdir -p "$T/bin"
for c in dpdk-devbind.py modprobe; do
	printf '#!/bin/sh\necho "%s $*" >>"%s/log"\n' "$c" "$T" >"$T/bin/$c"
done
cat >"$T/bin/ethtool" <<EOF
#!/bin/sh
echo "ethtool \$*" >>"$T/log"
[ "\$1" = -a ] || exit 0
if [ "\$2" = ens2f0 ]; then on=on; else on=off; fi
printf 'Pause parameters for %s:\nAutonegotiate:\toff\nRX:\t\t%s\nTX:\t\t%s\n' "\$2" \$on \$on
EOF
printf '#!/bin/sh\necho "default via 10.1.0.1 dev eno1 proto dhcp metric 100"\n' >"$T/bin/ip"
chmod +x "$T/bin/"*
export DEVBIND=$T/bin/dpdk-devbind.py MODPROBE=$T/bin/modprobe ETHTOOL=$T/bin/ethtool IP=$T/bin/ip
echo "BOOT_IMAGE=/vmlinuz root=/dev/sda1 intel_iommu=on iommu=pt" >"$T/cmdline"
echo "nodev /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0" >"$T/mounts"
export PROC_CMDLINE=$T/cmdline PROC_MOUNTS=$T/mounts

# ---- 1. dry run on a box with IOMMU, no hugepages yet ----
mktree "$T/r1" 1 0
(cd "$SRC" && SYSFS_ROOT=$T/r1 bash "$NS") >"$T/o1" 2>&1
check "dry run: exit 1 (things to do)" rc_is $? 1
check "dry run: says so" has "$T/o1" "dry run (nothing is changed"
check "dry run: only ethtool -a (a read) ran" eval '[ -s "$T/log" ] && ! grep -qv "^ethtool -a" "$T/log"'
check "dry run: hugepages left at 0" [ "$(cat "$T/r1/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages")" = 0 ]
check "dry run: hugepages command" has "$T/o1" "would run: echo 1024 > $T/r1/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
check "iommu: groups counted" has "$T/o1" "4 IOMMU groups: vfio-pci can take Intel ports"
check "intel: devbind printed" has "$T/o1" "would run: $DEVBIND -b vfio-pci 0000:3b:00.0"
check "intel: second port too" has "$T/o1" "would run: $DEVBIND -b vfio-pci 0000:3b:00.1"
check "intel: speed and MTU" has "$T/o1" "0000:3b:00.0: intel (0x8086:0x159b), driver ice, interface ens2f0, speed 100000 Mb/s, mtu 9000"
check "intel: flow control on explained" has "$T/o1" "link flow control rx/tx: on/on"
check "intel: flow control off command" has "$T/o1" "would run: $ETHTOOL -A ens2f0 rx off tx off"
check "intel: no flow control command for the port where it is off" hasnt "$T/o1" "-A ens2f1"
check "mlx5: detected, not bound" has "$T/o1" "mlx5: bifurcated, stays on mlx5_core (no binding)"
check "mlx5: never given to devbind" hasnt "$T/o1" "vfio-pci 0000:5e:00.0"
check "mlx5: PFC off advice" has "$T/o1" "mlnx_qos -i ens3f0np0 --pfc 0,0,0,0,0,0,0,0"
check "management port left alone" has "$T/o1" "carries the default route (eno1)"
check "management port not bound" hasnt "$T/o1" "vfio-pci 0000:00:1f.6"
check "SATA controller not listed" hasnt "$T/o1" "0000:00:17.0"
check "rocemu line: 3 ports" has "$T/o1" "build/app/rocemu/rocemu -l 0-1 -a 0000:3b:00.0 -a 0000:3b:00.1 -a 0000:5e:00.0 -- --pipeline pipelines/dcqcn-lab.json"
check "pipeline ports vs found" has "$T/o1" "FIX: pipelines/dcqcn-lab.json has 2 ports, found 3"

# ---- 2. named ports, --apply: hugepages set, only the named Intel port bound ----
: >"$T/log"
mktree "$T/r2" 1 0
(cd "$SRC" && SYSFS_ROOT=$T/r2 bash "$NS" --apply --hugepages 512 3b:00.0 0000:5e:00.0) >"$T/o2" 2>&1
check "apply: exit 0 (all done)" rc_is $? 0
check "apply: hugepages written" [ "$(cat "$T/r2/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages")" = 512 ]
check "apply: devbind ran for the named Intel port" grep -qx "dpdk-devbind.py -b vfio-pci 0000:3b:00.0" "$T/log"
check "apply: vfio-pci loaded" grep -qx "modprobe vfio-pci" "$T/log"
check "apply: flow control turned off" grep -qx "ethtool -A ens2f0 rx off tx off" "$T/log"
check "apply: nothing else bound" [ "$(grep -c '^dpdk-devbind' "$T/log")" = 1 ]
check "apply: unnamed port left out" has "$T/o2" "not named on the command line: left out"
check "apply: rocemu line for the 2 named ports" has "$T/o2" "-a 0000:3b:00.0 -a 0000:5e:00.0 -- --pipeline pipelines/dcqcn-lab.json"
check "apply: ready" has "$T/o2" "ready"

# ---- 3. apply without names binds nothing ----
: >"$T/log"
mktree "$T/r3" 1 2048
(cd "$SRC" && SYSFS_ROOT=$T/r3 bash "$NS" --apply) >"$T/o3" 2>&1
check "apply, no names: exit 1" rc_is $? 1
check "apply, no names: nothing bound" [ "$(grep -c '^dpdk-devbind' "$T/log")" = 0 ]
check "apply, no names: says why" has "$T/o3" "--apply binds only the PCI addresses named on the command line"

# ---- 4. no IOMMU, bound already, missing hugepage support ----
mktree "$T/r4" 0 1024
rm -f "$T/r4/bus/pci/devices/0000:3b:00.1/driver"; mkdir -p "$T/r4/bus/pci/drivers/vfio-pci"
ln -s ../../../bus/pci/drivers/vfio-pci "$T/r4/bus/pci/devices/0000:3b:00.1/driver"
echo "BOOT_IMAGE=/vmlinuz root=/dev/sda1" >"$T/cmdline4"
(cd "$SRC" && SYSFS_ROOT=$T/r4 PROC_CMDLINE=$T/cmdline4 bash "$NS" 0000:3b:00.1 0000:5e:00.0) >"$T/o4" 2>&1
check "no iommu: exit 0 (the Intel port is bound already)" rc_is $? 0
check "no iommu: explained with the kernel options" has "$T/o4" "'intel_iommu=on iommu=pt' (Intel CPU) or 'amd_iommu=on iommu=pt' (AMD)"
check "bound already: said" has "$T/o4" "bound to vfio-pci: ready for DPDK"
(cd "$SRC" && SYSFS_ROOT=$T/r4 PROC_CMDLINE=$T/cmdline4 bash "$NS" 0000:3b:00.0) >"$T/o5" 2>&1
check "no iommu, Intel to bind: a FIX" has "$T/o5" "FIX: 0000:3b:00.0: vfio-pci needs the IOMMU"
rm -rf "$T/r4/kernel/mm/hugepages"
(cd "$SRC" && SYSFS_ROOT=$T/r4 bash "$NS" 0000:3b:00.1 0000:5e:00.0) >"$T/o6" 2>&1
check "no hugepage support: exit 1" rc_is $? 1
check "no hugepage support: one line" [ "$(grep -c 'FIX: no 2 MB hugepages' "$T/o6")" = 1 ]
(cd "$SRC" && SYSFS_ROOT=$T/r4 bash "$NS" 0000:99:00.0) >"$T/o7" 2>&1
check "a named port that is not there" has "$T/o7" "FIX: 0000:99:00.0 (named) is not under $T/r4/bus/pci/devices"
(cd "$SRC" && SYSFS_ROOT=$T/nothing bash "$NS") >"$T/o8" 2>&1
check "no pci tree: one FIX line" [ "$(grep -c "FIX: no $T/nothing/bus/pci/devices" "$T/o8")" = 1 ]

# ---- 4b. a virtio management port (a VM): its netdev is under PCI/virtioN/net ----
mktree "$T/r6" 1 512
d6=$T/r6/bus/pci/devices/0000:00:03.0
mkdir -p "$d6/virtio0/net/eth0" "$T/r6/class/net/eth0" "$T/r6/bus/pci/drivers/virtio-pci"
echo 0x020000 >"$d6/class"; echo 0x1af4 >"$d6/vendor"; echo 0x1041 >"$d6/device"
ln -s ../../../bus/pci/drivers/virtio-pci "$d6/driver"
echo 1500 >"$T/r6/class/net/eth0/mtu"
printf '#!/bin/sh\necho "default via 10.0.2.2 dev eth0 proto dhcp metric 100"\n' >"$T/bin/ip6"
chmod +x "$T/bin/ip6"
(cd "$SRC" && SYSFS_ROOT=$T/r6 IP=$T/bin/ip6 bash "$NS") >"$T/o9" 2>&1
check "virtio: its interface found" has "$T/o9" "0000:00:03.0: other (0x1af4:0x1041), driver virtio-pci, interface eth0"
check "virtio management port left alone" has "$T/o9" "carries the default route (eth0)"
check "virtio management port not proposed to rocemu" hasnt "$T/o9" "-a 0000:00:03.0"

# ---- 5. usage ----
bash "$NS" --bogus >/dev/null 2>&1
check "bad option: exit 2" rc_is $? 2
bash "$NS" not-a-pci >/dev/null 2>&1
check "bad PCI address: exit 2" rc_is $? 2

echo "$((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
