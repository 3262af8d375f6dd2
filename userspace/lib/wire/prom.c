// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "wire/prom.h"

static const double latency_bounds[METRICS_LATENCY_BUCKETS] = {
	1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 1e-2, 1e-1, 0.5, 1, 5, 10,
};

void metrics_histogram_observe(struct metrics_histogram *h, double seconds)
{
	size_t i;

	for (i = 0; i < METRICS_LATENCY_BUCKETS && seconds > latency_bounds[i]; i++)
		;
	if (i < METRICS_LATENCY_BUCKETS)
		h->bucket[i]++;
	h->count++;
	h->sum += seconds;
}

static void put(struct metrics_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct metrics_buf *b, const char *fmt, ...)
{
	va_list ap;
	size_t need;
	int n;
	char *s;

	if (b->err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
	va_end(ap);
	if (n < 0 || (b->s && (size_t)n < b->cap - b->len)) {
		if (n >= 0)
			b->len += n;
		return;
	}
	need = b->len + n + 1;
	s = realloc(b->s, need < 2 * b->cap ? 2 * b->cap : need + 4096);
	if (!s) {
		b->err = -ENOMEM;
		return;
	}
	b->s = s;
	b->cap = need < 2 * b->cap ? 2 * b->cap : need + 4096;
	va_start(ap, fmt);
	b->len += vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
}

/* A label value: backslash, double quote and newline escaped. */
static void put_escaped(struct metrics_buf *b, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			put(b, "\\%c", *v);
		else if (*v == '\n')
			put(b, "\\n");
		else
			put(b, "%c", *v);
	}
}

static void put_value(struct metrics_buf *b, double v)
{
	if (isinf(v))
		put(b, v > 0 ? "+Inf" : "-Inf");
	else if (v >= 0 && v < 1e18 && v == (double)(__u64)v)
		put(b, "%llu", (unsigned long long)v);
	else
		put(b, "%.9g", v);
}

void metrics_family(struct metrics_buf *b, const char *name, const char *type, const char *help)
{
	put(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void put_labels(struct metrics_buf *b, va_list ap, const char *extra, const char *extra_v)
{
	const char *k, *v;
	int n = 0;

	while ((k = va_arg(ap, const char *))) {
		v = va_arg(ap, const char *);
		put(b, "%s%s=\"", n++ ? "," : "{", k);
		put_escaped(b, v);
		put(b, "\"");
	}
	if (extra)
		put(b, "%s%s=\"%s\"", n++ ? "," : "{", extra, extra_v);
	if (n)
		put(b, "}");
}

static void sample(struct metrics_buf *b, const char *name, const char *suffix, double value,
		   const char *extra, const char *extra_v, ...)
{
	va_list ap;

	put(b, "%s%s", name, suffix);
	va_start(ap, extra_v);
	put_labels(b, ap, extra, extra_v);
	va_end(ap);
	put(b, " ");
	put_value(b, value);
	put(b, "\n");
}

void metrics_sample(struct metrics_buf *b, const char *name, double value, ...)
{
	va_list ap;

	put(b, "%s", name);
	va_start(ap, value);
	put_labels(b, ap, NULL, NULL);
	va_end(ap);
	put(b, " ");
	put_value(b, value);
	put(b, "\n");
}

void metrics_histogram_write(struct metrics_buf *b, const char *name, const char *label,
			     const char *value, const struct metrics_histogram *h)
{
	char le[32];
	__u64 cum = 0;
	size_t i;

	for (i = 0; i < METRICS_LATENCY_BUCKETS; i++) {
		cum += h->bucket[i];
		snprintf(le, sizeof(le), "%g", latency_bounds[i]);
		sample(b, name, "_bucket", cum, "le", le, label, value, PROM_END);
	}
	sample(b, name, "_bucket", h->count, "le", "+Inf", label, value, PROM_END);
	sample(b, name, "_sum", h->sum, NULL, NULL, label, value, PROM_END);
	sample(b, name, "_count", h->count, NULL, NULL, label, value, PROM_END);
}

void metrics_buf_free(struct metrics_buf *b)
{
	free(b->s);
	*b = (struct metrics_buf){ 0 };
}

static int listen_fail(char *why, size_t whysz, const char *s, const char *what)
{
	snprintf(why, whysz, "--metrics-listen \"%s\": %s", s, what);
	return -EINVAL;
}

int prom_listen_parse(const char *s, struct sockaddr_storage *sa, socklen_t *salen, char *why,
		      size_t whysz)
{
	static const char not_loopback[] =
		"not a loopback address: metrics are served on 127.0.0.0/8 or [::1] only";
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;
	struct sockaddr_in *in4 = (struct sockaddr_in *)sa;
	const char *colon = strrchr(s, ':'), *p, *h = s;
	char host[INET6_ADDRSTRLEN + 2];
	size_t n = colon ? (size_t)(colon - s) : 0;
	unsigned long port = 0;
	bool bracketed = false;

	if (!colon || !n || !colon[1])
		return listen_fail(why, whysz, s,
				   "expected ADDR:PORT (127.0.0.1:9101, [::1]:9101)");
	for (p = colon + 1; *p; p++) {
		if (*p < '0' || *p > '9' || port > 65535)
			return listen_fail(why, whysz, s,
					   "the port is not a number from 1 to 65535");
		port = port * 10 + (*p - '0');
	}
	if (!port || port > 65535)
		return listen_fail(why, whysz, s, "the port is not a number from 1 to 65535");
	if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
		bracketed = true;
		h++;
		n -= 2;
	}
	if (n >= sizeof(host))
		return listen_fail(why, whysz, s, "not an IP address");
	memcpy(host, h, n);
	host[n] = '\0';
	memset(sa, 0, sizeof(*sa));
	if (!bracketed && inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		if ((ntohl(in4->sin_addr.s_addr) >> 24) != 127)
			return listen_fail(why, whysz, s, not_loopback);
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		*salen = sizeof(*in4);
		return 0;
	}
	if (bracketed && inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		if (!IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
			return listen_fail(why, whysz, s, not_loopback);
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		*salen = sizeof(*in6);
		return 0;
	}
	return listen_fail(why, whysz, s,
			   "not an IP address (names are not resolved; IPv6 in brackets)");
}

static bool is_token(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] < 'A' || s[i] > 'Z')
			return false;
	return n > 0;
}

