/* SPDX-License-Identifier: GPL-2.0 */
/*
 * JSON-RPC 2.0 as MCP's stdio transport carries it (docs/MCP.md): one message a line, UTF-8, no
 * batches. The reader checks everything a client sends (untrusted bytes) and says what is wrong
 * as a JSON-RPC error code and message; the MCP checks of tools/call and initialize live here
 * too, so that one fuzz target (selftests/fuzz/fuzz_jsonrpc.c) covers every byte the client
 * controls.
 */
#ifndef AGENTD_JSONRPC_H
#define AGENTD_JSONRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "policy/tools.h"

#define JSONRPC_LINE_MAX (4U << 20) /* bytes of one message: a broker request is at most 2 MiB */

/* Error codes (JSON-RPC 2.0). */
#define JSONRPC_PARSE_ERROR -32700
#define JSONRPC_INVALID_REQUEST -32600
#define JSONRPC_METHOD_NOT_FOUND -32601
#define JSONRPC_INVALID_PARAMS -32602
#define JSONRPC_INTERNAL_ERROR -32603

/* The MCP protocol versions spoken, newest first (those of the official TypeScript SDK). */
extern const char *const mcp_versions[];

struct jsonrpc_msg {
	json_t *doc; /* owned */
	json_t *id; /* in doc: a string or an integer; NULL for a notification or a response */
	const char *method; /* in doc; NULL for a response */
	json_t *params; /* in doc: an object, or NULL when absent */
};

/*
 * Parses one line (without its newline). Returns 0 with m filled (free with jsonrpc_msg_free()),
 * or a JSON-RPC error code with why filled and m->id set, when the message carried a usable
 * id, so that the error can answer it.
 */
int jsonrpc_parse(const char *line, size_t len, struct jsonrpc_msg *m, char *why, size_t whysz);
void jsonrpc_msg_free(struct jsonrpc_msg *m);

/* Messages to send; each steals result/params. NULL when out of memory. A NULL id is null. */
json_t *jsonrpc_result(const json_t *id, json_t *result);
json_t *jsonrpc_error(const json_t *id, int code, const char *message);
json_t *jsonrpc_notification(const char *method, json_t *params);
/* doc as one line (compact, ending in \n) in a malloc'ed buffer; NULL when out of memory. */
char *jsonrpc_line(const json_t *doc, size_t *len);

/*
 * initialize's params: protocolVersion (a string) is required. Returns the version to answer:
 * the client's when spoken here, else the newest spoken here (the client then decides), or
 * NULL with why filled when the params are invalid.
 */
const char *mcp_initialize_version(const json_t *params, char *why, size_t whysz);

/*
 * tools/call's params: "name" (a tool name), optional "arguments" (an object of at most
 * BROKER_ARGS_MAX strings, integers and booleans: what the broker carries), optional "_meta"
 * (an object); any other key is refused. Returns 0 with tool filled and *args a new reference,
 * or JSONRPC_INVALID_PARAMS with why filled.
 */
int mcp_call_params(const json_t *params, char tool[TOOL_NAME_MAX + 1], json_t **args, char *why,
		    size_t whysz);

#endif
