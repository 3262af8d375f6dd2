// SPDX-License-Identifier: GPL-2.0
/*
 * The egress proxy's request parser (RFC 9112 syntax, read strictly). Bytes an agent chose are
 * never interpreted two ways: bare CR or LF, folded headers, whitespace before a colon, two
 * Host or Content-Length headers, Content-Length beside Transfer-Encoding, userinfo, IP
 * literals, and a Host header that names another host than the target are all refused.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "wire/http_proxy.h"

#define CONN_TOKENS_MAX 16

struct line {
	const char *p;
	size_t n;
};

/* Parser state: the head's lines and what the headers said. */
struct parse {
	const char *buf;
	size_t end; /* head_len - 2: where the empty line starts */
	size_t pos;
	struct http_request *req;
	struct line conn_tokens[CONN_TOKENS_MAX];
	int nconn;
	int nhost, nlength, nte;
};

static int refuse(struct http_request *req, int status, const char *why)
{
	req->status = status;
	req->why = why;
	return -EINVAL;
}

static bool is_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool is_digits(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return n > 0;
}

static bool is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strchr("0123456789abcdef", s[i]) || !s[i])
			return false;
	return true;
}

/* The last label in a form inet_aton() reads as a number: "1", "0177", "0x7f", "0x". */
static bool numeric_label(const char *s, size_t n)
{
	if (n >= 2 && s[0] == '0' && s[1] == 'x')
		return is_hex(s + 2, n - 2);
	return is_digits(s, n);
}

int http_host_normalise(const char *in, size_t len, char out[HTTP_HOST_MAX + 1])
{
	size_t i, start = 0, n;

	if (len && in[0] == '[')
		return -EADDRNOTAVAIL;
	if (len && in[len - 1] == '.')
		len--;
	if (!len || len > HTTP_HOST_MAX)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		char c = in[i];

		if (c >= 'A' && c <= 'Z')
			c += 'a' - 'A';
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'))
			return -EINVAL;
		out[i] = c;
	}
	out[len] = '\0';
	for (i = 0; i <= len; i++) {
		if (i < len && out[i] != '.')
			continue;
		n = i - start;
		if (!n || n > 63 || out[start] == '-' || out[i - 1] == '-')
			return -EINVAL;
		if (i == len && numeric_label(out + start, n))
			return -EADDRNOTAVAIL;
		start = i + 1;
	}
	return 0;
}

bool http_host_allowed(const char *host, char *const *patterns, size_t n)
{
	size_t i, hl = strlen(host), sl;
	const char *p;

	for (i = 0; i < n; i++) {
		p = patterns[i];
		if (strncmp(p, "*.", 2)) {
			if (!strcmp(host, p))
				return true;
			continue;
		}
		p += 2;
		sl = strlen(p);
		if (hl > sl + 1 && host[hl - sl - 1] == '.' && !strcmp(host + hl - sl, p))
			return true;
	}
	return false;
}

/* "host[:port]" without userinfo; port required for CONNECT. */
static int parse_authority(struct http_request *req, const char *s, size_t n, bool need_port,
			   char host[HTTP_HOST_MAX + 1], __u16 *port, bool *has_port)
{
	const char *colon = memchr(s, ':', n);
	size_t hn = colon ? (size_t)(colon - s) : n, pn;
	unsigned long v = 0;
	int err;

	if (memchr(s, '@', n))
		return refuse(req, 400, "userinfo");
	if (n && s[0] == '[')
		return refuse(req, 403, "ip-literal");
	*has_port = colon != NULL;
	if (colon) {
		pn = n - hn - 1;
		if (!is_digits(colon + 1, pn) || pn > 5 || colon[1] == '0')
			return refuse(req, 400, "bad-port");
		for (size_t i = 0; i < pn; i++)
			v = v * 10 + (colon[1 + i] - '0');
		if (v > 65535)
			return refuse(req, 400, "bad-port");
		*port = v;
	} else if (need_port) {
		return refuse(req, 400, "port-missing");
	}
	err = http_host_normalise(s, hn, host);
	if (err == -EADDRNOTAVAIL)
		return refuse(req, 403, "ip-literal");
	if (err)
		return refuse(req, 400, "bad-host");
	return 0;
}

