/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_AGENT_TOOL_H
#define AGENTD_AGENT_TOOL_H

/* agent-tool mcp (mcp.c): serves MCP on stdin/stdout over the broker socket sock; the exit
 * status: 0 when the client closed stdin, 1 when the broker connection failed. */
int mcp_main(const char *sock);

#endif
