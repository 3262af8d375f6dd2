// SPDX-License-Identifier: GPL-2.0
/* agentctl agent add|rm|ls|info|mode: the daemon's agents. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "client.h"
#include "cmds.h"
#include "log.h"

static int usage(void)
{
	log_err("usage: agentctl agent add NAME --policy FILE [--tools FILE] [--var N=V]...\n"
		"       agentctl agent rm|info NAME\n"
		"       agentctl agent ls\n"
		"       agentctl agent mode NAME shadow|enforce\n"
		"       (each with [--json] [--control PATH])\n");
	return EXIT_USAGE;
}

static int set_path(char *out, const char *in)
{
	if (!realpath(in, out)) {
		log_err("%s: %s\n", in, strerror(errno));
		return -errno;
	}
	return 0;
}

static int add_var(struct control_request *req, const char *arg)
{
	const char *eq = strchr(arg, '=');
	struct control_var *v = &req->vars[req->nvars];

	if (!eq || eq == arg || req->nvars == CONTROL_VARS_MAX ||
	    (size_t)(eq - arg) >= sizeof(v->name) || strlen(eq + 1) >= sizeof(v->value))
		return -EINVAL;
	memcpy(v->name, arg, eq - arg);
	v->name[eq - arg] = '\0';
	strcpy(v->value, eq + 1);
	req->nvars++;
	return 0;
}

static int parse_add(int argc, char **argv, struct control_request *req)
{
	char path[PATH_MAX];
	int i;

	for (i = 3; i < argc; i++) {
		if (i + 1 >= argc)
			return -EINVAL;
		if (!strcmp(argv[i], "--policy") || !strcmp(argv[i], "--tools")) {
			if (set_path(path, argv[i + 1]) || strlen(path) > CONTROL_PATH_MAX)
				return -EINVAL;
			strcpy(argv[i][2] == 'p' ? req->policy : req->tools, path);
		} else if (!strcmp(argv[i], "--var")) {
			if (add_var(req, argv[i + 1]))
				return -EINVAL;
		} else {
			return -EINVAL;
		}
		i++;
	}
	return req->policy[0] ? 0 : -EINVAL;
}

static void print_agent_row(const json_t *a)
{
	const char *mode = json_string_value(json_object_get(a, "mode"));

	printf("%-24s %4lld %6lld %-7s %8lld  %s\n", json_string_value(json_object_get(a, "name")),
	       json_integer_value(json_object_get(a, "id")),
	       json_integer_value(json_object_get(a, "generation")), mode ? mode : "?",
	       json_integer_value(json_object_get(a, "drops")),
	       json_string_value(json_object_get(a, "cgroup")));
}

static void print_agent_header(void)
{
	printf("%-24s %4s %6s %-7s %8s  %s\n", "NAME", "ID", "GEN", "MODE", "DROPS", "CGROUP");
}

static void print_reply(const char *verb, const json_t *reply)
{
	json_t *agents = json_object_get(reply, "agents"), *a;
	size_t i;

	if (!strcmp(verb, "rm")) {
		printf("agent %s removed\n", json_string_value(json_object_get(reply, "name")));
		return;
	}
	print_agent_header();
	if (!agents)
		print_agent_row(json_object_get(reply, "agent"));
	json_array_foreach(agents, i, a)
	{
		print_agent_row(a);
	}
	if (!strcmp(verb, "info") || !strcmp(verb, "add"))
		printf("policy: %s\n", json_string_value(json_object_get(
					       json_object_get(reply, "agent"), "policy")));
}

static int build(int argc, char **argv, struct control_request *req)
{
	static const struct {
		const char *verb;
		enum control_cmd cmd;
		int args;
	} verbs[] = {
		{ "add", CONTROL_AGENT_ADD, -1 },  { "rm", CONTROL_AGENT_RM, 1 },
		{ "ls", CONTROL_AGENT_LS, 0 },	   { "info", CONTROL_AGENT_INFO, 1 },
		{ "mode", CONTROL_AGENT_MODE, 2 },
	};
	size_t i;

	memset(req, 0, sizeof(*req));
	req->id = 1;
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (argc >= 2 && !strcmp(argv[1], verbs[i].verb))
			break;
	if (i == sizeof(verbs) / sizeof(verbs[0]))
		return -EINVAL;
	req->cmd = verbs[i].cmd;
	if (verbs[i].args == 0)
		return argc == 2 ? 0 : -EINVAL;
	if (argc < 3 || !control_name_valid(argv[2])) {
		log_err("agent names are [a-z0-9][a-z0-9-]{0,62}\n");
		return -EINVAL;
	}
	strcpy(req->name, argv[2]);
	if (verbs[i].args == 1)
		return argc == 3 ? 0 : -EINVAL;
	if (verbs[i].args == 2) {
		if (argc != 4 || (strcmp(argv[3], "shadow") && strcmp(argv[3], "enforce")))
			return -EINVAL;
		snprintf(req->mode, sizeof(req->mode), "%s", argv[3]);
		return 0;
	}
	return parse_add(argc, argv, req);
}

int do_agent(int argc, char **argv)
{
	struct control_request req;
	json_t *reply;
	struct ctl c;
	int status;

	argc = ctl_args(argc, argv, &c);
	if (build(argc, argv, &req))
		return usage();
	status = ctl_call(&c, &req, &reply);
	if (status)
		return status;
	if (c.json)
		ctl_print_json(reply);
	else
		print_reply(argv[1], reply);
	json_decref(reply);
	return 0;
}
