// SPDX-License-Identifier: GPL-2.0
/*
 * getopt_long() for kvod-fetch and kvod-proxy: the options from one
 * table, the numeric ones stored from it, --help, and the one operand
 * checked in one place (options.h).
 */
#include "options.h"
#include "rate.h"

#include <stdlib.h>
#include <string.h>

/* Copy @cl->opts into @cl->lo, the array getopt_long() takes. */
static void build_longopts(struct kvod_cmdline *cl)
{
	size_t i;

	for (i = 0; cl->opts[i].opt.name; i++) {
		if (i == KVOD_OPTS_MAX) {
			fprintf(stderr, "over %d options\n", KVOD_OPTS_MAX);
			abort();
		}
		cl->lo[i] = cl->opts[i].opt;
	}
	memset(&cl->lo[i], 0, sizeof(cl->lo[i]));
}

/* The numeric option @val, or NULL. */
static const struct kvod_opt *num_opt(const struct kvod_cmdline *cl, int val)
{
	const struct kvod_opt *o;

	for (o = cl->opts; o->opt.name; o++)
		if (o->opt.val == val && o->to)
			return o;
	return NULL;
}

/* Parse @arg into the variable of numeric option @o: 0, or -1. */
static int num_store(const struct kvod_opt *o, const char *arg)
{
	uint64_t v;

	if (kvod_parse_range(arg, o->min, o->max, &v))
		return -1;
	if (o->size == sizeof(uint64_t))
		*(uint64_t *)o->to = v;
	else
		*(uint32_t *)o->to = v;
	return 0;
}

/**
 * kvod_getopt() - the next option that is not a number
 * @cl: the options, and the usage to print
 * @argc: as main() has it
 * @argv: as main() has it
 *
 * Stores the value of each numeric option and goes on. -h or --help
 * prints the usage to stdout and exits with 0. Sets @cl->li as
 * getopt_long() sets its longindex, or to -1.
 *
 * Return: the option (optarg is set as getopt_long() sets it), -1 after
 * the last one with argv[optind] the one operand, KVOD_OPT_BAD for a
 * numeric option whose value is not a number in its range (@cl->li names
 * it), or KVOD_OPT_USAGE after printing the usage to stderr, for an
 * unknown option, a missing argument or not exactly one operand.
 */
int kvod_getopt(struct kvod_cmdline *cl, int argc, char **argv)
{
	const struct kvod_opt *o;
	int opt;

	if (!cl->lo[0].name)
		build_longopts(cl);
	for (;;) {
		cl->li = -1;
		opt = getopt_long(argc, argv, cl->shortopts, cl->lo, &cl->li);
		if (opt == 'h') {
			cl->usage(stdout);
			exit(0);
		}
		if (opt == '?' || (opt == -1 && optind != argc - 1)) {
			cl->usage(stderr);
			return KVOD_OPT_USAGE;
		}
		o = num_opt(cl, opt);
		if (!o)
			return opt;
		if (num_store(o, optarg))
			return KVOD_OPT_BAD;
	}
}

/* The long option kvod_getopt() returned last, for messages. */
const char *kvod_opt_name(const struct kvod_cmdline *cl)
{
	return cl->li >= 0 ? cl->opts[cl->li].opt.name : "?";
}
