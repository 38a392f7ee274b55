// SPDX-License-Identifier: GPL-2.0
/*
 * LISTEN and PUSH_START of /dev/kvod: what they take and what they
 * refuse (in use, not local, bad scope, bad values, broadcast), each
 * refusal leaving the state intact. catalog_lib.h says how the program
 * runs.
 */
#include "catalog_lib.h"

/*
 * PUSH_START's @id is output only: a struct reused from an earlier start,
 * stale id and all, starts another push (and gets a new id).
 */
TEST_F(kvod, push_start_ignores_id_on_input)
{
	struct kvod_push_start p = {
		.size = sizeof(p),
		.opts = KVOD_PUSH_LOOP,
		.rate = 10000,
		.id = 12345,
	};
	struct kvod_push_ref r = { .size = sizeof(r) };
	__u32 first;

	add_keep(_metadata, self->dev);
	kvod_set_name(p.name, "keep");
	kvod_sockaddr_v4(&p.dst, "127.0.0.1", 9);
	ASSERT_EQ(0, kvod_ioctl(self->dev, KVOD_IOC_PUSH_START, &p));
	ASSERT_NE(0U, p.id);
	first = p.id;
	ASSERT_EQ(0, kvod_ioctl(self->dev, KVOD_IOC_PUSH_START, &p));
	EXPECT_NE(first, p.id);
	r.id = first;
	EXPECT_EQ(0, kvod_ioctl(self->dev, KVOD_IOC_PUSH_STOP, &r));
	r.id = p.id;
	EXPECT_EQ(0, kvod_ioctl(self->dev, KVOD_IOC_PUSH_STOP, &r));
}

/*
 * An IPv6 scope belongs to link-local addresses only (the uapi header):
 * LISTEN and PUSH_START on ::1 with one are EINVAL and change nothing.
 */
TEST_F(kvod, ipv6_scope_only_where_needed)
{
	struct kvod_listen l = { .size = sizeof(l), .proto = KVOD_PROTO_HTTP };
	struct kvod_push_start p = { .size = sizeof(p), .rate = 10000 };
	struct kvod_listener_info li[2];
	struct kvod_push_info pi[2];
	__u32 count;

	add_keep(_metadata, self->dev);
	l.addr.family = AF_INET6;
	l.addr.port = 8094;
	l.addr.addr[15] = 1;
	l.addr.scope_id = 1;
	EXPECT_EQ(EINVAL, kvod_ioctl(self->dev, KVOD_IOC_LISTEN, &l));
	kvod_set_name(p.name, "keep");
	p.dst = l.addr;
	p.dst.port = 5094;
	EXPECT_EQ(EINVAL, kvod_ioctl(self->dev, KVOD_IOC_PUSH_START, &p));
	ASSERT_EQ(0, kvod_list_of(self->dev, KVOD_IOC_LISTENER_LIST, li,
				  sizeof(li[0]), 2, &count, NULL));
	EXPECT_EQ(0U, count);
	ASSERT_EQ(0, kvod_list_of(self->dev, KVOD_IOC_PUSH_LIST, pi,
				  sizeof(pi[0]), 2, &count, NULL));
	EXPECT_EQ(0U, count);
}

/*
 * LISTEN where a listener exists, or the port is taken by a socket of
 * somebody else's: EADDRINUSE, and nothing changes.
 */
TEST_F(kvod, listen_address_in_use)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(8095),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct snap before;
	int sock;

	ASSERT_EQ(0, kvod_listen_v4(self->dev, true, KVOD_PROTO_HTTP,
				    "127.0.0.1", 8094));
	ASSERT_EQ(0, snap_take(self->dev, &before));
	EXPECT_EQ(EADDRINUSE, kvod_listen_v4(self->dev, true, KVOD_PROTO_HTTP,
					     "127.0.0.1", 8094));
	ASSERT_INTACT(self->dev, &before);

	sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, sock);
	ASSERT_EQ(0, bind(sock, (struct sockaddr *)&sin, sizeof(sin)));
	ASSERT_EQ(0, listen(sock, 1));
	EXPECT_EQ(EADDRINUSE, kvod_listen_v4(self->dev, true, KVOD_PROTO_HTTP,
					     "127.0.0.1", 8095));
	ASSERT_INTACT(self->dev, &before);
	close(sock);
	EXPECT_EQ(0, kvod_stop_all(self->dev));
}

/*
 * LISTEN on an address no interface of the namespace has (one of the
 * benchmarking range, 198.18.0.0/15, that nothing here uses), over HTTP
 * and RDMA: EADDRNOTAVAIL, and nothing changes.
 */
TEST_F(kvod, listen_address_not_local)
{
	struct snap before;

	ASSERT_EQ(0, snap_take(self->dev, &before));
	EXPECT_EQ(EADDRNOTAVAIL, kvod_listen_v4(self->dev, true,
						KVOD_PROTO_HTTP,
						"198.19.255.254", 8096));
	EXPECT_EQ(EADDRNOTAVAIL, kvod_listen_v4(self->dev, true,
						KVOD_PROTO_RDMA,
						"198.19.255.254", 8096));
	ASSERT_INTACT(self->dev, &before);
}

/*
 * RDMA LISTEN on 127.0.0.1 or ::1: rdma_cm would bind it as the wildcard
 * and accept requests for every address of every device, so it is
 * refused (EADDRNOTAVAIL) and nothing changes; HTTP there is fine.
 */
