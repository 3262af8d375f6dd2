// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "agentd/abi.h"
#include "audit_test.h"
#include "kernel/event.h"
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

/*
 * Every kernel event kind as audit_record_from_event() and audit_record_format() make it, byte
 * for byte: a faster formatter must print exactly these lines (the chain hashes the bytes).
 */
static size_t golden_events(union agentd_event *ev, size_t max)
{
	static const __u8 v4[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 };
	static const __u8 v6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	struct agentd_task t = { .cgroup_id = 4242,
				 .agent_id = 3,
				 .generation = 7,
				 .pid = 101,
				 .tid = 102,
				 .uid = 1000 };
	size_t n = 0;

	(void)max;
	memset(ev, 0, max * sizeof(*ev));
	strcpy(t.comm, "cat");
	/* 1: odd bytes everywhere, every number at its widest, both flags */
	ev[n].file = (struct agentd_file_event){
		.hdr = { AGENTD_EV_FILE, AGENTD_EVENT_VERSION, sizeof(ev->file), 5 },
		.task = { .cgroup_id = 9223372036854775807ULL,
			  .agent_id = 1023,
			  .generation = ~0U,
			  .pid = ~0U,
			  .tid = ~0U,
			  .uid = ~0U },
		.verdict = { AGENTD_HOOK_FILE_OPEN, AGENTD_DECISION_DENY, AGENTD_REASON_NO_RULE,
			     0 },
		.rights_needed = 0xff,
		.dev = ~0ULL,
		.ino = 9223372036854775807ULL,
		.flags = AGENTD_EVF_PATH_TRUNCATED | AGENTD_EVF_INTERNAL,
	};
	memcpy(ev[n].file.task.comm, "py\tth\"n\\\x80\x7f\x01zzzzzz", 16);
	ev[n].file.path_len = sprintf(
		ev[n].file.path, "/w/a \"q\" \\b\n\x01\x1f\x7f\xff\xc3\x28 \xc3\xa9/{}[]:,~%%s");
	n++;
	/* 2: path_len shorter than the string; rename allowed */
	ev[n].file = (struct agentd_file_event){
		.hdr = { AGENTD_EV_FILE, AGENTD_EVENT_VERSION, sizeof(ev->file), 1000000000ULL },
		.task = t,
		.verdict = { AGENTD_HOOK_PATH_RENAME, AGENTD_DECISION_ALLOW,
			     AGENTD_REASON_LINK_WIDENS, 12 },
		.rights_needed = AGENTD_RIGHT_LINK,
		.rights_held = AGENTD_RIGHT_LINK | AGENTD_RIGHT_READ,
		.dev = (8ULL << 20) | 1,
		.ino = 1,
		.path_len = 3,
	};
	strcpy(ev[n].file.path, "abcdef");
	n++;
	/* 3: exec, empty path */
	ev[n].file = (struct agentd_file_event){
		.hdr = { AGENTD_EV_FILE, AGENTD_EVENT_VERSION, sizeof(ev->file), 999999999ULL },
		.task = t,
		.verdict = { AGENTD_HOOK_BPRM_CHECK, AGENTD_DECISION_DENY,
			     AGENTD_REASON_WRITABLE_EXEC, 4 },
		.rights_needed = AGENTD_RIGHT_EXEC,
		.dev = (259ULL << 20) | 3,
		.ino = 77,
	};
	n++;
	/* 4: connect4 (IPv4-mapped), 5: sendmsg6 */
	ev[n].net = (struct agentd_net_event){
		.hdr = { AGENTD_EV_NET, AGENTD_EVENT_VERSION, sizeof(ev->net), 2 },
		.task = t,
		.verdict = { AGENTD_HOOK_CONNECT4, AGENTD_DECISION_DENY, AGENTD_REASON_STRUCTURAL,
			     0 },
		.family = 2,
		.port = 443,
		.protocol = 6,
	};
	memcpy(ev[n].net.addr, v4, 16);
	n++;
	ev[n].net = (struct agentd_net_event){
		.hdr = { AGENTD_EV_NET, AGENTD_EVENT_VERSION, sizeof(ev->net), 3 },
		.task = t,
		.verdict = { AGENTD_HOOK_SENDMSG6, AGENTD_DECISION_ALLOW, AGENTD_REASON_RULE,
			     65535 },
		.family = 10,
		.port = 65535,
		.protocol = 17,
	};
	memcpy(ev[n].net.addr, v6, 16);
	n++;
	/* 6: sock_create, 7: unix_stream_connect */
	ev[n].net = (struct agentd_net_event){
		.hdr = { AGENTD_EV_NET, AGENTD_EVENT_VERSION, sizeof(ev->net), 4 },
		.task = t,
		.verdict = { AGENTD_HOOK_SOCK_CREATE, AGENTD_DECISION_DENY,
			     AGENTD_REASON_SELF_PROTECT, 0 },
		.family = 17,
		.protocol = 3,
	};
	n++;
	ev[n].net = (struct agentd_net_event){
		.hdr = { AGENTD_EV_NET, AGENTD_EVENT_VERSION, sizeof(ev->net), 5 },
		.task = t,
		.verdict = { AGENTD_HOOK_UNIX_STREAM_CONNECT, AGENTD_DECISION_DENY,
			     AGENTD_REASON_NOT_OWN_SOCKET, 0 },
		.family = 1,
		.protocol = 1,
	};
	n++;
	/* 8: self-protection */
	ev[n].self = (struct agentd_self_event){
		.hdr = { AGENTD_EV_SELF, AGENTD_EVENT_VERSION, sizeof(ev->self), 6 },
		.task = t,
		.verdict = { AGENTD_HOOK_TASK_KILL, AGENTD_DECISION_DENY,
			     AGENTD_REASON_OUTSIDE_AGENT, 0 },
		.target_pid = 1,
		.arg = 9,
	};
	n++;
	/* 9: a hook and a reason this build does not know */
	ev[n].self = (struct agentd_self_event){
		.hdr = { AGENTD_EV_SELF, AGENTD_EVENT_VERSION, sizeof(ev->self), 7 },
		.task = t,
		.verdict = { 999, 7, 999, 1 },
	};
	n++;
	return n;
}

