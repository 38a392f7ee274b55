// SPDX-License-Identifier: GPL-2.0
/*
 * q_tsock.so: tc support for the tsock qdisc (tsock/sch_tsock.c).
 *
 *   tc qdisc add dev DEV root tsock [ clockid CLOCK_MONOTONIC | CLOCK_TAI ]
 *	[ horizon TIME ] [ late send | drop ] [ tolerance TIME ]
 *	[ slack TIME ] [ flow_limit PACKETS ] [ limit PACKETS ]
 *	[ offload [ lead TIME ] ]
 *
 * TIME takes ns, us, ms or s (a bare number is microseconds, as in tc):
 * a decimal number, a whole number of nanoseconds (tsock_time.c).
 * tc finds the plugin as $TC_LIB_DIR/q_tsock.so (default /usr/lib/tc).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/tsock.h>

#include "tc_plugin.h"
#include "tsock_time.h"

#ifndef CLOCK_TAI
#define CLOCK_TAI 11
#endif

static void explain(void)
{
	fprintf(stderr,
		"Usage: ... tsock [ clockid CLOCK_MONOTONIC | CLOCK_TAI ]\n"
		"                 [ horizon TIME ] [ late send | drop ]\n"
		"                 [ tolerance TIME ] [ slack TIME ]\n"
		"                 [ flow_limit PACKETS ] [ limit PACKETS ]\n"
		"                 [ offload [ lead TIME ] ]\n"
		"TIME: DIGITS[.DIGITS][ns|us|ms|s], microseconds without a unit,\n"
		"      a whole number of nanoseconds\n");
}

static int bad(const char *what, const char *arg)
{
	fprintf(stderr, "tsock: illegal value for \"%s\": \"%s\"\n", what,
		arg ? arg : "(missing)");
	explain();
	return -1;
}

/* Decimal digits only: strtoull() would also take blanks and a sign. */
static int parse_u32(const char *s, __u32 *out)
{
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return -1;
	*out = v;
	return 0;
}

static int parse_time_u32(const char *s, uint64_t div, __u32 *out)
{
	uint64_t ns;

	if (tsock_parse_time_ns(s, &ns) || ns % div || ns / div > UINT32_MAX)
		return -1;
	*out = ns / div;
	return 0;
}

struct opt_u32 {
	const char *name;
	int attr;
	uint64_t div;	/* 0: a plain count, else ns per unit of the attr */
};

static const struct opt_u32 u32_opts[] = {
	{ "horizon", TCA_TSOCK_HORIZON, 1000 },
	{ "tolerance", TCA_TSOCK_TOLERANCE, 1 },
	{ "slack", TCA_TSOCK_SLACK, 1 },
	{ "lead", TCA_TSOCK_LEAD, 1 },
	{ "flow_limit", TCA_TSOCK_FLOW_LIMIT, 0 },
	{ "limit", TCA_TSOCK_LIMIT, 0 },
};

static int parse_one_u32(struct nlmsghdr *n, const char *key, const char *arg,
			 int *consumed)
{
	size_t i;
	__u32 v;

	for (i = 0; i < sizeof(u32_opts) / sizeof(u32_opts[0]); i++) {
		const struct opt_u32 *o = &u32_opts[i];
		int err;

		if (strcmp(key, o->name))
			continue;
		err = o->div ? parse_time_u32(arg, o->div, &v) :
			       parse_u32(arg, &v);
		if (err)
			return bad(key, arg);
		addattr_l(n, 1024, o->attr, &v, sizeof(v));
		*consumed = 2;
		return 0;
	}
	*consumed = 0;
	return 0;
}

static int parse_clockid(const char *arg, __u32 *id)
{
	if (!arg)
		return -1;
	if (!strcmp(arg, "CLOCK_MONOTONIC") || !strcmp(arg, "monotonic"))
		*id = CLOCK_MONOTONIC;
	else if (!strcmp(arg, "CLOCK_TAI") || !strcmp(arg, "tai"))
		*id = CLOCK_TAI;
	else
		return -1;
	return 0;
}

static int tsock_parse_opt(const struct qdisc_util *qu, int argc, char **argv,
			   struct nlmsghdr *n, const char *dev)
{
	struct rtattr *nest;
	__u32 v;
	__u8 b;

