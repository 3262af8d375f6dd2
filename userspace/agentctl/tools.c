// SPDX-License-Identifier: GPL-2.0
/* agentctl tools accept SERVER.TOOL: an upstream MCP tool that changed since it was accepted
 * (its name, description or inputSchema) is served again, as the server lists it now. */
#include <stdio.h>
#include <string.h>
#include "client.h"
#include "cmds.h"
#include "log.h"

int do_tools(int argc, char **argv)
{
	struct control_request req = { .id = 1, .cmd = CONTROL_TOOLS_ACCEPT };
	json_t *reply;
	struct ctl c;
	int status;

	argc = ctl_args(argc, argv, &c);
	if (argc != 3 || strcmp(argv[1], "accept") || strlen(argv[2]) >= sizeof(req.tool)) {
		log_err("usage: agentctl tools accept SERVER.TOOL [--json] [--control PATH]\n");
		return EXIT_USAGE;
	}
	strcpy(req.tool, argv[2]);
	status = ctl_call(&c, &req, &reply);
	if (status)
		return status;
	if (c.json)
		ctl_print_json(reply);
	else
		printf("tool %s: accepted as its server lists it now\n", req.tool);
	json_decref(reply);
	return 0;
}
