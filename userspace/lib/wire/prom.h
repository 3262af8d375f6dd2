/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prometheus's text exposition format (version 0.0.4) written into a growing buffer: families
 * with their HELP and TYPE, samples with escaped label values, and histograms of fixed buckets;
 * and the little HTTP a scrape needs (--metrics-listen): the listen address, the request's
 * head, the response's. No I/O: agentd's metrics.c sends the buffer (docs/METRICS.md).
 */
#ifndef AGENTD_PROM_H
#define AGENTD_PROM_H

#include <stddef.h>
#include <sys/socket.h>
#include <linux/types.h>

struct metrics_buf {
	char *s;
	size_t len, cap;
	int err; /* -ENOMEM once an append failed; the buffer is then incomplete */
};

/* Ends a list of label pairs (a typed null: NULL may be a plain 0 in varargs). */
#define PROM_END ((const char *)NULL)

/* Latency buckets, in seconds: 10 us to 10 s. */
#define METRICS_LATENCY_BUCKETS 13

struct metrics_histogram {
	__u64 bucket[METRICS_LATENCY_BUCKETS]; /* observations <= the bound, not cumulative */
	__u64 count;
	double sum;
};

void metrics_histogram_observe(struct metrics_histogram *h, double seconds);

/* Starts a family: "# HELP" and "# TYPE" lines (type: counter, gauge, histogram). */
void metrics_family(struct metrics_buf *b, const char *name, const char *type, const char *help);
/* One sample; labels is a list of name, value pairs ending in NULL (values escaped here). */
void metrics_sample(struct metrics_buf *b, const char *name, double value, ...)
	__attribute__((sentinel));
/* A histogram's _bucket, _sum and _count samples, with one label pair (or NULL, NULL). */
void metrics_histogram_write(struct metrics_buf *b, const char *name, const char *label,
			     const char *value, const struct metrics_histogram *h);
void metrics_buf_free(struct metrics_buf *b);

/*
 * --metrics-listen ADDR:PORT: a loopback address, 127.0.0.0/8 or [::1] (numeric, no name), and a
 * port from 1 to 65535. Returns 0 with the address, or -EINVAL with why.
 */
int prom_listen_parse(const char *s, struct sockaddr_storage *sa, socklen_t *salen, char *why,
		      size_t whysz);

/* A scrape's request head is at most this long (the request line and its headers). */
#define PROM_HTTP_HEAD_MAX 4096

/*
 * The first len bytes a scraper sent: 0 while the head is incomplete, 200 for "GET /metrics"
 * (a query allowed) over HTTP/1.0 or 1.1, else the status to refuse with: 400 (malformed),
 * 404 (another target), 405 (another method), 431 (no end of head in PROM_HTTP_HEAD_MAX bytes),
 * 505 (another version). Bytes after the head are not looked at.
 */
int prom_http_request(const char *buf, size_t len);
/* The response's status line and headers for a body of body_len bytes (the exposition for 200,
 * text otherwise); the connection closes after it. Returns the length, or -ENOSPC. */
int prom_http_head(int status, size_t body_len, char *buf, size_t bufsz);

#endif
