// SPDX-License-Identifier: GPL-2.0
/* The control codec: every error path, in the order the parser meets them. */
#include <stdio.h>
#include <stdlib.h>
#include "wire/control.h"
#include "harness.h"
#include "kernel/state.h"

static int parse(const char *json, struct control_request *req, struct control_error *err)
{
	memset(err, 0, sizeof(*err));
	return control_request_parse(json, strlen(json), req, err);
}

/* Parsing must fail with code; returns the id it saw. */
static long long refuse(const char *json, const char *code)
{
	struct control_request req;
	struct control_error err;

	if (parse(json, &req, &err) != -EINVAL)
		FAIL("accepted: %s", json);
	if (strcmp(err.code, code))
		FAIL("%s: code %s (%s), expected %s", json, err.code, err.message, code);
	if (!err.message[0])
		FAIL("%s: no message", json);
	return req.id;
}

TEST(control_frame_header)
{
	unsigned char b[8] = { 0, 0, 0, 3, '{', '}', ' ', 0 };
	size_t n = 0;

	ASSERT_EQ(control_frame_check(b, 0, &n), 0);
	ASSERT_EQ(control_frame_check(b, 3, &n), 0);
	ASSERT_EQ(control_frame_check(b, 6, &n), 0);
	ASSERT_EQ(control_frame_check(b, 7, &n), 1);
	ASSERT_EQ(n, 3);
	b[3] = 0;
	ASSERT_EQ(control_frame_check(b, 7, &n), -EINVAL);
	/* 65536 is the largest payload; one more is refused from the header alone. */
	b[1] = 1;
	ASSERT_EQ(control_frame_check(b, 4, &n), 0);
	ASSERT_EQ(n, CONTROL_FRAME_MAX);
	b[3] = 1;
	ASSERT_EQ(control_frame_check(b, 4, &n), -EMSGSIZE);
	b[0] = 0xff;
	ASSERT_EQ(control_frame_check(b, 4, &n), -EMSGSIZE);
}

TEST(control_frame_roundtrip)
{
	struct control_request in = { .id = 7, .cmd = CONTROL_AGENT_ADD }, out;
	struct control_error err = { "", "" };
	size_t len, n;
	json_t *doc;
	char *buf;

	snprintf(in.name, sizeof(in.name), "coder-1");
	snprintf(in.policy, sizeof(in.policy), "/etc/agentd/p.json");
	snprintf(in.vars[0].name, sizeof(in.vars[0].name), "workspace");
	snprintf(in.vars[0].value, sizeof(in.vars[0].value), "/home/a b");
	in.nvars = 1;
	doc = control_request_json(&in);
	ASSERT(doc);
	ASSERT_EQ(control_frame_encode(doc, &buf, &len), 0);
	json_decref(doc);
	ASSERT_EQ(control_frame_check(buf, len, &n), 1);
	ASSERT_EQ(n + CONTROL_HDR, len);
	ASSERT_EQ(control_request_parse(buf + CONTROL_HDR, n, &out, &err), 0);
	free(buf);
	ASSERT_EQ(out.id, 7);
	ASSERT_EQ(out.cmd, CONTROL_AGENT_ADD);
	ASSERT_STREQ(out.name, "coder-1");
	ASSERT_STREQ(out.policy, "/etc/agentd/p.json");
	ASSERT_EQ(out.nvars, 1);
	ASSERT_STREQ(out.vars[0].name, "workspace");
	ASSERT_STREQ(out.vars[0].value, "/home/a b");
}

TEST(control_frame_encode_too_big)
{
	char *big = malloc(CONTROL_FRAME_MAX + 1), *buf;
	json_t *doc;
	size_t len;

	ASSERT(big);
	memset(big, 'a', CONTROL_FRAME_MAX);
	big[CONTROL_FRAME_MAX] = '\0';
	doc = json_pack("{s:s}", "x", big);
	free(big);
	ASSERT_EQ(control_frame_encode(doc, &buf, &len), -EMSGSIZE);
	ASSERT(!buf);
	json_decref(doc);
}

