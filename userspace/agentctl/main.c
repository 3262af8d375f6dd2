// SPDX-License-Identifier: GPL-2.0
/* agentctl: the operators' CLI. One { "verb", do_verb } table, as in bpftool. */
#include <stdio.h>
#include <string.h>
#include "cmds.h"
#include "log.h"
#include "probe.h"

#define AGENTD_VERSION "0.1.0"

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
	return probe_bpf_lsm_ok(&p) ? 0 : 1;
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
	{ "probe", do_probe, "probe [--json]   what this kernel can enforce (exit 1: no BPF LSM)" },
	{ "agent", do_agent,
	  "agent add NAME --policy FILE [--tools FILE] [--var N=V]...   a new agent\n"
	  "  agent rm NAME    kill its processes, remove its rules and cgroup\n"
	  "  agent ls | agent info NAME" },
	{ "run", do_run,
	  "run NAME [--user USER] [--cwd DIR] -- CMD [ARGS...]   CMD inside the agent from its\n"
	  "                   first instruction; exits with CMD's status (128+N: killed by N)" },
	{ "kill", do_kill, "kill NAME        SIGKILL every process of the agent (it stays)" },
	{ "status", do_status,
	  "status           the daemon, kernel features, which layer enforces what, agents" },
	{ "policy", do_policy,
	  "policy check FILE...  validate policies (--tools, --var)\n"
	  "  policy reload [NAME]  apply the agents' policies again, all or nothing" },
	{ "audit", do_audit,
	  "audit verify|query|follow ...   the audit log (agentctl audit help)" },
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
	printf("\nexit status: 0 success, 1 the answer is no (invalid policy, no such agent,\n"
	       "agent exists, not root), 2 usage, 3 failure (daemon unreachable, kernel refused);\n"
	       "run: the command's own status\n");
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
