// SPDX-License-Identifier: GPL-2.0
/* agentctl: the operators' CLI. One { "verb", do_verb } table, as in bpftool. */
#include <stdio.h>
#include <string.h>
#include "cmds.h"
#include "log.h"
#include "kernel/probe.h"

#include "version.h"

static int do_help(int argc, char **argv);

int want_json(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j"))
			return 1;
	return 0;
}

static int do_probe(int argc, char **argv)
{
	struct probe p;

	probe_kernel(&p);
	if (want_json(argc, argv))
		probe_print_json(stdout, &p);
	else
		probe_print(stdout, &p);
	return probe_full_enforcement(&p) ? 0 : 1;
}

static int do_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("agentctl %s\n", AGENTD_VERSION);
	return 0;
}

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{ "probe", do_probe,
	  "probe [--json]   what this kernel can enforce (exit 1: not everything, as agentd "
	  "--probe)" },
	{ "agent", do_agent,
	  "agent add NAME --policy FILE [--tools FILE] [--var N=V]...   a new agent\n"
	  "  agent rm NAME    kill its processes, remove its rules and cgroup\n"
	  "  agent ls | agent info NAME" },
	{ "run", do_run,
	  "run NAME [--user USER] [--cwd DIR] [--require full] -- CMD [ARGS...]   CMD inside the\n"
	  "                   agent from its first instruction, Landlock and seccomp applied;\n"
	  "                   exits with CMD's status (128+N: killed by N; 125: --require full\n"
	  "                   and a rule is not enforced here)" },
	{ "kill", do_kill, "kill NAME        SIGKILL every process of the agent (it stays)" },
	{ "tools", do_tools,
	  "tools accept SERVER.TOOL   serve an upstream MCP tool that changed, as listed now" },
	{ "attach", do_attach,
	  "attach NAME      live view: one line per decision or tool call of the agent, as it\n"
	  "                   happens, until interrupted (--json: the audit records; --socket "
	  "PATH)\n"
	  "  attach NAME --pid PID [--allow-partial]   move a running process and its\n"
	  "                   descendants into the agent's cgroup\n"
	  "  attach NAME --cgroup PATH [--allow-partial]   put a cgroup (a container's) under\n"
	  "                   the agent's policy (no resource limits); kept across restarts\n"
	  "                   without BPF LSM only network rules hold: refused (exit 1) unless\n"
	  "                   --allow-partial; the reply names the layers that hold" },
	{ "detach", do_detach,
	  "detach NAME --cgroup PATH   give an attached cgroup back (agent rm does too)" },
	{ "drill", do_drill,
	  "drill NAME [--boundary B]...   try each boundary from a fresh cgroup under the\n"
	  "                   agent's policy (exit 1: one the layers claim escaped)" },
	{ "status", do_status,
	  "status           the daemon, kernel features, which layer enforces what, agents" },
	{ "inspect", do_inspect,
	  "inspect NAME [--fail-on SEVERITY]   per boundary: declared, observed in the kernel,\n"
	  "                   proven by the last drill; findings (exit 1: declared != observed\n"
	  "                   or a finding at or above SEVERITY, default high)" },
	{ "policy", do_policy,
	  "policy check FILE...  validate policies (--tools, --var)\n"
	  "  policy reload [NAME]  apply the agents' policies again, all or nothing\n"
	  "  policy generate NAME [--since T] [--from FILE]... [--diff] [--allow-broad]\n"
	  "                   a policy granting what the agent's deny records show it needed" },
	{ "grant", do_grant,
	  "grant NAME --path P --rights R | --exec P | --connect CIDR:PORT | --tool T\n"
	  "                   [--for DURATION] [--once]   let through what the policy denies,\n"
	  "                   until the time passes (kernel clock) or the first use\n"
	  "  grants [NAME]    the grants in force    revoke ID   end one now" },
	{ "grants", do_grants, "grants [NAME]    the grants in force (agentctl grant)" },
	{ "revoke", do_revoke, "revoke ID        end a grant now" },
	{ "audit", do_audit,
	  "audit verify|query|follow ...   the audit log (agentctl audit help)" },
	{ "approvals", do_approvals,
	  "approvals        tool calls waiting for an operator: id, agent, tool, digest, age" },
	{ "approve", do_approve,
	  "approve ID [--for DURATION]   let a held call run (--for: the same call of the\n"
	  "                   same agent, same arguments, runs without asking until then)" },
	{ "deny", do_deny, "deny ID          refuse a held call" },
	{ "metrics", do_metrics,
	  "metrics          agentd's counters in Prometheus's text format (docs/METRICS.md)" },
	{ "version", do_version, "version          print the version" },
	{ "help", do_help, "help             this text" },
};

static int do_help(int argc, char **argv)
{
	size_t i;

	(void)argc;
	(void)argv;
	printf("usage: agentctl COMMAND [ARGS]\n\ncommands:\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		printf("  %s\n", cmds[i].help);
	printf("\nevery command takes --json; daemon commands take --control PATH (default\n"
	       "$AGENTD_CONTROL, else /run/agentd/control.sock)\n");
	printf("\nexit status: 0 success, 1 the answer is no (invalid policy, no such agent or\n"
	       "process, agent exists, not root, attach refused as partial or over a limit), 2 "
	       "usage,\n"
	       "3 failure (daemon unreachable, kernel refused; attach NAME: the stream ended);\n"
	       "run: the command's own status; attach NAME (live view) runs until interrupted\n");
	return 0;
}

int main(int argc, char **argv)
{
	size_t i;

	log_init("agentctl", LOG_INFO);
	log_libbpf();
	if (argc < 2)
		return do_help(argc, argv), EXIT_USAGE;
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	log_err("unknown command '%s' (try agentctl help)\n", argv[1]);
	return EXIT_USAGE;
}
