// SPDX-License-Identifier: GPL-2.0
/* agentctl status: the daemon, what the kernel enforces, and each agent. */
#include <stdio.h>
#include <time.h>
#include "client.h"
#include "cmds.h"
#include "log.h"

static const char *const parts[] = { "files", "exec", "self", "sockets", "network" };

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "?";
}

static void print_layers(const json_t *layers, const char *indent)
{
	size_t i;

	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		printf("%s%-8s %s\n", indent, parts[i], str(layers, parts[i]));
}

/* Which layer enforces each part of the agent's policy, and what none of them can. */
static void print_enforcement(const json_t *a, const json_t *layers)
{
	const json_t *e = json_object_get(a, "enforcement"), *gap = json_object_get(e, "gap"), *g;
	size_t i;

	print_layers(e ? json_object_get(e, "enforced_by") : layers, "    ");
	if (!json_is_array(gap)) {
		printf("    gap      unknown: agentd has no loaded policy for it (its pinned rules "
		       "hold)\n");
		return;
	}
	if (!json_array_size(gap))
		printf("    gap      none: every rule is enforced\n");
	json_array_foreach(gap, i, g)
	{
		printf("    %-12s %s: %s\n", i ? "" : "NOT ENFORCED", str(g, "rule"),
		       str(g, "why"));
	}
}

/* declared == observed (agentctl inspect) and the time since its last drill. */
static void print_inspect(const json_t *a)
{
	const json_t *in = json_object_get(a, "inspect");
	long long ended = json_integer_value(json_object_get(in, "drill_ended_sec"));
	long long ago = (long long)time(NULL) - ended;

	if (!in) {
		printf("    inspect  unknown: agentd has no loaded policy for it\n");
		return;
	}
	printf("    inspect  declared %s observed, ",
	       json_is_true(json_object_get(in, "consistent")) ? "==" : "!=");
	if (!ended)
		printf("never drilled\n");
	else if (ago < 3600)
		printf("last drill %lld min ago\n", ago / 60);
	else
		printf("last drill %lld h ago\n", ago / 3600);
}

static void print_status(const json_t *reply)
{
	json_t *d = json_object_get(reply, "daemon"), *k = json_object_get(reply, "kernel");
	json_t *layers = json_object_get(reply, "layers"),
	       *agents = json_object_get(reply, "agents");
	json_t *a, *h, *fr;
	size_t i;

	printf("agentd %s, pid %lld, control %s\n", str(d, "version"),
	       json_integer_value(json_object_get(d, "pid")), str(d, "control"));
	printf("  cgroup %s, state %s, pins %s, audit %s\n", str(d, "cgroup"), str(d, "state_dir"),
	       str(d, "pin_dir"), str(d, "audit_dir"));
	printf("kernel: LSMs %s; BPF LSM %s; BTF %s\n", str(k, "lsm"),
	       json_is_true(json_object_get(d, "partial")) ? "UNAVAILABLE" : "available",
	       json_is_true(json_object_get(k, "btf")) ? "yes" : "no");
	printf("  Landlock ABI %lld; seccomp %s; no_new_privs %s; cgroup v2 controllers: %s\n",
	       json_integer_value(json_object_get(k, "landlock_abi")),
	       json_is_true(json_object_get(k, "seccomp")) ? "yes" : "NO",
	       json_is_true(json_object_get(k, "no_new_privs")) ? "yes" : "NO",
	       *str(k, "cgroup2_controllers") ? str(k, "cgroup2_controllers") : "none");
	fr = json_object_get(k, "file_rules");
	if (json_is_object(fr))
		printf("  file rule table: %lld of %lld slots used, %lld of %lld buckets full\n",
		       json_integer_value(json_object_get(fr, "used")),
		       json_integer_value(json_object_get(fr, "slots")),
		       json_integer_value(json_object_get(fr, "full_buckets")),
		       json_integer_value(json_object_get(fr, "buckets")));
	json_array_foreach(json_object_get(k, "missing_hooks"), i, h)
	{
		printf("  LSM hook %s missing: NOT ENFORCED\n", json_string_value(h));
	}
	printf("enforcement (for processes agentctl run starts; attached ones get cgroup-BPF "
	       "alone):\n");
	print_layers(layers, "  ");
	if (json_is_true(json_object_get(d, "partial")))
		printf("  (--allow-partial: BPF LSM is missing; each agent's gap is below)\n");
	printf("agents: %zu\n", json_array_size(agents));
	json_array_foreach(agents, i, a)
	{
		printf("  %s: id %lld, mode %s, generation %lld, drops %lld, cgroup %s\n",
		       str(a, "name"), json_integer_value(json_object_get(a, "id")), str(a, "mode"),
		       json_integer_value(json_object_get(a, "generation")),
		       json_integer_value(json_object_get(a, "drops")), str(a, "cgroup"));
		print_enforcement(a, layers);
		print_inspect(a);
		if (*str(a, "limits_not_enforced"))
			printf("    limits   NOT ENFORCED (no cgroup v2 controller): %s\n",
			       str(a, "limits_not_enforced"));
		if (json_is_true(json_object_get(a, "expired")))
			printf("    expired  its wall-clock limit passed: its processes are "
			       "killed\n");
	}
}

int do_status(int argc, char **argv)
{
	struct control_request req = { .id = 1, .cmd = CONTROL_STATUS };
	json_t *reply;
	struct ctl c;
	int status;

	argc = ctl_args(argc, argv, &c);
	if (argc != 1) {
		log_err("usage: agentctl status [--json] [--control PATH]\n");
		return EXIT_USAGE;
	}
	status = ctl_call(&c, &req, &reply);
	if (status)
		return status;
	if (c.json)
		ctl_print_json(reply);
	else
		print_status(reply);
	json_decref(reply);
	return 0;
}
