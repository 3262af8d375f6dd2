// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
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
