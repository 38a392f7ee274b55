// SPDX-License-Identifier: GPL-2.0
/*
 * kvod_parse_endpoint() and kvod_format_endpoint() (tools/lib/endpoint.c),
 * which read and write kvodctl's listen and push endpoints, on the host:
 * no module, no device. One KTAP result per case.
 *
 * An accepted ENDPOINT must give exactly the expected family, address,
 * port and scope, and be written back in its canonical form. A rejected
 * one must give -EINVAL. The interface "lo" exists on every host and
 * guest this runs on, so it stands for a link-local scope.
 *
 * selftests/kvod/kvodctl.sh checks, in the guest, what kvodctl does with
 * the result (listeners listed as they were written, errors and exit
 * statuses).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/endpoint.h"
#include "kselftest_harness.h"
#include "cases.h"

CASES(accepts) {
	const char *s;
	bool need_host;
	int family;
	const char *addr;	/* as inet_pton() reads it */
	__u16 port;
	bool lo_scope;		/* scope_id is lo's index, else 0 */
	const char *written;	/* what kvod_format_endpoint() writes */
};

#define ACCEPTS(name, text, host, fam, a, p, lo, out)			\
	FIXTURE_VARIANT_ADD(accepts, name) {				\
		.s = text, .need_host = host, .family = fam, .addr = a,	\
		.port = p, .lo_scope = lo, .written = out }

ACCEPTS(port_only, "8080", false, AF_INET, "0.0.0.0", 8080, false,
	"0.0.0.0:8080");
ACCEPTS(port_1, "1", false, AF_INET, "0.0.0.0", 1, false, "0.0.0.0:1");
ACCEPTS(port_max, "65535", false, AF_INET, "0.0.0.0", 65535, false,
	"0.0.0.0:65535");
ACCEPTS(v4, "127.0.0.1:8080", false, AF_INET, "127.0.0.1", 8080, false,
	"127.0.0.1:8080");
ACCEPTS(v4_host_needed, "198.18.0.2:5004", true, AF_INET, "198.18.0.2",
	5004, false, "198.18.0.2:5004");
ACCEPTS(v6_loopback, "[::1]:8080", true, AF_INET6, "::1", 8080, false,
	"[::1]:8080");
ACCEPTS(v6_any, "[::]:80", false, AF_INET6, "::", 80, false, "[::]:80");
ACCEPTS(v6_long, "[2001:db8:0:0:0:0:0:1]:80", true, AF_INET6,
	"2001:db8::1", 80, false, "[2001:db8::1]:80");
ACCEPTS(v6_scope, "[fe80::1%lo]:8080", false, AF_INET6, "fe80::1", 8080,
	true, "[fe80::1%lo]:8080");
ACCEPTS(v6_mcast_scope, "[ff02::1%lo]:5000", true, AF_INET6, "ff02::1",
	5000, true, "[ff02::1%lo]:5000");

TEST_F(accepts, endpoint)
{
	struct kvod_sockaddr sa, want = { .family = variant->family };
	char out[KVOD_ENDPOINT_MAX];

	ASSERT_EQ(1, inet_pton(variant->family, variant->addr, want.addr));
	want.port = variant->port;
	if (variant->lo_scope)
		want.scope_id = if_nametoindex("lo");
	ASSERT_EQ(0, kvod_parse_endpoint(variant->s, variant->need_host, &sa))
		TH_LOG("'%s' rejected", variant->s);
	EXPECT_EQ(0, memcmp(&want, &sa, sizeof(sa)))
		TH_LOG("'%s': family %u port %u scope %u", variant->s,
		       sa.family, sa.port, sa.scope_id);
	kvod_format_endpoint(&sa, out, sizeof(out));
	EXPECT_STREQ(variant->written, out);
}

CASES(rejects) {
	const char *s;
	bool need_host;
};

#define REJECTS(name, text, host) \
	FIXTURE_VARIANT_ADD(rejects, name) { .s = text, .need_host = host }

REJECTS(empty, "", false);
REJECTS(port_zero, "0", false);
REJECTS(port_too_big, "65536", false);
REJECTS(port_negative, "-1", false);
REJECTS(port_plus, "+80", false);
REJECTS(port_trailing, "80x", false);
REJECTS(port_blank, " 80", false);
REJECTS(port_only_needs_host, "8080", true);
REJECTS(no_host, ":80", false);
REJECTS(no_port, "127.0.0.1:", false);
REJECTS(v4_port_zero, "127.0.0.1:0", false);
REJECTS(v4_short, "1.2.3:80", false);
REJECTS(v4_octet, "256.1.1.1:80", false);
REJECTS(name, "localhost:80", false);
REJECTS(v6_unbracketed, "::1:80", false);
REJECTS(v6_no_port, "[::1]", false);
REJECTS(v6_no_colon, "[::1]80", false);
REJECTS(v6_empty_port, "[::1]:", false);
REJECTS(v6_empty, "[]:80", false);
REJECTS(v6_v4_inside, "[1.2.3.4]:80", false);
REJECTS(v6_unknown_if, "[fe80::1%kvodnoif0]:80", false);
REJECTS(v6_empty_if, "[fe80::1%]:80", false);
REJECTS(v6_too_long,
	"[0000:0000:0000:0000:0000:0000:0000:0001%aaaaaaaaaaaaaaaaaaaa]:80",
	false);

TEST_F(rejects, endpoint)
{
	struct kvod_sockaddr sa;

	EXPECT_EQ(-EINVAL, kvod_parse_endpoint(variant->s, variant->need_host,
					       &sa))
		TH_LOG("'%s'", variant->s);
}

TEST_HARNESS_MAIN