	(void)qu;
	(void)dev;
	nest = addattr_nest(n, 1024, TCA_OPTIONS | NLA_F_NESTED);
	while (argc > 0) {
		const char *arg = argc > 1 ? argv[1] : NULL;
		int used;

		if (!strcmp(*argv, "clockid")) {
			if (parse_clockid(arg, &v))
				return bad("clockid", arg);
			addattr_l(n, 1024, TCA_TSOCK_CLOCKID, &v, sizeof(v));
			used = 2;
		} else if (!strcmp(*argv, "late")) {
			if (arg && !strcmp(arg, "send"))
				v = TSOCK_LATE_SEND;
			else if (arg && !strcmp(arg, "drop"))
				v = TSOCK_LATE_DROP;
			else
				return bad("late", arg);
			addattr_l(n, 1024, TCA_TSOCK_LATE_POLICY, &v, sizeof(v));
			used = 2;
		} else if (!strcmp(*argv, "offload") ||
			   !strcmp(*argv, "no-offload")) {
			b = !strcmp(*argv, "offload");
			addattr_l(n, 1024, TCA_TSOCK_OFFLOAD, &b, sizeof(b));
			used = 1;
		} else if (!strcmp(*argv, "help")) {
			explain();
			return -1;
		} else {
			if (parse_one_u32(n, *argv, arg, &used))
				return -1;
			if (!used) {
				fprintf(stderr, "tsock: unknown parameter \"%s\"\n",
					*argv);
				explain();
				return -1;
			}
		}
		if (used > argc)
			return bad(*argv, NULL);
		argc -= used;
		argv += used;
	}
	addattr_nest_end(n, nest);
	return 0;
}

/* "1ms", "250us", "12345ns": the largest unit that divides evenly. */
static void fmt_ns(char *buf, size_t len, uint64_t ns)
{
	if (ns && ns % 1000000000 == 0)
		snprintf(buf, len, "%" PRIu64 "s", ns / 1000000000);
	else if (ns && ns % 1000000 == 0)
		snprintf(buf, len, "%" PRIu64 "ms", ns / 1000000);
	else if (ns && ns % 1000 == 0)
		snprintf(buf, len, "%" PRIu64 "us", ns / 1000);
	else
		snprintf(buf, len, "%" PRIu64 "ns", ns);
}

/* JSON gets the number in @key's unit, text gets "name TIME". */
static void print_time(const char *key, const char *name, __u32 v,
		       uint64_t ns_per)
{
	char buf[64], fmt[80];

	if (is_json_context()) {
		print_uint(PRINT_JSON, key, NULL, v);
		return;
	}
	fmt_ns(buf, sizeof(buf), v * ns_per);
	snprintf(fmt, sizeof(fmt), "%s %s ", name, buf);
	print_string(PRINT_FP, NULL, "%s", fmt);
}

/* Statistics: "850ns", "45.7us", "1.25ms". */
static void fmt_dur(char *buf, size_t len, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, len, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.2fms", ns / 1e6);
	else
		snprintf(buf, len, "%.3fs", ns / 1e9);
}

static __u32 rta_u32(struct rtattr *a)
{
	__u32 v;

	memcpy(&v, RTA_DATA(a), sizeof(v));
	return v;
}

static int tsock_print_opt(const struct qdisc_util *qu, FILE *f,
			   struct rtattr *opt)
{
	struct rtattr *tb[TCA_TSOCK_MAX + 1];
	__u32 v;

	(void)qu;
	(void)f;
	if (!opt)
		return 0;
	memset(tb, 0, sizeof(tb));
	parse_rtattr_flags(tb, TCA_TSOCK_MAX, RTA_DATA(opt), RTA_PAYLOAD(opt),
			   NLA_F_NESTED);

