// SPDX-License-Identifier: GPL-2.0
/* The Prometheus text exposition writer: families, escaped labels, cumulative histograms; the
 * HTTP of --metrics-listen: its address, the request head, the response head. */
#include <errno.h>
#include <stdio.h>
#include <arpa/inet.h>
#include <netinet/in.h>
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

TEST(metrics_listen_takes_loopback_addresses_only)
{
	struct sockaddr_storage sa;
	socklen_t len;
	char why[256];

	ASSERT_EQ(prom_listen_parse("127.0.0.1:9101", &sa, &len, why, sizeof(why)), 0);
	ASSERT_EQ(sa.ss_family, AF_INET);
	ASSERT_EQ(ntohs(((struct sockaddr_in *)&sa)->sin_port), 9101);
	ASSERT_EQ(prom_listen_parse("127.1.2.3:1", &sa, &len, why, sizeof(why)), 0);
	ASSERT_EQ(prom_listen_parse("[::1]:65535", &sa, &len, why, sizeof(why)), 0);
	ASSERT_EQ(sa.ss_family, AF_INET6);
	ASSERT_EQ(len, sizeof(struct sockaddr_in6));
	ASSERT_EQ(prom_listen_parse("0.0.0.0:9101", &sa, &len, why, sizeof(why)), -EINVAL);
	ASSERT(strstr(why, "\"0.0.0.0:9101\": not a loopback address"));
	ASSERT_EQ(prom_listen_parse("10.0.0.1:9101", &sa, &len, why, sizeof(why)), -EINVAL);
	ASSERT(strstr(why, "not a loopback address"));
	ASSERT_EQ(prom_listen_parse("[::]:9101", &sa, &len, why, sizeof(why)), -EINVAL);
	ASSERT(strstr(why, "not a loopback address"));
	ASSERT_EQ(prom_listen_parse("[::ffff:10.0.0.1]:9101", &sa, &len, why, sizeof(why)),
		  -EINVAL);
	ASSERT_EQ(prom_listen_parse("localhost:9101", &sa, &len, why, sizeof(why)), -EINVAL);
	ASSERT(strstr(why, "names are not resolved"));
	ASSERT_EQ(prom_listen_parse("::1:9101", &sa, &len, why, sizeof(why)), -EINVAL);
	ASSERT_EQ(prom_listen_parse("[127.0.0.1]:9101", &sa, &len, why, sizeof(why)), -EINVAL);
	ASSERT_EQ(prom_listen_parse("127.0.0.1:0", &sa, &len, why, sizeof(why)), -EINVAL);
	ASSERT(strstr(why, "the port is not a number from 1 to 65535"));
	ASSERT_EQ(prom_listen_parse("127.0.0.1:65536", &sa, &len, why, sizeof(why)), -EINVAL);
	ASSERT_EQ(prom_listen_parse("127.0.0.1:99999999999999999999", &sa, &len, why, sizeof(why)),
		  -EINVAL);
	ASSERT_EQ(prom_listen_parse("127.0.0.1:+80", &sa, &len, why, sizeof(why)), -EINVAL);
	ASSERT_EQ(prom_listen_parse("127.0.0.1", &sa, &len, why, sizeof(why)), -EINVAL);
	ASSERT(strstr(why, "expected ADDR:PORT"));
	ASSERT_EQ(prom_listen_parse(":9101", &sa, &len, why, sizeof(why)), -EINVAL);
	ASSERT_EQ(prom_listen_parse("127.0.0.1:", &sa, &len, why, sizeof(why)), -EINVAL);
}

static int req(const char *s)
{
	return prom_http_request(s, strlen(s));
}

TEST(metrics_http_request_line_get_metrics_only)
{
	static char big[PROM_HTTP_HEAD_MAX + 10];

	ASSERT_EQ(req("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: */*\r\n\r\n"), 200);
	ASSERT_EQ(req("GET /metrics HTTP/1.0\r\n\r\n"), 200);
	ASSERT_EQ(req("GET /metrics?name[]=x HTTP/1.1\n\n"), 200);
	/* incomplete: more may come */
	ASSERT_EQ(req(""), 0);
	ASSERT_EQ(req("GET /metr"), 0);
	ASSERT_EQ(req("GET /metrics HTTP/1.1\r\nHost: x\r\n"), 0);
	ASSERT_EQ(req("GET /metrics HTTP/1.1\r\nHost: x\r\n\r"), 0);
	/* refused */
	ASSERT_EQ(req("POST /metrics HTTP/1.1\r\n\r\n"), 405);
	ASSERT_EQ(req("HEAD /metrics HTTP/1.1\r\n\r\n"), 405);
	ASSERT_EQ(req("GET / HTTP/1.1\r\n\r\n"), 404);
	ASSERT_EQ(req("GET /metricsx HTTP/1.1\r\n\r\n"), 404);
	ASSERT_EQ(req("GET /metrics/ HTTP/1.1\r\n\r\n"), 404);
	ASSERT_EQ(req("GET /metrics HTTP/2.0\r\n\r\n"), 505);
	ASSERT_EQ(req("GET /metrics HTTP/1.2\r\n\r\n"), 505);
	ASSERT_EQ(req("GET /metrics HTTP/1.1x\r\n\r\n"), 400);
	ASSERT_EQ(req("GET  /metrics HTTP/1.1\r\n\r\n"), 400);
	ASSERT_EQ(req("GET metrics HTTP/1.1\r\n\r\n"), 400);
	ASSERT_EQ(req("get /metrics HTTP/1.1\r\n\r\n"), 400);
	ASSERT_EQ(req("GET /metrics\tHTTP/1.1\r\n\r\n"), 400);
	ASSERT_EQ(req("GET /metrics HTTP/1.1\r\nHost: a\rb\r\n\r\n"), 400);
	ASSERT_EQ(prom_http_request("GET /metrics HTTP/1.1\r\nX: \0\r\n\r\n", 31), 400);
	/* no end of head within the limit */
	memset(big, 'A', sizeof(big));
	ASSERT_EQ(prom_http_request(big, sizeof(big)), 431);
	memcpy(big, "GET /metrics HTTP/1.1\r\n", 23);
	ASSERT_EQ(prom_http_request(big, PROM_HTTP_HEAD_MAX), 431);
	ASSERT_EQ(prom_http_request(big, PROM_HTTP_HEAD_MAX - 1), 0);
}

TEST(metrics_http_response_head)
{
	char head[256];
	int n = prom_http_head(200, 42, head, sizeof(head));

	ASSERT(n > 0);
	ASSERT_STREQ(head, "HTTP/1.1 200 OK\r\n"
			   "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
			   "Content-Length: 42\r\n"
			   "Connection: close\r\n\r\n");
	ASSERT(prom_http_head(405, 0, head, sizeof(head)) > 0);
	ASSERT(strstr(head, "HTTP/1.1 405 Method Not Allowed\r\n") &&
	       strstr(head, "Allow: GET\r\n"));
	ASSERT_EQ(prom_http_head(200, 1, head, 10), -ENOSPC);
}
