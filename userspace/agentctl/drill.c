// SPDX-License-Identifier: GPL-2.0
/*
 * agentctl drill NAME [--boundary B]... [--json]: agentd tries each boundary of the agent from a
 * fresh cgroup under its policy (docs/DRILL.md) and answers per boundary; exit 1 when a boundary
 * the layers claim to enforce escaped or an allowed operation failed.
 */
#include <stdio.h>
#include <string.h>
#include "boundary.h"
#include "client.h"
#include "cmds.h"
#include "log.h"

static int usage(void)
{
	log_err("usage: agentctl drill NAME [--boundary B]... [--json] [--control PATH]\n"
		"  B: files, exec, egress, loopback, sockets, unix, ipc, signals, capabilities,\n"
		"     self, cgroup, limits, broker, proxy, audit (default: every one)\n"
		"exit status: 0 every boundary the layers claim held and every allowed operation\n"
		"worked; 1 one escaped or failed; 2 usage; 3 failure\n");
	return EXIT_USAGE;
}

static int parse(int argc, char **argv, struct control_request *req)
{
	int i, b;

	if (argc < 2 || !control_name_valid(argv[1]))
		return -1;
	strcpy(req->name, argv[1]);
	for (i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--boundary") || i + 1 == argc)
			return -1;
		b = boundary_from_name(argv[++i]);
		if (b < 0) {
			log_err("drill: no boundary %s\n", argv[i]);
			return -1;
		}
		req->boundaries |= 1U << b;
	}
	return 0;
}

static void print_one(const json_t *b)
{
	const json_t *d = json_object_get(b, "denied"), *a = json_object_get(b, "allowed");
	const char *v = json_string_value(json_object_get(b, "verdict"));
	const char *layer = json_string_value(json_object_get(d, "layer"));
	bool claimed = json_is_true(json_object_get(b, "claimed"));

	printf("%-13s %-12s", json_string_value(json_object_get(b, "boundary")), v);
	if (!strcmp(v, "not-drilled")) {
		printf(" %s\n", json_string_value(json_object_get(b, "why")));
		return;
	}
	if (d && !json_is_null(d))
		printf(" %s: %s%s%s%s", json_string_value(json_object_get(d, "op")),
		       strcmp(v, "escaped") ? json_string_value(json_object_get(d, "errno"))
					    : "it worked",
		       layer && *layer ? " (" : "", layer && *layer ? layer : "",
		       layer && *layer ? ")" : "");
	if (!strcmp(v, "escaped"))
		printf(claimed ? " [the layers claim it: FAIL]" : " [in the reported gap]");
	if (a && !json_is_null(a))
		printf("; allowed: %s: %s", json_string_value(json_object_get(a, "op")),
		       json_is_true(json_object_get(a, "ok"))
			       ? "ok"
			       : json_string_value(json_object_get(b, "allowed_errno")));
	printf("\n");
}

int do_drill(int argc, char **argv)
{
	struct control_request req = { .id = 1, .cmd = CONTROL_AGENT_DRILL };
	const json_t *drill, *b;
	json_t *reply;
	struct ctl c;
	size_t i;
	int status;

	argc = ctl_args(argc, argv, &c);
	if (parse(argc, argv, &req))
		return usage();
	status = ctl_call(&c, &req, &reply);
	if (status)
		return status;
	drill = json_object_get(reply, "drill");
	if (c.json) {
		ctl_print_json(reply);
	} else {
		printf("agent %s, generation %lld:\n", req.name,
		       (long long)json_integer_value(json_object_get(drill, "generation")));
		json_array_foreach(json_object_get(drill, "boundaries"), i, b)
		{
			print_one(b);
		}
	}
	status = json_is_true(json_object_get(drill, "passed")) ? 0 : EXIT_NO;
	json_decref(reply);
	return status;
}
