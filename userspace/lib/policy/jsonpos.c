// SPDX-License-Identifier: GPL-2.0
/*
 * Locates values in raw JSON by pointer. Only the path to the wanted value is descended (the
 * recursion is bounded by the pointer's depth); everything else is skipped by counting brackets.
 * Malformed input makes the search fail, never read outside the buffer.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "policy/jsonpos.h"

struct seg {
	const char *s;
	size_t len;
};

struct scan {
	const char *b;
	size_t len, pos;
	int line, col;
	const struct seg *segs;
	int nsegs;
};

static int peek(const struct scan *sc)
{
	return sc->pos < sc->len ? (unsigned char)sc->b[sc->pos] : -1;
}

/* Counts lines and characters as jansson does: a UTF-8 continuation byte is no new column. */
static int next(struct scan *sc)
{
	int c = peek(sc);

	if (c < 0)
		return -1;
	sc->pos++;
	if (c == '\n') {
		sc->line++;
		sc->col = 0;
	} else if ((c & 0xc0) != 0x80) {
		sc->col++;
	}
	return c;
}

static void skip_ws(struct scan *sc)
{
	int c;

	while ((c = peek(sc)) == ' ' || c == '\t' || c == '\n' || c == '\r')
		next(sc);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static long read_hex4(struct scan *sc)
{
	long v = 0;
	int i, h;

	for (i = 0; i < 4; i++) {
		h = hexval(next(sc));
		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

static size_t utf8_encode(long cp, unsigned char *out)
{
	if (cp < 0x80) {
		out[0] = cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = 0xc0 | (cp >> 6);
		out[1] = 0x80 | (cp & 0x3f);
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = 0xe0 | (cp >> 12);
		out[1] = 0x80 | ((cp >> 6) & 0x3f);
		out[2] = 0x80 | (cp & 0x3f);
		return 3;
	}
	out[0] = 0xf0 | (cp >> 18);
	out[1] = 0x80 | ((cp >> 12) & 0x3f);
	out[2] = 0x80 | ((cp >> 6) & 0x3f);
	out[3] = 0x80 | (cp & 0x3f);
	return 4;
}

/* One character of a string body, decoded to UTF-8 bytes in out. Returns bytes, 0 at the closing
 * quote, -1 on malformed input. */
static int string_char(struct scan *sc, unsigned char *out)
{
	static const char esc_in[] = "\"\\/bfnrt", esc_out[] = "\"\\/\b\f\n\r\t";
	const char *e;
	long cp, lo;
	int c;

	c = next(sc);
	if (c < 0)
		return -1;
	if (c == '"')
		return 0;
	if (c != '\\') {
		out[0] = c;
		return 1;
	}
	c = next(sc);
	if (c < 0)
		return -1;
	e = strchr(esc_in, c);
	if (c && e) {
		out[0] = esc_out[e - esc_in];
		return 1;
	}
	if (c != 'u')
		return -1;
	cp = read_hex4(sc);
	if (cp < 0)
		return -1;
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (next(sc) != '\\' || next(sc) != 'u')
			return -1;
		lo = read_hex4(sc);
		if (lo < 0xdc00 || lo > 0xdfff)
			return -1;
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	return utf8_encode(cp, out);
}

/* After the opening quote: consumes the string; 1 when it equals seg, 0 when not, -1 malformed. */
static int string_equals(struct scan *sc, const struct seg *seg)
{
	unsigned char ch[4];
	bool same = seg != NULL;
	size_t off = 0;
	int n;

	while ((n = string_char(sc, ch)) > 0) {
		if (same && (off + n > seg->len || memcmp(seg->s + off, ch, n)))
			same = false;
		off += n;
	}
	if (n < 0)
		return -1;
	return same && off == seg->len;
}

static int skip_value(struct scan *sc)
{
	int c, depth = 0, n = 0;

	skip_ws(sc);
	c = peek(sc);
	if (c != '{' && c != '[' && c != '"') {
		while ((c = peek(sc)) >= 0 && !strchr(",:{}[]\" \t\r\n", c)) {
			next(sc);
			n++;
		}
		return n ? 0 : -1;
	}
	do {
		c = next(sc);
		if (c < 0)
			return -1;
		if (c == '"' && string_equals(sc, NULL) < 0)
			return -1;
		if (c == '{' || c == '[')
			depth++;
		if (c == '}' || c == ']')
			depth--;
	} while (depth > 0);
	return 0;
}

/* Array index segment: decimal without leading zeros; -1 when seg cannot index an array. */
static long seg_index(const struct seg *seg)
{
	long v = 0;
	size_t i;

	if (!seg->len || seg->len > 9 || (seg->len > 1 && seg->s[0] == '0'))
		return -1;
	for (i = 0; i < seg->len; i++) {
		if (seg->s[i] < '0' || seg->s[i] > '9')
			return -1;
		v = v * 10 + seg->s[i] - '0';
	}
	return v;
}

/* Whether the next member or element follows (1), the container ends (0), or neither (-1). */
static int next_member(struct scan *sc, int close)
{
	int c;

	skip_ws(sc);
	c = next(sc);
	if (c == ',')
		return 1;
	return c == close ? 0 : -1;
}

/* Descends along segs[lvl..]; 1 found (sc at the value), 0 absent, -1 malformed. */
static int find(struct scan *sc, int lvl)
{
	const struct seg *seg = &sc->segs[lvl];
	long idx, i;
	int c, r;

	skip_ws(sc);
	if (lvl == sc->nsegs)
		return peek(sc) < 0 ? -1 : 1;
	c = next(sc);
	if (c != '{' && c != '[')
		return 0;
	skip_ws(sc);
	if (peek(sc) == (c == '{' ? '}' : ']'))
		return 0;
	idx = c == '[' ? seg_index(seg) : -1;
	for (i = 0;; i++) {
		if (c == '{') {
			skip_ws(sc);
			if (next(sc) != '"')
				return -1;
			r = string_equals(sc, seg);
			if (r < 0)
				return -1;
			skip_ws(sc);
			if (next(sc) != ':')
				return -1;
		} else {
			r = i == idx;
		}
		if (r)
			return find(sc, lvl + 1);
		if (skip_value(sc))
			return -1;
		r = next_member(sc, c == '{' ? '}' : ']');
		if (r <= 0)
			return r;
	}
}

/* Splits and unescapes (~1 -> /, ~0 -> ~) the pointer in place; -1 when it is not one. */
static int split_pointer(char *p, struct seg *segs, int max)
{
	char *r, *w;
	int n = 0;

	if (!*p)
		return 0;
	if (*p != '/')
		return -1;
	while (*p == '/') {
		if (n == max)
			return -1;
		segs[n].s = w = r = ++p;
		while (*r && *r != '/') {
			if (*r == '~' && (r[1] == '0' || r[1] == '1')) {
				*w++ = r[1] == '0' ? '~' : '/';
				r += 2;
			} else {
				*w++ = *r++;
			}
		}
		segs[n].len = w - segs[n].s;
		n++;
		p = r;
	}
	return n;
}

int jsonpos_locate(const char *buf, size_t len, const char *pointer, int *line, int *column)
{
	struct seg segs[JSONPOS_MAX_DEPTH];
	struct scan sc = { .b = buf, .len = len, .line = 1, .segs = segs };
	char *copy;
	int r;

	copy = strdup(pointer);
	if (!copy)
		return -ENOMEM;
	sc.nsegs = split_pointer(copy, segs, JSONPOS_MAX_DEPTH);
	r = sc.nsegs < 0 ? -1 : find(&sc, 0);
	free(copy);
	if (r != 1)
		return -ENOENT;
	*line = sc.line;
	/* The column of the value's first character, which next() has not counted yet. */
	*column = sc.col + 1;
	return 0;
}
