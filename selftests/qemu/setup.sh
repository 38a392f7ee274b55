#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install everything kvod needs on a Debian bookworm machine: the Debian
# 6.12 kernel (image, headers, source) from bookworm-backports, QEMU and
# virtme-ng to boot it, the RDMA userspace, the build and lint tools,
# clang and LLVM for the fuzz targets (make fuzz), and
# the peers the benchmarks compare against.
#
# Idempotent: a second run with everything present only checks, and
# returns within a second. Needs root (or sudo) for a real install.
set -euo pipefail

STAMP_DIR=${KVOD_STATE_DIR:-/var/lib/kvod-dev}
# The stamp names this script's content: any change to it reinstalls.
STAMP=$STAMP_DIR/setup-$(sha256sum "$0" | cut -c1-16)
BPO=/etc/apt/sources.list.d/kvod-bookworm-backports.sources
VENV=/opt/kvod-venv
VNG_VERSION=1.42
# virtme-ng's commands, all on PATH: vng runs the others by name
# (virtme-configkernel for "vng --kconfig", virtme-prep-kdir-mods to boot
# a kernel tree such as the debug kernel's).
VNG_TOOLS=(vng virtme-ng virtme-run virtme-configkernel virtme-mkinitramfs
	virtme-prep-kdir-mods virtme-ssh-proxy)

APT_PKGS=(
	build-essential bc bison flex libelf-dev libssl-dev kmod cpio
	dkms sparse git python3 python3-pip python3-venv
	qemu-system-x86 busybox-static udev
	rdma-core ibverbs-providers ibverbs-utils librdmacm-dev
	libibverbs-dev rdmacm-utils perftest
	ffmpeg vlc-bin vlc-plugin-base libvlccore-dev curl nginx-light jq ethtool tcpdump
	procps psmisc
	libmnl-dev libcap-dev pkg-config man-db shellcheck gnuplot-nox
	python3-sphinx
	clang llvm libclang-rt-dev
)
BPO_PKGS=(linux-image-amd64 linux-headers-amd64 iproute2)

SUDO=
if [ "$(id -u)" != 0 ]; then
	SUDO=sudo
fi

have_all() {
	local tool

	[ -f "$STAMP" ] || return 1
	for tool in "${VNG_TOOLS[@]}"; do
		command -v "$tool" >/dev/null || return 1
	done
	ls /boot/vmlinuz-6.12.*-amd64 >/dev/null 2>&1 || return 1
	ls -d /usr/src/linux-source-6.12 >/dev/null 2>&1 || return 1
	return 0
}

if have_all; then
	exit 0
fi

echo "kvod setup: installing build and test dependencies" >&2
export DEBIAN_FRONTEND=noninteractive

# An enabled entry only: a commented-out line names the suite too.
if ! grep -rqs '^[^#]*bookworm-backports' /etc/apt/sources.list \
	/etc/apt/sources.list.d/; then
	$SUDO tee "$BPO" >/dev/null <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi

$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${APT_PKGS[@]}" >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends \
	-t bookworm-backports "${BPO_PKGS[@]}" >/dev/null

# The kernel source matching the installed image (checkpatch, siw, and
# reading). Prefer the exact version of the headers we build against.
kver=$(dpkg-query -W -f='${Version}' linux-headers-amd64)
if ! $SUDO apt-get install -y -qq --no-install-recommends \
	"linux-source-6.12=$kver" >/dev/null 2>&1; then
	$SUDO apt-get install -y -qq --no-install-recommends \
		linux-source-6.12 >/dev/null
fi
if [ ! -d /usr/src/linux-source-6.12 ]; then
	$SUDO tar -C /usr/src -xf /usr/src/linux-source-6.12.tar.xz
fi

# virtme-ng boots the Debian kernel with the host's root filesystem. It
# goes into a venv of its own: Debian's python3 refuses pip installs into
# the system (PEP 668: /usr/lib/python3.11/EXTERNALLY-MANAGED). Pinned to
# the version the suite runs on (selftests/qemu/vm-run edits its QEMU arguments).
if [ ! -x "$VENV/bin/vng" ]; then
	$SUDO /usr/bin/python3 -m venv "$VENV"
	$SUDO "$VENV/bin/pip" install -q "virtme-ng==$VNG_VERSION"
fi
for tool in "${VNG_TOOLS[@]}"; do
	[ -x "$VENV/bin/$tool" ] || {
		echo "kvod setup: virtme-ng $VNG_VERSION has no $tool" >&2
		exit 1
	}
	$SUDO ln -sf "$VENV/bin/$tool" "/usr/local/bin/$tool"
done

# nginx is a benchmark peer, never a service on this machine.
$SUDO systemctl disable --now nginx >/dev/null 2>&1 || true

$SUDO mkdir -p "$STAMP_DIR"
$SUDO touch "$STAMP"
echo "kvod setup: done" >&2
