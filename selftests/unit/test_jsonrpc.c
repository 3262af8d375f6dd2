// SPDX-License-Identifier: GPL-2.0
/* agent-tool mcp's reader (JSON-RPC 2.0 from an MCP client) and the tools' JSON Schema. */
#include <stdio.h>
#include "harness.h"
#include "policy/tools.h"
#include "wire/jsonrpc.h"

/* line must be refused with code, why containing want; the id kept when keep_id. */
static void refused(const char *line, int code, const char *want, bool keep_id)
{
	struct jsonrpc_msg m;
	char why[256] = "";

	ASSERT_EQ(jsonrpc_parse(line, strlen(line), &m, why, sizeof(why)), code);
	if (!strstr(why, want))
		FAIL("%s: expected \"%s\" in \"%s\"", line, want, why);
	ASSERT(!m.method && !m.params);
	ASSERT_EQ(!!m.id, keep_id);
	jsonrpc_msg_free(&m);
}

TEST(jsonrpc_requests_parsed)
{
	static const char req[] = "{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": \"tools/call\", "
				  "\"params\": {\"name\": \"x\"}}";
	static const char note[] =
		"{\"jsonrpc\": \"2.0\", \"method\": \"notifications/initialized\"}";
	static const char resp[] = "{\"jsonrpc\": \"2.0\", \"id\": \"s\", \"result\": {}}";
	struct jsonrpc_msg m;
	char why[256];

	ASSERT_EQ(jsonrpc_parse(req, strlen(req), &m, why, sizeof(why)), 0);
	ASSERT_EQ(json_integer_value(m.id), 7);
	ASSERT(!strcmp(m.method, "tools/call") && json_is_object(m.params));
	jsonrpc_msg_free(&m);
	ASSERT_EQ(jsonrpc_parse(note, strlen(note), &m, why, sizeof(why)), 0);
	ASSERT(!m.id && !strcmp(m.method, "notifications/initialized") && !m.params);
	jsonrpc_msg_free(&m);
	/* A response: nothing to do, no id to answer. */
	ASSERT_EQ(jsonrpc_parse(resp, strlen(resp), &m, why, sizeof(why)), 0);
	ASSERT(!m.id && !m.method);
	jsonrpc_msg_free(&m);
}

TEST(jsonrpc_errors)
{
	refused("{\"jsonrpc\": \"2.0\", \"id\": 1", JSONRPC_PARSE_ERROR, "not JSON", false);
	refused("{\"jsonrpc\": \"2.0\", \"id\": 1, \"id\": 2, \"method\": \"ping\"}",
		JSONRPC_PARSE_ERROR, "duplicate", false);
	refused("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"p\\u0000\"}", JSONRPC_PARSE_ERROR,
		"not JSON", false);
	refused("\"\xff\"", JSONRPC_PARSE_ERROR, "not JSON", false);
	refused("[{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}]",
		JSONRPC_INVALID_REQUEST, "a batch", false);
	refused("3", JSONRPC_INVALID_REQUEST, "not a JSON object", false);
	refused("{\"jsonrpc\": \"1.0\", \"id\": 1, \"method\": \"ping\"}", JSONRPC_INVALID_REQUEST,
		"\"jsonrpc\": expected \"2.0\"", true);
	refused("{\"jsonrpc\": \"2.0\", \"id\": null, \"method\": \"ping\"}",
		JSONRPC_INVALID_REQUEST, "\"id\": expected a string or an integer", false);
	refused("{\"jsonrpc\": \"2.0\", \"id\": 1.5, \"method\": \"ping\"}",
		JSONRPC_INVALID_REQUEST, "\"id\"", false);
	refused("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"\"}", JSONRPC_INVALID_REQUEST,
		"\"method\": expected a non-empty string", true);
	refused("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\", \"params\": []}",
		JSONRPC_INVALID_REQUEST, "\"params\": expected an object", true);
	refused("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\", \"agent\": \"b\"}",
		JSONRPC_INVALID_REQUEST, "unknown key \"agent\"", true);
	refused("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\", \"result\": 1}",
		JSONRPC_INVALID_REQUEST, "no \"result\"", true);
	refused("{\"jsonrpc\": \"2.0\", \"id\": 1}", JSONRPC_INVALID_REQUEST, "expected \"method\"",
		false);
}

static int call_params(const char *json, char *tool, json_t **args, char *why)
{
	json_t *p = json_loads(json, 0, NULL);
	int code;

	ASSERT(p);
	code = mcp_call_params(p, tool, args, why, 256);
	json_decref(p);
	return code;
}

