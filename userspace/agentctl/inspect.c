// SPDX-License-Identifier: GPL-2.0
/*
 * agentctl inspect NAME [--json] [--fail-on SEVERITY]: the agent's boundary map (declared,
 * observed, proven), per process, and the findings (docs/INSPECT.md). Exit 0 when declared ==
 * observed and no finding is at or above SEVERITY (default high), else 1.
 */
#include <stdio.h>
#include <string.h>
#include "client.h"
#include "cmds.h"
#include "log.h"

static const char *const severities[] = { "info", "low", "medium", "high", "critical" };
#define NSEV (int)(sizeof(severities) / sizeof(severities[0]))

static int severity_of(const char *s)
{
	int i;

	for (i = 0; s && i < NSEV; i++)
		if (!strcmp(s, severities[i]))
			return i;
	return -1;
}

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static void print_proven(const json_t *p, char *buf, size_t size)
{
	const char *v = str(p, "verdict");

	if (!json_object_get(p, "generation"))
		snprintf(buf, size, "%s", v);
	else
		snprintf(buf, size, "%s gen %lld%s", v,
			 json_integer_value(json_object_get(p, "generation")),
			 json_is_true(json_object_get(p, "stale")) ? " STALE" : "");
}

static void print_boundaries(const json_t *in)
{
	const json_t *b, *rules;
	char proven[64], ids[48];
	size_t i, n;

	printf("%-13s %-5s %-26s %s\n", "BOUNDARY", "MATCH", "PROVEN", "DECLARED / OBSERVED");
	json_array_foreach(json_object_get(in, "boundaries"), i, b)
	{
		rules = json_object_get(b, "rules");
		n = json_array_size(rules);
		ids[0] = '\0';
		if (n)
			snprintf(ids, sizeof(ids), " (rule ids %lld-%lld)",
				 json_integer_value(json_array_get(rules, 0)),
				 json_integer_value(json_array_get(rules, n - 1)));
		print_proven(json_object_get(b, "proven"), proven, sizeof(proven));
		printf("%-13s %-5s %-26s %s%s\n%46s%s\n", str(b, "boundary"),
		       json_is_true(json_object_get(b, "match")) ? "ok" : "DIFF", proven,
		       str(b, "declared"), ids, "", str(b, "observed"));
	}
}

static void print_processes(const json_t *in)
{
	const json_t *p, *r;
	size_t i, k;

	printf("processes: %lld\n", json_integer_value(json_object_get(in, "processes_total")));
	json_array_foreach(json_object_get(in, "processes"), i, p)
	{
		printf("  %lld %s (%s) in %s\n", json_integer_value(json_object_get(p, "pid")),
		       str(p, "comm"), str(p, "origin"), str(p, "cgroup"));
		json_array_foreach(json_object_get(p, "boundaries"), k, r)
		{
			printf("    %-13s %s\n", str(r, "boundary"), str(r, "observed"));
		}
	}
}

static void print_findings(const json_t *in)
{
	const json_t *f;
	size_t i;

	printf("findings: %zu\n", json_array_size(json_object_get(in, "findings")));
	json_array_foreach(json_object_get(in, "findings"), i, f)
	{
		printf("  %s (confidence %s) %s: %s\n    why: %s\n    fix: %s\n",
		       str(f, "severity"), str(f, "confidence"), str(f, "boundary"), str(f, "seen"),
		       str(f, "why"), str(f, "fix"));
	}
}

static void print_inspection(const json_t *in)
{
	printf("agent %s (id %lld), generation %lld, policy %.16s, BPF LSM %s: declared %s "
	       "observed\n",
	       str(in, "name"), json_integer_value(json_object_get(in, "id")),
	       json_integer_value(json_object_get(in, "generation")), str(in, "policy_digest"),
	       json_is_true(json_object_get(in, "bpf_lsm")) ? "yes" : "NO",
	       json_is_true(json_object_get(in, "consistent")) ? "==" : "!=");
	print_boundaries(in);
	print_processes(in);
	print_findings(in);
}

/* 1 when declared != observed or a finding is at or above fail_on. */
static int verdict(const json_t *in, int fail_on)
{
	const json_t *f;
	size_t i;

	if (!json_is_true(json_object_get(in, "consistent")))
		return EXIT_NO;
	json_array_foreach(json_object_get(in, "findings"), i, f)
	{
		if (severity_of(str(f, "severity")) >= fail_on)
			return EXIT_NO;
	}
	return 0;
}

/* Takes --fail-on SEVERITY out of argv; -1 when its value is not a severity. */
static int fail_on_arg(int *argc, char **argv)
{
	int i, sev = severity_of("high");

	for (i = 1; i < *argc; i++) {
		if (strcmp(argv[i], "--fail-on"))
			continue;
		if (i + 1 == *argc)
			return -1;
		sev = severity_of(argv[i + 1]);
		memmove(&argv[i], &argv[i + 2], (*argc - i - 2) * sizeof(*argv));
		*argc -= 2;
		break;
	}
	return sev;
}

int do_inspect(int argc, char **argv)
{
	struct control_request req = { .id = 1, .cmd = CONTROL_AGENT_INSPECT };
	json_t *reply;
	struct ctl c;
	int status, fail_on;

	argc = ctl_args(argc, argv, &c);
	fail_on = fail_on_arg(&argc, argv);
	if (argc != 2 || !control_name_valid(argv[1]) || fail_on < 0) {
		log_err("usage: agentctl inspect NAME [--json] [--fail-on "
			"info|low|medium|high|critical] [--control PATH]\n");
		return EXIT_USAGE;
	}
	strcpy(req.name, argv[1]);
	status = ctl_call(&c, &req, &reply);
	if (status)
		return status;
	if (c.json)
		ctl_print_json(reply);
	else
		print_inspection(json_object_get(reply, "inspect"));
	status = verdict(json_object_get(reply, "inspect"), fail_on);
	json_decref(reply);
	return status;
}