	if (tb[TCA_TSOCK_CLOCKID]) {
		v = rta_u32(tb[TCA_TSOCK_CLOCKID]);
		print_string(PRINT_ANY, "clockid", "clockid %s ",
			     v == CLOCK_TAI ? "CLOCK_TAI" :
			     v == CLOCK_MONOTONIC ? "CLOCK_MONOTONIC" : "?");
	}
	if (tb[TCA_TSOCK_HORIZON])
		print_time("horizon_us", "horizon",
			   rta_u32(tb[TCA_TSOCK_HORIZON]), 1000);
	if (tb[TCA_TSOCK_LATE_POLICY]) {
		v = rta_u32(tb[TCA_TSOCK_LATE_POLICY]);
		print_string(PRINT_ANY, "late", "late %s ",
			     v == TSOCK_LATE_DROP ? "drop" : "send");
	}
	if (tb[TCA_TSOCK_TOLERANCE])
		print_time("tolerance_ns", "tolerance",
			   rta_u32(tb[TCA_TSOCK_TOLERANCE]), 1);
	if (tb[TCA_TSOCK_SLACK])
		print_time("slack_ns", "slack", rta_u32(tb[TCA_TSOCK_SLACK]), 1);
	if (tb[TCA_TSOCK_FLOW_LIMIT])
		print_uint(PRINT_ANY, "flow_limit", "flow_limit %up ",
			   rta_u32(tb[TCA_TSOCK_FLOW_LIMIT]));
	if (tb[TCA_TSOCK_LIMIT])
		print_uint(PRINT_ANY, "limit", "limit %up ",
			   rta_u32(tb[TCA_TSOCK_LIMIT]));
	if (tb[TCA_TSOCK_OFFLOAD] && *(__u8 *)RTA_DATA(tb[TCA_TSOCK_OFFLOAD])) {
		bool on = tb[TCA_TSOCK_OFFLOADED] &&
			  *(__u8 *)RTA_DATA(tb[TCA_TSOCK_OFFLOADED]);

		print_bool(PRINT_JSON, "offload", NULL, true);
		print_bool(PRINT_JSON, "offloaded", NULL, on);
		print_string(PRINT_FP, NULL, "offload %s ",
			     on ? "on" : "requested(timer)");
		if (tb[TCA_TSOCK_LEAD])
			print_time("lead_ns", "lead",
				   rta_u32(tb[TCA_TSOCK_LEAD]), 1);
	} else {
		print_bool(PRINT_JSON, "offload", NULL, false);
	}
	return 0;
}

static int tsock_print_xstats(const struct qdisc_util *qu, FILE *f,
			      struct rtattr *xstats)
{
	struct tc_tsock_xstats st;
	uint64_t sent, mean;
	char buf[64];

	(void)qu;
	(void)f;
	if (!xstats)
		return 0;
	memset(&st, 0, sizeof(st));
	memcpy(&st, RTA_DATA(xstats),
	       RTA_PAYLOAD(xstats) < sizeof(st) ? RTA_PAYLOAD(xstats) :
						   sizeof(st));
	sent = st.on_time + st.late;
	mean = sent ? st.lateness_sum / sent : 0;

	print_nl();
	print_uint(PRINT_ANY, "flows", "  flows %u", st.flows);
	print_u64(PRINT_ANY, "untimed", " untimed %llu", st.untimed);
	print_u64(PRINT_ANY, "on_time", " on_time %llu", st.on_time);
	print_u64(PRINT_ANY, "late", " late %llu", st.late);
	print_u64(PRINT_ANY, "wakeups", " wakeups %llu", st.wakeups);
	print_u64(PRINT_ANY, "offloaded", " offloaded %llu", st.offloaded);
	print_nl();
	print_u64(PRINT_ANY, "drop_late", "  dropped: late %llu", st.drop_late);
	print_u64(PRINT_ANY, "drop_horizon", " horizon %llu", st.drop_horizon);
	print_u64(PRINT_ANY, "drop_clock", " clock %llu", st.drop_clock);
	print_u64(PRINT_ANY, "drop_flow_limit", " flow_limit %llu",
		  st.drop_flow_limit);
	print_u64(PRINT_ANY, "drop_limit", " limit %llu", st.drop_limit);
	print_nl();
	print_u64(PRINT_JSON, "lateness_mean_ns", NULL, mean);
	print_u64(PRINT_JSON, "lateness_max_ns", NULL, st.lateness_max);
	print_u64(PRINT_JSON, "lateness_sum_ns", NULL, st.lateness_sum);
	fmt_dur(buf, sizeof(buf), mean);
	print_string(PRINT_FP, NULL, "  lateness mean %s", buf);
	fmt_dur(buf, sizeof(buf), st.lateness_max);
	print_string(PRINT_FP, NULL, " max %s", buf);
	return 0;
}

struct qdisc_util tsock_qdisc_util = {
	.id		= "tsock",
	.parse_qopt	= tsock_parse_opt,
	.print_qopt	= tsock_print_opt,
	.print_xstats	= tsock_print_xstats,
};