/* What the code before the writer was made faster printed for them (jansson parses them). */
static const char *const golden_lines[] = {
	"{\"v\":1,\"seq\":9223372036854775807,\"time\":\"2023-11-14T22:13:20.000000005Z\",\"host\":"
	"\"h\\\\x22o\\\\x5cst\\\\x01\",\"kind\":\"file\",\"op\":\"file_open\",\"agent\":1023,"
	"\"cgroup\":9223372036854775807,\"pid\":4294967295,\"tid\":4294967295,\"uid\":4294967295,"
	"\"comm\":\"py\\\\x09th\\\\x22n\\\\x5c\\\\x80\\\\x7f\\\\x01zzzzz\",\"object\":{\"path\":\"/"
	"w/a \\\\x22q\\\\x22 \\\\x5cb\\\\x0a\\\\x01\\\\x1f\\\\x7f\\\\xff\\\\xc3( "
	"\\\\xc3\\\\xa9/"
	"{}[]:,~%s\",\"path_truncated\":true,\"dev\":\"17592186044415:1048575\",\"ino\":"
	"9223372036854775807},\"decision\":\"deny\",\"rule\":0,\"gen\":4294967295,\"detail\":"
	"\"reason=no-rule need=0xff have=0x0 "
	"internal\",\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"}",
	"{\"v\":1,\"seq\":9223372036854775807,\"time\":\"2023-11-14T22:13:21.000000000Z\",\"host\":"
	"\"h\\\\x22o\\\\x5cst\\\\x01\",\"kind\":\"file\",\"op\":\"path_rename\",\"agent\":3,"
	"\"cgroup\":4242,\"pid\":101,\"tid\":102,\"uid\":1000,\"comm\":\"cat\",\"object\":{"
	"\"path\":\"abc\",\"dev\":\"8:1\",\"ino\":1},\"decision\":\"allow\",\"rule\":12,\"gen\":7,"
	"\"detail\":\"reason=link-widens-rights need=0x20 "
	"have=0x21\",\"prev\":"
	"\"0000000000000000000000000000000000000000000000000000000000000000\"}",
	"{\"v\":1,\"seq\":9223372036854775807,\"time\":\"2023-11-14T22:13:20.999999999Z\",\"host\":"
	"\"h\\\\x22o\\\\x5cst\\\\x01\",\"kind\":\"exec\",\"op\":\"bprm_check_security\",\"agent\":"
	"3,\"cgroup\":4242,\"pid\":101,\"tid\":102,\"uid\":1000,\"comm\":\"cat\",\"object\":{"
	"\"dev\":\"259:3\",\"ino\":77},\"decision\":\"deny\",\"rule\":4,\"gen\":7,\"detail\":"
	"\"reason=exec-from-writable-tree need=0x4 "
	"have=0x0\",\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"}",
	"{\"v\":1,\"seq\":9223372036854775807,\"time\":\"2023-11-14T22:13:20.000000002Z\",\"host\":"
	"\"h\\\\x22o\\\\x5cst\\\\x01\",\"kind\":\"net\",\"op\":\"connect4\",\"agent\":3,\"cgroup\":"
	"4242,\"pid\":101,\"tid\":102,\"uid\":1000,\"comm\":\"cat\",\"object\":{\"family\":"
	"\"inet\",\"addr\":\"10.0.0.1\",\"port\":443},\"decision\":\"deny\",\"rule\":0,\"gen\":7,"
	"\"detail\":\"reason=structural-deny\",\"prev\":"
	"\"0000000000000000000000000000000000000000000000000000000000000000\"}",
	"{\"v\":1,\"seq\":9223372036854775807,\"time\":\"2023-11-14T22:13:20.000000003Z\",\"host\":"
	"\"h\\\\x22o\\\\x5cst\\\\x01\",\"kind\":\"net\",\"op\":\"sendmsg6\",\"agent\":3,\"cgroup\":"
	"4242,\"pid\":101,\"tid\":102,\"uid\":1000,\"comm\":\"cat\",\"object\":{\"family\":"
	"\"inet6\",\"addr\":\"2001:db8::1\",\"port\":65535},\"decision\":\"allow\",\"rule\":65535,"
	"\"gen\":7,\"detail\":\"reason=rule\",\"prev\":"
	"\"0000000000000000000000000000000000000000000000000000000000000000\"}",
	"{\"v\":1,\"seq\":9223372036854775807,\"time\":\"2023-11-14T22:13:20.000000004Z\",\"host\":"
	"\"h\\\\x22o\\\\x5cst\\\\x01\",\"kind\":\"sock\",\"op\":\"sock_create\",\"agent\":3,"
	"\"cgroup\":4242,\"pid\":101,\"tid\":102,\"uid\":1000,\"comm\":\"cat\",\"decision\":"
	"\"deny\",\"rule\":0,\"gen\":7,\"detail\":\"reason=self-protection family=17 "
	"type=3\",\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"}",
	"{\"v\":1,\"seq\":9223372036854775807,\"time\":\"2023-11-14T22:13:20.000000005Z\",\"host\":"
	"\"h\\\\x22o\\\\x5cst\\\\x01\",\"kind\":\"sock\",\"op\":\"unix_stream_connect\",\"agent\":"
	"3,\"cgroup\":4242,\"pid\":101,\"tid\":102,\"uid\":1000,\"comm\":\"cat\",\"decision\":"
	"\"deny\",\"rule\":0,\"gen\":7,\"detail\":\"reason=not-own-broker-socket family=1 "
	"type=1\",\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"}",
	"{\"v\":1,\"seq\":9223372036854775807,\"time\":\"2023-11-14T22:13:20.000000006Z\",\"host\":"
	"\"h\\\\x22o\\\\x5cst\\\\x01\",\"kind\":\"self\",\"op\":\"task_kill\",\"agent\":3,"
	"\"cgroup\":4242,\"pid\":101,\"tid\":102,\"uid\":1000,\"comm\":\"cat\",\"decision\":"
	"\"deny\",\"rule\":0,\"gen\":7,\"detail\":\"reason=target-outside-agent target_pid=1 "
	"arg=9\",\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"}",
	"{\"v\":1,\"seq\":9223372036854775807,\"time\":\"2023-11-14T22:13:20.000000007Z\",\"host\":"
	"\"h\\\\x22o\\\\x5cst\\\\x01\",\"kind\":\"self\",\"op\":\"unknown\",\"agent\":3,\"cgroup\":"
	"4242,\"pid\":101,\"tid\":102,\"uid\":1000,\"comm\":\"cat\",\"decision\":\"allow\","
	"\"rule\":1,\"gen\":7,\"detail\":\"reason=unknown target_pid=0 "
	"arg=0\",\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"}",
};

