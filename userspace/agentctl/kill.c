// SPDX-License-Identifier: GPL-2.0
/* agentctl kill NAME: SIGKILL to every process of the agent; the agent and its rules stay. */
#include <string.h>
#include "client.h"
#include "cmds.h"
#include "log.h"

int do_kill(int argc, char **argv)
{
	struct control_request req = { .id = 1, .cmd = CONTROL_AGENT_KILL };
	json_t *reply;
	struct ctl c;
	int status;

	argc = ctl_args(argc, argv, &c);
	if (argc != 2 || !control_name_valid(argv[1])) {
		log_err("usage: agentctl kill NAME [--json] [--control PATH]\n");
		return EXIT_USAGE;
	}
	strcpy(req.name, argv[1]);
	status = ctl_call(&c, &req, &reply);
	if (status)
		return status;
	if (c.json)
		ctl_print_json(reply);
	else
		printf("agent %s: every process killed\n", req.name);
	json_decref(reply);
	return 0;
}
