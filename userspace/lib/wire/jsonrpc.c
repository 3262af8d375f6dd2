// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "wire/broker_proto.h"
#include "wire/jsonrpc.h"

const char *const mcp_versions[] = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL };

static int fail(char *why, size_t whysz, int code, const char *fmt, const char *what)
{
	snprintf(why, whysz, fmt, what);
	return code;
}

/* An id MCP allows: a string, or an integer (JSON-RPC's null id is refused by MCP). */
static bool id_ok(const json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

static int check_keys(const json_t *o, const char *const *keys, char *why, size_t whysz, int code)
{
	const char *k;
	json_t *v;
	size_t i;

	json_object_foreach((json_t *)o, k, v)
	{
		for (i = 0; keys[i] && strcmp(keys[i], k); i++)
			;
		if (!keys[i])
			return fail(why, whysz, code, "unknown key \"%.64s\"", k);
	}
	return 0;
}

static int parse_doc(json_t *doc, struct jsonrpc_msg *m, char *why, size_t whysz)
{
	static const char *const keys[] = { "jsonrpc", "id",	"method", "params",
					    "result",  "error", NULL };
	json_t *v = json_object_get(doc, "jsonrpc"), *id = json_object_get(doc, "id");
	json_t *method = json_object_get(doc, "method");

	if (json_is_array(doc))
		return fail(why, whysz, JSONRPC_INVALID_REQUEST, "%s",
			    "a batch (an array): MCP sends one message a line");
	if (!json_is_object(doc))
		return fail(why, whysz, JSONRPC_INVALID_REQUEST, "%s", "not a JSON object");
	if (id_ok(id))
		m->id = id;
	if (!json_is_string(v) || strcmp(json_string_value(v), "2.0"))
		return fail(why, whysz, JSONRPC_INVALID_REQUEST, "%s",
			    "\"jsonrpc\": expected \"2.0\"");
	if (id && !id_ok(id))
		return fail(why, whysz, JSONRPC_INVALID_REQUEST, "%s",
			    "\"id\": expected a string or an integer");
	if (!method) {
		/* A response (we send no requests: it answers nothing, and is dropped). */
		m->id = NULL;
		if (!id || !!json_object_get(doc, "result") == !!json_object_get(doc, "error"))
			return fail(why, whysz, JSONRPC_INVALID_REQUEST, "%s",
				    "expected \"method\", or a response's \"id\" and one of "
				    "\"result\", \"error\"");
		return 0;
	}
	if (!json_is_string(method) || !json_string_length(method))
		return fail(why, whysz, JSONRPC_INVALID_REQUEST, "%s",
			    "\"method\": expected a non-empty string");
	if (json_object_get(doc, "result") || json_object_get(doc, "error"))
		return fail(why, whysz, JSONRPC_INVALID_REQUEST, "%s",
			    "a request carries no \"result\" or \"error\"");
	m->method = json_string_value(method);
	m->params = json_object_get(doc, "params");
	if (m->params && !json_is_object(m->params))
		return fail(why, whysz, JSONRPC_INVALID_REQUEST, "%s",
			    "\"params\": expected an object");
	return check_keys(doc, keys, why, whysz, JSONRPC_INVALID_REQUEST);
}

int jsonrpc_parse(const char *line, size_t len, struct jsonrpc_msg *m, char *why, size_t whysz)
{
	json_error_t jerr;
	int code;

	memset(m, 0, sizeof(*m));
	m->doc = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!m->doc) {
		snprintf(why, whysz, "not JSON (or not UTF-8, or a duplicate key): %s at byte %d",
			 jerr.text, jerr.position);
		return JSONRPC_PARSE_ERROR;
	}
	code = parse_doc(m->doc, m, why, whysz);
	if (code) {
		m->method = NULL;
		m->params = NULL;
	}
	return code;
}

void jsonrpc_msg_free(struct jsonrpc_msg *m)
{
	json_decref(m->doc);
	memset(m, 0, sizeof(*m));
}

static json_t *message(const json_t *id, const char *key, json_t *value)
{
	json_t *doc =
		json_pack("{ss sO so}", "jsonrpc", "2.0", "id", id ? id : json_null(), key, value);

	return doc;
}

