// SPDX-License-Identifier: GPL-2.0
/*
 * Host tier: agentctl metrics. The counters match a known sequence of decisions (three
 * loopback connects the structural deny list refuses, by cgroup-BPF), and the exposition passes
 * Prometheus's own checker, promtool check metrics.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kernel/cgroup.h"
#include "harness.h"
#include "testlib.h"

static int promtool_check(const char *text, char *out, size_t outsz)
{
	char path[PATH_MAX], cmd[PATH_MAX + 64];
	FILE *p;
	size_t n;
	int status;

	test_file(path, sizeof(path), "metrics.txt", text);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < '%s' 2>&1", path);
	p = popen(cmd, "r");
	ASSERT(p);
	n = fread(out, 1, outsz - 1, p);
	out[n] = '\0';
	status = pclose(p);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(metrics_count_decisions_and_pass_promtool)
{
	static char out[1 << 16];
	char dir[256], state[PATH_MAX], control[PATH_MAX], audit[PATH_MAX], pins[PATH_MAX],
		cgroup[PATH_MAX], policy[PATH_MAX], agent_cg[PATH_MAX + 8], lint[4096],
		metrics[PATH_MAX];
	char root[PATH_MAX - 64];
	const char *ready[] = { "agentd: ready", NULL };
	const char *deny[] = { "\"kind\":\"net\"", "\"decision\":\"deny\"", NULL };
	struct proc *agentd, *follow;
	int i, port, lfd;

	ASSERT_EQ(cgroup2_mount(root, sizeof(root)), 0);
	test_tmpdir(dir, sizeof(dir), "metrics");
	snprintf(state, sizeof(state), "%s/state", dir);
	snprintf(audit, sizeof(audit), "%s/audit", dir);
	snprintf(control, sizeof(control), "%s/control.sock", dir);
	snprintf(cgroup, sizeof(cgroup), "%s/agentd-test-%d", root, getpid());
	snprintf(agent_cg, sizeof(agent_cg), "%s/m", cgroup);
	test_pin_dir(pins, sizeof(pins));
	test_cgroup_tree_at_end(cgroup);
	test_file(policy, sizeof(policy), "metrics-policy.json",
		  "{\"name\": \"m\", \"files\": [{\"path\": \"/\", \"rights\": [\"read\"]}],"
		  " \"network\": {\"sockets\": [\"inet\"]}}\n");
	setenv("AGENTD_CONTROL", control, 1);
	char *argv[] = { "agentd", "--control", control, "--state-dir", state,	"--audit-dir",
			 audit,	   "--pin-dir", pins,	 "--cgroup",	cgroup, "--allow-partial",
			 NULL };
	agentd = proc_start(argv);
	if (!proc_wait_line(agentd, TEST_READY_MS, ready))
		FAIL("agentd did not get ready: \"%s\"", agentd->buf);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "add", "m", "--policy", policy, NULL), 0);
	char *fargv[] = { "agentctl",	"audit", "follow", "--kind", "net",
			  "--decision", "deny",	 "--json", NULL };
	follow = proc_start(fargv);

	lfd = test_loopback_listener(&port);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(run_in_cgroup(agent_cg, test_loopback_connect, &port, NULL), EPERM);
	close(lfd);
	/* Counted when appended, before the record is committed and streamed. */
	for (i = 0; i < 3; i++)
		if (!proc_wait_line(follow, 20000, deny))
			FAIL("deny record %d did not come: \"%s\"", i + 1, follow->buf);

	ASSERT_EQ(agentctl_run(out, sizeof(out), "metrics", NULL), 0);
	if (!strstr(out, "agentd_decisions_total{agent=\"m\",kind=\"net\",decision=\"deny\"} 3\n"))
		FAIL("no count of 3 net denies for agent m:\n%s", out);
	if (!strstr(out, "agentd_agents 1\n") || !strstr(out, "agentd_build_info{version=\""))
		FAIL("agents or build info missing:\n%s", out);
	if (promtool_check(out, lint, sizeof(lint)))
		FAIL("promtool check metrics: %s", lint);
	/* $AGENTD_METRICS names the socket itself, wherever the control socket is said to be. */
	snprintf(metrics, sizeof(metrics), "%s/metrics.sock", dir);
	setenv("AGENTD_METRICS", metrics, 1);
	ASSERT_EQ(
		agentctl_run(out, sizeof(out), "metrics", "--control", "/nonexistent/c.sock", NULL),
		0);
	if (!strstr(out, "agentd_agents 1\n"))
		FAIL("$AGENTD_METRICS: %s", out);
}
