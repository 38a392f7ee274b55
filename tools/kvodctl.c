// SPDX-License-Identifier: GPL-2.0
/*
 * kvodctl: register, remove and inspect the movies the kvod module serves.
 *
 * Usage: kvodctl COMMAND [ARGS]; see usage() below and kvodctl(8).
 *
 * Exit status: 0 on success, 1 when the device, a file or the kernel
 * refuses (EXIT_RUNTIME), 2 for a bad command line (EXIT_USAGE). Every
 * error is exactly one line on stderr: "kvodctl: <command> <what>: <why>".
 */
#include "kvodctl.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

static const char *const name_arg[] = { "NAME", NULL };
static const char *const add_args[] = { "NAME", "FILE", NULL };
static const char *const listen_args[] = { "PROTO", "[ADDR:]PORT", NULL };
static const char *const push_args[] = { "NAME", "udp://HOST:PORT", NULL };
static const char *const id_arg[] = { "ID", NULL };
static const char *const no_args[] = { NULL };

static const struct kvodctl_cmd cmds[] = {
	{ "add",	cmd_add,	OPT_BITRATE | OPT_PIN, add_args },
	{ "del",	cmd_del,	0,		name_arg },
	{ "list",	cmd_list,	OPT_JSON,	no_args },
	{ "info",	cmd_info,	OPT_JSON,	name_arg },
	{ "stats",	cmd_stats,	OPT_JSON,	no_args },
	{ "listen",	cmd_listen,	0,		listen_args },
	{ "unlisten",	cmd_unlisten,	0,		listen_args },
	{ "push",	cmd_push,	OPT_PUSH,	push_args },
	{ "stop",	cmd_stop,	0,		id_arg },
	{ "live create", cmd_live_create, OPT_LIVE | OPT_BITRATE, name_arg },
	{ "live feed",	cmd_live_feed,	0,		name_arg },
};

void usage(FILE *f)
{
	fputs("Usage: kvodctl COMMAND [ARGS]\n"
	      "\n"
	      "Commands:\n"
	      "  add NAME FILE [--bitrate RATE]  register FILE as movie NAME\n"
	      "       [--pin]\n"
	      "  del NAME                        remove movie NAME\n"
	      "  list [--json]                   list the movies\n"
	      "  info NAME [--json]              show movie NAME\n"
	      "  stats [--json]                  show module-wide counters\n"
	      "  listen PROTO [ADDR:]PORT        serve PROTO (http, rdma) there,\n"
	      "                                  in this network namespace\n"
	      "  unlisten PROTO [ADDR:]PORT      stop it and close its clients\n"
	      "  push NAME udp://HOST:PORT       send movie NAME there as paced\n"
	      "       [--rate RATE] [--loop]     RTP (MPEG-TS); prints the push's id\n"
	      "       [--window MS] [--tai]\n"
	      "  stop ID                         stop push ID\n"
	      "  live create NAME [--chunk SIZE] create live channel NAME, a ring\n"
	      "       [--chunks N] [--raw]       of N chunks (64) of SIZE bytes\n"
	      "       [--bitrate RATE] [--rdma]  (65424); del ends it\n"
	      "  live feed NAME                  copy standard input into it\n"
	      "  help                            show this help\n"
	      "\n"
	      "Options:\n"
	      "  --bitrate RATE  nominal bit rate in bits/s, with an optional\n"
	      "                  k, M or G suffix: 8700000, 8.7M, 2500k\n"
	      "  --json          print one JSON object\n"
	      "  --pin           add: read FILE into memory now, whatever the\n"
	      "                  module's add_lazy test knob says\n"
	      "  --rate RATE     push: payload bit rate (default: the movie's)\n"
	      "  --loop          push: start over at the end\n"
	      "  --window MS     push: hand packets over this far ahead (50)\n"
	      "  --tai           push: stamp departure times in CLOCK_TAI\n"
	      "  --chunk SIZE    live: bytes per chunk, 188..2097152; a multiple\n"
	      "                  of 188 (MPEG-TS packets) unless --raw\n"
	      "  --chunks N      live: chunks in the ring, 2..65536\n"
	      "  --raw           live: the stream is not MPEG-TS\n"
	      "  --rdma          live: serve RDMA clients too (twice the memory)\n"
	      "  -h, --help      show this help\n"
	      "  --version       show the version\n"
	      "\n"
	      "The device is " KVOD_DEVICE ", or $KVOD_DEVICE if set.\n"
	      "See kvodctl(8).\n", f);
}

/* Print "kvodctl: " @fmt "\n" on stderr. */
void err_msg(const char *fmt, ...)
{
	va_list ap;

	fputs("kvodctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static const struct kvodctl_cmd *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	}
	return NULL;
}

static bool is_help(const char *arg)
{
	return !strcmp(arg, "help") || !strcmp(arg, "-h") ||
	       !strcmp(arg, "--help");
}

/* A full disk or a closed pipe on stdout is an error too. */
static int finish(int ret)
{
	int err = fflush(stdout) ? errno : ferror(stdout) ? EIO : 0;

	if (!err)
		return ret;
	err_msg("write error: %s", strerror(err));
	return ret ? ret : EXIT_RUNTIME;
}

int main(int argc, char **argv)
{
	const struct kvodctl_cmd *c;
	struct kvodctl_args a;
	char two[32];
	int ret;

	if (argc < 2) {
		fprintf(stderr, "kvodctl: missing command (try 'kvodctl --help')\n");
		return EXIT_USAGE;
	}
	if (is_help(argv[1])) {
		usage(stdout);
		return finish(0);
	}
	if (!strcmp(argv[1], "--version")) {
		puts("kvodctl " KVODCTL_VERSION);
		return finish(0);
	}

	/* Two-word commands: "live create" is argv[1] and argv[2]. */
	if (!strcmp(argv[1], "live")) {
		if (argc < 3 || argv[2][0] == '-') {
			err_msg("live: missing sub-command (create, feed)");
			return EXIT_USAGE;
		}
		snprintf(two, sizeof(two), "live %s", argv[2]);
		argv[2] = two;
		argc--;
		argv++;
	}
	c = find_cmd(argv[1]);
	if (!c) {
		err_msg("unknown %s '%s'",
			argv[1][0] == '-' ? "option" : "command", argv[1]);
		return EXIT_USAGE;
	}
	ret = parse_args(c, argc - 1, argv + 1, &a);
	if (ret == ARGS_HELP)
		return finish(0);
	if (ret)
		return ret;
	return finish(c->run(&a));
}
