// SPDX-License-Identifier: GPL-2.0
/*
 * agentctl approvals | approve ID [--for DURATION] | deny ID: the tool calls the broker holds
 * for an operator (docs/BROKER.md, "Approvals"). Arguments show by their digest; a value only
 * where the tools registry marks the argument displayable.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "client.h"
#include "cmds.h"
#include "log.h"
#include "policy/jsondoc.h"

static void print_one(const json_t *ap)
{
	const json_t *args = json_object_get(ap, "args"), *v;
	const char *key;
	char *text;

	printf("%-24s %-16s %-20s %.16s %5llds/%llds", json_string_value(json_object_get(ap, "id")),
	       json_string_value(json_object_get(ap, "agent")),
	       json_string_value(json_object_get(ap, "tool")),
	       json_string_value(json_object_get(ap, "args_sha256")),
	       (long long)json_integer_value(json_object_get(ap, "age_s")),
	       (long long)json_integer_value(json_object_get(ap, "timeout_s")));
	json_object_foreach((json_t *)args, key, v)
	{
		text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		printf(" %s=%s", key, text ? text : "?");
		free(text);
	}
	putchar('\n');
}

int do_approvals(int argc, char **argv)
{
	struct control_request req = { .id = 1, .cmd = CONTROL_APPROVAL_LS };
	json_t *reply, *arr, *ap;
	struct ctl c;
	size_t i;
	int status;

	argc = ctl_args(argc, argv, &c);
	if (argc != 1) {
		log_err("usage: agentctl approvals [--json] [--control PATH]\n");
		return EXIT_USAGE;
	}
	status = ctl_call(&c, &req, &reply);
	if (status)
		return status;
	arr = json_object_get(reply, "approvals");
	if (c.json) {
		ctl_print_json(reply);
	} else if (!json_array_size(arr)) {
		printf("no call waits for approval\n");
	} else {
		printf("%-24s %-16s %-20s %-16s %s\n", "ID", "AGENT", "TOOL", "ARGS-SHA256",
		       "AGE/TIMEOUT  DISPLAYABLE ARGS");
		json_array_foreach(arr, i, ap)
		{
			print_one(ap);
		}
	}
	json_decref(reply);
	return 0;
}

static int usage_decide(const char *verb)
{
	log_err("usage: agentctl %s ID%s [--json] [--control PATH]\n", verb,
		strcmp(verb, "approve") ? "" : " [--for DURATION]");
	return EXIT_USAGE;
}

/* --for N[s|m|h]: seconds, 1 to CONTROL_APPROVE_FOR_MAX; 0 when bad. */
static unsigned int for_seconds(const char *s)
{
	static const unsigned long long mult[] = { 1, 60, 3600 };

	return (unsigned int)jdoc_scaled(s, "smh", mult, CONTROL_APPROVE_FOR_MAX);
}

/* approve ID [--for DURATION] | deny ID */
static int decide(int argc, char **argv, bool approve)
{
	static const struct option opts[] = { { "for", required_argument, NULL, 'f' },
					      { NULL, 0, NULL, 0 } };
	struct control_request req = { .id = 1,
				       .cmd = approve ? CONTROL_APPROVAL_APPROVE
						      : CONTROL_APPROVAL_DENY };
	json_t *reply;
	struct ctl c;
	int opt, status;

	argc = ctl_args(argc, argv, &c);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt != 'f' || !approve || !(req.for_sec = for_seconds(optarg))) {
			if (opt == 'f' && approve)
				log_err("agentctl approve: --for %s: expected a duration from 1s "
					"to %ds, as 30s, 10m or 2h\n",
					optarg, CONTROL_APPROVE_FOR_MAX);
			return usage_decide(argv[0]);
		}
	}
	if (optind != argc - 1 || strlen(argv[optind]) >= sizeof(req.approval))
		return usage_decide(argv[0]);
	strcpy(req.approval, argv[optind]);
	status = ctl_call(&c, &req, &reply);
	if (status)
		return status;
	if (c.json)
		ctl_print_json(reply);
	else if (approve && req.for_sec)
		printf("approved %s; the same call of the same agent goes on for %us\n",
		       req.approval, req.for_sec);
	else
		printf("%s %s\n", approve ? "approved" : "denied", req.approval);
	json_decref(reply);
	return 0;
}

int do_approve(int argc, char **argv)
{
	return decide(argc, argv, true);
}

int do_deny(int argc, char **argv)
{
	return decide(argc, argv, false);
}
