// SPDX-License-Identifier: GPL-2.0
/*
 * kvod_parse_endpoint() (tools/lib/endpoint.c), the ENDPOINT of
 * kvodctl's listen and push and of kvod-proxy's --listen. The first byte
 * of the input says whether a host is needed (its low bit), the rest is
 * the text.
 *
 * Besides memory safety: an ENDPOINT that passes has a port of 1..65535
 * and a family the kernel takes, is written by kvod_format_endpoint()
 * within KVOD_ENDPOINT_MAX bytes, and reads back as the same address.
 */
#include "fuzz.h"

#include <sys/socket.h>

#include "lib/endpoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kvod_sockaddr sa, again;
	char buf[2 * KVOD_ENDPOINT_MAX];
	bool need_host;
	char *s;

	if (!size)
		return 0;
	need_host = data[0] & 1;
	s = fuzz_str(data + 1, size - 1);
	if (!kvod_parse_endpoint(s, need_host, &sa)) {
		FUZZ_CHECK(sa.port >= 1);
		FUZZ_CHECK(sa.family == AF_INET || sa.family == AF_INET6);
		FUZZ_CHECK(sa.family == AF_INET6 || !sa.scope_id);
		kvod_format_endpoint(&sa, buf, sizeof(buf));
		FUZZ_CHECK(strlen(buf) < KVOD_ENDPOINT_MAX);
		FUZZ_CHECK(!kvod_parse_endpoint(buf, true, &again));
		FUZZ_CHECK(!memcmp(&sa, &again, sizeof(sa)));
	}
	free(s);
	return 0;
}
