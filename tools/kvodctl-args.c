// SPDX-License-Identifier: GPL-2.0
/*
 * One command's command line: options (getopt_long, so they may come
 * before, between or after the positional arguments; "--" ends them) and
 * exactly as many positional arguments as the command's table row names.
 * A command is only offered the options its row allows, so that, say,
 * "del x --json" is an unknown option rather than silently ignored.
 */
#include "kvodctl.h"
#include "lib/rate.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* getopt values of long-only options: above any short option's char. */
enum {
	VAL_LONG_ONLY = 0x100,
	VAL_JSON = VAL_LONG_ONLY,
	VAL_BITRATE,
	VAL_RATE,
	VAL_LOOP,
	VAL_WINDOW,
	VAL_TAI,
	VAL_CHUNK,
	VAL_CHUNKS,
	VAL_RAW,
	VAL_RDMA,
	VAL_PIN,
};

struct opt_def {
	unsigned int need;	/* OPT_* the command must allow; 0: always */
	struct option opt;
};

static const struct opt_def opt_defs[] = {
	{ 0,		{ "help", no_argument, NULL, 'h' } },
	{ OPT_JSON,	{ "json", no_argument, NULL, VAL_JSON } },
	{ OPT_BITRATE, { "bitrate", required_argument, NULL, VAL_BITRATE } },
	{ OPT_PUSH,	{ "rate", required_argument, NULL, VAL_RATE } },
	{ OPT_PUSH,	{ "loop", no_argument, NULL, VAL_LOOP } },
	{ OPT_PUSH,	{ "window", required_argument, NULL, VAL_WINDOW } },
	{ OPT_PUSH,	{ "tai", no_argument, NULL, VAL_TAI } },
	{ OPT_LIVE,	{ "chunk", required_argument, NULL, VAL_CHUNK } },
	{ OPT_LIVE,	{ "chunks", required_argument, NULL, VAL_CHUNKS } },
	{ OPT_LIVE,	{ "raw", no_argument, NULL, VAL_RAW } },
	{ OPT_LIVE,	{ "rdma", no_argument, NULL, VAL_RDMA } },
	{ OPT_PIN,	{ "pin", no_argument, NULL, VAL_PIN } },
};

#define NR_OPT_DEFS	ARRAY_SIZE(opt_defs)

/* Fill @lo with the options @c allows, followed by the all-zero end. */
static void build_opts(const struct kvodctl_cmd *c,
		       struct option lo[NR_OPT_DEFS + 1])
{
	size_t i, n = 0;

	for (i = 0; i < NR_OPT_DEFS; i++) {
		if ((opt_defs[i].need & c->opts) == opt_defs[i].need)
			lo[n++] = opt_defs[i].opt;
	}
	memset(&lo[n], 0, sizeof(lo[n]));
}

/* getopt_long() said '?' or ':' about the option before argv[optind]. */
static int bad_option(const char *cmd, int ret, char **argv)
{
	const char *arg = argv[optind - 1];

	if (ret == ':')
		err_msg("%s: option '%s' needs an argument", cmd, arg);
	else if (optopt > 0 && optopt < VAL_LONG_ONLY)
		err_msg("%s: unknown option '-%c'", cmd, optopt);
	else if (optopt >= VAL_LONG_ONLY)
		err_msg("%s: option '%.*s' takes no argument", cmd,
			(int)strcspn(arg, "="), arg);
	else
		err_msg("%s: unknown option '%s'", cmd, arg);
	return EXIT_USAGE;
}

/* A decimal number in [@min, @max]. */
static int parse_u32(const char *s, __u32 min, __u32 max, __u32 *out)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (*end || errno || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_opts(const struct kvodctl_cmd *c, int argc, char **argv,
		      struct kvodctl_args *a)
{
	struct option lo[NR_OPT_DEFS + 1];
	int ret;

	build_opts(c, lo);
	opterr = 0;
	while ((ret = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (ret) {
		case 'h':
			usage(stdout);
			return ARGS_HELP;
		case VAL_JSON:
			a->json = true;
			break;
		case VAL_BITRATE:
			if (kvod_parse_rate(optarg, &a->bitrate)) {
				err_msg("invalid bitrate '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case VAL_RATE:
			if (kvod_parse_rate(optarg, &a->rate)) {
				err_msg("invalid rate '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case VAL_LOOP:
			a->loop = true;
			break;
		case VAL_TAI:
			a->tai = true;
			break;
		case VAL_WINDOW:
			if (parse_u32(optarg, 1, 2000, &a->window_ms)) {
				err_msg("invalid window '%s' (1..2000 ms)", optarg);
				return EXIT_USAGE;
			}
			break;
		case VAL_CHUNK:
			if (parse_u32(optarg, 188, KVOD_LIVE_CHUNK_MAX,
				      &a->chunk_size)) {
				err_msg("invalid chunk size '%s' (188..%u bytes)",
					optarg, KVOD_LIVE_CHUNK_MAX);
				return EXIT_USAGE;
			}
			break;
		case VAL_CHUNKS:
			if (parse_u32(optarg, KVOD_LIVE_CHUNKS_MIN,
				      KVOD_LIVE_CHUNKS_MAX, &a->nr_chunks)) {
				err_msg("invalid chunk count '%s' (%u..%u)", optarg,
					KVOD_LIVE_CHUNKS_MIN, KVOD_LIVE_CHUNKS_MAX);
				return EXIT_USAGE;
			}
			break;
		case VAL_RAW:
			a->raw = true;
			break;
		case VAL_RDMA:
			a->rdma = true;
			break;
		case VAL_PIN:
			a->pin = true;
			break;
		default:
			return bad_option(c->name, ret, argv);
		}
	}
	return 0;
}

/* Check that @argv has exactly the positional arguments @c names. */
static int check_pos(const struct kvodctl_cmd *c, int argc, char **argv)
{
	int n;

	for (n = 0; c->pos[n]; n++) {
		if (n == argc) {
			err_msg("%s: missing %s", c->name, c->pos[n]);
			return EXIT_USAGE;
		}
	}
	if (argc > n) {
		err_msg("%s: unexpected argument '%s'", c->name, argv[n]);
		return EXIT_USAGE;
	}
	return 0;
}

/**
 * parse_args() - check a command line against the command's table row
 * @c: the command
 * @argc, @argv: its arguments; @argv[0] is the command's name
 * @a: filled in on success
 *
 * Returns 0 to run the command, ARGS_HELP if the help was printed, or
 * EXIT_USAGE after printing what is wrong.
 */
int parse_args(const struct kvodctl_cmd *c, int argc, char **argv,
	       struct kvodctl_args *a)
{
	int ret;

	memset(a, 0, sizeof(*a));
	a->cmd = c->name;
	ret = parse_opts(c, argc, argv, a);
	if (ret)
		return ret;
	ret = check_pos(c, argc - optind, argv + optind);
	if (ret)
		return ret;
	a->pos = argv + optind;
	return 0;
}
