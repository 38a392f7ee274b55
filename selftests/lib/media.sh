# SPDX-License-Identifier: GPL-2.0
#
# The players' view of the media make selftests encodes (sourced; not a
# test): by the tests that play them, and by selftests/Makefile, which
# records VLC's own count of the sample's frames (sample.vlc) so that a
# test need not play the file through VLC to learn it.
#
#	frames SOURCE		the video frames ffprobe decodes from SOURCE
#	vlc_version		the installed VLC's package version
#	vlc_remux SOURCE [OPTION...]
#				VLC remuxes the video of SOURCE (a URL, or a
#				file, which it reads on its stdin so that
#				nobody need not reach its path) into an
#				MPEG-TS on stdout, its messages on stderr:
#				as nobody when root (VLC refuses to run as
#				root), stopped after 120 s times
#				$KVOD_TIMEOUT_SCALE
#	vlc_reference		the frames VLC remuxes from sample.mp4: the
#				count sample.vlc recorded if the same VLC
#				made it, else counted now

frames() {
	ffprobe -v error -count_frames -select_streams v:0 \
		-show_entries stream=nb_read_frames -of csv=p=0 "$@" 2>/dev/null |
		awk 'NF { print; exit }'
}

vlc_version() {
	dpkg-query -W -f '${Version}\n' vlc-bin 2>/dev/null || echo unknown
}

vlc_remux() {
	local src=$1 as=()

	shift
	if [ -f "$src" ]; then
		vlc_remux fd://0 "$@" <"$src"
		return
	fi
	[ "$(id -u)" != 0 ] || as=(runuser -u nobody --)
	timeout $((120 * ${KVOD_TIMEOUT_SCALE:-1})) "${as[@]}" cvlc -I dummy \
		--play-and-exit --no-audio "$@" "$src" \
		--sout '#std{access=file,mux=ts,dst=-}'
}

vlc_reference() {
	local dir=${KVOD_SELFTESTS:-$(dirname "${BASH_SOURCE[0]}")/..}/kvod
	local version count tmp

	if read -r version count <"$dir/sample.vlc" 2>/dev/null &&
		[ "$version" = "$(vlc_version)" ] && [ -n "$count" ]; then
		echo "$count"
		return
	fi
	tmp=$(mktemp)
	vlc_remux "$dir/sample.mp4" >"$tmp" 2>/dev/null
	frames "$tmp"
	rm -f "$tmp"
}
