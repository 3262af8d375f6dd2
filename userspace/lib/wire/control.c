// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "boundary.h"
#include "wire/control.h"

/* Which arguments each command takes. */
#define ARG_NAME (1U << 0)
#define ARG_NAME_OPT (1U << 1)
#define ARG_POLICY (1U << 2)
#define ARG_TOOLS (1U << 3)
#define ARG_VARS (1U << 4)
#define ARG_PID (1U << 5)
#define ARG_CGROUP (1U << 6)
#define ARG_PARTIAL (1U << 7)
#define ARG_APPROVAL (1U << 8)
#define ARG_FOR (1U << 9)
#define ARG_TOOL (1U << 10)
#define ARG_MODE (1U << 11)
#define ARG_GRANT (1U << 12) /* control_grant.c */
#define ARG_BOUNDARIES (1U << 13)

static const struct {
	const char *name;
	unsigned args;
} commands[CONTROL_CMD_MAX] = {
	[CONTROL_AGENT_ADD] = { "agent.add", ARG_NAME | ARG_POLICY | ARG_TOOLS | ARG_VARS },
	[CONTROL_AGENT_RM] = { "agent.rm", ARG_NAME },
	[CONTROL_AGENT_LS] = { "agent.ls", 0 },
	[CONTROL_AGENT_INFO] = { "agent.info", ARG_NAME },
	[CONTROL_AGENT_KILL] = { "agent.kill", ARG_NAME },
	[CONTROL_POLICY_RELOAD] = { "policy.reload", ARG_NAME_OPT },
	[CONTROL_STATUS] = { "status", 0 },
	[CONTROL_AGENT_ATTACH] = { "agent.attach", ARG_NAME | ARG_PID | ARG_CGROUP | ARG_PARTIAL },
	[CONTROL_AGENT_DETACH] = { "agent.detach", ARG_NAME | ARG_CGROUP },
	[CONTROL_AGENT_MODE] = { "agent.mode", ARG_NAME | ARG_MODE },
	[CONTROL_AGENT_INSPECT] = { "agent.inspect", ARG_NAME },
	[CONTROL_APPROVAL_LS] = { "approval.ls", 0 },
	[CONTROL_APPROVAL_APPROVE] = { "approval.approve", ARG_APPROVAL | ARG_FOR },
	[CONTROL_APPROVAL_DENY] = { "approval.deny", ARG_APPROVAL },
	[CONTROL_TOOLS_ACCEPT] = { "tools.accept", ARG_TOOL },
	[CONTROL_GRANT_ADD] = { "grant.add", ARG_NAME | ARG_GRANT },
	[CONTROL_GRANT_LS] = { "grant.ls", ARG_NAME_OPT },
	[CONTROL_GRANT_RM] = { "grant.rm", ARG_GRANT },
	[CONTROL_AGENT_DRILL] = { "agent.drill", ARG_NAME | ARG_BOUNDARIES },
};

const char *control_cmd_name(enum control_cmd cmd)
{
	return cmd < CONTROL_CMD_MAX ? commands[cmd].name : "?";
}

bool control_name_valid(const char *s)
{
	size_t i;

	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
		return false;
	for (i = 1; s[i]; i++) {
		if (i >= CONTROL_NAME_MAX)
			return false;
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	}
	return true;
}

static bool var_name_valid(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++) {
		if (i >= CONTROL_VAR_NAME_MAX)
			return false;
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || s[i] == '_' ||
		      (i && s[i] >= '0' && s[i] <= '9')))
			return false;
	}
	return i > 0;
}

int control_frame_check(const void *buf, size_t len, size_t *payload_len)
{
	return frame_check(buf, len, CONTROL_FRAME_MAX, payload_len);
}

int control_frame_encode(const json_t *doc, char **out, size_t *outlen)
{
	return frame_encode(doc, JSON_COMPACT, CONTROL_FRAME_MAX, out, outlen);
}

