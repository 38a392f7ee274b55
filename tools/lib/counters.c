// SPDX-License-Identifier: GPL-2.0
/*
 * A listener's counters by name. Every index below KVOD_LC_NR must have
 * one, and no two the same: selftests/host/counters_test checks both, so
 * a counter added to the uapi enum without a name here fails the tests.
 */
#include "counters.h"

const char *const kvod_counter_names[KVOD_LC_NR] = {
	[KVOD_LC_ACCEPTED] = "accepted",
	[KVOD_LC_ACTIVE] = "active",
	[KVOD_LC_REFUSED] = "refused",
	[KVOD_LC_BYTES] = "bytes",
	[KVOD_LC_HTTP_200] = "200",
	[KVOD_LC_HTTP_206] = "206",
	[KVOD_LC_HTTP_400] = "400",
	[KVOD_LC_HTTP_404] = "404",
	[KVOD_LC_HTTP_405] = "405",
	[KVOD_LC_HTTP_408] = "408",
	[KVOD_LC_HTTP_416] = "416",
	[KVOD_LC_HTTP_431] = "431",
	[KVOD_LC_HTTP_503] = "503",
	[KVOD_LC_HTTP_505] = "505",
	[KVOD_LC_TIMEOUTS] = "timeouts",
	[KVOD_LC_REJ_NOT_FOUND] = "rej_not_found",
	[KVOD_LC_REJ_BUSY] = "rej_busy",
	[KVOD_LC_REJ_VERSION] = "rej_version",
	[KVOD_LC_REJ_BAD_REQUEST] = "rej_bad_request",
	[KVOD_LC_DEVICES] = "devices",
	[KVOD_LC_NOTES] = "notes",
	[KVOD_LC_NOTES_DROPPED] = "notes_dropped",
	[KVOD_LC_PEERS_LOST] = "peers_lost",
};

