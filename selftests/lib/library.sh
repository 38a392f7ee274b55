# SPDX-License-Identifier: GPL-2.0
#
# Shared by the library_*.sh tests (sourced; not a test, after ktap.sh):
# the library guest's disk and its titles. selftests/run-tests boots the
# programs whose header says "# guest: library" in a guest of their own,
# with less memory than the library (KVOD_VM_MEM) and the ext4 image of
# selftests/qemu/library-image as its virtio disk (vm-run --disk), whose
# writes QEMU throws away when the guest ends.
#
#	library_up	mount the disk at $LIB_DIR; before ktap_header, as
#			without the disk or ext4 the whole program skips
#			(exit 4); library_down unmounts it
#	LIB_ID, LIB_SIZE	a title's number and size, by name
#			(/titles.txt), once library_up is done
#	library_check NAME OFFSET LEN FILE
#			FILE holds title NAME's LEN bytes from OFFSET
#			(selftests/kvod/mkpattern); "ok LEN bytes" or what
#			was wrong

LIB_PATTERN=$KVOD_SELFTESTS/kvod/mkpattern
LIB_DIR=
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

library_up() {
	local disk name id size

	[ -x "$LIB_PATTERN" ] || ktap_bail_out "$LIB_PATTERN not built (make selftests)"
	if ! disk=$(library_disk); then
		ktap_skip_all "no library disk: selftests/run-tests boots a guest with one"
		exit "$KSFT_SKIP"
	fi
	modprobe -q ext4 2>/dev/null
	if ! grep -qw ext4 /proc/filesystems; then
		ktap_skip_all "no ext4 in this kernel"
		exit "$KSFT_SKIP"
	fi
	LIB_DIR=$(mktemp -d /tmp/kvod-lib.XXXXXX)
	mount -t ext4 "$disk" "$LIB_DIR" ||
		ktap_bail_out "cannot mount $disk on $LIB_DIR"
	while read -r name id size; do
		LIB_ID[$name]=$id
		# shellcheck disable=SC2034 # the tests read it
		LIB_SIZE[$name]=$size
	done <"$LIB_DIR/titles.txt"
	((${#LIB_ID[@]})) || ktap_bail_out "no titles in $LIB_DIR/titles.txt"
}

library_down() {
	[ -n "$LIB_DIR" ] || return 0
	umount "$LIB_DIR" && rmdir "$LIB_DIR"
}

library_check() {
	"$LIB_PATTERN" check "${LIB_ID[$1]}" "$2" "$3" <"$4" 2>&1
}
