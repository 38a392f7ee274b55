// SPDX-License-Identifier: GPL-2.0
/*
 * The value of an HTTP/1.1 request's Host header (RFC 9110 section 7.2):
 * uri-host [ ":" port ], the authority of the URL the request is for.
 *
 * kvod_parse_server() hands the host over without the brackets of an
 * IPv6 literal, and the port always. Sending that as it is ("Host: ::1")
 * is not a valid Host: nginx takes what comes before the first colon as
 * the host, finds it empty and answers 400. So an IPv6 literal (a host
 * with a colon, which no name or IPv4 literal has) goes back in brackets
 * (RFC 3986 section 3.2.2), and the port is given unless it is http's
 * default, 80, as a browser writes it. An IPv6 zone ("fe80::1%eth0")
 * means something only on this host, so it is left out.
 *
 * selftests/host/http_host_test.c holds the cases.
 */
#include "http_host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether decimal @port is 80 ("80", "080"). */
static int default_port(const char *port)
{
	char *end;

	return strtoul(port, &end, 10) == 80 && end != port && !*end;
}

/**
 * kvod_http_host() - the Host header's value for @host and @port
 * @buf: where to write it, NUL-terminated
 * @len: the room there
 * @host: a name, an IPv4 literal, or an IPv6 literal without brackets
 * @port: decimal
 *
 * Returns its length, or -1 if it does not fit in @len.
 */
int kvod_http_host(char *buf, size_t len, const char *host, const char *port)
{
	int v6 = !!strchr(host, ':'), def = default_port(port), n;

	n = snprintf(buf, len, "%s%.*s%s%s%s", v6 ? "[" : "",
		     (int)(v6 ? strcspn(host, "%") : strlen(host)), host,
		     v6 ? "]" : "", def ? "" : ":", def ? "" : port);
	return n < 0 || (size_t)n >= len ? -1 : n;
}