/* "METHOD SP TARGET SP HTTP/x.y": the request line without its line end. */
static int request_line(const char *s, size_t n)
{
	const char *sp1 = memchr(s, ' ', n), *sp2, *target, *version;
	size_t i, tlen;

	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
			return 400;
	if (!sp1 || !is_token(s, sp1 - s))
		return 400;
	target = sp1 + 1;
	sp2 = memchr(target, ' ', n - (target - s));
	if (!sp2 || sp2 == target || target[0] != '/')
		return 400;
	version = sp2 + 1;
	tlen = sp2 - target;
	if ((size_t)(s + n - version) != 8 || memcmp(version, "HTTP/", 5) || version[5] < '0' ||
	    version[5] > '9' || version[6] != '.' || version[7] < '0' || version[7] > '9')
		return 400;
	if (version[5] != '1' || (version[7] != '0' && version[7] != '1'))
		return 505;
	if (sp1 - s != 3 || memcmp(s, "GET", 3))
		return 405;
	if (tlen < 8 || memcmp(target, "/metrics", 8) || (tlen > 8 && target[8] != '?'))
		return 404;
	return 200;
}

int prom_http_request(const char *buf, size_t len)
{
	const char *nl, *p;
	size_t n = len < PROM_HTTP_HEAD_MAX ? len : PROM_HTTP_HEAD_MAX, line;
	int status;

	nl = memchr(buf, '\n', n);
	if (!nl)
		return len >= PROM_HTTP_HEAD_MAX ? 431 : 0;
	line = nl - buf;
	if (line && buf[line - 1] == '\r')
		line--;
	status = request_line(buf, line);
	if (status != 200)
		return status;
	/* The head ends at an empty line; header lines are not interpreted, only checked. */
	for (p = nl + 1; p < buf + n; p++) {
		if (*p == '\r' && p + 1 == buf + n)
			break; /* its LF may come */
		if (*p == '\0' || (*p == '\r' && p[1] != '\n'))
			return 400;
		if (p[-1] == '\n' && (*p == '\n' || *p == '\r'))
			return 200;
	}
	return len >= PROM_HTTP_HEAD_MAX ? 431 : 0;
}

static const char *reason(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 431:
		return "Request Header Fields Too Large";
	case 503:
		return "Service Unavailable";
	case 505:
		return "HTTP Version Not Supported";
	}
	return "Error";
}

int prom_http_head(int status, size_t body_len, char *buf, size_t bufsz)
{
	int n = snprintf(buf, bufsz,
			 "HTTP/1.1 %d %s\r\n"
			 "Content-Type: %s\r\n"
			 "Content-Length: %zu\r\n"
			 "%s"
			 "Connection: close\r\n\r\n",
			 status, reason(status),
			 status == 200 ? "text/plain; version=0.0.4; charset=utf-8"
				       : "text/plain; charset=utf-8",
			 body_len, status == 405 ? "Allow: GET\r\n" : "");

	return n < 0 || (size_t)n >= bufsz ? -ENOSPC : n;
}
