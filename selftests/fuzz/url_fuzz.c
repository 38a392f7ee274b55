// SPDX-License-Identifier: GPL-2.0
/*
 * The URL parsers of the RDMA clients (kvod_parse_url() and
 * kvod_parse_server() in tools/lib/rdma.c, which kvod-fetch, kvod-proxy
 * and the VLC module use on what the user gives them) and the Host header
 * kvod-fetch writes from the host and port they return (kvod_http_host(),
 * tools/lib/http_host.c). The input is a URL, or, if it does not start
 * with "rdma://", the rest of an http:// URL, whose HOST[:PORT] up to the
 * first slash is handed over as tools/fetch-http.c does, with
 * kvod-fetch's buffer sizes.
 *
 * Besides memory safety: what passes has a host and a port of 1..65535
 * in decimal, a URL a name without a slash, and the Host header is the
 * host (bracketed if it has a colon) and the port.
 */
#include "fuzz.h"

#include "lib/http_host.h"
#include "lib/rdma.h"

static void check_port(const char *port)
{
	long v = strtol(port, NULL, 10);

	FUZZ_CHECK(port[0] && strspn(port, "0123456789") == strlen(port));
	FUZZ_CHECK(v >= 1 && v <= 65535);
}

static void check_host_header(const char *host, const char *port)
{
	char hdr[272];
	int n = kvod_http_host(hdr, sizeof(hdr), host, port);

	if (n < 0)
		return;
	FUZZ_CHECK((size_t)n == strlen(hdr) && (size_t)n < sizeof(hdr));
	if (strchr(host, ':'))
		FUZZ_CHECK(hdr[0] == '[' && strchr(hdr, ']'));
	else
		FUZZ_CHECK(!strncmp(hdr, host, strlen(host)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char host[256], port[8], name[KVOD_NAME_MAX + 1];
	char *s = fuzz_str(data, size);

	if (!strncmp(s, "rdma://", 7)) {
		if (!kvod_parse_url(s, host, sizeof(host), port, sizeof(port),
				    name, sizeof(name))) {
			FUZZ_CHECK(strlen(host) && strlen(host) < sizeof(host));
			check_port(port);
			FUZZ_CHECK(name[0] && !strchr(name, '/'));
			check_host_header(host, port);
		}
	} else if (size) {
		/* As fetch-http.c does: up to the path, which follows. */
		if (!kvod_parse_server(s, strcspn(s, "/"), host, sizeof(host),
				       port, sizeof(port))) {
			FUZZ_CHECK(strlen(host) && strlen(host) < sizeof(host));
			check_port(port);
			check_host_header(host, port);
		}
	}
	free(s);
	return 0;
}
