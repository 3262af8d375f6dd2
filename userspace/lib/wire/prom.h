/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prometheus's text exposition format (version 0.0.4) written into a growing buffer: families
 * with their HELP and TYPE, samples with escaped label values, and histograms of fixed buckets.
 * No I/O: agentd's metrics socket sends the buffer (docs/METRICS.md).
 */
#ifndef AGENTD_PROM_H
#define AGENTD_PROM_H

#include <stddef.h>
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

#endif
