// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/sha.h>
#include "wire/jsonrpc.h"
#include "wire/mcp_client.h"

__attribute__((format(printf, 3, 4))) static int fail(char *why, size_t whysz, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whysz, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool only_keys(const json_t *o, const char *const *keys, const char **bad)
{
	const char *k;
	json_t *v;
	size_t i;

	json_object_foreach((json_t *)o, k, v)
	{
		for (i = 0; keys[i] && strcmp(keys[i], k); i++)
			;
		if (!keys[i]) {
			*bad = k;
			return false;
		}
	}
	return true;
}

static int parse_error(const json_t *e, struct mcp_in *m, char *why, size_t whysz)
{
	json_t *code = json_object_get(e, "code"), *msg = json_object_get(e, "message");

	if (!json_is_object(e) || !json_is_integer(code) || !json_is_string(msg))
		return fail(why, whysz, "an error without an integer code and a message");
	m->code = (int)json_integer_value(code);
	m->message = json_string_value(msg);
	return 0;
}

int mcp_in_parse(const char *line, size_t len, struct mcp_in *m, char *why, size_t whysz)
{
	static const char *const keys[] = { "jsonrpc", "id",	"method", "params",
					    "result",  "error", NULL };
	json_error_t jerr;
	const char *bad;
	json_t *id, *method, *result, *error;
	int err = 0;

	memset(m, 0, sizeof(*m));
	m->id = -1;
	if (len > MCP_CLIENT_LINE_MAX)
		return fail(why, whysz, "a line over %u bytes", MCP_CLIENT_LINE_MAX);
	m->doc = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!m->doc)
		return fail(why, whysz, "not JSON: %s", jerr.text);
	id = json_object_get(m->doc, "id");
	method = json_object_get(m->doc, "method");
	result = json_object_get(m->doc, "result");
	error = json_object_get(m->doc, "error");
	if (!json_is_object(m->doc))
		err = fail(why, whysz, "not a JSON-RPC object");
	else if (!only_keys(m->doc, keys, &bad))
		err = fail(why, whysz, "an unknown key \"%.64s\"", bad);
	else if (!json_is_string(json_object_get(m->doc, "jsonrpc")) ||
		 strcmp(json_string_value(json_object_get(m->doc, "jsonrpc")), "2.0"))
		err = fail(why, whysz, "jsonrpc is not \"2.0\"");
	else if (method && (!json_is_string(method) || result || error))
		err = fail(why, whysz, "a method that is not a string, or with a result");
	else if (method && id && !json_is_string(id) && !json_is_integer(id))
		err = fail(why, whysz, "a request whose id is not a string or an integer");
	else if (method)
		m->method = json_string_value(method), m->req_id = id;
	else if (!json_is_integer(id) || json_integer_value(id) < 0)
		err = fail(why, whysz, "a response whose id is not one of agentd's");
	else if (!!result == !!error)
		err = fail(why, whysz, "a response with %s of result and error",
			   result ? "both" : "neither");
	else if (result && !json_is_object(result))
		err = fail(why, whysz, "a result that is not an object");
	else if (error)
		err = parse_error(error, m, why, whysz);
	if (!err && !method) {
		m->id = json_integer_value(id);
		m->result = result;
	}
	if (err)
		mcp_in_free(m);
	return err;
}

void mcp_in_free(struct mcp_in *m)
{
	json_decref(m->doc);
	memset(m, 0, sizeof(*m));
	m->id = -1;
}

const char *mcp_in_initialized(const json_t *result, char *why, size_t whysz)
{
	json_t *v = json_object_get(result, "protocolVersion");
	size_t i;

	if (!json_is_string(v)) {
		fail(why, whysz, "initialize's result has no protocolVersion");
		return NULL;
	}
	for (i = 0; mcp_versions[i]; i++)
		if (!strcmp(mcp_versions[i], json_string_value(v)))
			return mcp_versions[i];
	fail(why, whysz, "the server speaks protocol version \"%.32s\", which agentd does not",
	     json_string_value(v));
	return NULL;
}

/* SHA-256 of {"description", "inputSchema", "name"} as compact JSON with sorted keys. */
static int digest(struct mcp_tool_info *t)
{
	json_t *doc = json_pack("{ss ss sO}", "name", t->name, "description", t->description,
				"inputSchema", t->schema);
	char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	unsigned char sha[32];
	int i;

	json_decref(doc);
	if (!text)
		return -ENOMEM;
	SHA256((const unsigned char *)text, strlen(text), sha);
	free(text);
	for (i = 0; i < 32; i++)
		sprintf(t->digest + 2 * i, "%02x", sha[i]);
	return 0;
}

