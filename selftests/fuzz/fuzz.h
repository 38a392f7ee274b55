/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What kvod's fuzz targets share (Documentation/testing.rst, "Fuzzing").
 * Each NAME_fuzz.c defines libFuzzer's LLVMFuzzerTestOneInput() for one
 * family of parsers, built with AddressSanitizer and UBSan: a read past
 * the input, a leak or undefined behaviour is a crash that libFuzzer
 * reports with the input. FUZZ_CHECK() adds what the parser promises
 * (a range it stays in, a round trip) as crashes of the same kind.
 */
#ifndef KVOD_FUZZ_H
#define KVOD_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: %s does not hold\n",	\
				__FILE__, __LINE__, #cond);		\
			abort();					\
		}							\
	} while (0)

/*
 * The @size bytes at @data followed by a NUL, in a block of their own:
 * a parser of C strings that reads past the NUL reads past the block,
 * which AddressSanitizer reports. Free it with free().
 */
static inline char *fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* The @size bytes at @data in a block of exactly that size (NULL if 0). */
static inline void *fuzz_dup(const uint8_t *data, size_t size)
{
	void *p;

	if (!size)
		return NULL;
	p = malloc(size);
	if (!p)
		abort();
	memcpy(p, data, size);
	return p;
}

#endif /* KVOD_FUZZ_H */