__attribute__((format(printf, 3, 4))) static int fail(struct control_error *err, const char *code,
						      const char *fmt, ...)
{
	va_list ap;

	snprintf(err->code, sizeof(err->code), "%s", code);
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A string field of at most max bytes (NULs are refused by the parser). */
static int get_string(json_t *v, const char *key, char *out, size_t max, struct control_error *err)
{
	const char *s;

	if (!json_is_string(v))
		return fail(err, CONTROL_E_REQUEST, "\"%s\" must be a string", key);
	s = json_string_value(v);
	if (json_string_length(v) > max || strlen(s) != json_string_length(v))
		return fail(err, CONTROL_E_REQUEST, "\"%s\" is longer than %zu bytes", key, max);
	memcpy(out, s, json_string_length(v) + 1);
	return 0;
}

static int get_path(json_t *v, const char *key, char *out, struct control_error *err)
{
	int e = get_string(v, key, out, CONTROL_PATH_MAX, err);

	if (!e && out[0] != '/')
		return fail(err, CONTROL_E_REQUEST, "\"%s\" must be an absolute path", key);
	return e;
}

static int get_vars(json_t *v, struct control_request *req, struct control_error *err)
{
	const char *key;
	json_t *val;
	int e;

	if (!json_is_object(v))
		return fail(err, CONTROL_E_REQUEST, "\"vars\" must be an object of strings");
	if (json_object_size(v) > CONTROL_VARS_MAX)
		return fail(err, CONTROL_E_REQUEST, "\"vars\": at most %d", CONTROL_VARS_MAX);
	json_object_foreach(v, key, val)
	{
		if (!var_name_valid(key))
			return fail(err, CONTROL_E_REQUEST,
				    "\"vars\": bad name (want [A-Za-z_][A-Za-z0-9_]{0,62})");
		e = get_string(val, "vars", req->vars[req->nvars].value, CONTROL_PATH_MAX, err);
		if (e)
			return e;
		snprintf(req->vars[req->nvars].name, sizeof(req->vars[0].name), "%s", key);
		req->nvars++;
	}
	return 0;
}

static int get_name(json_t *v, struct control_request *req, struct control_error *err)
{
	char name[CONTROL_PATH_MAX + 1];

	if (!json_is_string(v) || json_string_length(v) > CONTROL_NAME_MAX ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return fail(err, CONTROL_E_REQUEST, "\"name\" must be a string of 1 to %d bytes",
			    CONTROL_NAME_MAX);
	snprintf(name, sizeof(name), "%s", json_string_value(v));
	if (!control_name_valid(name))
		return fail(err, CONTROL_E_REQUEST, "\"name\" must match [a-z0-9][a-z0-9-]{0,62}");
	memcpy(req->name, name, strlen(name) + 1);
	return 0;
}

/* SERVER.TOOL: [a-z0-9][a-z0-9._-]{0,63} with a dot, as a registry names an upstream tool. */
static int get_tool(json_t *v, struct control_request *req, struct control_error *err)
{
	const char *s = json_string_value(v);
	size_t n = s ? strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789._-") : 0;

	if (!s || !n || n != json_string_length(v) || n >= sizeof(req->tool) ||
	    strchr("._-", s[0]) || !strchr(s, '.'))
		return fail(err, CONTROL_E_REQUEST,
			    "\"tool\" must be SERVER.TOOL, matching [a-z0-9][a-z0-9._-]{0,63}");
	memcpy(req->tool, s, n + 1);
	return 0;
}

static int get_pid(json_t *v, struct control_request *req, struct control_error *err)
{
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > CONTROL_PID_MAX)
		return fail(err, CONTROL_E_REQUEST, "\"pid\" must be an integer from 1 to %d",
			    CONTROL_PID_MAX);
	req->pid = json_integer_value(v);
	return 0;
}

static int get_bool(json_t *v, const char *key, bool *out, struct control_error *err)
{
	if (!json_is_boolean(v))
		return fail(err, CONTROL_E_REQUEST, "\"%s\" must be true or false", key);
	*out = json_is_true(v);
	return 0;
}

static int get_approval(json_t *v, struct control_request *req, struct control_error *err)
{
	const char *s = json_string_value(v);

	if (!s || !json_string_length(v) || json_string_length(v) > CONTROL_APPROVAL_ID_MAX ||
	    strspn(s, "0123456789abcdef-") != json_string_length(v))
		return fail(err, CONTROL_E_REQUEST,
			    "\"approval\" must be an approval id: 1 to %d of [0-9a-f-]",
			    CONTROL_APPROVAL_ID_MAX);
	memcpy(req->approval, s, json_string_length(v) + 1);
	return 0;
}

static int get_for(json_t *v, struct control_request *req, struct control_error *err)
{
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > CONTROL_APPROVE_FOR_MAX)
		return fail(err, CONTROL_E_REQUEST, "\"for\" must be seconds from 1 to %d",
			    CONTROL_APPROVE_FOR_MAX);
	req->for_sec = json_integer_value(v);
	return 0;
}

