/* SPDX-License-Identifier: GPL-2.0 */
/*
 * agentd as an MCP client of an upstream server (docs/MCP.md, "Upstream servers"): what the
 * server sends is untrusted, and every byte of it is read here (one fuzz target,
 * selftests/fuzz/fuzz_mcp_client.c): its JSON-RPC lines, initialize's, tools/list's and
 * tools/call's results, and the check of a call's arguments against the server's inputSchema.
 */
#ifndef AGENTD_MCP_CLIENT_H
#define AGENTD_MCP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#define MCP_CLIENT_LINE_MAX (8U << 20) /* bytes of one line from the server */
#define MCP_CLIENT_TOOLS_MAX 1024 /* tools of one server, over all pages */
#define MCP_DIGEST_HEX 65

/* One line from the server. */
struct mcp_in {
	json_t *doc; /* owned */
	long long id; /* a response's: agentd's ids are integers; -1 otherwise */
	const char *method; /* a notification's or a request's (the server asking); else NULL */
	json_t *req_id; /* a request's id, to answer; NULL otherwise */
	json_t *result; /* a response's result (an object), or NULL for an error */
	int code; /* an error response's code */
	const char *message; /* an error response's message */
};

/* Parses a line (without its newline). Returns 0, or -EINVAL with why. */
int mcp_in_parse(const char *line, size_t len, struct mcp_in *m, char *why, size_t whysz);
void mcp_in_free(struct mcp_in *m);

/* initialize's result: the protocol version the server chose, when agentd speaks it (NULL and
 * why otherwise). */
const char *mcp_in_initialized(const json_t *result, char *why, size_t whysz);

/* A tool as the server lists it, and the digest of its name, description and inputSchema. */
struct mcp_tool_info {
	char *name;
	char *description; /* "" when the server gave none */
	json_t *schema; /* the inputSchema, owned */
	char digest[MCP_DIGEST_HEX];
};

/*
 * Adds the tools of one tools/list result to *tools (n of them); *cursor is the next page's
 * cursor (a new string) or NULL. Returns 0 or -EINVAL with why (nothing added).
 */
int mcp_in_tools(const json_t *result, struct mcp_tool_info **tools, size_t *n, char **cursor,
		 char *why, size_t whysz);
void mcp_tool_infos_free(struct mcp_tool_info *tools, size_t n);

/* tools/call's result as text: the text items, one a line; any other item by its type. */
int mcp_in_call_result(const json_t *result, char **text, size_t *len, bool *is_error, char *why,
		       size_t whysz);

/*
 * Arguments (strings, integers, booleans: what the broker carries) against an inputSchema, in
 * the subset agentd checks: properties with type, enum, minLength, maxLength, minimum,
 * maximum; required; no argument outside properties. A keyword outside that subset (pattern,
 * anyOf, ...) fails the check (fail closed). Returns 0 or -EINVAL with why.
 */
int mcp_schema_check(const json_t *schema, const json_t *args, char *why, size_t whysz);

#endif
