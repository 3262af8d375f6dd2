// SPDX-License-Identifier: GPL-2.0
/*
 * agentd end to end with a policy: the policy compiles to the kernel's rules, an agent task is
 * held to them, and every deny lands in an audit log that verifies.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <linux/fs.h>
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
	char pins[PATH_MAX];
	char cgroup[PATH_MAX];
	char secret[PATH_MAX];
	char policy[PATH_MAX];
	char work[PATH_MAX];
	char audit[PATH_MAX];
};

static struct proc *restart_agentd(struct paths *p);

static struct proc *start_agentd(struct paths *p)
{
	char policy[4 * PATH_MAX];

	test_cgroup(p->cgroup, sizeof(p->cgroup));
	test_tmpdir(p->work, sizeof(p->work), "work");
	test_tmpdir(p->audit, sizeof(p->audit), "audit");
	test_file(p->secret, sizeof(p->secret), "secret", "s3cr3t\n");
	snprintf(policy, sizeof(policy),
		 "{\"name\": \"t\", \"files\": ["
		 "{\"path\": \"/\", \"rights\": [\"read\", \"exec\"]},"
		 "{\"path\": \"%s\", \"rights\": [\"read\", \"write\", \"create\", \"remove\"]},"
		 "{\"path\": \"%s\", \"rights\": []}],"
		 "\"network\": {\"sockets\": [\"inet\", \"unix\"]}}\n",
		 p->work, p->secret);
	test_file(p->policy, sizeof(p->policy), "policy.json", policy);

	test_pin_dir(p->pins, sizeof(p->pins));
	return restart_agentd(p);
}

/* agentd on the test's cgroup and policy, again (adopting what an earlier one pinned). */
static struct proc *restart_agentd(struct paths *p)
{
	const char *ready[] = { "agentd: ready", NULL };
	struct proc *agentd;

	char *argv[] = { "agentd",   "--pin-dir", p->pins,	 "--agent-cgroup", p->cgroup,
			 "--policy", p->policy,	  "--audit-dir", p->audit,	   NULL };
	agentd = proc_start(argv);
	if (!proc_wait_line(agentd, TEST_READY_MS, ready))
		FAIL("agentd did not get ready: \"%s\"", agentd->buf);
	return agentd;
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

	char *verify[] = { "agentctl", "audit", "verify", "--dir", p.audit, NULL };
	ASSERT_EQ(agentctl(verify, line, sizeof(line)), 0);
	char *query[] = { "agentctl", "audit", "query",	     "--dir", p.audit,
			  "--kind",   "file",  "--decision", "deny",  NULL };
	ASSERT_EQ(agentctl(query, line, sizeof(line)), 0);
	snprintf(want, sizeof(want), "\"path\":\"%s\"", p.secret);
	if (!strstr(line, want) || !strstr(line, "\"op\":\"file_open\""))
		FAIL("first deny in the audit log is not the secret's open: %s", line);
}

TEST(agentd_refuses_a_broken_policy)
{
	char cg[PATH_MAX], policy[PATH_MAX];
	const char *ready[] = { "agentd: ready", NULL };
	struct proc *agentd;
	int status;

	test_cgroup(cg, sizeof(cg));
	test_file(policy, sizeof(policy), "bad.json",
		  "{\"name\": \"t\", \"files\": [{\"path\": "
		  "\"/does-not-exist\", \"rights\": []}]}\n");
	char *argv[] = { "agentd", "--agent-cgroup", cg, "--policy", policy, NULL };
	agentd = proc_start(argv);
	if (proc_wait_line(agentd, 20000, ready))
		FAIL("agentd started with a policy naming a missing path");
	status = proc_stop(agentd, 0);
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 3);
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

	ASSERT_EQ(agentd_teardown(p.pins), 0);
	ASSERT_EQ(run_in_cgroup(p.cgroup, try_open, p.secret, NULL), 0);
}

static int touch_now(void *path)
{
	return utimensat(AT_FDCWD, path, NULL, 0) ? errno : 0;
}

/* Single-agent mode follows the mount table too: a file system mounted in the workspace after
 * the policy loaded is unknown to the hooks that see no mount (setting times to now needs
 * write), denied until agentd sees the change and refreshes the agent's mount roots. */
TEST(agentd_single_agent_follows_the_mount_table)
{
	const char *refreshed[] = { "agentd: mount roots refreshed", NULL };
	char late[PATH_MAX + 8], f[PATH_MAX + 16];
	struct proc *agentd;
	struct paths p;
	int fd;

	agentd = start_agentd(&p);
	snprintf(late, sizeof(late), "%s/late", p.work);
	snprintf(f, sizeof(f), "%s/f", late);
	ASSERT_OK(mkdir(late, 0755));
	/* Stopped so that the mount is not seen before the first attempt. */
	ASSERT_OK(kill(agentd->pid, SIGSTOP));
	test_mount_tmpfs(late);
	fd = open(f, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	ASSERT_OK(fd);
	close(fd);
	ASSERT_EQ(run_in_cgroup(p.cgroup, touch_now, f, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, touch_now, f, NULL), 0);
	ASSERT_OK(kill(agentd->pid, SIGCONT));
	if (!proc_wait_line(agentd, 10000, refreshed))
		FAIL("agentd did not refresh the mount roots: \"%s\"", agentd->buf);
	ASSERT_EQ(run_in_cgroup(p.cgroup, touch_now, f, NULL), 0);
}