/* agent.mode: "shadow" or "enforce". */
static int get_mode(json_t *v, struct control_request *req, struct control_error *err)
{
	const char *s = json_string_value(v);

	if (!s || (strcmp(s, "shadow") && strcmp(s, "enforce")))
		return fail(err, CONTROL_E_REQUEST, "\"mode\" must be \"shadow\" or \"enforce\"");
	snprintf(req->mode, sizeof(req->mode), "%s", s);
	return 0;
}

/* "boundaries": a non-empty array of boundary names, each once. */
static int get_boundaries(json_t *v, struct control_request *req, struct control_error *err)
{
	json_t *b;
	size_t i;
	int n;

	if (!json_is_array(v) || !json_array_size(v))
		return fail(err, CONTROL_E_REQUEST, "\"boundaries\" must be a non-empty array");
	json_array_foreach(v, i, b)
	{
		n = json_is_string(b) ? boundary_from_name(json_string_value(b)) : -1;
		if (n < 0 || (req->boundaries & (1U << n)))
			return fail(err, CONTROL_E_REQUEST,
				    "\"boundaries\"[%zu]: not a boundary, or named twice", i);
		req->boundaries |= 1U << n;
	}
	return 0;
}

static int get_arg(const char *key, json_t *v, unsigned allowed, struct control_request *req,
		   struct control_error *err)
{
	int e;

	if (!strcmp(key, "tool") && (allowed & ARG_TOOL))
		return get_tool(v, req, err);
	if (!strcmp(key, "pid") && (allowed & ARG_PID))
		return get_pid(v, req, err);
	if (!strcmp(key, "cgroup") && (allowed & ARG_CGROUP))
		return get_path(v, key, req->cgroup, err);
	if (!strcmp(key, "boundaries") && (allowed & ARG_BOUNDARIES))
		return get_boundaries(v, req, err);
	if (!strcmp(key, "allow_partial") && (allowed & ARG_PARTIAL))
		return get_bool(v, key, &req->allow_partial, err);
	if (!strcmp(key, "name") && (allowed & (ARG_NAME | ARG_NAME_OPT)))
		return get_name(v, req, err);
	if (!strcmp(key, "policy") && (allowed & ARG_POLICY))
		return get_path(v, key, req->policy, err);
	if (!strcmp(key, "tools") && (allowed & ARG_TOOLS))
		return get_path(v, key, req->tools, err);
	if (!strcmp(key, "vars") && (allowed & ARG_VARS))
		return get_vars(v, req, err);
	if (!strcmp(key, "approval") && (allowed & ARG_APPROVAL))
		return get_approval(v, req, err);
	if (!strcmp(key, "for") && (allowed & ARG_FOR))
		return get_for(v, req, err);
	if (!strcmp(key, "mode") && (allowed & ARG_MODE))
		return get_mode(v, req, err);
	e = allowed & ARG_GRANT ? control_grant_arg(key, v, req, err) : 1;
	if (e != 1)
		return e;
	return fail(err, CONTROL_E_REQUEST, "%s takes no argument \"%.64s\"",
		    control_cmd_name(req->cmd), key);
}

