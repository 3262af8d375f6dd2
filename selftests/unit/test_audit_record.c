// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <jansson.h>
#include "agentd/abi.h"
#include "audit_test.h"
#include "harness.h"

static const struct audit_stamp stamp = {
	.seq = 42,
	.time_ns = 1700000000123456789ULL,
	.host = "build1",
	.prev = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
};

/* A line must be what jansson itself prints for the same document: valid, compact, ordered. */
static void assert_canonical(const char *line)
{
	json_t *doc = json_loads(line, JSON_REJECT_DUPLICATES, NULL);
	char *again;

	ASSERT(json_is_object(doc));
	again = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
	ASSERT_STREQ(again, line);
	free(again);
	json_decref(doc);
}

TEST(audit_file_event_golden_line)
{
	struct audit_record r;
	char line[AUDIT_LINE_MAX];
	int n;

	audit_test_file_record(&r, 3, true, 1);
	n = audit_record_format(&r, &stamp, line, sizeof(line));
	ASSERT_STREQ(
		line,
		"{\"v\":1,\"seq\":42,\"time\":\"2023-11-14T22:13:21.000000000Z\",\"host\":"
		"\"build1\","
		"\"kind\":\"file\",\"op\":\"file_open\",\"agent\":3,\"cgroup\":4242,\"pid\":101,"
		"\"tid\":102,\"uid\":1000,\"comm\":\"cat\",\"object\":{\"path\":\"/w/file-1\","
		"\"dev\":\"8:1\",\"ino\":1235},\"decision\":\"deny\",\"rule\":9,\"gen\":7,"
		"\"detail\":\"reason=rule need=0x1 have=0x0\","
		"\"prev\":\"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\"}");
	ASSERT_EQ(n, strlen(line));
	assert_canonical(line);
}

TEST(audit_other_kinds_golden_lines)
{
	struct audit_record r = { .kind = AUDIT_KIND_TOOL, .agent = 5 };
	char line[AUDIT_LINE_MAX];

	strcpy(r.op, "call");
	strcpy(r.agent_name, "coder");
	r.has = AUDIT_HAS_TOOL;
	strcpy(r.tool, "shell");
	r.args_len = 12;
	memset(r.args_sha256, 0xab, 32);
	r.out_len = 0;
	r.decision = AUDIT_DECISION_ALLOW;
	ASSERT(audit_record_format(&r, &stamp, line, sizeof(line)) > 0);
	ASSERT_STREQ(
		line,
		"{\"v\":1,\"seq\":42,\"time\":\"2023-11-14T22:13:20.123456789Z\",\"host\":"
		"\"build1\","
		"\"kind\":\"tool\",\"op\":\"call\",\"agent\":5,\"agent_name\":\"coder\","
		"\"decision\":\"allow\",\"tool\":{\"name\":\"shell\",\"args_len\":12,"
		"\"args_sha256\":"
		"\"abababababababababababababababababababababababababababababababab\","
		"\"out_len\":0,\"out_sha256\":"
		"\"0000000000000000000000000000000000000000000000000000000000000000\"},"
		"\"prev\":\"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\"}");
	assert_canonical(line);

	memset(&r, 0, sizeof(r));
	r.kind = AUDIT_KIND_NET;
	strcpy(r.op, "connect");
	r.has = AUDIT_HAS_NET;
	strcpy(r.family, "inet6");
	strcpy(r.addr, "2001:db8::1");
	r.port = 443;
	r.decision = AUDIT_DECISION_DENY;
	ASSERT(audit_record_format(&r, &stamp, line, sizeof(line)) > 0);
	ASSERT(strstr(line, ",\"object\":{\"family\":\"inet6\",\"addr\":\"2001:db8::1\","
			    "\"port\":443},\"decision\":\"deny\",\"prev\":"));
	assert_canonical(line);

	memset(&r, 0, sizeof(r));
	r.kind = AUDIT_KIND_LOSS;
	strcpy(r.op, "dropped");
	r.agent = 2;
	r.has = AUDIT_HAS_COUNT;
	r.count = 17;
	strcpy(r.source, "ringbuf");
	ASSERT(audit_record_format(&r, &stamp, line, sizeof(line)) > 0);
	ASSERT(strstr(line, "\"kind\":\"loss\",\"op\":\"dropped\",\"agent\":2,\"count\":17,"
			    "\"source\":\"ringbuf\",\"prev\":"));
	assert_canonical(line);
}

TEST(audit_strings_escape_agent_bytes)
{
	struct audit_record r;
	char line[AUDIT_LINE_MAX];

	audit_test_file_record(&r, 3, false, 1);
	strcpy(r.path, "a b\"\n\\\xff");
	strcpy(r.comm, "x\x1b");
	r.path_truncated = true;
	ASSERT(audit_record_format(&r, &stamp, line, sizeof(line)) > 0);
	ASSERT(strstr(line, "\"comm\":\"x\\\\x1b\""));
	ASSERT(strstr(line,
		      "\"path\":\"a b\\\\x22\\\\x0a\\\\x5c\\\\xff\",\"path_truncated\":true"));
	assert_canonical(line);
}

