// SPDX-License-Identifier: GPL-2.0
/*
 * A minimal JSON writer: objects, arrays, unsigned integers and strings,
 * written compactly as they come. Members of an object take a key; values
 * at the top level or in an array take a NULL key. The writer remembers,
 * per nesting level, whether a comma is due.
 *
 * Strings are treated as bytes: '"', '\\', control characters and bytes
 * of 0x7f and above are escaped as \uXXXX (the latter read as Latin-1),
 * so the output is valid JSON whatever the kernel hands back.
 */
#include "kvodctl.h"

#include <string.h>

/* Deep enough for anything kvodctl prints; "later" has a bit per level. */
#define JSON_MAX_DEPTH	32

void json_init(struct json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->later = 0;
}

static void json_string(struct json *j, const char *s, size_t len)
{
	size_t i;

	fputc('"', j->f);
	for (i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\')
			fprintf(j->f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(j->f, "\\u%04x", c);
		else
			fputc(c, j->f);
	}
	fputc('"', j->f);
}

/* Start a value: a comma if one is due, then the key if any. */
static void json_value(struct json *j, const char *key)
{
	unsigned long long bit = 1ULL << j->depth;

	if (j->later & bit)
		fputc(',', j->f);
	j->later |= bit;
	if (key) {
		json_string(j, key, strlen(key));
		fputc(':', j->f);
	}
}

static void json_open(struct json *j, const char *key, char c)
{
	json_value(j, key);
	fputc(c, j->f);
	if (j->depth + 1 < JSON_MAX_DEPTH)
		j->depth++;
	j->later &= ~(1ULL << j->depth);
}

static void json_close(struct json *j, char c)
{
	fputc(c, j->f);
	if (j->depth)
		j->depth--;
}

void json_obj_begin(struct json *j, const char *key)
{
	json_open(j, key, '{');
}

void json_obj_end(struct json *j)
{
	json_close(j, '}');
}

void json_arr_begin(struct json *j, const char *key)
{
	json_open(j, key, '[');
}

void json_arr_end(struct json *j)
{
	json_close(j, ']');
}

void json_u64(struct json *j, const char *key, __u64 v)
{
	json_value(j, key);
	fprintf(j->f, "%llu", v);
}

void json_str(struct json *j, const char *key, const char *s, size_t len)
{
	json_value(j, key);
	json_string(j, s, len);
}

/* End the document: one JSON text per line. */
void json_finish(struct json *j)
{
	fputc('\n', j->f);
}

/* A field list's numbers as "key: value" lines, or as JSON members. */
void show_nums_kv(const struct field *f, const __u64 *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		printf("%s: %llu\n", f[i].key, v[i]);
}

void show_nums_json(struct json *j, const struct field *f, const __u64 *v,
		    size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		json_u64(j, f[i].key, v[i]);
}
