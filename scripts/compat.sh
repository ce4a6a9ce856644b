#!/usr/bin/env bash
# Builds rocemu and runs its unit, fuzz-corpus and replay tests against another DPDK than the
# host's, inside a Debian root made with debootstrap. Default: Debian 13 "trixie" (DPDK 24.11,
# gcc 14). The root is cached and reused between runs; the build directory is fresh every run.
# Closing line: "N passed, N failed" (", N skipped" when some were); exit 0 only if all passed.
#
#   sudo scripts/compat.sh                      trixie root under /var/cache/rocemu-compat/trixie
#   ROCEMU_COMPAT_SUITE=forky scripts/compat.sh another Debian suite (its own cached root)
#   ROCEMU_COMPAT_DIR=/some/dir                 where the roots live (default /var/cache/rocemu-compat)
#   ROCEMU_COMPAT_ROOT=/some/dir/root           the root itself (default $ROCEMU_COMPAT_DIR/$SUITE)
#   ROCEMU_COMPAT_MIRROR=http://...             Debian mirror (default http://deb.debian.org/debian)
#   ROCEMU_COMPAT_REFRESH=1                     apt-get upgrade inside the cached root first
#   ROCEMU_COMPAT_NEW=1                         throw the cached root away and make it anew
#   ROCEMU_COMPAT_DPDK_SRC=/path/dpdk-23.11.7   a DPDK source tree (an unpacked release tarball):
#       build that DPDK inside the root (cached by version under /opt/dpdk-VERSION there) and
#       build and test rocemu against it instead of the suite's own DPDK. This is how 23.11 is
#       tested: no Debian suite ships it.
#
# Needs root (debootstrap, chroot, mount). Installs debootstrap on the host with apt-get if it is
# missing. Mounts /proc, /sys, /dev (with its own /dev/shm and /run tmpfs) and the source tree
# (read-only) inside the root; every exit path unmounts them.
set -u
set -o pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd) || exit 1
SUITE=${ROCEMU_COMPAT_SUITE:-trixie}
CACHE=${ROCEMU_COMPAT_DIR:-/var/cache/rocemu-compat}
ROOTFS=${ROCEMU_COMPAT_ROOT:-$CACHE/$SUITE}
MIRROR=${ROCEMU_COMPAT_MIRROR:-http://deb.debian.org/debian}
JOBS=${ROCEMU_COMPAT_JOBS:-2}
CACHE=$(realpath -m "$CACHE") ROOTFS=$(realpath -m "$ROOTFS")
DEBS=$CACHE/debs-$SUITE # downloaded packages, kept for a new root of the same suite

# What the build and the unit/fuzz/replay tests need (scripts/deps.sh, less the e2e lab's
# network tools, rdma-core and the clang fuzz toolchain, which these suites do not use). git: the
# build stamps rocemu --version with the commit (app/rocemu/meson.build), and replay-usertrip
# checks that commit is one of this tree's.
PACKAGES=(
	build-essential pkg-config meson ninja-build python3
	dpdk-dev libdpdk-dev libjansson-dev libpcap-dev libibverbs-dev
	libcmocka-dev tshark python3-jsonschema git
)
TEST_SUITES=(unit fuzz replay)
DPDK_SRC=${ROCEMU_COMPAT_DPDK_SRC:-}
# The DPDK drivers the tests and the vdev labs use (bus/pci, bus/vdev, mempool/ring always come).
DPDK_DRIVERS=net/ring,net/null,net/pcap,net/af_packet

MOUNTS=()
t_start=$(date +%s)

# Messages go to the script's own stdout/stderr, saved here: a trap that fires while a function
# runs with its output redirected (in_root ... >log) would otherwise write into that log.
exec 3>&1 4>&2
say() { echo "compat: $*" >&3; }
die() {
	echo "compat: ERROR: $*" >&4
	echo "0 passed, 1 failed" >&3
	exit 1
}
elapsed() { echo "$(($(date +%s) - t_start)) s"; }

# Unmount whatever is mounted at or below $1, deepest first. Returns 1 if something stays.
unmount_below() {
	local base=$1 m
	[ -d "$base" ] || return 0
	base=$(realpath "$base")
	for m in $(awk -v b="$base" '$2 == b || index($2, b "/") == 1 { print $2 }' /proc/self/mounts |
		sort -r); do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null ||
			echo "compat: cannot unmount $m" >&4
	done
	! awk -v b="$base" '$2 == b || index($2, b "/") == 1 { found = 1 } END { exit !found }' \
		/proc/self/mounts
}

# rm -rf of the root only with nothing mounted in it: --one-file-system does not stop at a bind
# mount from the same filesystem (the deb cache, the source tree).
remove_root() {
	unmount_below "$ROOTFS" || die "refusing to remove $ROOTFS: something is still mounted in it"
	rm -rf --one-file-system "$ROOTFS" || die "cannot remove $ROOTFS"
}

cleanup() {
	local rc=$?
	if [ ${#MOUNTS[@]} -gt 0 ]; then
		say "unmounting ${#MOUNTS[@]} mounts under $ROOTFS"
		MOUNTS=()
		unmount_below "$ROOTFS" || rc=1
	fi
	exec 9>&-
	exit $rc
}
trap cleanup EXIT
trap 'echo "compat: interrupted" >&4; echo "0 passed, 1 failed" >&3; exit 130' INT
trap 'echo "compat: terminated" >&4; echo "0 passed, 1 failed" >&3; exit 143' TERM HUP

# Mount $2 at $ROOTFS$3 with options $1 ("bind", "bind,ro" or an fstype), private so nothing
# propagates back to the host's own mounts.
mnt() {
	local how=$1 what=$2 where=$ROOTFS$3
	mkdir -p "$where" || die "cannot make $where"
	case "$how" in
	bind) mount --bind "$what" "$where" ;;
	bind,ro) mount --bind -o ro "$what" "$where" ;;
	*) mount -t "$how" "$what" "$where" ;;
	esac || die "mount $how $what on $where failed"
	MOUNTS+=("$where")
	mount --make-private "$where" 2>/dev/null || true
}