TEST(audit_event_records_byte_for_byte)
{
	const struct audit_stamp st = { .seq = 9223372036854775807ULL,
					.host = "h\"o\\st\x01",
					.prev = AUDIT_GENESIS };
	union agentd_event ev[16];
	size_t n = golden_events(ev, 16), i;
	char line[AUDIT_LINE_MAX];
	struct audit_record r;

	ASSERT_EQ(n, sizeof(golden_lines) / sizeof(golden_lines[0]));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(audit_test_from_event(&r, &ev[i], ev[i].hdr.len, 1700000000000000000LL),
			  0);
		ASSERT_EQ(audit_record_format(&r, &st, line, sizeof(line)),
			  strlen(golden_lines[i]));
		ASSERT_STREQ(line, golden_lines[i]);
		assert_canonical(line);
	}
}

/* Records the daemon makes itself: odd bytes in names and details, the time of append. */
TEST(audit_daemon_records_byte_for_byte)
{
	struct audit_record r = { .kind = AUDIT_KIND_POLICY, .agent = 4294967295U };
	char line[AUDIT_LINE_MAX];

	strcpy(r.op, "reload");
	strcpy(r.agent_name, "c\\o\"d\x7f");
	strcpy(r.path, "/etc/agentd/p\xe2\x80\xa8.json");
	strcpy(r.detail, "generation=8 rules=12 \t");
	ASSERT(audit_record_format(&r, &stamp, line, sizeof(line)) > 0);
	ASSERT_STREQ(line,
		     "{\"v\":1,\"seq\":42,\"time\":\"2023-11-14T22:13:20.123456789Z\",\"host\":"
		     "\"build1\",\"kind\":\"policy\",\"op\":\"reload\",\"agent\":4294967295,"
		     "\"agent_name\":\"c\\\\x5co\\\\x22d\\\\x7f\",\"object\":{\"path\":"
		     "\"/etc/agentd/p\\\\xe2\\\\x80\\\\xa8.json\"},\"detail\":"
		     "\"generation=8 rules=12 \\\\x09\",\"prev\":"
		     "\"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\"}");
	assert_canonical(line);

	/* Counts are unsigned 64-bit, printed in full (beyond what jansson reads back). */
	memset(&r, 0, sizeof(r));
	r.kind = AUDIT_KIND_LOSS;
	strcpy(r.op, "dropped");
	r.has = AUDIT_HAS_COUNT;
	r.count = ~0ULL;
	strcpy(r.source, "ringbuf");
	ASSERT(audit_record_format(&r, &stamp, line, sizeof(line)) > 0);
	ASSERT(strstr(line, ",\"op\":\"dropped\",\"count\":18446744073709551615,"
			    "\"source\":\"ringbuf\",\"prev\":"));
}

