// SPDX-License-Identifier: GPL-2.0
/*
 * agentd end to end with a policy: an agent added over the control socket, its policy compiled
 * to the kernel's rules, an agent task held to them, and every deny in an audit log that
 * verifies.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "harness.h"
#include "testlib.h"

struct paths {
	struct test_daemon d;
	char cgroup[PATH_MAX]; /* the agent's */
	char secret[PATH_MAX];
	char policy[PATH_MAX];
	char work[PATH_MAX];
};

/* agentd with decisions on stdout (-v), as a restart adopting what an earlier one pinned. */
static struct proc *restart_agentd(struct paths *p)
{
	test_daemon_start(&p->d, "-v", NULL);
	return p->d.agentd;
}

/* agentd, and the agent "t" added with a policy denying the secret. */
static struct proc *start_agentd(struct paths *p)
{
	char policy[4 * PATH_MAX];

	test_daemon_init(&p->d, "policy");
	snprintf(p->work, sizeof(p->work), "%s/work", p->d.dir);
	snprintf(p->secret, sizeof(p->secret), "%s/secret", p->d.dir);
	snprintf(p->policy, sizeof(p->policy), "%s/policy.json", p->d.dir);
	if (mkdir(p->work, 0755))
		FAIL("mkdir %s: %s", p->work, strerror(errno));
	test_write(p->secret, "s3cr3t\n", 0644);
	snprintf(policy, sizeof(policy),
		 "{\"name\": \"t\", \"files\": ["
		 "{\"path\": \"/\", \"rights\": [\"read\", \"exec\"]},"
		 "{\"path\": \"%s\", \"rights\": [\"read\", \"write\", \"create\", \"remove\"]},"
		 "{\"path\": \"%s\", \"rights\": []}],"
		 "\"network\": {\"sockets\": [\"inet\", \"unix\"]}}\n",
		 p->work, p->secret);
	test_write(p->policy, policy, 0644);
	restart_agentd(p);
	test_daemon_add(&p->d, "t", p->policy, p->cgroup, sizeof(p->cgroup));
	return p->d.agentd;
}

/* Runs an agentctl command; returns its exit status, its first output line in out. */
static int agentctl(char *const argv[], char *out, size_t outsz)
{
	const char *any[] = { "", NULL };
	struct proc *p = proc_start(argv);
	const char *line = proc_wait_line(p, 20000, any);
	int status;

	snprintf(out, outsz, "%s", line ? line : "");
	status = proc_stop(p, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(agentd_enforces_a_policy_and_audits_it)
{
	char created[PATH_MAX + 8], outside[64], line[4096], want[PATH_MAX + 16];
	struct paths p;
	struct proc *agentd;
	int status;

	agentd = start_agentd(&p);
	snprintf(created, sizeof(created), "%s/new", p.work);
	snprintf(outside, sizeof(outside), "/tmp/agentd-outside-%d", getpid());
	test_unlink_at_end(outside);

	ASSERT_EQ(run_in_cgroup(p.cgroup, try_open, p.secret, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(p.cgroup, try_create, created, NULL), 0);
	test_unlink_at_end(created);
	ASSERT_EQ(run_in_cgroup(p.cgroup, try_create, outside, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, try_open, p.secret, NULL), 0);

	status = proc_stop(agentd, SIGTERM);
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);

	char *verify[] = { "agentctl", "audit", "verify", "--dir", p.d.audit, NULL };
	ASSERT_EQ(agentctl(verify, line, sizeof(line)), 0);
	char *query[] = { "agentctl", "audit", "query",	     "--dir", p.d.audit,
			  "--kind",   "file",  "--decision", "deny",  NULL };
	ASSERT_EQ(agentctl(query, line, sizeof(line)), 0);
	snprintf(want, sizeof(want), "\"path\":\"%s\"", p.secret);
	if (!strstr(line, want) || !strstr(line, "\"op\":\"file_open\""))
		FAIL("first deny in the audit log is not the secret's open: %s", line);
}

/* A policy that does not load is refused with its place, and nothing is added. */
TEST(agentd_refuses_a_broken_policy)
{
	char policy[PATH_MAX], cg[PATH_MAX + 8], out[8192];
	struct test_daemon d;

	test_daemon_init(&d, "badpol");
	snprintf(policy, sizeof(policy), "%s/bad.json", d.dir);
	test_write(policy,
		   "{\"name\": \"t\", \"files\": [{\"path\": "
		   "\"/does-not-exist\", \"rights\": []}]}\n",
		   0644);
	test_daemon_start(&d, NULL);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "add", "t", "--policy", policy, "--json",
			       NULL),
		  1);
	if (!strstr(out, "bad-policy") || !strstr(out, "/does-not-exist"))
		FAIL("agentd added an agent with a policy naming a missing path: %s", out);
	snprintf(cg, sizeof(cg), "%s/t", d.cgroup);
	ASSERT_EQ(access(cg, F_OK), -1);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "info", "t", NULL), 1);
}

static int agentd_teardown(const char *pins)
{
	char *argv[] = { "agentd", "--teardown", "--pin-dir", (char *)pins, NULL };
	struct proc *p = proc_start(argv);
	int status = proc_stop(p, 0);

	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* kill -9 of agentd changes nothing: pinned links and maps keep enforcing; a restarted agentd
 * adopts them; only --teardown ends enforcement. */
TEST(enforcement_outlives_agentd)
{
	struct paths p;
	struct proc *agentd;

	agentd = start_agentd(&p);
	ASSERT_EQ(run_in_cgroup(p.cgroup, try_open, p.secret, NULL), EPERM);
	proc_stop(agentd, SIGKILL);
	ASSERT_EQ(run_in_cgroup(p.cgroup, try_open, p.secret, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, try_open, p.secret, NULL), 0);

	agentd = restart_agentd(&p);
	ASSERT_EQ(run_in_cgroup(p.cgroup, try_open, p.secret, NULL), EPERM);
	const char *deny[] = { "deny agent=1 ", "hook=file_open", "/secret\"", NULL };
	if (!proc_wait_line(agentd, 10000, deny))
		FAIL("the restarted agentd reports no deny: \"%s\"", agentd->buf);
	proc_stop(agentd, SIGTERM);
	ASSERT_EQ(run_in_cgroup(p.cgroup, try_open, p.secret, NULL), EPERM);

	ASSERT_EQ(agentd_teardown(p.d.pins), 0);
	ASSERT_EQ(run_in_cgroup(p.cgroup, try_open, p.secret, NULL), 0);
}