json_t *jsonrpc_result(const json_t *id, json_t *result)
{
	return result ? message(id, "result", result) : NULL;
}

json_t *jsonrpc_error(const json_t *id, int code, const char *text)
{
	json_t *e = json_pack("{si ss}", "code", code, "message", text);

	return e ? message(id, "error", e) : NULL;
}

json_t *jsonrpc_notification(const char *method, json_t *params)
{
	return json_pack("{ss ss so*}", "jsonrpc", "2.0", "method", method, "params", params);
}

char *jsonrpc_line(const json_t *doc, size_t *len)
{
	char *s = json_dumps(doc, JSON_COMPACT | JSON_ENSURE_ASCII), *r;

	if (!s)
		return NULL;
	*len = strlen(s);
	r = realloc(s, *len + 2);
	if (!r) {
		free(s);
		return NULL;
	}
	r[(*len)++] = '\n';
	r[*len] = '\0';
	return r;
}

const char *mcp_initialize_version(const json_t *params, char *why, size_t whysz)
{
	json_t *v = json_object_get(params, "protocolVersion");
	size_t i;

	if (!json_is_string(v)) {
		fail(why, whysz, 0, "%s", "\"protocolVersion\": expected a string");
		return NULL;
	}
	for (i = 0; mcp_versions[i]; i++)
		if (!strcmp(mcp_versions[i], json_string_value(v)))
			return mcp_versions[i];
	return mcp_versions[0];
}

static bool tool_name_ok(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789._-");

	return n && n == strlen(s) && n <= TOOL_NAME_MAX && !strchr("._-", s[0]);
}

static int check_args(const json_t *args, char *why, size_t whysz)
{
	const char *k;
	json_t *v;

	if (!json_is_object(args))
		return fail(why, whysz, JSONRPC_INVALID_PARAMS, "%s",
			    "\"arguments\": expected an object");
	if (json_object_size(args) > BROKER_ARGS_MAX)
		return fail(why, whysz, JSONRPC_INVALID_PARAMS, "%s",
			    "\"arguments\": more than 32 arguments");
	json_object_foreach((json_t *)args, k, v)
	{
		if (strlen(k) > BMSG_ARG_NAME_MAX)
			return fail(why, whysz, JSONRPC_INVALID_PARAMS,
				    "\"arguments\": a name of more than 255 bytes (\"%.32s...\")",
				    k);
		if (!json_is_string(v) && !json_is_integer(v) && !json_is_boolean(v))
			return fail(why, whysz, JSONRPC_INVALID_PARAMS,
				    "\"arguments\": \"%.64s\": expected a string, an integer or a "
				    "boolean",
				    k);
	}
	return 0;
}

int mcp_call_params(const json_t *params, char tool[TOOL_NAME_MAX + 1], json_t **args, char *why,
		    size_t whysz)
{
	static const char *const keys[] = { "name", "arguments", "_meta", NULL };
	json_t *name = json_object_get(params, "name"), *a = json_object_get(params, "arguments");
	json_t *meta = json_object_get(params, "_meta");
	int code;

	*args = NULL;
	if (!json_is_object(params))
		return fail(why, whysz, JSONRPC_INVALID_PARAMS, "%s", "expected params");
	code = check_keys(params, keys, why, whysz, JSONRPC_INVALID_PARAMS);
	if (code)
		return code;
	if (!json_is_string(name) || !tool_name_ok(json_string_value(name)))
		return fail(why, whysz, JSONRPC_INVALID_PARAMS, "%s",
			    "\"name\": expected a tool name, [a-z0-9][a-z0-9._-]{0,63}");
	if (meta && !json_is_object(meta))
		return fail(why, whysz, JSONRPC_INVALID_PARAMS, "%s",
			    "\"_meta\": expected an object");
	if (a && (code = check_args(a, why, whysz)))
		return code;
	snprintf(tool, TOOL_NAME_MAX + 1, "%s", json_string_value(name));
	*args = a ? json_incref(a) : json_object();
	return *args ? 0 : JSONRPC_INTERNAL_ERROR;
}