TEST(audit_unterminated_kernel_strings_stay_in_bounds)
{
	struct agentd_file_event e = {
		.hdr = { .type = AGENTD_EV_FILE,
			 .version = AGENTD_EVENT_VERSION,
			 .len = sizeof(e) },
		.verdict = { .hook = AGENTD_HOOK_FILE_OPEN },
		.path_len = 9999,
	};
	struct audit_record r;
	char line[AUDIT_LINE_MAX];

	memset(e.task.comm, 'c', sizeof(e.task.comm));
	memset(e.path, 'n', sizeof(e.path));
	ASSERT_EQ(audit_record_from_event(&r, &e, sizeof(e), 0), 0);
	ASSERT_EQ(strlen(r.comm), AGENTD_COMM_LEN);
	ASSERT_EQ(strlen(r.path), AGENTD_PATH_LEN);
	ASSERT(audit_record_format(&r, &stamp, line, sizeof(line)) > 0);
	assert_canonical(line);
}

TEST(audit_malformed_events_refused)
{
	struct agentd_file_event e = {
		.hdr = { .type = AGENTD_EV_FILE,
			 .version = AGENTD_EVENT_VERSION,
			 .len = sizeof(e) },
	};
	struct audit_record r;

	ASSERT_EQ(audit_record_from_event(&r, &e, 3, 0), -EINVAL);
	ASSERT_EQ(audit_record_from_event(&r, &e, sizeof(e) - 1, 0), -EINVAL);
	e.hdr.version++;
	ASSERT_EQ(audit_record_from_event(&r, &e, sizeof(e), 0), -EINVAL);
	e.hdr.version--;
	e.hdr.type = 0xffff;
	ASSERT_EQ(audit_record_from_event(&r, &e, sizeof(e), 0), -EINVAL);
	e.hdr.type = AGENTD_EV_FILE;
	e.hdr.len = sizeof(e.hdr);
	ASSERT_EQ(audit_record_from_event(&r, &e, sizeof(e.hdr), 0), -EINVAL);
}

TEST(audit_small_buffer_enospc)
{
	struct audit_record r;
	char line[64];

	audit_test_file_record(&r, 3, true, 1);
	ASSERT_EQ(audit_record_format(&r, &stamp, line, sizeof(line)), -ENOSPC);
	ASSERT_EQ(audit_record_format(&r, &stamp, line, 0), -ENOSPC);
}

TEST(audit_time_round_trip)
{
	char buf[32];
	__u64 ns;

	audit_time_format(1700000000000000001ULL, buf);
	ASSERT_STREQ(buf, "2023-11-14T22:13:20.000000001Z");
	ASSERT_EQ(audit_time_parse(buf, &ns), 0);
	ASSERT_EQ(ns, 1700000000000000001ULL);
	ASSERT_EQ(audit_time_parse("2023-11-14T23:13:20.5+01:00", &ns), 0);
	ASSERT_EQ(ns, 1700000000500000000ULL);
	ASSERT_EQ(audit_time_parse("2023-11-14", &ns), 0);
	ASSERT_EQ(ns, 1699920000000000000ULL);
	ASSERT_EQ(audit_time_parse("2023-11-14T25:00:00Z", &ns), -EINVAL);
	ASSERT_EQ(audit_time_parse("2023-11-14T22:13:20.Z", &ns), -EINVAL);
	ASSERT_EQ(audit_time_parse("yesterday", &ns), -EINVAL);
	ASSERT_EQ(audit_time_parse("2023-11-14T22:13:20Zjunk", &ns), -EINVAL);
}

TEST(audit_filters)
{
	struct audit_record r;
	struct audit_filter f;
	char line[AUDIT_LINE_MAX];
	int n;

	audit_test_file_record(&r, 3, true, 1);
	strcpy(r.agent_name, "coder");
	n = audit_record_format(&r, &stamp, line, sizeof(line));
	ASSERT_EQ(audit_filter_parse(&f, ""), 0);
	ASSERT(audit_filter_empty(&f) && audit_filter_match(&f, line, n));
	ASSERT_EQ(audit_filter_parse(&f, "agent=3 kind=file decision=deny"), 0);
	ASSERT(audit_filter_match(&f, line, n));
	ASSERT_EQ(audit_filter_parse(&f, "agent=coder"), 0);
	ASSERT(audit_filter_match(&f, line, n));
	ASSERT_EQ(audit_filter_parse(&f, "agent=4"), 0);
	ASSERT(!audit_filter_match(&f, line, n));
	ASSERT_EQ(audit_filter_parse(&f, "decision=allow"), 0);
	ASSERT(!audit_filter_match(&f, line, n));
	ASSERT_EQ(audit_filter_parse(&f, "kind=exec"), 0);
	ASSERT(!audit_filter_match(&f, line, n));
	ASSERT_EQ(audit_filter_parse(&f, "since=2023-11-14T22:13:21Z until=2023-11-14T22:13:22Z"),
		  0);
	ASSERT(audit_filter_match(&f, line, n));
	ASSERT_EQ(audit_filter_parse(&f, "since=2023-11-14T22:13:21.000000001Z"), 0);
	ASSERT(!audit_filter_match(&f, line, n));
	ASSERT_EQ(audit_filter_parse(&f, "until=2023-11-14T22:13:20Z"), 0);
	ASSERT(!audit_filter_match(&f, line, n));
	ASSERT_EQ(audit_filter_parse(&f, "kind=nope"), -EINVAL);
	ASSERT_EQ(audit_filter_parse(&f, "colour=red"), -EINVAL);
	ASSERT_EQ(audit_filter_parse(&f, "agent"), -EINVAL);
	audit_filter_init(&f);
	ASSERT(!audit_filter_match(&(struct audit_filter){ .decision = AUDIT_DECISION_DENY },
				   "{not json", 9));
}