in_root() {
	chroot "$ROOTFS" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive "$@"
}

# ---- preconditions -------------------------------------------------------------------------
[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, chroot and mount need it)"
for c in mount umount chroot awk realpath flock; do
	command -v "$c" >/dev/null || die "'$c' not found on the host"
done
[ -f "$SRC/meson.build" ] || die "no meson.build in $SRC: run the script from the rocemu tree"
if [ -n "$DPDK_SRC" ]; then
	DPDK_SRC=$(realpath "$DPDK_SRC") || die "ROCEMU_COMPAT_DPDK_SRC: no such directory"
	[ -f "$DPDK_SRC/VERSION" ] && [ -f "$DPDK_SRC/lib/eal/include/rte_version.h" ] ||
		die "ROCEMU_COMPAT_DPDK_SRC=$DPDK_SRC is not a DPDK source tree (no VERSION, lib/eal)"
	PACKAGES+=(python3-pyelftools libnuma-dev)
fi
case "$ROOTFS" in
/ | /bin* | /boot* | /dev* | /etc* | /home | /proc* | /sys* | /usr* | /var | "$SRC"*)
	die "refusing root directory '$ROOTFS'" ;;
esac

if ! command -v debootstrap >/dev/null; then
	say "installing debootstrap on the host (apt-get)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null || die "apt-get update failed on the host"
	apt-get install -y -qq --no-install-recommends debootstrap >/dev/null ||
		die "apt-get install debootstrap failed on the host"
	command -v debootstrap >/dev/null || die "debootstrap still missing after apt-get install"
fi

