# SPDX-License-Identifier: GPL-2.0
#
# Shared by the library_*.sh tests (sourced; not a test, after ktap.sh):
# the library guest's disk and its titles. selftests/run-tests boots the
# programs whose header says "# guest: library" in a guest of their own,
# with less memory than the library (KVOD_VM_MEM) and the ext4 image of
# selftests/qemu/library-image as its virtio disk (vm-run --disk), whose
# writes QEMU throws away when the guest ends.
#
#	library_up [--delayed]
#			mount the disk at $LIB_DIR; before ktap_header, as
#			without the disk or ext4 the whole program skips
#			(exit 4); library_down unmounts it. --delayed
#			mounts it through a dm-delay mapping of it,
#			$LIB_DM, (skips without dmsetup or dm-delay),
#			which library_down removes. $LIB_DEV is the
#			device mounted
#	library_mount	mount $LIB_DEV at $LIB_DIR again, after a umount
#	library_delay MS
#			reads through the mapping take MS ms more from now
#			on (0: none, as after library_up); writes and
#			flushes are never delayed
#	library_error	every read and write through the mapping fails
#			from now on (the dm error target), until
#			library_delay loads the delay table again
#	LIB_ID, LIB_SIZE	a title's number and size, by name
#			(/titles.txt), once library_up is done
#	library_check NAME OFFSET LEN FILE
#			FILE holds title NAME's LEN bytes from OFFSET
#			(selftests/kvod/mkpattern); "ok LEN bytes" or what
#			was wrong

LIB_PATTERN=$KVOD_SELFTESTS/kvod/mkpattern
LIB_DIR=
LIB_DEV=
LIB_DM=kvod-lib
LIB_MAPPED=
declare -gA LIB_ID=() LIB_SIZE=()

# library_disk: the guest's virtio disk (/dev/vdX), if it has one.
library_disk() {
	local b

	for b in /sys/block/vd*; do
		[ -e "$b" ] || continue
		echo "/dev/${b##*/}"
		return 0
	done
	return 1
}

# lib_dm_gone: remove a $LIB_DM that a program killed by its timeout left,
# unmounting it first: it holds the disk, which could not be mounted.
lib_dm_gone() {
	local b name dev mnt _
	local -a mounts=()

	for b in /sys/block/dm-*/dm/name; do
		[ -r "$b" ] && read -r name <"$b" && [ "$name" = "$LIB_DM" ] &&
			break
		name=
	done
	[ -n "$name" ] || return 0
	while read -r dev mnt _; do
		[ "$dev" != "/dev/mapper/$LIB_DM" ] || mounts+=("$mnt")
	done </proc/mounts
	for mnt in "${mounts[@]}"; do
		umount "$mnt"
	done
	dmsetup remove --noudevsync --retry "$LIB_DM"
}

# lib_dm_table MS: the mapping's table, reads delayed by MS ms.
lib_dm_table() {
	local sectors

	read -r sectors <"/sys/block/${LIB_DISK##*/}/size"
	echo "0 $sectors delay $LIB_DISK 0 $1 $LIB_DISK 0 0"
}

# lib_dm_up: map $LIB_DISK as $LIB_DM, no delay yet; skip without dm-delay.
lib_dm_up() {
	command -v dmsetup >/dev/null || {
		ktap_skip_all "no dmsetup"
		exit "$KSFT_SKIP"
	}
	kernel_builtin || modprobe -q dm-delay 2>/dev/null
	if ! dmsetup targets 2>/dev/null | grep -qw delay; then
		ktap_skip_all "no dm-delay in this kernel"
		exit "$KSFT_SKIP"
	fi
	# No udev in the guest: dmsetup must not wait for it (--noudevsync,
	# on every call that sends a uevent) and makes the node itself.
	dmsetup create --noudevsync "$LIB_DM" --table "$(lib_dm_table 0)" ||
		ktap_bail_out "cannot map $LIB_DISK as $LIB_DM"
	LIB_MAPPED=1
	dmsetup mknodes "$LIB_DM"
	LIB_DEV=/dev/mapper/$LIB_DM
	[ -b "$LIB_DEV" ] || ktap_bail_out "no $LIB_DEV"
}

# noinit_itable: no background writes that zero the inode tables.
library_mount() {
	mount -t ext4 -o noinit_itable "$LIB_DEV" "$LIB_DIR"
}

library_up() {
	local name id size

	[ -x "$LIB_PATTERN" ] || ktap_bail_out "$LIB_PATTERN not built (make selftests)"
	if ! LIB_DISK=$(library_disk); then
		ktap_skip_all "no library disk: selftests/run-tests boots a guest with one"
		exit "$KSFT_SKIP"
	fi
	modprobe -q ext4 2>/dev/null
	if ! grep -qw ext4 /proc/filesystems; then
		ktap_skip_all "no ext4 in this kernel"
		exit "$KSFT_SKIP"
	fi
	lib_dm_gone
	LIB_DEV=$LIB_DISK
	[ "${1:-}" != --delayed ] || lib_dm_up
	LIB_DIR=$(mktemp -d /tmp/kvod-lib.XXXXXX)
	library_mount ||
		ktap_bail_out "cannot mount $LIB_DEV on $LIB_DIR"
	while read -r name id size; do
		LIB_ID[$name]=$id
		# shellcheck disable=SC2034 # the tests read it
		LIB_SIZE[$name]=$size
	done <"$LIB_DIR/titles.txt"
	((${#LIB_ID[@]})) || ktap_bail_out "no titles in $LIB_DIR/titles.txt"
}

# lib_dm_load TABLE: load TABLE into the mapping. Suspending it sends the
# reads it holds on at once; the new table holds those that come after the
# resume. It does not freeze the filesystem (--nolockfs): a freeze writes,
# which fails under the error table.
lib_dm_load() {
	dmsetup suspend --noudevsync --nolockfs "$LIB_DM" &&
		dmsetup reload "$LIB_DM" --table "$1" &&
		dmsetup resume --noudevsync "$LIB_DM"
}

library_delay() {
	[ -n "$LIB_MAPPED" ] || ktap_bail_out "library_delay needs library_up --delayed"
	lib_dm_load "$(lib_dm_table "$1")"
}

library_error() {
	local sectors

	[ -n "$LIB_MAPPED" ] || ktap_bail_out "library_error needs library_up --delayed"
	read -r sectors <"/sys/block/${LIB_DISK##*/}/size"
	lib_dm_load "0 $sectors error"
}

library_down() {
	if [ -n "$LIB_DIR" ]; then
		umount "$LIB_DIR" && rmdir "$LIB_DIR" || return 1
		LIB_DIR=
	fi
	[ -n "$LIB_MAPPED" ] || return 0
	dmsetup remove --noudevsync --retry "$LIB_DM" || return 1
	LIB_MAPPED=
}

library_check() {
	"$LIB_PATTERN" check "${LIB_ID[$1]}" "$2" "$3" <"$4" 2>&1
}
