// SPDX-License-Identifier: GPL-2.0
/*
 * VM tier: agentd's daemon mode with BPF LSM. An agent added over the control socket and run
 * with agentctl run is held to its policy; reloads never open what both policies deny; kill -9
 * of agentd keeps enforcing and a restarted agentd re-adopts the agent.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/fs.h>
#include "kernel/cgroup.h"
#include "harness.h"
#include "testlib.h"

struct denv {
	struct test_daemon d;
	char policy[PATH_MAX];
	char work[PATH_MAX];
	char secret[PATH_MAX];
};

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		FAIL("create %s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
}

/* Policy A gives the workspace read and write, B read only; both deny the secret. */
static void write_policy(struct denv *e, bool b)
{
	char text[4 * PATH_MAX];

	snprintf(text, sizeof(text),
		 "{\"name\": \"t\", \"files\": ["
		 "{\"path\": \"/\", \"rights\": [\"read\", \"exec\"]},"
		 "{\"path\": \"%s\", \"rights\": [\"read\"%s]},"
		 "{\"path\": \"%s\", \"rights\": []}],"
		 "\"network\": {\"sockets\": [\"inet\", \"unix\"]}}\n",
		 e->work, b ? "" : ", \"write\", \"create\", \"remove\"", e->secret);
	write_text(e->policy, text);
}

static struct denv *setup(void)
{
	static struct denv e;

	test_daemon_init(&e.d, "daemon");
	snprintf(e.policy, sizeof(e.policy), "%s/policy.json", e.d.dir);
	snprintf(e.work, sizeof(e.work), "%s/work", e.d.dir);
	snprintf(e.secret, sizeof(e.secret), "%s/secret", e.d.dir);
	ASSERT_OK(mkdir(e.work, 0755));
	write_text(e.secret, "s3cr3t\n");
	write_policy(&e, false);
	test_daemon_start(&e.d, NULL);
	return &e;
}

TEST(daemon_agent_is_held_to_its_policy)
{
	struct denv *e = setup();
	char out[8192], created[PATH_MAX + 16];

	test_daemon_add(&e->d, "t-pol", e->policy, NULL, 0);
	snprintf(created, sizeof(created), "%s/new", e->work);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "t-pol", "--", "cat", e->secret, NULL), 1);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "t-pol", "--", "sh", "-c",
			       "cat \"$0\" 2>&1; exit 0", e->secret, NULL),
		  0);
	if (!strstr(out, "Operation not permitted"))
		FAIL("reading the secret inside the agent: %s", out);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "t-pol", "--", "touch", created, NULL), 0);
	ASSERT_OK(access(created, F_OK));
	ASSERT_EQ(run_in_cgroup(NULL, try_open, e->secret, NULL), 0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "status", NULL), 0);
	if (!strstr(out, "files    BPF LSM") || !strstr(out, "network  cgroup-BPF"))
		FAIL("status: %s", out);
	/* The file rule table holds the agent's rules, and no bucket is full. */
	{
		const char *t = strstr(out, "file rule table: ");
		unsigned long used, slots, full, buckets;

		if (!t ||
		    sscanf(t, "file rule table: %lu of %lu slots used, %lu of %lu buckets full",
			   &used, &slots, &full, &buckets) != 4 ||
		    !used || slots != 524288 || full || buckets != 65536)
			FAIL("status: the file rule table: %s", out);
	}
}

/*
 * agentctl audit query --agent NAME: how many of its lines are file_open denials of path, each
 * agent id in *agent_id. FAILs on a line that is not NAME's.
 */
static int queried_denials(struct denv *e, const char *name, const char *path, int *agent_id)
{
	static char out[1 << 18];
	char want[128], *line, *nl, *id;
	int count = 0;

	snprintf(want, sizeof(want), "\"agent_name\":\"%s\"", name);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "audit", "query", "--dir", e->d.audit, "--agent",
			       name, NULL),
		  0);
	for (line = out; (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		if (!strstr(line, want))
			FAIL("query --agent %s returned another's record: %s", name, line);
		if (!strstr(line, "\"op\":\"file_open\"") ||
		    !strstr(line, "\"decision\":\"deny\"") || !strstr(line, path))
			continue;
		id = strstr(line, "\"agent\":");
		ASSERT(id);
		*agent_id = atoi(id + strlen("\"agent\":"));
		count++;
	}
	return count;
}

