// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include "agentd/abi.h"
#include "event.h"
#include "harness.h"

static struct agentd_file_event sample(void)
{
	struct agentd_file_event e = {
		.hdr = { .type = AGENTD_EV_FILE,
			 .version = AGENTD_EVENT_VERSION,
			 .len = sizeof(e),
			 .ts_ns = 1 },
		.cgroup_id = 4242,
		.agent_id = 3,
		.generation = 7,
		.pid = 100,
		.tid = 101,
		.uid = 1000,
		.hook = AGENTD_HOOK_FILE_OPEN,
		.decision = AGENTD_DECISION_DENY,
		.rule_id = 9,
		.dev = (8ULL << 20) | 1,
		.ino = 1234,
	};

	strcpy(e.comm, "cat");
	strcpy(e.name, "secret");
	e.name_len = 6;
	return e;
}

TEST(file_event_line)
{
	struct agentd_file_event e = sample();
	char line[512];
	int n;

	n = event_format(&e, sizeof(e), line, sizeof(line));
	ASSERT_STREQ(line, "deny agent=3 gen=7 cgroup=4242 pid=100 tid=101 uid=1000 comm=\"cat\" "
			   "hook=file_open rule=9 dev=8:1 ino=1234 name=\"secret\"");
	ASSERT_EQ(n, strlen(line));
}

TEST(file_event_escapes_agent_bytes)
{
	struct agentd_file_event e = sample();
	char line[512];

	strcpy(e.name, "a b\"\n\\\xff");
	strcpy(e.comm, "x=y\x1b");
	e.flags = AGENTD_EVF_NAME_TRUNCATED;
	ASSERT(event_format(&e, sizeof(e), line, sizeof(line)) > 0);
	ASSERT(strstr(line, "comm=\"x=y\\x1b\""));
	ASSERT(strstr(line, "name=\"a\\x20b\\x22\\x0a\\x5c\\xff\" name_truncated"));
}

TEST(file_event_unterminated_strings_stay_in_bounds)
{
	struct agentd_file_event e = sample();
	char line[2048];

	memset(e.comm, 'c', sizeof(e.comm));
	memset(e.name, 'n', sizeof(e.name));
	ASSERT(event_format(&e, sizeof(e), line, sizeof(line)) > 0);
	ASSERT(strstr(line, "comm=\"cccccccccccccccc\" "));
}

TEST(malformed_records_refused)
{
	struct agentd_file_event e = sample();
	char line[512];

	ASSERT_EQ(event_format(&e, 3, line, sizeof(line)), -EINVAL);
	ASSERT_EQ(event_format(&e, sizeof(e) - 1, line, sizeof(line)), -EINVAL);
	e.hdr.len = sizeof(e) + 8;
	ASSERT_EQ(event_format(&e, sizeof(e), line, sizeof(line)), -EINVAL);
	e = sample();
	e.hdr.version = AGENTD_EVENT_VERSION + 1;
	ASSERT_EQ(event_format(&e, sizeof(e), line, sizeof(line)), -EINVAL);
	e = sample();
	e.hdr.type = 0xffff;
	ASSERT_EQ(event_format(&e, sizeof(e), line, sizeof(line)), -EINVAL);
	/* A header that claims a short length for a file event is refused, not over-read. */
	e = sample();
	e.hdr.len = sizeof(e.hdr);
	ASSERT_EQ(event_format(&e, sizeof(e.hdr), line, sizeof(line)), -EINVAL);
}

TEST(small_buffer_reports_enospc)
{
	struct agentd_file_event e = sample();
	char line[20];

	ASSERT_EQ(event_format(&e, sizeof(e), line, sizeof(line)), -ENOSPC);
	ASSERT_EQ(event_format(&e, sizeof(e), line, 0), -ENOSPC);
}
