// SPDX-License-Identifier: GPL-2.0
/* The Prometheus text exposition writer: families, escaped labels, cumulative histograms. */
#include <stdio.h>
#include <string.h>
#include "harness.h"
#include "wire/prom.h"

TEST(metrics_family_and_samples_with_escaped_labels)
{
	struct metrics_buf b = { 0 };

	metrics_family(&b, "agentd_decisions_total", "counter", "Decisions of the kernel.");
	metrics_sample(&b, "agentd_decisions_total", 3, "agent", "a\"b\\c\nd", "kind", "file",
		       PROM_END);
	metrics_sample(&b, "agentd_up", 1, PROM_END);
	metrics_sample(&b, "agentd_ratio", 0.25, PROM_END);
	ASSERT_EQ(b.err, 0);
	ASSERT_STREQ(b.s, "# HELP agentd_decisions_total Decisions of the kernel.\n"
			  "# TYPE agentd_decisions_total counter\n"
			  "agentd_decisions_total{agent=\"a\\\"b\\\\c\\nd\",kind=\"file\"} 3\n"
			  "agentd_up 1\n"
			  "agentd_ratio 0.25\n");
	metrics_buf_free(&b);
}

TEST(metrics_histogram_buckets_are_cumulative)
{
	struct metrics_histogram h = { 0 };
	struct metrics_buf b = { 0 };

	metrics_histogram_observe(&h, 0.000005); /* first bucket */
	metrics_histogram_observe(&h, 0.002); /* le 0.01 */
	metrics_histogram_observe(&h, 60); /* past the last bound: +Inf only */
	metrics_histogram_write(&b, "agentd_x_seconds", "tool", "noop", &h);
	ASSERT_EQ(b.err, 0);
	ASSERT(strstr(b.s, "agentd_x_seconds_bucket{tool=\"noop\",le=\"1e-05\"} 1\n"));
	ASSERT(strstr(b.s, "agentd_x_seconds_bucket{tool=\"noop\",le=\"0.001\"} 1\n"));
	ASSERT(strstr(b.s, "agentd_x_seconds_bucket{tool=\"noop\",le=\"0.01\"} 2\n"));
	ASSERT(strstr(b.s, "agentd_x_seconds_bucket{tool=\"noop\",le=\"10\"} 2\n"));
	ASSERT(strstr(b.s, "agentd_x_seconds_bucket{tool=\"noop\",le=\"+Inf\"} 3\n"));
	ASSERT(strstr(b.s, "agentd_x_seconds_count{tool=\"noop\"} 3\n"));
	ASSERT(strstr(b.s, "agentd_x_seconds_sum{tool=\"noop\"} 60.002005\n"));
	metrics_buf_free(&b);
}

TEST(metrics_buffer_grows_past_its_first_allocation)
{
	struct metrics_buf b = { 0 };
	char name[64];
	int i;

	for (i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "agentd_m%d", i);
		metrics_sample(&b, name, i, "agent", "x", PROM_END);
	}
	ASSERT_EQ(b.err, 0);
	ASSERT(strstr(b.s, "agentd_m1999{agent=\"x\"} 1999\n"));
	ASSERT_EQ(strlen(b.s), b.len);
	metrics_buf_free(&b);
}
