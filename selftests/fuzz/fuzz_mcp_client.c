// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: one line from an upstream MCP server as agentd reads it (wire/mcp_client.c),
 * then the result read as initialize's, tools/list's and tools/call's, and the params of a
 * request checked as arguments against each listed tool's inputSchema. What is accepted has the
 * shape agentd relies on.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "wire/mcp_client.h"

static void tools(const json_t *result, const json_t *args)
{
	struct mcp_tool_info *t = NULL;
	char why[256], *cursor = NULL;
	size_t n = 0, i;

	if (mcp_in_tools(result, &t, &n, &cursor, why, sizeof(why))) {
		if (n || cursor)
			abort();
		free(t);
		return;
	}
	for (i = 0; i < n; i++) {
		if (!t[i].name || !t[i].description || !json_is_object(t[i].schema) ||
		    strlen(t[i].digest) != 64)
			abort();
		if (json_is_object(args))
			mcp_schema_check(t[i].schema, args, why, sizeof(why));
	}
	free(cursor);
	mcp_tool_infos_free(t, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mcp_in m;
	char why[256], *text;
	size_t len;
	bool is_error;

	if (mcp_in_parse((const char *)data, size, &m, why, sizeof(why)))
		return 0;
	if (!m.method && !m.result && !m.message)
		abort();
	if (m.result) {
		mcp_in_initialized(m.result, why, sizeof(why));
		tools(m.result, json_object_get(m.result, "arguments"));
		if (!mcp_in_call_result(m.result, &text, &len, &is_error, why, sizeof(why))) {
			if (!text || strlen(text) > len)
				abort();
			free(text);
		}
	}
	mcp_in_free(&m);
	return 0;
}