static int get_id(json_t *root, struct control_request *req, struct control_error *err)
{
	json_t *id = json_object_get(root, "id");

	if (!json_is_integer(id) || json_integer_value(id) < 0 ||
	    json_integer_value(id) > CONTROL_ID_MAX)
		return fail(err, CONTROL_E_REQUEST, "\"id\" must be an integer from 0 to 2^53-1");
	req->id = json_integer_value(id);
	return 0;
}

static int get_cmd(json_t *root, struct control_request *req, struct control_error *err)
{
	json_t *cmd = json_object_get(root, "cmd");
	int i;

	if (!json_is_string(cmd))
		return fail(err, CONTROL_E_REQUEST, "\"cmd\" must be a string");
	for (i = 0; i < CONTROL_CMD_MAX; i++)
		if (!strcmp(json_string_value(cmd), commands[i].name) &&
		    strlen(commands[i].name) == json_string_length(cmd)) {
			req->cmd = i;
			return 0;
		}
	return fail(err, CONTROL_E_COMMAND, "unknown command \"%.64s\"", json_string_value(cmd));
}

static int get_fields(json_t *root, struct control_request *req, struct control_error *err)
{
	unsigned allowed;
	const char *key;
	json_t *v;
	int e;

	e = get_id(root, req, err);
	if (!e)
		e = get_cmd(root, req, err);
	if (e)
		return e;
	allowed = commands[req->cmd].args;
	json_object_foreach(root, key, v)
	{
		if (!strcmp(key, "id") || !strcmp(key, "cmd"))
			continue;
		e = get_arg(key, v, allowed, req, err);
		if (e)
			return e;
	}
	if ((allowed & ARG_NAME) && !req->name[0])
		return fail(err, CONTROL_E_REQUEST, "%s needs \"name\"",
			    control_cmd_name(req->cmd));
	if ((allowed & ARG_POLICY) && !req->policy[0])
		return fail(err, CONTROL_E_REQUEST, "%s needs \"policy\"",
			    control_cmd_name(req->cmd));
	if (req->cmd == CONTROL_AGENT_ATTACH && !req->pid == !req->cgroup[0])
		return fail(err, CONTROL_E_REQUEST,
			    "agent.attach needs \"pid\" or \"cgroup\", not both");
	if ((allowed & ARG_TOOL) && !req->tool[0])
		return fail(err, CONTROL_E_REQUEST, "%s needs \"tool\"",
			    control_cmd_name(req->cmd));
	if (req->cmd == CONTROL_AGENT_DETACH && !req->cgroup[0])
		return fail(err, CONTROL_E_REQUEST, "agent.detach needs \"cgroup\"");
	if ((allowed & ARG_APPROVAL) && !req->approval[0])
		return fail(err, CONTROL_E_REQUEST, "%s needs \"approval\"",
			    control_cmd_name(req->cmd));
	if ((allowed & ARG_MODE) && !req->mode[0])
		return fail(err, CONTROL_E_REQUEST, "agent.mode needs \"mode\"");
	return allowed & ARG_GRANT ? control_grant_check(req, err) : 0;
}

int control_request_parse(const char *payload, size_t len, struct control_request *req,
			  struct control_error *err)
{
	json_error_t jerr;
	json_t *root;
	int e;

