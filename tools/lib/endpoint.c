// SPDX-License-Identifier: GPL-2.0
/*
 * ENDPOINT, an address and a port:
 *
 *	IPV4:PORT		"127.0.0.1:8080"
 *	[IPV6]:PORT		"[::1]:8080", "[::]:8080"
 *	[IPV6%IFNAME]:PORT	"[fe80::1%eth0]:8080", "[ff02::1%vrx]:5000":
 *				the scope of a link-local address
 *	PORT			"8080": every IPv4 address, where the caller
 *				allows it (listen; a push needs a host)
 *
 * PORT is 1..65535 in decimal digits only. Addresses are numeric (no
 * name lookup); an unknown IFNAME is rejected. Whether an address makes
 * sense for the command (a scope where none is needed, the wildcard as a
 * push's destination) is the kernel's to say.
 */
#include "endpoint.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static int parse_port(const char *s, __u16 *port)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v == 0 || v > 65535)
		return -EINVAL;
	*port = v;
	return 0;
}

/* Copy the @len bytes at @s into @host, NUL-terminated, if they fit. */
static int take_host(char *host, size_t size, const char *s, size_t len)
{
	if (len == 0 || len >= size)
		return -EINVAL;
	memcpy(host, s, len);
	host[len] = '\0';
	return 0;
}

/**
 * kvod_parse_endpoint() - read an ENDPOINT
 * @s: the text
 * @need_host: reject a bare PORT
 * @sa: zeroed, then filled on success
 *
 * Returns 0 or -EINVAL.
 */
int kvod_parse_endpoint(const char *s, bool need_host,
			struct kvod_sockaddr *sa)
{
	char host[INET6_ADDRSTRLEN + IF_NAMESIZE + 1];
	const char *colon;
	char *pct;

	memset(sa, 0, sizeof(*sa));
	if (*s == '[') {
		colon = strstr(s, "]:");
		if (!colon || take_host(host, sizeof(host), s + 1, colon - s - 1))
			return -EINVAL;
		pct = strchr(host, '%');
		if (pct) {
			*pct = '\0';
			sa->scope_id = if_nametoindex(pct + 1);
			if (!sa->scope_id)
				return -EINVAL;
		}
		sa->family = AF_INET6;
		if (inet_pton(AF_INET6, host, sa->addr) != 1)
			return -EINVAL;
		return parse_port(colon + 2, &sa->port);
	}
	sa->family = AF_INET;
	colon = strrchr(s, ':');
	if (!colon)
		return need_host ? -EINVAL : parse_port(s, &sa->port);
	if (take_host(host, sizeof(host), s, colon - s) ||
	    inet_pton(AF_INET, host, sa->addr) != 1)
		return -EINVAL;
	return parse_port(colon + 1, &sa->port);
}

/**
 * kvod_format_endpoint() - write an ENDPOINT as kvod_parse_endpoint() reads it
 * @sa: the endpoint
 * @buf: where to write, KVOD_ENDPOINT_MAX bytes is always enough
 * @size: its size
 *
 * A scope whose interface is gone is written as its index, which does not
 * read back.
 */
void kvod_format_endpoint(const struct kvod_sockaddr *sa, char *buf,
			  size_t size)
{
	char host[INET6_ADDRSTRLEN], ifname[IF_NAMESIZE];

	if (sa->family != AF_INET6) {
		inet_ntop(AF_INET, sa->addr, host, sizeof(host));
		snprintf(buf, size, "%s:%u", host, sa->port);
		return;
	}
	inet_ntop(AF_INET6, sa->addr, host, sizeof(host));
	if (!sa->scope_id)
		snprintf(buf, size, "[%s]:%u", host, sa->port);
	else if (if_indextoname(sa->scope_id, ifname))
		snprintf(buf, size, "[%s%%%s]:%u", host, ifname, sa->port);
	else
		snprintf(buf, size, "[%s%%%u]:%u", host, sa->scope_id, sa->port);
}