TEST_F(kvod, listen_rdma_loopback)
{
	struct kvod_listen l = { .size = sizeof(l), .proto = KVOD_PROTO_RDMA };
	struct snap before;

	l.addr.family = AF_INET6;
	l.addr.port = 8098;
	l.addr.addr[15] = 1;
	ASSERT_EQ(0, snap_take(self->dev, &before));
	EXPECT_EQ(EADDRNOTAVAIL, kvod_listen_v4(self->dev, true,
						KVOD_PROTO_RDMA,
						"127.0.0.1", 8098));
	EXPECT_EQ(EADDRNOTAVAIL, kvod_listen_v4(self->dev, true,
						KVOD_PROTO_RDMA,
						"127.0.0.2", 8098));
	EXPECT_EQ(EADDRNOTAVAIL, kvod_ioctl(self->dev, KVOD_IOC_LISTEN, &l));
	ASSERT_INTACT(self->dev, &before);
	EXPECT_EQ(0, kvod_listen_v4(self->dev, true, KVOD_PROTO_HTTP,
				    "127.0.0.1", 8098));
	EXPECT_EQ(0, kvod_stop_all(self->dev));
}

/*
 * LISTEN on a link-local address whose scope names no interface: the
 * bind says ENODEV, and nothing changes.
 */
TEST_F(kvod, listen_scope_no_such_interface)
{
	struct kvod_listen l = { .size = sizeof(l), .proto = KVOD_PROTO_HTTP };
	struct snap before;

	l.addr.family = AF_INET6;
	l.addr.port = 8097;
	l.addr.addr[0] = 0xfe;
	l.addr.addr[1] = 0x80;
	l.addr.addr[15] = 1;
	l.addr.scope_id = 999999;
	ASSERT_EQ(0, snap_take(self->dev, &before));
	EXPECT_EQ(ENODEV, kvod_ioctl(self->dev, KVOD_IOC_LISTEN, &l));
	ASSERT_INTACT(self->dev, &before);
}

/*
 * PUSH_START's values, one bad at a time, each EINVAL with nothing
 * changed; the request they are made from is then accepted.
 */
TEST_F(kvod, push_start_bad_values)
{
	struct kvod_push_start good = { .size = sizeof(good), .rate = 10000 };
	struct kvod_push_start p;
	struct snap before;
	int fd = kvod_make_file(100, 3);

	ASSERT_LE(0, fd);
	add_keep(_metadata, self->dev);
	ASSERT_EQ(0, kvod_add(self->dev, "tiny", fd, 0));	/* < 188 bytes */
	close(fd);
	kvod_set_name(good.name, "keep");
	kvod_sockaddr_v4(&good.dst, "127.0.0.1", 5096);
	ASSERT_EQ(0, snap_take(self->dev, &before));
#define BAD_PUSH(change) do {						\
	p = good;							\
	change;								\
	EXPECT_EQ(EINVAL, kvod_ioctl(self->dev, KVOD_IOC_PUSH_START, &p))\
		TH_LOG("%s", #change);					\
} while (0)
	BAD_PUSH(p.opts = 0x80000000U);
	BAD_PUSH(p.rate = 9999);
	BAD_PUSH(p.rate = 10000000001ULL);
	BAD_PUSH(p.window_ms = 2001);
	BAD_PUSH(p.dst.family = AF_UNIX);
	BAD_PUSH(p.dst.port = 0);
	BAD_PUSH(kvod_set_name(p.name, "a/b"));
	BAD_PUSH(kvod_set_name(p.name, "tiny"));
#undef BAD_PUSH
	ASSERT_INTACT(self->dev, &before);
	EXPECT_EQ(0, kvod_ioctl(self->dev, KVOD_IOC_PUSH_START, &good));
	EXPECT_EQ(0, kvod_stop_all(self->dev));
}

/*
 * LISTEN's and UNLISTEN's values, one bad at a time: EINVAL, nothing
 * changed; the request they are made from is then accepted.
 */
TEST_F(kvod, listen_bad_values)
{
	struct kvod_listen good = { .size = sizeof(good),
				    .proto = KVOD_PROTO_HTTP };
	struct kvod_listen l;
	struct snap before;

	kvod_sockaddr_v4(&good.addr, "127.0.0.1", 8098);
	ASSERT_EQ(0, snap_take(self->dev, &before));
#define BAD_LISTEN(change) do {						\
	l = good;							\
	change;								\
	EXPECT_EQ(EINVAL, kvod_ioctl(self->dev, KVOD_IOC_LISTEN, &l))	\
		TH_LOG("LISTEN: %s", #change);				\
	EXPECT_EQ(EINVAL, kvod_ioctl(self->dev, KVOD_IOC_UNLISTEN, &l))	\
		TH_LOG("UNLISTEN: %s", #change);			\
} while (0)
	BAD_LISTEN(l.proto = 0);
	BAD_LISTEN(l.proto = 3);
	BAD_LISTEN(l.addr.family = AF_UNIX);
	BAD_LISTEN(l.addr.port = 0);
#undef BAD_LISTEN
	ASSERT_INTACT(self->dev, &before);
	EXPECT_EQ(0, kvod_ioctl(self->dev, KVOD_IOC_LISTEN, &good));
	EXPECT_EQ(0, kvod_stop_all(self->dev));
}

/*
 * A push to a broadcast address: UDP's connect() refuses it without
 * SO_BROADCAST (EACCES), so no packet is sent and nothing changes.
 */
TEST_F(kvod, push_start_broadcast)
{
	struct kvod_push_start p = { .size = sizeof(p), .rate = 10000 };
	struct snap before;

	add_keep(_metadata, self->dev);
	ASSERT_EQ(0, snap_take(self->dev, &before));
	kvod_set_name(p.name, "keep");
	kvod_sockaddr_v4(&p.dst, "127.255.255.255", 5095);
	EXPECT_EQ(EACCES, kvod_ioctl(self->dev, KVOD_IOC_PUSH_START, &p));
	ASSERT_INTACT(self->dev, &before);
}

/* ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
	return catalog_main(argc, argv);
}