TEST(control_every_command_parses)
{
	static const char *const ok[] = {
		"{\"id\": 0, \"cmd\": \"agent.add\", \"name\": \"a\", \"policy\": \"/p\"}",
		"{\"id\": 1, \"cmd\": \"agent.add\", \"name\": \"a\", \"policy\": \"/p\", "
		"\"tools\": \"/t\", \"vars\": {\"ws\": \"/w\", \"_x1\": \"\"}}",
		"{\"id\": 2, \"cmd\": \"agent.rm\", \"name\": \"a-b-9\"}",
		"{\"id\": 3, \"cmd\": \"agent.ls\"}",
		"{\"id\": 4, \"cmd\": \"agent.info\", \"name\": \"9\"}",
		"{\"id\": 5, \"cmd\": \"agent.kill\", \"name\": \"a\"}",
		"{\"id\": 6, \"cmd\": \"policy.reload\"}",
		"{\"id\": 7, \"cmd\": \"policy.reload\", \"name\": \"a\"}",
		"{\"cmd\": \"status\", \"id\": 9007199254740991}",
	};
	struct control_request req;
	struct control_error err;
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (parse(ok[i], &req, &err))
			FAIL("%s: %s: %s", ok[i], err.code, err.message);
	ASSERT_EQ(req.cmd, CONTROL_STATUS);
	ASSERT_EQ(req.id, CONTROL_ID_MAX);
}

TEST(control_not_json)
{
	refuse("", CONTROL_E_JSON);
	refuse("{\"id\": 1, \"cmd\": \"status\"", CONTROL_E_JSON);
	refuse("[1]", CONTROL_E_JSON);
	refuse("\"status\"", CONTROL_E_JSON);
	refuse("{\"id\": 1, \"id\": 2, \"cmd\": \"status\"}", CONTROL_E_JSON);
	refuse("{\"id\": 1, \"cmd\": \"status\"} {}", CONTROL_E_JSON);
	refuse("{\"id\": 1, \"cmd\": \"agent.rm\", \"name\": \"a\\u0000b\"}", CONTROL_E_JSON);
}

TEST(control_bad_id)
{
	ASSERT_EQ(refuse("{\"cmd\": \"status\"}", CONTROL_E_REQUEST), -1);
	refuse("{\"id\": \"1\", \"cmd\": \"status\"}", CONTROL_E_REQUEST);
	refuse("{\"id\": -1, \"cmd\": \"status\"}", CONTROL_E_REQUEST);
	refuse("{\"id\": 1.5, \"cmd\": \"status\"}", CONTROL_E_REQUEST);
	refuse("{\"id\": 9007199254740992, \"cmd\": \"status\"}", CONTROL_E_REQUEST);
	refuse("{\"id\": null, \"cmd\": \"status\"}", CONTROL_E_REQUEST);
}

TEST(control_bad_cmd)
{
	ASSERT_EQ(refuse("{\"id\": 4, \"cmd\": \"agent.nuke\"}", CONTROL_E_COMMAND), 4);
	refuse("{\"id\": 4}", CONTROL_E_REQUEST);
	refuse("{\"id\": 4, \"cmd\": 3}", CONTROL_E_REQUEST);
	refuse("{\"id\": 4, \"cmd\": \"STATUS\"}", CONTROL_E_COMMAND);
}