/* Bytes no head may hold anywhere: NUL, a CR not before LF, an LF not after CR. Returns the
 * offset of the empty line's end (head length), 0 when none yet, -EINVAL when refused. */
static long find_head(const char *buf, size_t len, struct http_request *req)
{
	size_t i, lim = len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX;

	for (i = 0; i < lim; i++) {
		if (!buf[i])
			return refuse(req, 400, "nul-byte");
		if (buf[i] == '\n' && (!i || buf[i - 1] != '\r'))
			return refuse(req, 400, "bare-lf");
		if (buf[i] == '\r' && i + 1 < lim && buf[i + 1] != '\n')
			return refuse(req, 400, "bare-cr");
		if (buf[i] == '\n' && i >= 3 && buf[i - 2] == '\n')
			return i + 1;
		if (buf[i] == '\n' && i == 1)
			return refuse(req, 400, "empty-request-line");
	}
	if (len >= HTTP_HEAD_MAX)
		return refuse(req, 431, "head-too-large");
	return 0;
}

static bool next_line(struct parse *P, struct line *l)
{
	const char *eol;

	if (P->pos >= P->end)
		return false;
	eol = memchr(P->buf + P->pos, '\r', P->end - P->pos);
	l->p = P->buf + P->pos;
	l->n = eol - l->p;
	P->pos += l->n + 2;
	return true;
}

static int parse_version(struct http_request *req, const char *s, size_t n)
{
	if (n != 8 || memcmp(s, "HTTP/1.", 7) || (s[7] != '0' && s[7] != '1'))
		return refuse(req, 400, "bad-version");
	req->minor = s[7] - '0';
	return 0;
}

/* Absolute form "http://authority[/path][?query]" -> host, port and the origin-form target. */
static int parse_absolute(struct http_request *req, const char *t, size_t n, struct line *origin)
{
	size_t an;
	bool has_port;
	int err;

	if (n >= 8 && !strncasecmp(t, "https://", 8))
		return refuse(req, 400, "https-needs-connect");
	if (n < 7 || strncasecmp(t, "http://", 7))
		return refuse(req, 400, "not-absolute-uri");
	t += 7, n -= 7;
	if (memchr(t, '#', n))
		return refuse(req, 400, "fragment");
	for (an = 0; an < n && t[an] != '/' && t[an] != '?'; an++)
		;
	req->port = 80;
	err = parse_authority(req, t, an, false, req->host, &req->port, &has_port);
	if (err)
		return err;
	origin->p = t + an;
	origin->n = n - an;
	return 0;
}

static int parse_request_line(struct parse *P, struct line *origin)
{
	struct http_request *req = P->req;
	const char *sp1, *sp2;
	struct line l;
	size_t mn, i;
	bool has_port;

	if (!next_line(P, &l) || l.n > HTTP_LINE_MAX)
		return refuse(req, 400, "bad-request-line");
	sp1 = memchr(l.p, ' ', l.n);
	sp2 = sp1 ? memchr(sp1 + 1, ' ', l.n - (sp1 + 1 - l.p)) : NULL;
	if (!sp1 || !sp2 || sp2 == sp1 + 1)
		return refuse(req, 400, "bad-request-line");
	mn = sp1 - l.p;
	if (!mn || mn > HTTP_METHOD_MAX)
		return refuse(req, 400, "bad-method");
	for (i = 0; i < mn; i++)
		if (l.p[i] < 'A' || l.p[i] > 'Z')
			return refuse(req, 400, "bad-method");
	memcpy(req->method, l.p, mn);
	req->method[mn] = '\0';
	for (const char *c = sp1 + 1; c < sp2; c++)
		if (*c <= 0x20 || *c >= 0x7f)
			return refuse(req, 400, "bad-target");
	if (parse_version(req, sp2 + 1, l.p + l.n - sp2 - 1))
		return -EINVAL;
	req->connect = !strcmp(req->method, "CONNECT");
	if (req->connect)
		return parse_authority(req, sp1 + 1, sp2 - sp1 - 1, true, req->host, &req->port,
				       &has_port);
	return parse_absolute(req, sp1 + 1, sp2 - sp1 - 1, origin);
}