static int tool_info(const json_t *o, struct mcp_tool_info *t, char *why, size_t whysz)
{
	json_t *name = json_object_get(o, "name"), *desc = json_object_get(o, "description"),
	       *schema = json_object_get(o, "inputSchema");

	memset(t, 0, sizeof(*t));
	if (!json_is_object(o) || !json_is_string(name) || !json_string_length(name) ||
	    json_string_length(name) > 128)
		return fail(why, whysz, "a tool without a name of 1 to 128 bytes");
	if (desc && !json_is_string(desc))
		return fail(why, whysz, "tool \"%s\": a description that is not a string",
			    json_string_value(name));
	if (!json_is_object(schema) || !json_is_string(json_object_get(schema, "type")) ||
	    strcmp(json_string_value(json_object_get(schema, "type")), "object"))
		return fail(why, whysz, "tool \"%s\": an inputSchema that is not of type object",
			    json_string_value(name));
	t->name = strdup(json_string_value(name));
	t->description = strdup(desc ? json_string_value(desc) : "");
	t->schema = json_incref(schema);
	if (!t->name || !t->description || digest(t))
		return fail(why, whysz, "out of memory");
	return 0;
}

int mcp_in_tools(const json_t *result, struct mcp_tool_info **tools, size_t *n, char **cursor,
		 char *why, size_t whysz)
{
	json_t *list = json_object_get(result, "tools"),
	       *next = json_object_get(result, "nextCursor"), *o;
	struct mcp_tool_info *all;
	size_t i, j, before = *n;
	int err = 0;

	*cursor = NULL;
	if (!json_is_array(list))
		return fail(why, whysz, "tools/list's result has no tools array");
	if (next && !json_is_string(next))
		return fail(why, whysz, "a nextCursor that is not a string");
	if (*n + json_array_size(list) > MCP_CLIENT_TOOLS_MAX)
		return fail(why, whysz, "more than %d tools", MCP_CLIENT_TOOLS_MAX);
	all = realloc(*tools, (*n + json_array_size(list) + 1) * sizeof(*all));
	if (!all)
		return fail(why, whysz, "out of memory");
	*tools = all;
	json_array_foreach(list, i, o)
	{
		err = tool_info(o, &all[*n], why, whysz);
		for (j = 0; !err && j < *n; j++)
			if (!strcmp(all[j].name, all[*n].name))
				err = fail(why, whysz, "tool \"%s\" listed twice", all[j].name);
		if (err) {
			free(all[*n].name);
			free(all[*n].description);
			json_decref(all[*n].schema);
			break;
		}
		(*n)++;
	}
	if (!err && next && !(*cursor = strdup(json_string_value(next))))
		err = fail(why, whysz, "out of memory");
	if (err) {
		for (j = before; j < *n; j++) {
			free(all[j].name);
			free(all[j].description);
			json_decref(all[j].schema);
		}
		*n = before;
	}
	return err;
}

void mcp_tool_infos_free(struct mcp_tool_info *tools, size_t n)
{
	size_t i;

	for (i = 0; tools && i < n; i++) {
		free(tools[i].name);
		free(tools[i].description);
		json_decref(tools[i].schema);
	}
	free(tools);
}

int mcp_in_call_result(const json_t *result, char **text, size_t *len, bool *is_error, char *why,
		       size_t whysz)
{
	json_t *content = json_object_get(result, "content"),
	       *err = json_object_get(result, "isError"), *item, *type, *t;
	FILE *f;
	size_t i;

	*text = NULL;
	if (!json_is_array(content))
		return fail(why, whysz, "tools/call's result has no content array");
	if (err && !json_is_boolean(err))
		return fail(why, whysz, "an isError that is not a boolean");
	*is_error = json_is_true(err);
	f = open_memstream(text, len);
	if (!f)
		return fail(why, whysz, "out of memory");
	json_array_foreach(content, i, item)
	{
		type = json_object_get(item, "type");
		t = json_object_get(item, "text");
		if (i)
			fputc('\n', f);
		if (json_is_string(type) && !strcmp(json_string_value(type), "text") &&
		    json_is_string(t))
			fwrite(json_string_value(t), 1, json_string_length(t), f);
		else
			fprintf(f, "[agentd: a content item of type %.32s, not passed on]",
				json_is_string(type) ? json_string_value(type) : "?");
	}
	if (fclose(f)) {
		free(*text);
		*text = NULL;
		return fail(why, whysz, "out of memory");
	}
	return 0;
}

