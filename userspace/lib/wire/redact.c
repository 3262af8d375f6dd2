// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "wire/redact.h"

static bool is_upper_digit(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool is_alnum(unsigned char c)
{
	return is_upper_digit(c) || (c >= 'a' && c <= 'z');
}

static bool is_urlsafe(unsigned char c)
{
	return is_alnum(c) || c == '_' || c == '-';
}

static bool is_b64(unsigned char c)
{
	return is_alnum(c) || c == '+' || c == '/' || c == '=';
}

static bool is_alnum_dash(unsigned char c)
{
	return is_alnum(c) || c == '-';
}

static bool is_alnum_us(unsigned char c)
{
	return is_alnum(c) || c == '_';
}

static bool is_alnum_slash(unsigned char c)
{
	return is_alnum(c) || c == '/';
}

static bool is_sas(unsigned char c)
{
	return is_b64(c) || c == '%';
}

static bool is_token68(unsigned char c)
{
	return is_urlsafe(c) || c == '.' || c == '~' || c == '+' || c == '/' || c == '=';
}

/*
 * A secret-shaped string: a literal prefix, optional separators, then a run of body characters
 * of min to max bytes (taken greedily). keep_prefix leaves the prefix and separators in place
 * (a key name, "Bearer "), so that the reader sees what was removed.
 */
struct rule {
	const char *cls;
	const char *const *prefixes;
	bool icase;
	const char *sep; /* 1 to 8 of these after the prefix; NULL: none */
	bool (*body)(unsigned char c);
	size_t min, max;
	bool keep_prefix;
};

#define P(...) ((const char *const[]){ __VA_ARGS__, NULL })

static const struct rule rules[] = {
	{ "aws-access-key-id",
	  P("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "ABIA", "ACCA"), false,
	  NULL, is_upper_digit, 16, 16, false },
	{ "aws-secret-access-key",
	  P("aws_secret_access_key", "aws-secret-access-key", "secretaccesskey"), true,
	  " \t\"':=", is_b64, 40, 40, true },
	{ "gcp-api-key", P("AIza"), false, NULL, is_urlsafe, 35, 35, false },
	{ "gcp-oauth-token", P("ya29."), false, NULL, is_urlsafe, 20, 4096, false },
	{ "azure-storage-key", P("accountkey="), true, NULL, is_b64, 40, 100, true },
	{ "azure-sas-signature", P("sig="), false, NULL, is_sas, 30, 256, true },
	{ "github-token", P("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), false, NULL, is_alnum, 36, 255,
	  false },
	{ "github-token", P("github_pat_"), false, NULL, is_alnum_us, 22, 255, false },
	{ "gitlab-token", P("glpat-", "gldt-", "glrt-"), false, NULL, is_urlsafe, 20, 255, false },
	{ "slack-token", P("xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-", "xoxe-"), false, NULL,
	  is_alnum_dash, 10, 255, false },
	{ "slack-webhook", P("https://hooks.slack.com/services/"), false, NULL, is_alnum_slash, 20,
	  255, false },
	{ "stripe-key", P("sk_live_", "rk_live_", "sk_test_", "rk_test_"), false, NULL, is_alnum,
	  16, 255, false },
	{ "bearer-token", P("bearer "), true, NULL, is_token68, 8, 4096, true },
};

const char *const redact_classes[] = {
	"private-key",		 "aws-access-key-id",
	"aws-secret-access-key", "gcp-api-key",
	"gcp-oauth-token",	 "azure-storage-key",
	"azure-sas-signature",	 "github-token",
	"gitlab-token",		 "slack-token",
	"slack-webhook",	 "stripe-key",
	"bearer-token",		 "jwt",
	"url-password",		 NULL,
};

/* A match at some offset: bytes [skip, len) are replaced by the class's marker. */
struct match {
	const char *cls;
	size_t skip, len;
};

static size_t run(const unsigned char *s, size_t n, bool (*body)(unsigned char c), size_t max)
{
	size_t i = 0;

	while (i < n && i < max && body(s[i]))
		i++;
	return i;
}

/* The rule's pre-th prefix at s. */
static bool rule_match(const struct rule *r, size_t pre, const unsigned char *s, size_t n,
		       struct match *m)
{
	const char *p = r->prefixes[pre];
	size_t pl, i, k;

	/* Every prefix is 4 bytes or more: the second byte rules most places out cheaply. */
	if (n < 2 ||
	    (s[1] | (r->icase ? 0x20 : 0)) != ((unsigned char)p[1] | (r->icase ? 0x20 : 0)))
		return false;
	pl = strlen(p);
	if (pl > n || (r->icase ? strncasecmp((const char *)s, p, pl) : memcmp(s, p, pl)))
		return false;
	i = pl;
	if (r->sep) {
		for (k = 0; i < n && k < 8 && s[i] && strchr(r->sep, s[i]); k++)
			i++;
		if (!k)
			return false;
	}
	k = run(s + i, n - i, r->body, r->max);
	if (k < r->min)
		return false;
	*m = (struct match){ r->cls, r->keep_prefix ? i : 0, i + k };
	return true;
}

/* For each byte, the (rule, prefix) pairs that can start there: most bytes have none. */
#define CAND_MAX 16
static struct {
	unsigned char n;
	struct {
		unsigned char rule, prefix;
	} v[CAND_MAX];
} cands[256];
static bool cands_ready;

static void cand_add(unsigned char c, size_t rule, size_t prefix)
{
	size_t i;

	for (i = 0; i < cands[c].n; i++)
		if (cands[c].v[i].rule == rule && cands[c].v[i].prefix == prefix)
			return;
	if (cands[c].n < CAND_MAX) {
		cands[c].v[cands[c].n].rule = (unsigned char)rule;
		cands[c].v[cands[c].n].prefix = (unsigned char)prefix;
		cands[c].n++;
	}
}

static void cands_init(void)
{
	size_t i, j;
	unsigned char c;

	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		for (j = 0; rules[i].prefixes[j]; j++) {
			c = (unsigned char)rules[i].prefixes[j][0];
			cand_add(c, i, j);
			if (rules[i].icase && ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')) {
				cand_add(c | 0x20, i, j);
				cand_add(c & ~0x20, i, j);
			}
		}
	cands_ready = true;
}

static const unsigned char *find(const unsigned char *s, size_t n, const char *needle)
{
	return memmem(s, n, needle, strlen(needle));
}

/*
 * -----BEGIN [A-Z0-9 ]*PRIVATE KEY[ BLOCK]----- to the end of its END line. Without an END
 * within REDACT_TOKEN_MAX (a key cut at the output cap), everything to the end goes.
 */
static bool ends_with(const unsigned char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && !memcmp(s + n - k, suffix, k);
}

static bool pem_match(const unsigned char *s, size_t n, struct match *m)
{
	const unsigned char *end, *dash;
	size_t i = 11, lim;

	if (n < 11 || memcmp(s, "-----BEGIN ", 11))
		return false;
	while (i < n && i < 64 && (is_upper_digit(s[i]) || s[i] == ' '))
		i++;
	if (!ends_with(s + 11, i - 11, "PRIVATE KEY") &&
	    !ends_with(s + 11, i - 11, "PRIVATE KEY BLOCK"))
		return false;
	if (n - i < 5 || memcmp(s + i, "-----", 5))
		return false;
	lim = n < REDACT_TOKEN_MAX ? n : REDACT_TOKEN_MAX;
	end = find(s + i, lim - i, "-----END ");
	dash = end ? find(end + 9, s + lim - end - 9, "-----") : NULL;
	*m = (struct match){ "private-key", 0, dash ? (size_t)(dash + 5 - s) : n };
	return true;
}

/* eyJ<base64url>.<base64url>.<base64url>: a JSON header, a payload and a signature. */
static bool jwt_match(const unsigned char *s, size_t n, struct match *m)
{
	size_t i = 3, k, part;

	if (n < 3 || memcmp(s, "eyJ", 3))
		return false;
	for (part = 0; part < 3; part++) {
		k = run(s + i, n - i, is_urlsafe, REDACT_TOKEN_MAX);
		if (part < 2 && (k < (part ? 2 : 1) || i + k >= n || s[i + k] != '.'))
			return false;
		i += k + (part < 2);
	}
	*m = (struct match){ "jwt", 0, i };
	return true;
}

static bool is_userinfo(unsigned char c)
{
	return c > ' ' && c < 0x7f && c != '/' && c != '@' && c != ':' && c != '?' && c != '#';
}

/* scheme://user:password@host: the password goes, the user stays. */
static bool url_password_match(const unsigned char *s, size_t n, struct match *m)
{
	size_t u, p;

	if (n < 3 || memcmp(s, "://", 3))
		return false;
	u = run(s + 3, n - 3, is_userinfo, 256);
	if (!u || 3 + u >= n || s[3 + u] != ':')
		return false;
	p = run(s + 4 + u, n - 4 - u, is_userinfo, 256);
	if (!p || 4 + u + p >= n || s[4 + u + p] != '@')
		return false;
	*m = (struct match){ "url-password", 4 + u, 4 + u + p };
	return true;
}

static void consider(const struct match *m, struct match best[2])
{
	struct match *b = &best[m->skip ? 1 : 0];

	if (m->len > b->len)
		*b = *m;
}

/*
 * The longest pattern match starting at s that replaces from s on (best[0]) and the longest
 * that keeps a prefix (best[1]); len 0 when none. Returns whether any.
 */
static bool match_at(const unsigned char *s, size_t n, struct match best[2])
{
	struct match m;
	size_t i;

	best[0].len = best[1].len = 0;
	for (i = 0; i < cands[s[0]].n; i++)
		if (rule_match(&rules[cands[s[0]].v[i].rule], cands[s[0]].v[i].prefix, s, n, &m))
			consider(&m, best);
	if (s[0] == '-' && pem_match(s, n, &m))
		consider(&m, best);
	if (s[0] == 'e' && jwt_match(s, n, &m))
		consider(&m, best);
	if (s[0] == ':' && url_password_match(s, n, &m))
		consider(&m, best);
	return best[0].len || best[1].len;
}

/* Bytes that can start a pattern match: a cheap filter ahead of match_at(). */
static void starts(bool tab[256])
{
	size_t i;

	if (!cands_ready)
		cands_init();
	for (i = 0; i < 256; i++)
		tab[i] = cands[i].n > 0;
	tab['-'] = tab['e'] = tab[':'] = true;
}

int redactor_add_secret(struct redactor *r, const char *value, size_t len)
{
	char *v;

	if (!len)
		return 0;
	if (r->n >= REDACT_SECRETS_MAX || len > REDACT_SECRET_MAX)
		return -E2BIG;
	v = malloc(len);
	if (!v)
		return -ENOMEM;
	memcpy(v, value, len);
	r->secrets[r->n].value = v;
	r->secrets[r->n].len = len;
	r->n++;
	if (len > r->longest)
		r->longest = len;
	return 0;
}

void redactor_clear(struct redactor *r)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		explicit_bzero(r->secrets[i].value, r->secrets[i].len);
		free(r->secrets[i].value);
	}
	memset(r, 0, sizeof(*r));
}

size_t redact_lookahead(const struct redactor *r)
{
	/* A secret's longest form: percent-encoded, 3 bytes a byte. */
	return r && 3 * r->longest > REDACT_TOKEN_MAX ? 3 * r->longest : REDACT_TOKEN_MAX;
}

struct buf {
	char *p;
	size_t len, cap;
};

static int put(struct buf *b, const void *data, size_t n)
{
	char *p;

	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;

		p = realloc(b->p, cap);
		if (!p)
			return -ENOMEM;
		b->p = p, b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

static int put_marker(struct buf *b, const char *cls)
{
	if (!cls)
		return put(b, REDACT_SECRET_MARKER, strlen(REDACT_SECRET_MARKER));
	return put(b, "[REDACTED:", 10) ?: put(b, cls, strlen(cls)) ?: put(b, "]", 1);
}

struct range {
	const char *cls;
	size_t from, to;
};

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->from < y->from ? -1 : x->from > y->from;
}

struct ranges {
	struct range *v;
	size_t n, cap;
};

static int push(struct ranges *rs, const char *cls, size_t from, size_t to)
{
	struct range *p;

	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 16;
		p = realloc(rs->v, rs->cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		rs->v = p;
	}
	rs->v[rs->n++] = (struct range){ cls, from, to };
	return 0;
}

/*
 * The pattern matches. A match that keeps its prefix ("Bearer ") does not consume it: the
 * prefix is scanned too, so that a secret-shaped string inside it is found; overlaps merge
 * later. Injected secrets are not looked for here (see secret_ranges()).
 */
static int pattern_ranges(const unsigned char *s, size_t len, size_t keep, struct ranges *rs)
{
	struct match m[2];
	size_t i = 0;
	bool tab[256];
	int k, err = 0;

	starts(tab);
	while (!err && i < keep) {
		if (!tab[s[i]] || !match_at(s + i, len - i, m)) {
			i++;
			continue;
		}
		for (k = 0; !err && k < 2; k++)
			if (m[k].len)
				err = push(rs, m[k].cls, i + m[k].skip, i + m[k].len);
		/* A whole match is consumed; a kept prefix is scanned on. */
		i += m[0].len && m[0].len >= m[1].len ? m[0].len : 1;
	}
	return err;
}

/*
 * One way an injected secret may appear in output: its bytes, its hex (either case), or the part
 * of its base64 (standard or URL-safe alphabet) that depends on its bytes alone, at each of the
 * three places a secret can start in a 3-byte group of a longer base64 string. A base64 form's
 * neighbouring characters carry a few of the secret's bits too: they go with it.
 */
struct form {
	char *s;
	size_t len;
	bool icase;
	const char *edge; /* base64: the alphabet of the characters next to it; else NULL */
};

#define FORMS_PER_SECRET 9 /* raw, hex, 2 alphabets x 3 alignments, one spare */
#define FORM_MIN 8 /* shorter encoded forms would match ordinary text */

static const char b64_std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char b64_url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* The characters of base64(o zero bytes, v) that depend on v alone. */
static char *b64_stable(const unsigned char *v, size_t n, size_t o, const char *abc, size_t *len)
{
	size_t bits = 8 * (o + n), first = (8 * o + 5) / 6, last = bits / 6, j, bit;
	char *out;

	if (last <= first || last - first < FORM_MIN)
		return NULL;
	out = malloc(last - first);
	if (!out)
		return NULL;
	for (j = first; j < last; j++) {
		unsigned c = 0;

		for (bit = 6 * j; bit < 6 * j + 6; bit++) {
			size_t byte = bit / 8;
			unsigned b = byte < o ? 0 : v[byte - o];

			c = c << 1 | ((b >> (7 - bit % 8)) & 1);
		}
		out[j - first] = abc[c];
	}
	*len = last - first;
	return out;
}

static char *hex(const unsigned char *v, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char *out = malloc(2 * n);
	size_t i;

	for (i = 0; out && i < n; i++) {
		out[2 * i] = digits[v[i] >> 4];
		out[2 * i + 1] = digits[v[i] & 15];
	}
	return out;
}

static void forms_free(struct form *f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (f[i].s) {
			explicit_bzero(f[i].s, f[i].len);
			free(f[i].s);
		}
	free(f);
}

/* Every form of every secret; *n of them. NULL (out of memory) or the array. */
static struct form *forms_of(const struct redactor *r, size_t *n)
{
	struct form *f = calloc(r->n * FORMS_PER_SECRET + 1, sizeof(*f));
	const unsigned char *v;
	size_t i, o, k = 0, len;

	if (!f)
		return NULL;
	for (i = 0; i < r->n; i++) {
		v = (const unsigned char *)r->secrets[i].value;
		len = r->secrets[i].len;
		f[k].s = malloc(len);
		if (!f[k].s)
			goto oom;
		memcpy(f[k].s, v, len);
		f[k++].len = len;
		if (2 * len >= FORM_MIN) {
			f[k].s = hex(v, len);
			if (!f[k].s)
				goto oom;
			f[k].len = 2 * len;
			f[k++].icase = true;
		}
		for (o = 0; o < 3; o++) {
			f[k].s = b64_stable(v, len, o, b64_std, &f[k].len);
			f[k].edge = b64_std;
			k += f[k].s != NULL;
			f[k].s = b64_stable(v, len, o, b64_url, &f[k].len);
			f[k].edge = b64_url;
			k += f[k].s != NULL;
		}
	}
	*n = k;
	return f;
oom:
	forms_free(f, k);
	return NULL;
}

static bool in_set(const char *set, unsigned char c)
{
	return c && strchr(set, c);
}

static void pair_set(unsigned char *pair, unsigned char a, unsigned char b)
{
	unsigned key = a << 8 | b;

	pair[key >> 3] |= 1U << (key & 7);
}

/* A form's first two bytes (either case for hex; any second byte for a one-byte secret). */
static void pair_add(unsigned char *pair, const struct form *f)
{
	unsigned char a = (unsigned char)f->s[0], b;
	unsigned c;

	if (f->len == 1) {
		for (c = 0; c < 256; c++)
			pair_set(pair, a, (unsigned char)c);
		return;
	}
	b = (unsigned char)f->s[1];
	pair_set(pair, a, b);
	if (f->icase) {
		pair_set(pair, (unsigned char)toupper(a), b);
		pair_set(pair, a, (unsigned char)toupper(b));
		pair_set(pair, (unsigned char)toupper(a), (unsigned char)toupper(b));
	}
}

/* Each occurrence of each form in s[0, len) starting before keep; map (when not NULL) gives
 * the offset in the output of each byte of s (a decoded view), map[len] its end. */
static int find_forms(const struct form *f, size_t nf, const unsigned char *s, size_t len,
		      size_t keep, const unsigned *map, struct ranges *rs)
{
	unsigned char pair[65536 / 8] = {
		0
	}; /* the forms' first two bytes: most places have none */
	size_t i, k, from, to;
	unsigned key;
	int err = 0;

	for (k = 0; k < nf; k++)
		pair_add(pair, &f[k]);
	for (i = 0; !err && i < len && (map ? map[i] : i) < keep; i++) {
		key = s[i] << 8 | (i + 1 < len ? s[i + 1] : 0);
		if (!(pair[key >> 3] & (1U << (key & 7))))
			continue;
		for (k = 0; !err && k < nf; k++) {
			if (f[k].len > len - i ||
			    (f[k].icase ? strncasecmp((const char *)s + i, f[k].s, f[k].len)
					: memcmp(s + i, f[k].s, f[k].len)))
				continue;
			from = i;
			to = i + f[k].len;
			if (f[k].edge && from > 0 && in_set(f[k].edge, s[from - 1]))
				from--;
			if (f[k].edge && to < len && (in_set(f[k].edge, s[to]) || s[to] == '='))
				to++;
			err = push(rs, NULL, map ? map[from] : from, map ? map[to] : to);
		}
	}
	return err;
}

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* s with each %XX (either case) decoded, and where each decoded byte came from. */
static int pct_decode(const unsigned char *s, size_t len, unsigned char **out, unsigned **map,
		      size_t *outlen)
{
	size_t i = 0, j = 0;

	*out = malloc(len + 1);
	*map = malloc((len + 1) * sizeof(**map));
	if (!*out || !*map)
		return -ENOMEM; /* the caller frees */
	while (i < len) {
		(*map)[j] = (unsigned)i;
		if (s[i] == '%' && i + 2 < len && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
			(*out)[j++] = (unsigned char)(hexval(s[i + 1]) << 4 | hexval(s[i + 2]));
			i += 3;
		} else {
			(*out)[j++] = s[i++];
		}
	}
	(*map)[j] = (unsigned)len;
	*outlen = j;
	return 0;
}

/* The secrets' bytes in s with its %XX decoded. */
static int pct_ranges(const struct form *f, size_t nf, const unsigned char *s, size_t len,
		      size_t keep, struct ranges *rs)
{
	struct form *raw = calloc(nf, sizeof(*raw));
	unsigned char *dec = NULL;
	unsigned *map = NULL;
	size_t i, n = 0, dlen = 0;
	int err = raw ? pct_decode(s, len, &dec, &map, &dlen) : -ENOMEM;

	for (i = 0; !err && i < nf; i++)
		if (!f[i].icase && !f[i].edge)
			raw[n++] = f[i];
	if (!err)
		err = find_forms(raw, n, dec, dlen, keep, map, rs);
	if (dec)
		explicit_bzero(dec, dlen);
	free(dec);
	free(map);
	free(raw);
	return err;
}

/*
 * Every occurrence of every injected secret, in each of its forms (struct form) and
 * percent-encoded (some bytes or all), at every offset: independent of the pattern pass, so that
 * no pattern match can hide one.
 */
static int secret_ranges(const struct redactor *r, const unsigned char *s, size_t len, size_t keep,
			 struct ranges *rs)
{
	struct form *f;
	size_t nf;
	int err;

	if (!r || !r->n)
		return 0;
	f = forms_of(r, &nf);
	if (!f)
		return -ENOMEM;
	err = find_forms(f, nf, s, len, keep, NULL, rs);
	if (!err && memchr(s, '%', len))
		err = pct_ranges(f, nf, s, len, keep, rs);
	forms_free(f, nf);
	return err;
}

/* The ranges to replace, sorted by where they start. */
static int collect(const struct redactor *r, const unsigned char *s, size_t len, size_t keep,
		   struct range **out, size_t *n)
{
	struct ranges rs = { 0 };
	int err;

	err = pattern_ranges(s, len, keep, &rs);
	if (!err)
		err = secret_ranges(r, s, len, keep, &rs);
	if (err) {
		free(rs.v);
		return err;
	}
	if (rs.n)
		qsort(rs.v, rs.n, sizeof(*rs.v), cmp_range);
	*out = rs.v;
	*n = rs.n;
	return 0;
}

int redact(const struct redactor *r, const char *in, size_t len, size_t keep, char **out,
	   size_t *outlen, unsigned *count)
{
	struct buf b = { 0 };
	size_t i, n, from = 0;
	struct range *v = NULL;
	int err;

	*out = NULL;
	*count = 0;
	if (keep > len)
		keep = len;
	err = collect(r, (const unsigned char *)in, len, keep, &v, &n);
	for (i = 0; !err && i < n && v[i].from < keep; i++) {
		if (v[i].to <= from)
			continue;
		if (v[i].from < from) { /* overlaps the last replaced range: extend it */
			from = v[i].to;
			continue;
		}
		err = put(&b, in + from, v[i].from - from) ?: put_marker(&b, v[i].cls);
		(*count)++;
		from = v[i].to;
	}
	if (!err && from < keep)
		err = put(&b, in + from, keep - from);
	if (!err && !b.p)
		err = put(&b, "", 0);
	free(v);
	if (err) {
		free(b.p);
		return err;
	}
	*out = b.p;
	*outlen = b.len;
	return 0;
}
