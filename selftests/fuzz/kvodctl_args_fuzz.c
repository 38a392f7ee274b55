// SPDX-License-Identifier: GPL-2.0
/*
 * parse_args() (tools/kvodctl-args.c): kvodctl's reading of one command's
 * command line, with getopt_long(), the RATE parser and the bounded
 * numbers of --window, --chunk and --chunks. The first byte of the input
 * picks the options the command allows (its low four bits, OPT_*) and
 * how many positional arguments it names (the next two); the rest is the
 * arguments, separated by NUL bytes.
 *
 * Besides memory safety: a command line that passes has exactly the
 * positional arguments the command names, and every number within the
 * bounds the ioctls are then given.
 */
#include "fuzz.h"

#include <getopt.h>
#include <stdarg.h>

#include "kvodctl.h"

#define ARGS_MAX	32

/* kvodctl.c's, which prints; the messages are still formatted. */
void usage(FILE *f)
{
	(void)f;
}

void err_msg(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
}

static int never(const struct kvodctl_args *a)
{
	(void)a;
	abort();
}

static const char *const pos_names[] = { "NAME", "FILE", "ENDPOINT", NULL };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kvodctl_cmd c = { .name = "cmd", .run = never };
	char *argv[ARGS_MAX + 1], *buf, *p, *end;
	struct kvodctl_args a;
	unsigned int npos;
	int argc = 1, ret;

	if (!size)
		return 0;
	c.opts = data[0] & 0xf;
	npos = (data[0] >> 4) & 3;
	c.pos = pos_names + 3 - npos;
	buf = fuzz_str(data + 1, size - 1);
	end = buf + size - 1;
	argv[0] = "cmd";
	for (p = buf; p < end && argc < ARGS_MAX; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;

	optind = 0;	/* glibc: start afresh, as for a new process */
	ret = parse_args(&c, argc, argv, &a);
	FUZZ_CHECK(ret == 0 || ret == ARGS_HELP || ret == EXIT_USAGE);
	if (!ret) {
		FUZZ_CHECK(a.pos + npos <= argv + argc && !a.pos[npos]);
		FUZZ_CHECK(!a.window_ms || a.window_ms <= 2000);
		FUZZ_CHECK(!a.chunk_size || (a.chunk_size >= 188 &&
			   a.chunk_size <= KVOD_LIVE_CHUNK_MAX));
		FUZZ_CHECK(!a.nr_chunks || (a.nr_chunks >= KVOD_LIVE_CHUNKS_MIN &&
			   a.nr_chunks <= KVOD_LIVE_CHUNKS_MAX));
		if (!(c.opts & OPT_LIVE))
			FUZZ_CHECK(!a.chunk_size && !a.nr_chunks && !a.raw);
		if (!(c.opts & OPT_PUSH))
			FUZZ_CHECK(!a.rate && !a.window_ms && !a.loop);
	}
	free(buf);
	return 0;
}