TEST(control_bad_name)
{
	static const char *const bad[] = {
		"{\"id\": 1, \"cmd\": \"agent.rm\"}",
		"{\"id\": 1, \"cmd\": \"agent.rm\", \"name\": \"\"}",
		"{\"id\": 1, \"cmd\": \"agent.rm\", \"name\": \"-a\"}",
		"{\"id\": 1, \"cmd\": \"agent.rm\", \"name\": \"A\"}",
		"{\"id\": 1, \"cmd\": \"agent.rm\", \"name\": \"a/b\"}",
		"{\"id\": 1, \"cmd\": \"agent.rm\", \"name\": \"..\"}",
		"{\"id\": 1, \"cmd\": \"agent.rm\", \"name\": \"a_b\"}",
		"{\"id\": 1, \"cmd\": \"agent.rm\", \"name\": 5}",
		"{\"id\": 1, \"cmd\": \"agent.rm\", \"name\": "
		"\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}",
		"{\"id\": 1, \"cmd\": \"agent.ls\", \"name\": \"a\"}",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ASSERT_EQ(refuse(bad[i], CONTROL_E_REQUEST), 1);
	/* 63 bytes is the longest name. */
	ASSERT(control_name_valid(
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
	ASSERT(!control_name_valid(
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
}

TEST(control_bad_args)
{
	refuse("{\"id\": 1, \"cmd\": \"agent.add\", \"name\": \"a\"}", CONTROL_E_REQUEST);
	refuse("{\"id\": 1, \"cmd\": \"agent.add\", \"name\": \"a\", \"policy\": \"p.json\"}",
	       CONTROL_E_REQUEST);
	refuse("{\"id\": 1, \"cmd\": \"agent.add\", \"name\": \"a\", \"policy\": 1}",
	       CONTROL_E_REQUEST);
	refuse("{\"id\": 1, \"cmd\": \"agent.add\", \"name\": \"a\", \"policy\": \"/p\", "
	       "\"tools\": \"t\"}",
	       CONTROL_E_REQUEST);
	refuse("{\"id\": 1, \"cmd\": \"agent.add\", \"name\": \"a\", \"policy\": \"/p\", "
	       "\"vars\": [\"x\"]}",
	       CONTROL_E_REQUEST);
	refuse("{\"id\": 1, \"cmd\": \"agent.add\", \"name\": \"a\", \"policy\": \"/p\", "
	       "\"vars\": {\"x\": 1}}",
	       CONTROL_E_REQUEST);
	refuse("{\"id\": 1, \"cmd\": \"agent.add\", \"name\": \"a\", \"policy\": \"/p\", "
	       "\"vars\": {\"1x\": \"v\"}}",
	       CONTROL_E_REQUEST);
	refuse("{\"id\": 1, \"cmd\": \"agent.add\", \"name\": \"a\", \"policy\": \"/p\", "
	       "\"vars\": {\"\": \"v\"}}",
	       CONTROL_E_REQUEST);
	refuse("{\"id\": 1, \"cmd\": \"agent.add\", \"name\": \"a\", \"policy\": \"/p\", "
	       "\"extra\": true}",
	       CONTROL_E_REQUEST);
	refuse("{\"id\": 1, \"cmd\": \"status\", \"policy\": \"/p\"}", CONTROL_E_REQUEST);
}

TEST(control_too_long_and_too_many)
{
	char *json = malloc(3 * CONTROL_PATH_MAX), *p;
	int i;

	ASSERT(json);
	p = json + sprintf(json, "{\"id\": 1, \"cmd\": \"agent.add\", \"name\": \"a\", "
				 "\"policy\": \"/");
	memset(p, 'x', CONTROL_PATH_MAX);
	strcpy(p + CONTROL_PATH_MAX, "\"}");
	refuse(json, CONTROL_E_REQUEST);
	strcpy(p + CONTROL_PATH_MAX - 1, "\"}");
	{
		struct control_request req;
		struct control_error err;

		ASSERT_EQ(parse(json, &req, &err), 0);
		ASSERT_EQ(strlen(req.policy), CONTROL_PATH_MAX);
	}
	p = json + sprintf(json, "{\"id\": 1, \"cmd\": \"agent.add\", \"name\": \"a\", "
				 "\"policy\": \"/p\", \"vars\": {");
	for (i = 0; i <= CONTROL_VARS_MAX; i++)
		p += sprintf(p, "%s\"v%d\": \"x\"", i ? ", " : "", i);
	strcpy(p, "}}");
	refuse(json, CONTROL_E_REQUEST);
	free(json);
}

static int reply(const char *json, long long want, struct control_error *err, json_t **body)
{
	memset(err, 0, sizeof(*err));
	return control_reply_parse(json, strlen(json), want, body, err);
}

TEST(control_replies)
{
	struct control_error err;
	json_t *body, *doc;
	char *text;

	doc = control_reply_ok(3);
	json_object_set_new(doc, "agents", json_array());
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	ASSERT_EQ(reply(text, 3, &err, &body), 1);
	ASSERT(json_is_array(json_object_get(body, "agents")));
	json_decref(body);
	ASSERT_EQ(reply(text, 4, &err, &body), -EINVAL);
	ASSERT(!body);
	free(text);

	doc = control_reply_error(-1, CONTROL_E_FRAME, "too long");
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	ASSERT_EQ(reply(text, 9, &err, &body), 0);
	ASSERT_STREQ(err.code, CONTROL_E_FRAME);
	ASSERT_STREQ(err.message, "too long");
	free(text);

	ASSERT_EQ(reply("[]", 1, &err, &body), -EINVAL);
	ASSERT_EQ(reply("{\"id\": 1}", 1, &err, &body), -EINVAL);
	ASSERT_EQ(reply("{\"id\": 1, \"ok\": false}", 1, &err, &body), -EINVAL);
	ASSERT_EQ(reply("{\"id\": 1, \"ok\": false, \"error\": {\"code\": 1}}", 1, &err, &body),
		  -EINVAL);
	ASSERT_EQ(reply("{\"id\": null, \"ok\": true}", 1, &err, &body), -EINVAL);
	ASSERT_EQ(reply("{\"id\": \"1\", \"ok\": true}", 1, &err, &body), -EINVAL);
}

TEST(control_attach_and_detach)
{
	struct control_request req;
	struct control_error err;

	ASSERT_EQ(parse("{\"id\": 1, \"cmd\": \"agent.attach\", \"name\": \"a\", \"pid\": 4194304, "
			"\"allow_partial\": true}",
			&req, &err),
		  0);
	ASSERT_EQ(req.cmd, CONTROL_AGENT_ATTACH);
	ASSERT_EQ(req.pid, 4194304);
	ASSERT(req.allow_partial);
	ASSERT_EQ(
		parse("{\"id\": 1, \"cmd\": \"agent.attach\", \"name\": \"a\", \"cgroup\": \"/c\"}",
		      &req, &err),
		0);
	ASSERT_STREQ(req.cgroup, "/c");
	ASSERT(!req.allow_partial && !req.pid);
	ASSERT_EQ(
		parse("{\"id\": 1, \"cmd\": \"agent.detach\", \"name\": \"a\", \"cgroup\": \"/c\"}",
		      &req, &err),
		0);
	ASSERT_EQ(req.cmd, CONTROL_AGENT_DETACH);
	/* Exactly one of pid and cgroup; each checked; detach takes a cgroup only. */
	refuse("{\"id\": 1, \"cmd\": \"agent.attach\", \"name\": \"a\"}", CONTROL_E_REQUEST);
	refuse("{\"id\": 1, \"cmd\": \"agent.attach\", \"name\": \"a\", \"pid\": 2, \"cgroup\": "
	       "\"/c\"}",
	       CONTROL_E_REQUEST);
	refuse("{\"id\": 1, \"cmd\": \"agent.attach\", \"name\": \"a\", \"pid\": 0}",
	       CONTROL_E_REQUEST);
	refuse("{\"id\": 1, \"cmd\": \"agent.attach\", \"name\": \"a\", \"pid\": 4194305}",
	       CONTROL_E_REQUEST);
	refuse("{\"id\": 1, \"cmd\": \"agent.attach\", \"name\": \"a\", \"pid\": \"7\"}",
	       CONTROL_E_REQUEST);
	refuse("{\"id\": 1, \"cmd\": \"agent.attach\", \"name\": \"a\", \"cgroup\": \"c\"}",
	       CONTROL_E_REQUEST);
	refuse("{\"id\": 1, \"cmd\": \"agent.attach\", \"name\": \"a\", \"pid\": 2, "
	       "\"allow_partial\": 1}",
	       CONTROL_E_REQUEST);
	refuse("{\"id\": 1, \"cmd\": \"agent.detach\", \"name\": \"a\"}", CONTROL_E_REQUEST);
	refuse("{\"id\": 1, \"cmd\": \"agent.detach\", \"name\": \"a\", \"pid\": 2}",
	       CONTROL_E_REQUEST);
	refuse("{\"id\": 1, \"cmd\": \"agent.detach\", \"name\": \"a\", \"cgroup\": \"/c\", "
	       "\"allow_partial\": true}",
	       CONTROL_E_REQUEST);
	refuse("{\"id\": 1, \"cmd\": \"agent.attach\", \"pid\": 2}", CONTROL_E_REQUEST);
}

TEST(state_attached_cgroups)
{
	static struct agent_state s, again;
	const char *base = "{\"name\": \"a\", \"id\": 2, \"policy\": \"/p\", \"tools\": \"\", "
			   "\"vars\": {}, \"generation\": 3";
	char buf[1024], *text;
	json_t *doc;

	snprintf(buf, sizeof(buf), "%s}", base);
	ASSERT_EQ(agent_state_parse(buf, strlen(buf), &s), 0);
	ASSERT_EQ(s.ncgroups, 0);
	snprintf(buf, sizeof(buf), "%s, \"cgroups\": [\"/c/1\", \"/c/2\"]}", base);
	ASSERT_EQ(agent_state_parse(buf, strlen(buf), &s), 0);
	ASSERT_EQ(s.ncgroups, 2);
	ASSERT_STREQ(s.cgroups[1], "/c/2");
	doc = agent_state_json(&s);
	text = json_dumps(doc, 0);
	json_decref(doc);
	ASSERT_EQ(agent_state_parse(text, strlen(text), &again), 0);
	free(text);
	ASSERT_EQ(again.ncgroups, 2);
	ASSERT_STREQ(again.cgroups[0], "/c/1");
	/* Refused: empty, relative, repeated, too many, not strings, unknown keys. */
	static const char *const bad[] = {
		"[]",
		"[\"c\"]",
		"[\"/c\", \"/c\"]",
		"[\"/1\",\"/2\",\"/3\",\"/4\",\"/5\",\"/6\",\"/7\",\"/8\",\"/9\"]",
		"[1]",
		"\"/c\"",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(buf, sizeof(buf), "%s, \"cgroups\": %s}", base, bad[i]);
		if (!agent_state_parse(buf, strlen(buf), &s))
			FAIL("accepted: %s", buf);
	}
	snprintf(buf, sizeof(buf), "%s, \"cgroup\": [\"/c\"]}", base);
	ASSERT(agent_state_parse(buf, strlen(buf), &s));
}

/* The add's time is kept (the wall clock counts from it across restarts), optional. */
TEST(state_started_ns)
{
	static struct agent_state s, again;
	const char *base = "{\"name\": \"a\", \"id\": 2, \"policy\": \"/p\", \"tools\": \"\", "
			   "\"vars\": {}, \"generation\": 3";
	char buf[1024], *text;
	json_t *doc;

	snprintf(buf, sizeof(buf), "%s}", base);
	ASSERT_EQ(agent_state_parse(buf, strlen(buf), &s), 0);
	ASSERT_EQ(s.started_ns, 0);
	snprintf(buf, sizeof(buf), "%s, \"started_ns\": 1764460800123456789}", base);
	ASSERT_EQ(agent_state_parse(buf, strlen(buf), &s), 0);
	ASSERT_EQ(s.started_ns, 1764460800123456789ULL);
	doc = agent_state_json(&s);
	text = json_dumps(doc, 0);
	json_decref(doc);
	ASSERT_EQ(agent_state_parse(text, strlen(text), &again), 0);
	free(text);
	ASSERT_EQ(again.started_ns, s.started_ns);
	snprintf(buf, sizeof(buf), "%s, \"started_ns\": 0}", base);
	ASSERT(agent_state_parse(buf, strlen(buf), &s));
	snprintf(buf, sizeof(buf), "%s, \"started_ns\": \"now\"}", base);
	ASSERT(agent_state_parse(buf, strlen(buf), &s));
}

TEST(control_approval_commands)
{
	static const char *const bad[] = {
		"{\"id\": 1, \"cmd\": \"approval.approve\"}",
		"{\"id\": 1, \"cmd\": \"approval.approve\", \"approval\": \"X-1\"}",
		"{\"id\": 1, \"cmd\": \"approval.approve\", \"approval\": \"\"}",
		"{\"id\": 1, \"cmd\": \"approval.approve\", \"approval\": \"1-ab\", \"for\": 0}",
		"{\"id\": 1, \"cmd\": \"approval.approve\", \"approval\": \"1-ab\", \"for\": "
		"86401}",
		"{\"id\": 1, \"cmd\": \"approval.deny\", \"approval\": \"1-ab\", \"for\": 5}",
		"{\"id\": 1, \"cmd\": \"approval.ls\", \"approval\": \"1-ab\"}",
	};
	struct control_request req;
	struct control_error err;
	size_t i;

	ASSERT_EQ(parse("{\"id\": 1, \"cmd\": \"approval.ls\"}", &req, &err), 0);
	ASSERT_EQ(req.cmd, CONTROL_APPROVAL_LS);
	ASSERT_EQ(parse("{\"id\": 1, \"cmd\": \"approval.approve\", \"approval\": "
			"\"3-9f1c2a7b44e0\", \"for\": 600}",
			&req, &err),
		  0);
	ASSERT_STREQ(req.approval, "3-9f1c2a7b44e0");
	ASSERT_EQ(req.for_sec, 600);
	ASSERT_EQ(parse("{\"id\": 1, \"cmd\": \"approval.deny\", \"approval\": \"3-9f\"}", &req,
			&err),
		  0);
	ASSERT_EQ(req.cmd, CONTROL_APPROVAL_DENY);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (!parse(bad[i], &req, &err) || strcmp(err.code, CONTROL_E_REQUEST))
			FAIL("%s: accepted, or not bad-request (%s)", bad[i], err.code);
}