/*
 * Kernel records name their agent: query --agent NAME returns the agent's BPF LSM file_open
 * denial and another agent's query does not; after an agent is removed and its id given to a
 * new agent, the old name finds the old agent's denial and not the new one's.
 */
TEST(daemon_audit_query_by_name_finds_kernel_denials_across_id_reuse)
{
	struct denv *e = setup();
	char cg_a[PATH_MAX], cg_old[PATH_MAX], cg_new[PATH_MAX];
	int id_a = 0, id_b = 0, id_old = 0, id_new = 0;
	char out[4096];

	test_daemon_add(&e->d, "t-qa", e->policy, cg_a, sizeof(cg_a));
	test_daemon_add(&e->d, "t-qb", e->policy, NULL, 0);
	test_daemon_add(&e->d, "t-old", e->policy, cg_old, sizeof(cg_old));
	ASSERT_EQ(run_in_cgroup(cg_a, try_open, e->secret, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, try_open, e->secret, NULL), 0);
	ASSERT_EQ(run_in_cgroup(cg_old, try_open, e->secret, NULL), EPERM);
	if (agentctl_run(out, sizeof(out), "agent", "rm", "t-old", NULL))
		FAIL("agent rm t-old: %s", out);
	test_daemon_add(&e->d, "t-new", e->policy, cg_new, sizeof(cg_new));
	ASSERT_EQ(run_in_cgroup(cg_new, try_open, e->secret, NULL), EPERM);
	/* stopped: every record is committed */
	ASSERT_EQ(proc_stop(e->d.agentd, SIGTERM), 0);

	ASSERT(queried_denials(e, "t-qa", e->secret, &id_a) >= 1);
	ASSERT_EQ(queried_denials(e, "t-qb", e->secret, &id_b), 0);
	ASSERT(queried_denials(e, "t-old", e->secret, &id_old) >= 1);
	ASSERT(queried_denials(e, "t-new", e->secret, &id_new) >= 1);
	/* the case in point: the new agent has the old one's id */
	ASSERT_EQ(id_new, id_old);
}

/* In the agent: opens the secret until stop_fd reads EOF; the exit status is how many opens
 * succeeded (capped), 0 when every one was denied. */
static int open_loop(const char *secret, int stop_fd)
{
	struct pollfd pfd = { .fd = stop_fd, .events = POLLIN };
	int leaks = 0, i, fd;

	for (;;) {
		for (i = 0; i < 100; i++) {
			fd = open(secret, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				leaks++;
				close(fd);
			}
		}
		if (poll(&pfd, 1, 0) > 0)
			return leaks > 250 ? 250 : leaks;
	}
}

TEST(daemon_reload_never_opens_what_both_policies_deny)
{
	struct denv *e = setup();
	char out[8192], cg[PATH_MAX + 80];
	int pipefd[2], cgfd, status, i;
	pid_t pid;

	test_daemon_add(&e->d, "t-rl", e->policy, cg, sizeof(cg));
	ASSERT_OK(pipe2(pipefd, O_CLOEXEC));
	cgfd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_OK(cgfd);
	pid = cgroup_fork_into(cgfd);
	ASSERT_OK(pid);
	if (pid == 0) {
		close(pipefd[1]);
		_exit(open_loop(e->secret, pipefd[0]));
	}
	close(cgfd);
	close(pipefd[0]);
	for (i = 0; i < 10; i++) {
		write_policy(e, i % 2 == 0);
		if (agentctl_run(out, sizeof(out), "policy", "reload", "t-rl", NULL)) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			FAIL("reload %d: %s", i, out);
		}
	}
	close(pipefd[1]);
	ASSERT_OK(waitpid(pid, &status, 0));
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "info", "t-rl", NULL), 0);
	if (!strstr(out, "     11 "))
		FAIL("generation after 10 reloads: %s", out);
}

