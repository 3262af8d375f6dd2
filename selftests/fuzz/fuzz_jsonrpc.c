// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: one line from an MCP client as agent-tool mcp reads it (JSON-RPC 2.0), the
 * checks of initialize's and tools/call's params, and the error reply built from what parsed.
 * What is accepted has the shape the server relies on; every answer is one line of JSON.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "wire/jsonrpc.h"

static void reply_is_one_line(const json_t *id, int code, const char *why)
{
	json_t *doc = jsonrpc_error(id, code, why);
	size_t len;
	char *line = doc ? jsonrpc_line(doc, &len) : NULL;

	if (line && (memchr(line, '\n', len - 1) || line[len - 1] != '\n'))
		abort();
	free(line);
	json_decref(doc);
}

static void params(const struct jsonrpc_msg *m)
{
	char why[256], tool[TOOL_NAME_MAX + 1];
	json_t *args;

	if (!strcmp(m->method, "initialize"))
		mcp_initialize_version(m->params, why, sizeof(why));
	if (mcp_call_params(m->params, tool, &args, why, sizeof(why)))
		return;
	if (!json_is_object(args) || json_object_size(args) > 32 || !tool[0])
		abort();
	json_decref(args);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jsonrpc_msg m;
	char why[256];
	int code;

	code = jsonrpc_parse((const char *)data, size, &m, why, sizeof(why));
	if (m.id && !json_is_string(m.id) && !json_is_integer(m.id))
		abort();
	if (code) {
		if (m.method || m.params || !why[0])
			abort();
		reply_is_one_line(m.id, code, why);
	} else if (m.method) {
		if (!m.method[0] || (m.params && !json_is_object(m.params)))
			abort();
		params(&m);
	}
	jsonrpc_msg_free(&m);
	return 0;
}
