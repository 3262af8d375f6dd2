/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_AGENT_TOOL_H
#define AGENTD_AGENT_TOOL_H

#include <stddef.h>

/* agent-tool mcp (mcp.c): serves MCP on stdin/stdout over the broker socket sock; the exit
 * status: 0 when the client closed stdin, 1 when the broker connection failed. */
int mcp_main(const char *sock);

/* A request frame to the broker (request.c). It may have refused the connection before reading
 * (identity): the reply it sent, or its end of the connection, says so on the read side.
 * Returns 0 or -errno. */
int send_request(int fd, const char *frame, size_t len);

#endif