mkdir -p "$CACHE" "$(dirname "$ROOTFS")" || die "cannot make $CACHE"
# One run per root at a time: a second run waits rather than sharing mounts and build dir.
exec 9>"$ROOTFS.lock" || die "cannot open $ROOTFS.lock"
if ! flock -n 9; then
	say "another compat run holds $ROOTFS.lock: waiting"
	flock 9 || die "cannot lock $ROOTFS.lock"
fi
# A run killed with SIGKILL leaves its mounts: take them away before touching the root.
if [ -d "$ROOTFS" ] && grep -q " $(realpath "$ROOTFS")/" /proc/self/mounts; then
	say "removing mounts left under $ROOTFS by a killed run"
	unmount_below "$ROOTFS" || die "stale mounts under $ROOTFS cannot be removed"
fi

# ---- the root ------------------------------------------------------------------------------
STAMP=$ROOTFS/.rocemu-compat-ready
BOOTSTRAPPED=$ROOTFS/.rocemu-compat-bootstrapped
if [ "${ROCEMU_COMPAT_NEW:-0}" = 1 ] && [ -d "$ROOTFS" ]; then
	say "ROCEMU_COMPAT_NEW=1: removing the cached root $ROOTFS"
	remove_root
fi
if [ -d "$ROOTFS" ] && [ ! -f "$BOOTSTRAPPED" ]; then
	say "removing the unfinished root $ROOTFS (an earlier run stopped while making it)"
	remove_root
fi
if [ ! -d "$ROOTFS" ]; then
	say "making a Debian $SUITE root with debootstrap in $ROOTFS (from $MIRROR)"
	t0=$(date +%s)
	mkdir -p "$DEBS" || die "cannot make $DEBS"
	log=$CACHE/debootstrap-$SUITE.log
	# An older debootstrap has no script for a newer suite: Debian's suites since buster all
	# bootstrap like sid.
	dscript=()
	[ -e "/usr/share/debootstrap/scripts/$SUITE" ] || dscript=(/usr/share/debootstrap/scripts/sid)
	if ! debootstrap --variant=minbase --cache-dir="$DEBS" "$SUITE" "$ROOTFS" "$MIRROR" \
		"${dscript[@]}" >"$log" 2>&1; then
		tail -n 20 "$log" >&2
		[ -f "$ROOTFS/debootstrap/debootstrap.log" ] &&
			tail -n 20 "$ROOTFS/debootstrap/debootstrap.log" >&2
		die "debootstrap $SUITE failed (full log: $log)"
	fi
	say "debootstrap done in $(($(date +%s) - t0)) s"
	touch "$BOOTSTRAPPED"
fi
# No recommends; and a testing suite's Release on a mirror that lags the clock may be past its
# Valid-Until (forky here): signatures are still checked.
printf 'APT::Install-Recommends "false";\nAcquire::Check-Valid-Until "false";\n' \
	>"$ROOTFS/etc/apt/apt.conf.d/90rocemu-compat" 2>/dev/null ||
	die "$ROOTFS/etc/apt is not writable: not a Debian root (remove it)"
[ -x "$ROOTFS/usr/bin/apt-get" ] || die "$ROOTFS has no apt-get: not a Debian root (remove it)"

# ---- mounts --------------------------------------------------------------------------------
# /dev from the host (null, zero, urandom, full for the tests), but its own /dev/shm and /run so
# the tests' DPDK files (--no-huge memory, /var/run/dpdk/<prefix>) stay inside the root.
say "mounting /proc /sys /dev /dev/shm /run and the source tree in $ROOTFS"
mnt proc proc /proc
mnt sysfs sysfs /sys
mnt bind /dev /dev
mnt tmpfs tmpfs /dev/shm
mount -o remount,mode=1777 "$ROOTFS/dev/shm" 2>/dev/null || chmod 1777 "$ROOTFS/dev/shm"
mnt tmpfs tmpfs /run
mkdir -p "$ROOTFS/run/dpdk" "$ROOTFS/run/lock"
[ -L "$ROOTFS/var/run" ] || [ -d "$ROOTFS/var/run" ] || ln -s /run "$ROOTFS/var/run"
cp -L /etc/resolv.conf "$ROOTFS/etc/resolv.conf" 2>/dev/null || true
mnt bind,ro "$SRC" /src/rocemu