TEST(daemon_kill9_keeps_enforcing_and_restart_readopts)
{
	struct denv *e = setup();
	char out[8192], cg[PATH_MAX + 80];

	test_daemon_add(&e->d, "t-keep", e->policy, cg, sizeof(cg));
	proc_stop(e->d.agentd, SIGKILL);
	ASSERT_EQ(run_in_cgroup(cg, try_open, e->secret, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, try_open, e->secret, NULL), 0);
	test_daemon_start(&e->d, NULL);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "ls", NULL), 0);
	if (!strstr(out, "t-keep"))
		FAIL("agent ls after restart: %s", out);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "t-keep", "--", "cat", e->secret, NULL), 1);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "t-keep", "--", "cat", e->policy, NULL), 0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "rm", "t-keep", NULL), 0);
	ASSERT_EQ(access(cg, F_OK), -1);
}

static void read_cgroup_file(const char *cg, const char *name, char *buf, size_t sz)
{
	char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", cg, name);
	f = fopen(path, "re");
	if (!f)
		FAIL("%s: %s", path, strerror(errno));
	if (!fgets(buf, sz, f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* The guest's cgroup v2 has every controller: the policy's limits land in the agent's cgroup,
 * and at the wall-clock deadline its processes are killed. */
TEST(daemon_applies_resource_limits)
{
	struct denv *e = setup();
	char out[8192], cg[PATH_MAX + 64], text[4 * PATH_MAX], value[64];

	snprintf(text, sizeof(text),
		 "{\"name\": \"t\", \"files\": [{\"path\": \"/\", \"rights\": [\"read\", "
		 "\"exec\"]}],"
		 " \"limits\": {\"cpu\": 0.5, \"memory\": \"64M\", \"pids\": 5,"
		 " \"wall_clock\": \"3s\"}}\n");
	write_text(e->policy, text);
	test_daemon_add(&e->d, "t-lim", e->policy, cg, sizeof(cg));
	read_cgroup_file(cg, "pids.max", value, sizeof(value));
	ASSERT_STREQ(value, "5");
	read_cgroup_file(cg, "memory.max", value, sizeof(value));
	ASSERT_STREQ(value, "67108864");
	read_cgroup_file(cg, "cpu.max", value, sizeof(value));
	ASSERT_STREQ(value, "50000 100000");
	/* Killed at the deadline: agentctl run passes SIGKILL through as 128 + 9. */
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "t-lim", "--", "sleep", "50", NULL), 137);
}

static int touch_now(void *path)
{
	return utimensat(AT_FDCWD, path, NULL, 0) ? errno : 0;
}

/* A file system mounted after the agent's policy loaded is unknown to the hooks that see no
 * mount (here, setting times to now, which needs write): denied, until agentd sees the mount
 * table change and refreshes the agent's mount roots. */
TEST(daemon_follows_the_mount_table)
{
	const char *refreshed[] = { "agentd: mount roots of 1 agent refreshed", NULL };
	struct denv *e = setup();
	char cg[PATH_MAX + 64], late[PATH_MAX + 8], f[PATH_MAX + 16];

	test_daemon_add(&e->d, "t-mnt", e->policy, cg, sizeof(cg));
	snprintf(late, sizeof(late), "%s/late", e->work);
	snprintf(f, sizeof(f), "%s/f", late);
	ASSERT_OK(mkdir(late, 0755));
	/* Stopped so that the mount is not seen before the first attempt. */
	ASSERT_OK(kill(e->d.agentd->pid, SIGSTOP));
	test_mount_tmpfs(late);
	write_text(f, "data\n");
	ASSERT_EQ(run_in_cgroup(cg, touch_now, f, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, touch_now, f, NULL), 0);
	ASSERT_OK(kill(e->d.agentd->pid, SIGCONT));
	if (!proc_wait_line(e->d.agentd, 10000, refreshed))
		FAIL("agentd did not refresh the mount roots: \"%s\"", e->d.agentd->buf);
	ASSERT_EQ(run_in_cgroup(cg, touch_now, f, NULL), 0);
}