	memset(req, 0, sizeof(*req));
	req->id = -1;
	root = json_loadb(payload, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return fail(err, CONTROL_E_JSON, "not JSON: %s at byte %d", jerr.text,
			    jerr.position);
	if (!json_is_object(root)) {
		json_decref(root);
		return fail(err, CONTROL_E_JSON, "a request is a JSON object");
	}
	e = get_fields(root, req, err);
	json_decref(root);
	return e;
}

json_t *control_request_json(const struct control_request *req)
{
	json_t *doc = json_pack("{s:I, s:s}", "id", (json_int_t)req->id, "cmd",
				control_cmd_name(req->cmd)),
	       *vars;
	size_t i;

	if (!doc)
		return NULL;
	if (req->name[0])
		json_object_set_new(doc, "name", json_string(req->name));
	if (req->tool[0])
		json_object_set_new(doc, "tool", json_string(req->tool));
	if (req->policy[0])
		json_object_set_new(doc, "policy", json_string(req->policy));
	if (req->tools[0])
		json_object_set_new(doc, "tools", json_string(req->tools));
	if (req->pid)
		json_object_set_new(doc, "pid", json_integer(req->pid));
	if (req->cgroup[0])
		json_object_set_new(doc, "cgroup", json_string(req->cgroup));
	if (req->allow_partial)
		json_object_set_new(doc, "allow_partial", json_true());
	if (req->approval[0])
		json_object_set_new(doc, "approval", json_string(req->approval));
	if (req->for_sec)
		json_object_set_new(doc, "for", json_integer(req->for_sec));
	if (req->mode[0])
		json_object_set_new(doc, "mode", json_string(req->mode));
	control_grant_json(req, doc);
	if (req->boundaries) {
		vars = json_array();
		for (i = 0; vars && i < BOUNDARY_COUNT; i++)
			if (req->boundaries & (1U << i))
				json_array_append_new(vars, json_string(boundary_name(i)));
		json_object_set_new(doc, "boundaries", vars);
	}
	if (req->nvars) {
		vars = json_object();
		for (i = 0; vars && i < req->nvars; i++)
			json_object_set_new(vars, req->vars[i].name,
					    json_string(req->vars[i].value));
		json_object_set_new(doc, "vars", vars);
	}
	return doc;
}

static json_t *id_json(long long id)
{
	return id < 0 ? json_null() : json_integer(id);
}

json_t *control_reply_ok(long long id)
{
	return json_pack("{s:o, s:b}", "id", id_json(id), "ok", 1);
}

json_t *control_reply_error(long long id, const char *code, const char *message)
{
	return json_pack("{s:o, s:b, s:{s:s, s:s}}", "id", id_json(id), "ok", 0, "error", "code",
			 code, "message", message);
}

static int reply_error_fields(json_t *root, struct control_error *err)
{
	json_t *e = json_object_get(root, "error");
	json_t *code = json_object_get(e, "code"), *msg = json_object_get(e, "message");

	if (!json_is_string(code) || !json_is_string(msg))
		return fail(err, CONTROL_E_JSON, "an error reply without error.code and .message");
	fail(err, json_string_value(code), "%s", json_string_value(msg));
	return 0;
}

int control_reply_parse(const char *payload, size_t len, long long want_id, json_t **body,
			struct control_error *err)
{
	json_t *root = json_loadb(payload, len, JSON_REJECT_DUPLICATES, NULL), *id, *ok;
	int ret;

	*body = NULL;
	if (!json_is_object(root)) {
		json_decref(root);
		return fail(err, CONTROL_E_JSON, "the reply is not a JSON object");
	}
	id = json_object_get(root, "id");
	ok = json_object_get(root, "ok");
	if (!json_is_boolean(ok))
		ret = fail(err, CONTROL_E_JSON, "the reply has no \"ok\"");
	else if (!json_is_null(id) && (!json_is_integer(id) || json_integer_value(id) != want_id))
		ret = fail(err, CONTROL_E_JSON, "the reply answers another request");
	else if (json_is_false(ok))
		ret = reply_error_fields(root, err);
	else if (json_is_null(id))
		ret = fail(err, CONTROL_E_JSON, "an ok reply without an id");
	else
		ret = 1;
	if (ret == 1)
		*body = json_incref(root);
	json_decref(root);
	return ret;
}