# ---- packages ------------------------------------------------------------------------------
missing=()
for p in "${PACKAGES[@]}"; do
	in_root dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ] || [ "${ROCEMU_COMPAT_REFRESH:-0}" = 1 ]; then
	t0=$(date +%s)
	# debs downloaded inside the root land in the host's cache dir, reused by a new root
	mkdir -p "$DEBS"
	mnt bind "$DEBS" /var/cache/apt/archives
	mkdir -p "$ROOTFS/var/cache/apt/archives/partial"
	say "apt-get update inside the root"
	in_root apt-get update -qq >/dev/null || die "apt-get update failed inside the $SUITE root"
	if [ "${ROCEMU_COMPAT_REFRESH:-0}" = 1 ]; then
		say "apt-get upgrade inside the root (ROCEMU_COMPAT_REFRESH=1)"
		in_root apt-get -y -qq upgrade >/dev/null || die "apt-get upgrade failed inside the root"
	fi
	if [ ${#missing[@]} -gt 0 ]; then
		say "installing inside the root: ${missing[*]}"
		log=$CACHE/apt-$SUITE.log
		in_root apt-get install -y -q --no-install-recommends "${missing[@]}" >"$log" 2>&1 ||
			{ tail -n 20 "$log" >&2; die "apt-get install failed inside the root (log: $log)"; }
	fi
	# keep the shared deb cache to what the mirror still has (old versions go)
	in_root apt-get -qq autoclean >/dev/null 2>&1 || true
	umount "$ROOTFS/var/cache/apt/archives" || die "cannot unmount the deb cache"
	unset 'MOUNTS[${#MOUNTS[@]}-1]'
	say "packages done in $(($(date +%s) - t0)) s"
fi
for p in "${PACKAGES[@]}"; do
	in_root dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		die "package $p is not installed in the $SUITE root"
done
touch "$STAMP"

# ---- DPDK from source (ROCEMU_COMPAT_DPDK_SRC) -----------------------------------------------
DPDK_ENV=()
if [ -n "$DPDK_SRC" ]; then
	dver=$(tr -d ' \n' <"$DPDK_SRC/VERSION")
	prefix=/opt/dpdk-$dver
	if [ ! -f "$ROOTFS$prefix/.rocemu-compat-ready" ]; then
		t0=$(date +%s)
		say "building DPDK $dver from $DPDK_SRC into $prefix inside the root (once per version)"
		mnt bind,ro "$DPDK_SRC" /src/dpdk
		rm -rf --one-file-system "$ROOTFS$prefix" "$ROOTFS/build-dpdk"
		mkdir -p "$ROOTFS/build-dpdk"
		log=$CACHE/dpdk-$dver-$SUITE.log
		if ! in_root meson setup /build-dpdk/$dver /src/dpdk --prefix="$prefix" --libdir=lib \
			-Dplatform=generic -Dtests=false -Denable_docs=false -Dexamples= \
			-Ddisable_apps='*' -Denable_kmods=false -Denable_libs=pcapng \
			-Denable_drivers="$DPDK_DRIVERS" >"$log" 2>&1 ||
			! in_root ninja -C /build-dpdk/$dver -j "$JOBS" install >>"$log" 2>&1; then
			tail -n 30 "$log" >&2
			die "building DPDK $dver failed (log: $log)"
		fi
		rm -rf --one-file-system "$ROOTFS/build-dpdk"
		touch "$ROOTFS$prefix/.rocemu-compat-ready"
		say "DPDK $dver built and installed in $(($(date +%s) - t0)) s"
	fi
	DPDK_ENV=(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" LD_LIBRARY_PATH="$prefix/lib")
fi

dpdk_version=$(in_root "${DPDK_ENV[@]}" pkg-config --modversion libdpdk) ||
	die "pkg-config finds no libdpdk in the root"
gcc_version=$(in_root gcc -dumpfullversion) || die "no gcc in the root"
meson_version=$(in_root meson --version) || die "no meson in the root"
say "Debian $(cat "$ROOTFS/etc/debian_version"): DPDK $dpdk_version, gcc $gcc_version, meson $meson_version"
say "root ready after $(elapsed)"

# ---- build and test ------------------------------------------------------------------------
BUILD=/build/rocemu
# The source is bind-mounted from the host, owned by whoever cloned it: git inside the root
# refuses a repository another user owns ("dubious ownership"), and --version would say
# "git unknown".
in_root git config --global --replace-all safe.directory /src/rocemu ||
	die "git config safe.directory failed inside the root"
rm -rf --one-file-system "$ROOTFS/build" || die "cannot remove the old build dir"
mkdir -p "$ROOTFS/build"
t0=$(date +%s)
say "meson setup $BUILD (werror on, e2e off) and ninja"
if ! in_root "${DPDK_ENV[@]}" meson setup "$BUILD" /src/rocemu -De2e=disabled >"$ROOTFS/build/setup.log" 2>&1; then
	tail -n 40 "$ROOTFS/build/setup.log"
	die "meson setup failed against DPDK $dpdk_version (log: $ROOTFS/build/setup.log)"
fi
if [ -n "$DPDK_SRC" ] && ! grep -q -- "-I$prefix/include" "$ROOTFS$BUILD/build.ninja"; then
	die "the build does not use $prefix/include: it would test the suite's own DPDK"
fi
if ! in_root ninja -C "$BUILD" -k 0 -j "$JOBS" >"$ROOTFS/build/ninja.log" 2>&1; then
	grep -E 'error|warning' "$ROOTFS/build/ninja.log" | head -n 40
	tail -n 20 "$ROOTFS/build/ninja.log"
	die "build failed against DPDK $dpdk_version, gcc $gcc_version (log: $ROOTFS/build/ninja.log)"
fi
nwarn=$(grep -c 'warning:' "$ROOTFS/build/ninja.log")
[ "$nwarn" -eq 0 ] || { grep 'warning:' "$ROOTFS/build/ninja.log"; die "$nwarn compiler warnings"; }
say "built in $(($(date +%s) - t0)) s, no warnings"

t0=$(date +%s)
suite_args=()
for s in "${TEST_SUITES[@]}"; do suite_args+=(--suite "$s"); done
say "meson test ${suite_args[*]}"
in_root "${DPDK_ENV[@]}" meson test -C "$BUILD" --no-rebuild --print-errorlogs --num-processes "$JOBS" \
	"${suite_args[@]}"
say "tests done in $(($(date +%s) - t0)) s; total $(elapsed)"

in_root python3 - "$BUILD/meson-logs/testlog.json" "$dpdk_version" <<'PY'
import json, sys
passed = failed = skipped = 0
names = []
try:
    lines = open(sys.argv[1]).read().splitlines()
except OSError as e:
    print("compat: no test log: %s" % e)
    lines = []
for line in lines:
    r = json.loads(line)
    res = r.get("result")
    if res in ("OK", "EXPECTEDFAIL"):
        passed += 1
    elif res == "SKIP":
        skipped += 1
        names.append("SKIPPED: " + r["name"])
    else:
        failed += 1
        names.append("FAILED: " + r["name"] + " (" + str(res) + ")")
for n in names:
    print(n)
if passed == 0 and failed == 0:
    failed = 1
    print("compat: no test ran")
tail = ", %d skipped" % skipped if skipped else ""
print("compat: DPDK %s" % sys.argv[2])
print("%d passed, %d failed%s" % (passed, failed, tail))
sys.exit(1 if failed else 0)
PY