static bool type_ok(const char *type, const json_t *v)
{
	return (!strcmp(type, "string") && json_is_string(v)) ||
	       (!strcmp(type, "integer") && json_is_integer(v)) ||
	       (!strcmp(type, "number") && json_is_integer(v)) ||
	       (!strcmp(type, "boolean") && json_is_boolean(v));
}

static int check_type(const char *name, const json_t *type, const json_t *v, char *why,
		      size_t whysz)
{
	json_t *e;
	size_t i;

	if (json_is_string(type) && type_ok(json_string_value(type), v))
		return 0;
	json_array_foreach((json_t *)type, i,
			   e) if (json_is_string(e) && type_ok(json_string_value(e), v)) return 0;
	return fail(why, whysz, "\"%s\": not of the type the server's schema gives", name);
}

static int check_bounds(const char *name, const json_t *p, const json_t *v, char *why, size_t whysz)
{
	json_t *min = json_object_get(p, "minimum"), *max = json_object_get(p, "maximum"),
	       *minl = json_object_get(p, "minLength"), *maxl = json_object_get(p, "maxLength");
	/* Lengths in code points, as JSON Schema counts them. */
	size_t n = 0;
	const char *s;

	if (json_is_integer(v) &&
	    ((json_is_number(min) && json_integer_value(v) < json_number_value(min)) ||
	     (json_is_number(max) && json_integer_value(v) > json_number_value(max))))
		return fail(why, whysz, "\"%s\": outside the server's minimum and maximum", name);
	if (json_is_string(v)) {
		for (s = json_string_value(v); *s; s++)
			n += ((unsigned char)*s & 0xc0) != 0x80;
		if ((json_is_integer(minl) && n < (size_t)json_integer_value(minl)) ||
		    (json_is_integer(maxl) && n > (size_t)json_integer_value(maxl)))
			return fail(why, whysz, "\"%s\": outside the server's length bounds", name);
	}
	return 0;
}

static int check_enum(const char *name, const json_t *list, const json_t *v, char *why,
		      size_t whysz)
{
	json_t *e;
	size_t i;

	if (!list)
		return 0;
	json_array_foreach((json_t *)list, i, e) if (json_equal(e, (json_t *)v)) return 0;
	return fail(why, whysz, "\"%s\": not one of the server's enum values", name);
}

static int check_arg(const char *name, const json_t *p, const json_t *v, char *why, size_t whysz)
{
	static const char *const keys[] = { "type",    "description", "title",	   "default",
					    "enum",    "minLength",   "maxLength", "minimum",
					    "maximum", "examples",    "format",	   NULL };
	const char *bad;
	int err;

	if (!json_is_object(p))
		return fail(why, whysz, "\"%s\": the server's schema for it is not an object",
			    name);
	if (!only_keys(p, keys, &bad))
		return fail(
			why, whysz,
			"\"%s\": the server's schema uses \"%.32s\", which agentd does not check",
			name, bad);
	if (!json_object_get(p, "type"))
		return fail(why, whysz, "\"%s\": the server's schema gives it no type", name);
	err = check_type(name, json_object_get(p, "type"), v, why, whysz);
	if (!err)
		err = check_bounds(name, p, v, why, whysz);
	if (!err)
		err = check_enum(name, json_object_get(p, "enum"), v, why, whysz);
	return err;
}

int mcp_schema_check(const json_t *schema, const json_t *args, char *why, size_t whysz)
{
	static const char *const keys[] = {
		"type",	       "properties", "required", "$schema", "additionalProperties",
		"description", "title",	     NULL
	};
	json_t *props = json_object_get(schema, "properties"),
	       *req = json_object_get(schema, "required"), *v, *e;
	const char *k, *bad;
	size_t i;
	int err;

	if (!only_keys(schema, keys, &bad))
		return fail(why, whysz,
			    "the server's schema uses \"%.32s\", which agentd does not check", bad);
	if ((props && !json_is_object(props)) || (req && !json_is_array(req)))
		return fail(why, whysz, "the server's schema has malformed properties or required");
	json_object_foreach((json_t *)args, k, v)
	{
		if (!json_object_get(props, k))
			return fail(why, whysz, "\"%s\": not an argument of this tool", k);
		err = check_arg(k, json_object_get(props, k), v, why, whysz);
		if (err)
			return err;
	}
	json_array_foreach(
		req, i, e) if (!json_is_string(e) ||
			       !json_object_get(
				       args, json_string_value(
						     e))) return fail(why, whysz,
								      "\"%s\": required, missing",
								      json_is_string(e)
									      ? json_string_value(e)
									      : "?");
	return 0;
}
