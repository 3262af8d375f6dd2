// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: redaction of tool output, whole and cut at a cap taken from the input. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "wire/redact.h"

/* Whether the secret could be spelt by markers ("[REDACTED:secret]" holds "secret"), or by a
 * marker and the bytes beside it. */
static int marker_like(const char *s, size_t n)
{
	size_t i;

	if (memchr(s, '[', n) || memchr(s, ']', n))
		return 1;
	for (i = 0; i < n; i++)
		if (!strchr("REDACTED:abcdefghijklmnopqrstuvwxyz-", s[i]) || !s[i])
			return 0;
	return 1;
}

static int hex_survives(const struct redactor *r, const char *out, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	char hex[2 * 255];
	size_t i, n = r->secrets[0].len;
	const unsigned char *v = (const unsigned char *)r->secrets[0].value;

	if (2 * n < 8)
		return 0;
	for (i = 0; i < n; i++) {
		hex[2 * i] = digits[v[i] >> 4];
		hex[2 * i + 1] = digits[v[i] & 15];
	}
	return memmem(out, len, hex, 2 * n) != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct redactor r = { 0 };
	unsigned count;
	size_t len, keep;
	char *out;

	if (size < 2)
		return 0;
	/* The first byte: a secret's length taken from the bytes after it; the second: the cap. */
	if (data[0] && (size_t)data[0] + 2 <= size)
		redactor_add_secret(&r, (const char *)data + 2, data[0]);
	keep = data[1] * (size / 256 + 1);
	if (!redact(&r, (const char *)data + 2, size - 2, keep, &out, &len, &count)) {
		/* A secret never survives in what is kept . */
		if (r.n && !marker_like(r.secrets[0].value, r.secrets[0].len) &&
		    memmem(out, len, r.secrets[0].value, r.secrets[0].len))
			abort();
		/* Nor its hex (no marker spells 8 hex digits). */
		if (r.n && hex_survives(&r, out, len))
			abort();
		free(out);
	}
	redactor_clear(&r);
	return 0;
}
