/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The part of tc's plugin interface q_tsock.so uses, declared here because
 * iproute2's private headers (tc/tc_util.h, include/utils.h,
 * include/libnetlink.h, include/json_print.h) are not installed anywhere.
 *
 * This must match the ABI of the tc binary that loads the plugin: it was
 * written against iproute2 6.15 (Debian bookworm-backports), and every
 * declaration below is unchanged in iproute2 since 6.0 at least. tc
 * exports these symbols from its executable (it links with -rdynamic);
 * the plugin leaves them undefined and the dynamic loader binds them to
 * tc's own copies when tc dlopen()s $TC_LIB_DIR/q_tsock.so and looks up
 * "tsock_qdisc_util".
 *
 * Only what the plugin calls is declared; in particular struct qdisc_util
 * is tc's full struct, since tc reads every member of it.
 */
#ifndef _KVOD_TC_PLUGIN_H
#define _KVOD_TC_PLUGIN_H

/*
 * The iproute2 release these declarations were checked against. The
 * Makefile refuses to build the plugin for a tc of another release (see
 * its check-iproute2): compare tc/tc_util.h there, then change this.
 */
#define KVOD_TC_IPROUTE2 "6.15.0"

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

/* tc/tc_util.h */
struct qdisc_util {
	struct qdisc_util *next;
	const char *id;
	int (*parse_qopt)(const struct qdisc_util *qu, int argc, char **argv,
			  struct nlmsghdr *n, const char *dev);
	int (*print_qopt)(const struct qdisc_util *qu, FILE *f,
			  struct rtattr *opt);
	int (*print_xstats)(const struct qdisc_util *qu, FILE *f,
			    struct rtattr *xstats);
	int (*parse_copt)(const struct qdisc_util *qu, int argc, char **argv,
			  struct nlmsghdr *n, const char *dev);
	int (*print_copt)(const struct qdisc_util *qu, FILE *f,
			  struct rtattr *opt);
	int (*has_block)(const struct qdisc_util *qu, struct rtattr *opt,
			 __u32 block_idx, bool *p_has);
};

/* include/libnetlink.h */
int addattr_l(struct nlmsghdr *n, int maxlen, int type, const void *data,
	      int alen);
struct rtattr *addattr_nest(struct nlmsghdr *n, int maxlen, int type);
int addattr_nest_end(struct nlmsghdr *n, struct rtattr *nest);
int parse_rtattr_flags(struct rtattr *tb[], int max, struct rtattr *rta,
		       int len, unsigned short flags);

/* include/json_print.h and include/color.h */
enum output_type {
	PRINT_FP = 1,
	PRINT_JSON = 2,
	PRINT_ANY = 4,
};

enum color_attr {
	COLOR_IFNAME,
	COLOR_MAC,
	COLOR_INET,
	COLOR_INET6,
	COLOR_OPERSTATE_UP,
	COLOR_OPERSTATE_DOWN,
	COLOR_NONE,
};

bool is_json_context(void);
void print_nl(void);
int print_color_string(enum output_type t, enum color_attr color,
		       const char *key, const char *fmt, const char *value);
int print_color_uint(enum output_type t, enum color_attr color,
		     const char *key, const char *fmt, unsigned int value);
int print_color_u64(enum output_type t, enum color_attr color,
		    const char *key, const char *fmt, __u64 value);
int print_color_bool(enum output_type t, enum color_attr color,
		     const char *key, const char *fmt, bool value);

#define print_string(t, key, fmt, v)	print_color_string(t, COLOR_NONE, key, fmt, v)
#define print_uint(t, key, fmt, v)	print_color_uint(t, COLOR_NONE, key, fmt, v)
#define print_u64(t, key, fmt, v)	print_color_u64(t, COLOR_NONE, key, fmt, v)
#define print_bool(t, key, fmt, v)	print_color_bool(t, COLOR_NONE, key, fmt, v)

#endif /* _KVOD_TC_PLUGIN_H */
