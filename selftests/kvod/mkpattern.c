// SPDX-License-Identifier: GPL-2.0
/*
 * mkpattern - the bytes of the library's titles, made and checked
 *
 *   mkpattern gen ID SIZE            title ID's first SIZE bytes on stdout
 *   mkpattern check ID OFFSET [LEN]  stdin must be title ID's bytes from
 *                                    OFFSET (LEN of them, if given)
 *
 * Every 4 KiB block of a title starts with two little-endian 64-bit
 * words, the title's ID and the block's offset in it, so that a wrong
 * byte anywhere tells where it came from; the rest of the block is an
 * xorshift64* stream seeded by both, neither compressible nor sparse. Any
 * range of a title is checked by making it again, without the file it
 * was written to. check prints "ok N bytes" and exits 0, or names the
 * first wrong byte (and the title and offset its block claims to be) and
 * exits 1; when LEN is given, an input shorter or longer than LEN is
 * wrong too. Numbers are decimal. Exit 2: usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK	4096
#define BUF	(256 * BLOCK)

static uint64_t get_u64(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *s < '0' || *s > '9' || *end) {
		fprintf(stderr, "mkpattern: bad %s: %s\n", what, s);
		exit(2);
	}
	return v;
}

static void put_le64(unsigned char *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = v >> (8 * i);
}

static uint64_t le64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Block @off (a multiple of BLOCK) of title @id, whole. */
static void make_block(unsigned char *b, uint64_t id, uint64_t off)
{
	uint64_t x = ((id + 1) * 0x9e3779b97f4a7c15ULL ^
		      (off / BLOCK + 1) * 0xbf58476d1ce4e5b9ULL) | 1;
	unsigned char *p;

	put_le64(b, id);
	put_le64(b + 8, off);
	for (p = b + 16; p < b + BLOCK; p += 8) {
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		put_le64(p, x * 0x2545f4914f6cdd1dULL);
	}
}

/*
 * Title @id's bytes [@off, @off + @len) into @out. Blocks are made
 * whole; only the range is copied.
 */
static void make_range(unsigned char *out, uint64_t id, uint64_t off,
		       size_t len)
{
	unsigned char b[BLOCK];
	uint64_t base;
	size_t skip, n;

	while (len) {
		base = off / BLOCK * BLOCK;
		skip = off - base;
		n = BLOCK - skip < len ? BLOCK - skip : len;
		make_block(b, id, base);
		memcpy(out, b + skip, n);
		out += n;
		off += n;
		len -= n;
	}
}

static int gen(uint64_t id, uint64_t size)
{
	static unsigned char buf[BUF];
	uint64_t off = 0;
	size_t n, done;
	ssize_t w;

	while (off < size) {
		n = size - off < BUF ? size - off : BUF;
		make_range(buf, id, off, n);
		for (done = 0; done < n; done += w) {
			w = write(STDOUT_FILENO, buf + done, n - done);
			if (w < 0 && errno == EINTR) {
				w = 0;
				continue;
			}
			if (w <= 0) {
				perror("mkpattern: write");
				return 1;
			}
		}
		off += n;
	}
	return 0;
}

/*
 * What the block holding title offset @at says it is, if its first 16
 * bytes are among the @have bytes at @in, which start at offset @start.
 */
static void say_claim(const unsigned char *in, uint64_t start, uint64_t at,
		      size_t have)
{
	uint64_t base = at / BLOCK * BLOCK;

	if (base < start || base - start + 16 > have)
		return;
	fprintf(stderr, "mkpattern: its block says title %" PRIu64
		" offset %" PRIu64 "\n", le64(in + (base - start)),
		le64(in + (base - start) + 8));
}

static int check(uint64_t id, uint64_t off, int has_len, uint64_t len)
{
	static unsigned char in[BUF], want[BUF];
	uint64_t start = off, got = 0;
	size_t n, i;
	ssize_t r;

	for (;;) {
		n = has_len && len - got < BUF ? len - got : BUF;
		if (!n)
			break;
		r = read(STDIN_FILENO, in, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			perror("mkpattern: read");
			return 1;
		}
		if (!r)
			break;
		make_range(want, id, off, r);
		if (memcmp(in, want, r)) {
			for (i = 0; in[i] == want[i]; i++)
				;
			fprintf(stderr, "mkpattern: title %" PRIu64
				": byte %" PRIu64 " is 0x%02x, not 0x%02x\n",
				id, off + i, in[i], want[i]);
			say_claim(in, off, off + i, r);
			return 1;
		}
		off += r;
		got += r;
	}
	if (has_len && got == len) {
		do
			r = read(STDIN_FILENO, in, 1);
		while (r < 0 && errno == EINTR);
		if (r > 0) {
			fprintf(stderr, "mkpattern: title %" PRIu64
				": more than %" PRIu64 " bytes from offset %"
				PRIu64 "\n", id, len, start);
			return 1;
		}
	}
	if (has_len && got != len) {
		fprintf(stderr, "mkpattern: title %" PRIu64 ": %" PRIu64
			" of %" PRIu64 " bytes from offset %" PRIu64 "\n",
			id, got, len, start);
		return 1;
	}
	printf("ok %" PRIu64 " bytes\n", got);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: mkpattern gen ID SIZE\n"
		"       mkpattern check ID OFFSET [LEN]\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "gen"))
		return gen(get_u64(argv[2], "ID"), get_u64(argv[3], "SIZE"));
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "check"))
		return check(get_u64(argv[2], "ID"),
			     get_u64(argv[3], "OFFSET"), argc == 5,
			     argc == 5 ? get_u64(argv[4], "LEN") : 0);
	return usage();
}