static bool name_is(const struct line *name, const char *s)
{
	return name->n == strlen(s) && !strncasecmp(name->p, s, name->n);
}

/* Splits "Name: value" (value without surrounding whitespace); refuses what RFC 9112 forbids. */
static int split_header(struct http_request *req, const struct line *l, struct line *name,
			struct line *value)
{
	const char *colon;
	size_t i;

	if (l->n > HTTP_LINE_MAX)
		return refuse(req, 431, "header-too-long");
	if (l->n && (l->p[0] == ' ' || l->p[0] == '\t'))
		return refuse(req, 400, "obs-fold");
	colon = memchr(l->p, ':', l->n);
	if (!colon || colon == l->p)
		return refuse(req, 400, "bad-header");
	name->p = l->p;
	name->n = colon - l->p;
	for (i = 0; i < name->n; i++)
		if (!is_tchar(name->p[i]))
			return refuse(req, 400, "bad-header-name");
	value->p = colon + 1;
	value->n = l->p + l->n - value->p;
	while (value->n && (value->p[0] == ' ' || value->p[0] == '\t'))
		value->p++, value->n--;
	while (value->n && (value->p[value->n - 1] == ' ' || value->p[value->n - 1] == '\t'))
		value->n--;
	for (i = 0; i < value->n; i++) {
		unsigned char c = value->p[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return refuse(req, 400, "bad-header-value");
	}
	return 0;
}

/* The Host header must name the target (and its port, when it gives one). */
static int check_host_header(struct parse *P, const struct line *v)
{
	struct http_request *req = P->req;
	char host[HTTP_HOST_MAX + 1];
	bool has_port;
	__u16 port = 0;

	if (++P->nhost > 1)
		return refuse(req, 400, "multiple-host");
	if (parse_authority(req, v->p, v->n, false, host, &port, &has_port))
		return -EINVAL;
	if (strcmp(host, req->host) || (has_port && port != req->port))
		return refuse(req, 400, "host-mismatch");
	return 0;
}

/* Connection: a, b -> the headers it names are dropped too (never the framing ones). */
static int note_connection(struct parse *P, const struct line *v)
{
	struct line t;
	size_t i = 0, j;

	while (i < v->n) {
		while (i < v->n && (v->p[i] == ' ' || v->p[i] == '\t' || v->p[i] == ','))
			i++;
		for (j = i; j < v->n && v->p[j] != ',' && v->p[j] != ' ' && v->p[j] != '\t'; j++)
			;
		if (j == i)
			break;
		t = (struct line){ v->p + i, j - i };
		if (name_is(&t, "content-length") || name_is(&t, "transfer-encoding") ||
		    name_is(&t, "host"))
			return refuse(P->req, 400, "connection-names-framing");
		if (P->nconn == CONN_TOKENS_MAX)
			return refuse(P->req, 400, "connection-too-many");
		P->conn_tokens[P->nconn++] = t;
		i = j;
	}
	return 0;
}

static int check_header(struct parse *P, const struct line *name, const struct line *v)
{
	if (name_is(name, "host"))
		return check_host_header(P, v);
	if (name_is(name, "connection") || name_is(name, "proxy-connection"))
		return note_connection(P, v);
	if (name_is(name, "content-length")) {
		if (++P->nlength > 1)
			return refuse(P->req, 400, "multiple-content-length");
		if (!is_digits(v->p, v->n) || v->n > 18)
			return refuse(P->req, 400, "bad-content-length");
	}
	if (name_is(name, "transfer-encoding")) {
		if (++P->nte > 1 || v->n != 7 || strncasecmp(v->p, "chunked", 7))
			return refuse(P->req, 400, "bad-transfer-encoding");
	}
	if (P->nlength && P->nte)
		return refuse(P->req, 400, "content-length-and-transfer-encoding");
	return 0;
}

static bool hop_by_hop(const struct parse *P, const struct line *name)
{
	static const char *const hop[] = { "host",
					   "connection",
					   "proxy-connection",
					   "keep-alive",
					   "proxy-authorization",
					   "proxy-authenticate",
					   "te",
					   "trailer",
					   "upgrade",
					   NULL };
	int i;

	for (i = 0; hop[i]; i++)
		if (name_is(name, hop[i]))
			return true;
	for (i = 0; i < P->nconn; i++)
		if (name->n == P->conn_tokens[i].n &&
		    !strncasecmp(name->p, P->conn_tokens[i].p, name->n))
			return true;
	return false;
}

static int parse_headers(struct parse *P)
{
	struct line l, name, v;
	int n = 0;

	while (next_line(P, &l)) {
		if (++n > HTTP_HEADERS_MAX)
			return refuse(P->req, 431, "too-many-headers");
		if (split_header(P->req, &l, &name, &v) || check_header(P, &name, &v))
			return -EINVAL;
	}
	return 0;
}

static void put(char *out, size_t *o, const void *p, size_t n)
{
	if (*o + n <= HTTP_OUT_MAX)
		memcpy(out + *o, p, n);
	*o += n;
}

/* Origin-form request line, our Host, the end-to-end headers as received, Connection: close. */
static int write_forward(struct parse *P, const struct line *origin, char *out, size_t *outlen)
{
	struct http_request *req = P->req;
	char line[HTTP_HOST_MAX + 32];
	struct line l, name, v;
	size_t o = 0;
	int n;

	put(out, &o, req->method, strlen(req->method));
	put(out, &o, " ", 1);
	if (!origin->n || origin->p[0] == '?')
		put(out, &o, "/", 1);
	put(out, &o, origin->p, origin->n);
	n = snprintf(line, sizeof(line), " HTTP/1.%u\r\nHost: %s", req->minor, req->host);
	put(out, &o, line, n);
	if (req->port != 80) {
		n = snprintf(line, sizeof(line), ":%u", req->port);
		put(out, &o, line, n);
	}
	put(out, &o, "\r\n", 2);
	P->pos = 0;
	next_line(P, &l);
	while (next_line(P, &l)) {
		split_header(req, &l, &name, &v);
		if (hop_by_hop(P, &name))
			continue;
		put(out, &o, l.p, l.n);
		put(out, &o, "\r\n", 2);
	}
	put(out, &o, "Connection: close\r\n\r\n", 21);
	if (o > HTTP_OUT_MAX)
		return refuse(req, 431, "head-too-large");
	*outlen = o;
	return 0;
}

int http_request_parse(const char *buf, size_t len, struct http_request *req, char *out,
		       size_t *outlen)
{
	struct parse P = { .buf = buf, .req = req };
	struct line origin = {};
	long head;

	memset(req, 0, sizeof(*req));
	*outlen = 0;
	head = find_head(buf, len, req);
	if (head <= 0)
		return head;
	req->head_len = head;
	P.end = head - 2;
	if (parse_request_line(&P, &origin) || parse_headers(&P))
		return -EINVAL;
	if (req->connect)
		return 1;
	if (write_forward(&P, &origin, out, outlen))
		return -EINVAL;
	return 1;
}

static const char *reason(int status)
{
	switch (status) {
	case 200:
		return "Connection established";
	case 400:
		return "Bad Request";
	case 403:
		return "Forbidden";
	case 408:
		return "Request Timeout";
	case 431:
		return "Request Header Fields Too Large";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	default:
		return "Error";
	}
}

int http_status_head(int status, const char *why, char *buf, size_t bufsz)
{
	char body[128];
	int n;

	if (status == 200)
		return snprintf(buf, bufsz, "HTTP/1.1 200 %s\r\n\r\n", reason(200));
	n = snprintf(body, sizeof(body), "agentd proxy: %s\n", why ? why : reason(status));
	return snprintf(buf, bufsz,
			"HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
			"Connection: close\r\n\r\n%s",
			status, reason(status), n, body);
}
