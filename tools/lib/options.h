/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tools/lib/options: the command line of kvod-fetch and kvod-proxy. Both
 * take long options, many of them a count or SIZE within a range (as
 * kvod_parse_range() reads it), and exactly one operand, a URL. Each tool
 * lists its options once, in a table of struct kvod_opt; kvod_getopt()
 * stores the numbers where the table says, answers --help and reports an
 * unknown option or a wrong number of operands with the tool's usage().
 * The tool handles the other options and says itself what is wrong with
 * a bad number.
 */
#ifndef KVOD_LIB_OPTIONS_H
#define KVOD_LIB_OPTIONS_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* An option as getopt_long() takes it; for a number, its range and home. */
struct kvod_opt {
	struct option opt;
	uint64_t min, max;
	void *to;		/* a 32- or 64-bit integer that holds @max */
	size_t size;		/* sizeof(*to) */
};

#define KVOD_OPT(name, has_arg, val) \
	{ .opt = { (name), (has_arg), NULL, (val) } }
#define KVOD_NUM(name, val, lo, hi, var) \
	{ .opt = { (name), required_argument, NULL, (val) }, \
	  .min = (lo), .max = (hi), .to = &(var), .size = sizeof(var) }

#define KVOD_OPTS_MAX	32

struct kvod_cmdline {
	const char *shortopts;
	const struct kvod_opt *opts;	/* ended by { } */
	void (*usage)(FILE *f);
	/*
	 * kvod_getopt()'s: the last long option's index (or -1), and @opts
	 * as getopt_long() takes them.
	 */
	int li;
	struct option lo[KVOD_OPTS_MAX + 1];
};

/* What kvod_getopt() returns besides an option and -1 (the end). */
#define KVOD_OPT_BAD	(-2)	/* not a number in its option's range */
#define KVOD_OPT_USAGE	(-3)	/* the usage went to stderr */

int kvod_getopt(struct kvod_cmdline *cl, int argc, char **argv);
const char *kvod_opt_name(const struct kvod_cmdline *cl);

#endif /* KVOD_LIB_OPTIONS_H */