/* The chain's hash against published and independently computed SHA-256 values. */
TEST(audit_hash_known_values)
{
	static const struct {
		size_t len;
		const char *hex;
	} want[] = {
		{ 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318" },
		{ 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a" },
		{ 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb" },
	};
	char bytes[1024], hex[AUDIT_HASH_HEX];
	size_t i;

	audit_hash_hex("abc", 3, hex);
	ASSERT_STREQ(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	memset(bytes, 'a', 64);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		audit_hash_hex(bytes, want[i].len, hex);
		ASSERT_STREQ(hex, want[i].hex);
	}
	for (i = 0; i < sizeof(bytes); i++)
		bytes[i] = i;
	audit_hash_hex(bytes, sizeof(bytes), hex);
	ASSERT_STREQ(hex, "785b0751fc2c53dc14a4ce3d800e69ef9ce1009eb327ccf458afe09c242c26c9");
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
	ASSERT_EQ(audit_test_from_event(&r, &e, sizeof(e), 0), 0);
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

	ASSERT_EQ(audit_test_from_event(&r, &e, 3, 0), -EINVAL);
	ASSERT_EQ(audit_test_from_event(&r, &e, sizeof(e) - 1, 0), -EINVAL);
	e.hdr.version++;
	ASSERT_EQ(audit_test_from_event(&r, &e, sizeof(e), 0), -EINVAL);
	e.hdr.version--;
	e.hdr.type = 0xffff;
	ASSERT_EQ(audit_test_from_event(&r, &e, sizeof(e), 0), -EINVAL);
	e.hdr.type = AGENTD_EV_FILE;
	e.hdr.len = sizeof(e.hdr);
	ASSERT_EQ(audit_test_from_event(&r, &e, sizeof(e.hdr), 0), -EINVAL);
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

/* Integers past INT64_MAX come back as strings of their digits; nothing else changes. */
TEST(audit_json_reads_integers_past_int64)
{
	static const char line[] = "{\"a\":18446744073709551615,\"b\":\"\\\"99999999999999999999\","
				   "\"c\":9223372036854775807,\"e\":1.5e3,\"f\":-1}";
	json_t *rec = audit_json_loadb(line, strlen(line), JSON_REJECT_DUPLICATES);

	ASSERT(json_is_object(rec));
	ASSERT_STREQ(json_string_value(json_object_get(rec, "a")), "18446744073709551615");
	ASSERT_STREQ(json_string_value(json_object_get(rec, "b")), "\"99999999999999999999");
	ASSERT(json_integer_value(json_object_get(rec, "c")) == 9223372036854775807LL);
	ASSERT(json_is_real(json_object_get(rec, "e")) &&
	       json_integer_value(json_object_get(rec, "f")) == -1);
	json_decref(rec);
	/* Leading zeros are not JSON: still refused, as is a negative number past INT64_MIN. */
	ASSERT(!audit_json_loadb("{\"d\":[00009223372036854775808]}",
				 strlen("{\"d\":[00009223372036854775808]}"), 0));
	ASSERT(!audit_json_loadb("{\"n\":-9223372036854775809}",
				 strlen("{\"n\":-9223372036854775809}"), 0));
	ASSERT(!audit_json_loadb("{\"n\":1}x", strlen("{\"n\":1}x"), 0));
}
