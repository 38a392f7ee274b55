// SPDX-License-Identifier: GPL-2.0
/*
 * kvod_http_host() (tools/lib/http_host.c), the Host header kvod-fetch
 * sends over HTTP, on the host: no module, no device, no network.
 *
 * RFC 9110 section 7.2: uri-host [ ":" port ], with an IPv6 literal in
 * brackets and the port left out only when it is 80.
 *
 * selftests/kvod/http_fetch.sh checks, in the guest, the header a
 * listener receives from kvod-fetch.
 */
#include <string.h>

#include "lib/http_host.h"
#include "kselftest_harness.h"
#include "cases.h"

CASES(host) {
	const char *host;
	const char *port;
	const char *want;
};

#define HOST(name, h, p, w) \
	FIXTURE_VARIANT_ADD(host, name) { .host = h, .port = p, .want = w }

HOST(ipv4_default_port, "127.0.0.1", "80", "127.0.0.1");
HOST(ipv4_port, "127.0.0.1", "8080", "127.0.0.1:8080");
HOST(name_default_port, "example.org", "80", "example.org");
HOST(name_port, "example.org", "8080", "example.org:8080");
HOST(name_port_80_leading_zero, "example.org", "080", "example.org");
HOST(name_port_8, "example.org", "8", "example.org:8");
HOST(name_port_800, "example.org", "800", "example.org:800");
HOST(ipv6_default_port, "::1", "80", "[::1]");
HOST(ipv6_port, "::1", "8080", "[::1]:8080");
HOST(ipv6_long, "2001:db8::1:2", "65535", "[2001:db8::1:2]:65535");
HOST(ipv6_v4_mapped, "::ffff:198.18.0.1", "8080", "[::ffff:198.18.0.1]:8080");
HOST(ipv6_zone_left_out, "fe80::1%eth0", "8080", "[fe80::1]:8080");

TEST_F(host, header)
{
	char buf[300];
	int n;

	memset(buf, 'x', sizeof(buf));
	n = kvod_http_host(buf, sizeof(buf), variant->host, variant->port);
	EXPECT_STREQ(variant->want, buf);
	EXPECT_EQ((int)strlen(variant->want), n);
}

TEST(fits_or_fails)
{
	char buf[16];

	/* "[::1]:8080" is 10 bytes: 11 with the NUL fit, 10 do not. */
	EXPECT_EQ(10, kvod_http_host(buf, 11, "::1", "8080"));
	EXPECT_STREQ("[::1]:8080", buf);
	EXPECT_EQ(-1, kvod_http_host(buf, 10, "::1", "8080"));
	EXPECT_EQ(-1, kvod_http_host(buf, sizeof(buf),
				     "a-name-longer-than-the-buffer", "80"));
}

TEST_HARNESS_MAIN
