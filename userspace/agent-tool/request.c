// SPDX-License-Identifier: GPL-2.0
/* The broker client's send, shared by agent-tool's one-shot call (main.c) and its MCP server
 * (mcp.c). */
#include <errno.h>
#include "wire/frame.h"
#include "agent-tool.h"

int send_request(int fd, const char *frame, size_t len)
{
	int err = frame_send(fd, frame, len);

	return err == -EPIPE || err == -ECONNRESET ? 0 : err;
}
