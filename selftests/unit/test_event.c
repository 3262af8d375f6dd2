// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include "agentd/abi.h"
#include "kernel/event.h"
#include "harness.h"

/* A ring-buffer record as the sink takes it: decoded once, then formatted. */
static int fmt(const void *data, size_t len, char *buf, size_t bufsz)
{
	union agentd_event ev;
	int err = event_decode(data, len, &ev);

	return err < 0 ? err : event_format(&ev, buf, bufsz);
}

static struct agentd_file_event sample(void)
{
	struct agentd_file_event e = {
		.hdr = { .type = AGENTD_EV_FILE,
			 .version = AGENTD_EVENT_VERSION,
			 .len = sizeof(e),
			 .ts_ns = 1 },
		.task = { .cgroup_id = 4242,
			  .agent_id = 3,
			  .generation = 7,
			  .pid = 100,
			  .tid = 101,
			  .uid = 1000 },
		.verdict = { .hook = AGENTD_HOOK_FILE_OPEN,
			     .decision = AGENTD_DECISION_DENY,
			     .reason = AGENTD_REASON_RULE,
			     .rule_id = 9 },
		.rights_needed = AGENTD_RIGHT_READ,
		.dev = (8ULL << 20) | 1,
		.ino = 1234,
	};

	strcpy(e.task.comm, "cat");
	strcpy(e.path, "/srv/secret");
	e.path_len = 11;
	return e;
}

TEST(file_event_line)
{
	struct agentd_file_event e = sample();
	char line[512];
	int n;

	n = fmt(&e, sizeof(e), line, sizeof(line));
	ASSERT_STREQ(line, "deny agent=3 gen=7 cgroup=4242 pid=100 tid=101 uid=1000 comm=\"cat\" "
			   "hook=file_open reason=rule rule=9 need=0x1 have=0x0 dev=8:1 ino=1234 "
			   "path=\"/srv/secret\"");
	ASSERT_EQ(n, strlen(line));
}

TEST(file_event_escapes_agent_bytes)
{
	struct agentd_file_event e = sample();
	char line[512];

	strcpy(e.path, "a b\"\n\\\xff");
	strcpy(e.task.comm, "x=y\x1b");
	e.flags = AGENTD_EVF_PATH_TRUNCATED;
	ASSERT(fmt(&e, sizeof(e), line, sizeof(line)) > 0);
	ASSERT(strstr(line, "comm=\"x=y\\x1b\""));
	ASSERT(strstr(line, "path=\"a\\x20b\\x22\\x0a\\x5c\\xff\" path_truncated"));
}

TEST(file_event_unterminated_strings_stay_in_bounds)
{
	struct agentd_file_event e = sample();
	char line[2048];

	memset(e.task.comm, 'c', sizeof(e.task.comm));
	memset(e.path, 'n', sizeof(e.path));
	ASSERT(fmt(&e, sizeof(e), line, sizeof(line)) > 0);
	ASSERT(strstr(line, "comm=\"cccccccccccccccc\" "));
}

TEST(malformed_records_refused)
{
	struct agentd_file_event e = sample();
	char line[512];

	ASSERT_EQ(fmt(&e, 3, line, sizeof(line)), -EINVAL);
	ASSERT_EQ(fmt(&e, sizeof(e) - 1, line, sizeof(line)), -EINVAL);
	e.hdr.len = sizeof(e) + 8;
	ASSERT_EQ(fmt(&e, sizeof(e), line, sizeof(line)), -EINVAL);
	e = sample();
	e.hdr.version = AGENTD_EVENT_VERSION + 1;
	ASSERT_EQ(fmt(&e, sizeof(e), line, sizeof(line)), -EINVAL);
	e = sample();
	e.hdr.type = 0xffff;
	ASSERT_EQ(fmt(&e, sizeof(e), line, sizeof(line)), -EINVAL);
	/* A header that claims a short length for a file event is refused, not over-read. */
	e = sample();
	e.hdr.len = sizeof(e.hdr);
	ASSERT_EQ(fmt(&e, sizeof(e.hdr), line, sizeof(line)), -EINVAL);
}

TEST(small_buffer_reports_enospc)
{
	struct agentd_file_event e = sample();
	char line[20];

	ASSERT_EQ(fmt(&e, sizeof(e), line, sizeof(line)), -ENOSPC);
	ASSERT_EQ(fmt(&e, sizeof(e), line, 0), -ENOSPC);
}

TEST(net_event_line)
{
	struct agentd_net_event e = {
		.hdr = { .type = AGENTD_EV_NET, .version = AGENTD_EVENT_VERSION, .len = sizeof(e) },
		.task = { .agent_id = 2, .pid = 5, .tid = 5 },
		.verdict = { .hook = AGENTD_HOOK_CONNECT6,
			     .decision = AGENTD_DECISION_DENY,
			     .reason = AGENTD_REASON_STRUCTURAL },
		.family = 10,
		.port = 443,
		.protocol = 6,
		.addr = { [10] = 0xff,
			  [11] = 0xff,
			  [12] = 169,
			  [13] = 254,
			  [14] = 169,
			  [15] = 254 },
	};
	char line[512];

	strcpy(e.task.comm, "curl");
	ASSERT(fmt(&e, sizeof(e), line, sizeof(line)) > 0);
	/* The IPv4-mapped form on an IPv6 socket prints as IPv6, as the agent wrote it. */
	ASSERT(strstr(line, "hook=connect6 reason=structural-deny rule=0 family=10 protocol=6 "
			    "addr=::ffff:169.254.169.254 port=443"));
	e.family = 2;
	e.verdict.hook = AGENTD_HOOK_CONNECT4;
	ASSERT(fmt(&e, sizeof(e), line, sizeof(line)) > 0);
	ASSERT(strstr(line, "addr=169.254.169.254 port=443"));
}

TEST(self_event_line_and_unknown_codes)
{
	struct agentd_self_event e = {
		.hdr = { .type = AGENTD_EV_SELF,
			 .version = AGENTD_EVENT_VERSION,
			 .len = sizeof(e) },
		.verdict = { .hook = AGENTD_HOOK_TASK_KILL,
			     .decision = AGENTD_DECISION_DENY,
			     .reason = AGENTD_REASON_OUTSIDE_AGENT },
		.target_pid = 1,
		.arg = 9,
	};
	char line[512];

	ASSERT(fmt(&e, sizeof(e), line, sizeof(line)) > 0);
	ASSERT(strstr(line,
		      "hook=task_kill reason=target-outside-agent rule=0 target_pid=1 arg=9"));
	/* Codes from a newer kernel object are named "unknown", never indexed out of bounds. */
	e.verdict.hook = 9999;
	e.verdict.reason = 0;
	ASSERT(fmt(&e, sizeof(e), line, sizeof(line)) > 0);
	ASSERT(strstr(line, "hook=unknown reason=unknown"));
}