TEST(mcp_call_params_checked)
{
	char tool[TOOL_NAME_MAX + 1], why[256], big[2048];
	json_t *args;
	int i, n;

	ASSERT_EQ(call_params("{\"name\": \"fs.read\", \"arguments\": {\"p\": \"/x\", \"n\": 1, "
			      "\"b\": true}, \"_meta\": {\"progressToken\": 1}}",
			      tool, &args, why),
		  0);
	ASSERT(!strcmp(tool, "fs.read") && json_object_size(args) == 3);
	json_decref(args);
	ASSERT_EQ(call_params("{\"name\": \"noop\"}", tool, &args, why), 0);
	ASSERT(json_is_object(args) && !json_object_size(args));
	json_decref(args);
	ASSERT_EQ(call_params("{\"name\": \"Noop\"}", tool, &args, why), JSONRPC_INVALID_PARAMS);
	ASSERT(strstr(why, "\"name\": expected a tool name") && !args);
	ASSERT_EQ(call_params("{\"name\": \"noop\", \"agent\": \"b\"}", tool, &args, why),
		  JSONRPC_INVALID_PARAMS);
	ASSERT(strstr(why, "unknown key \"agent\""));
	ASSERT_EQ(
		call_params("{\"name\": \"noop\", \"arguments\": {\"n\": 1.5}}", tool, &args, why),
		JSONRPC_INVALID_PARAMS);
	ASSERT(strstr(why, "\"n\": expected a string, an integer or a boolean"));
	ASSERT_EQ(call_params("{\"name\": \"noop\", \"arguments\": {\"o\": {}}}", tool, &args, why),
		  JSONRPC_INVALID_PARAMS);
	ASSERT_EQ(call_params("{\"name\": \"noop\", \"arguments\": []}", tool, &args, why),
		  JSONRPC_INVALID_PARAMS);
	ASSERT_EQ(call_params("{\"name\": \"noop\", \"_meta\": 1}", tool, &args, why),
		  JSONRPC_INVALID_PARAMS);
	n = snprintf(big, sizeof(big), "{\"name\": \"noop\", \"arguments\": {");
	for (i = 0; i < 33; i++)
		n += snprintf(big + n, sizeof(big) - n, "%s\"a%d\": 1", i ? ", " : "", i);
	snprintf(big + n, sizeof(big) - n, "}}");
	ASSERT_EQ(call_params(big, tool, &args, why), JSONRPC_INVALID_PARAMS);
	ASSERT(strstr(why, "more than 32"));
}

TEST(mcp_initialize_negotiates)
{
	json_t *p = json_pack("{ss}", "protocolVersion", "2024-11-05");
	char why[256];

	ASSERT(!strcmp(mcp_initialize_version(p, why, sizeof(why)), "2024-11-05"));
	json_object_set_new(p, "protocolVersion", json_string("2099-01-01"));
	ASSERT(!strcmp(mcp_initialize_version(p, why, sizeof(why)), mcp_versions[0]));
	json_object_set_new(p, "protocolVersion", json_integer(1));
	ASSERT(!mcp_initialize_version(p, why, sizeof(why)));
	ASSERT(strstr(why, "protocolVersion"));
	json_decref(p);
}

TEST(tools_input_schema_and_description)
{
	static const char json[] =
		"{\"tools\": [{\"name\": \"e\", \"effect\": \"observe\", \"description\": "
		"\"Echo.\","
		" \"exec\": [\"/bin/echo\", \"{msg}\", \"{n}\", \"{all}\"],"
		" \"args\": {\"msg\": {\"type\": \"string\", \"max_length\": 8, \"pattern\": "
		"\"^a\","
		" \"enum\": [\"ab\", \"ac\"]}, \"n\": {\"type\": \"integer\"}, \"all\": {\"type\": "
		"\"boolean\"}}}]}";
	static const char want[] =
		"{\"additionalProperties\":false,\"properties\":{\"all\":{\"type\":\"boolean\"},"
		"\"msg\":{\"enum\":[\"ab\",\"ac\"],\"maxLength\":8,\"pattern\":\"^a\",\"type\":"
		"\"string\"},\"n\":{\"type\":\"integer\"}},\"required\":[\"all\",\"msg\",\"n\"],"
		"\"type\":\"object\"}";
	static const char reserved[] =
		"{\"tools\": [{\"name\": \"agentd.tools\", \"effect\": \"observe\", \"builtin\": "
		"\"noop\"}]}";
	struct policy_errors errs = { 0 };
	struct tools_registry *reg;
	json_t *schema, *req;
	char *text;

	ASSERT_EQ(tools_load_buffer("t.json", json, strlen(json), &reg, &errs), 0);
	ASSERT(!strcmp(reg->tools[0].description, "Echo."));
	schema = tool_input_schema(&reg->tools[0]);
	req = json_object_get(schema, "required");
	/* The registry's order is jansson's; compare sorted. */
	ASSERT_EQ(json_array_size(req), 3);
	json_object_set_new(schema, "required", json_pack("[sss]", "all", "msg", "n"));
	text = json_dumps(schema, JSON_COMPACT | JSON_SORT_KEYS);
	if (strcmp(text, want))
		FAIL("schema\n  %s\nwanted\n  %s", text, want);
	free(text);
	json_decref(schema);
	tools_free(reg);
	ASSERT_EQ(tools_load_buffer("t.json", reserved, strlen(reserved), &reg, &errs), -EINVAL);
	ASSERT_EQ(errs.n, 1);
	ASSERT(strstr(errs.v[0].msg, "reserved"));
	policy_errors_clear(&errs);
}
