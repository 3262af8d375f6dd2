// SPDX-License-Identifier: GPL-2.0
/*
 * VM tier: path and exec grants, which BPF LSM decides with the expiry on the kernel's boot
 * clock: they let through what the rules deny until they end, with agentd killed (-9) before,
 * and a once grant exactly once (an exec too, which the open, the exec and the loader's mappings
 * each see). From a process in the agent's cgroup, errno checked.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "harness.h"
#include "net/grants_test.h"

struct fenv {
	struct genv *g;
	char secret[PATH_MAX]; /* a file the rules deny */
	char tool[PATH_MAX]; /* a binary in a tree the agent may only read */
};

/* exec of (const char *)path with no argument: its exit status, or the errno of execve(). */
static int try_exec(void *path)
{
	char *argv[] = { path, NULL };

	execv(path, argv);
	return errno;
}

static struct fenv *setup(void)
{
	static struct fenv f;
	char dir[256], rules[3 * PATH_MAX];

	test_dir(dir, sizeof(dir));
	snprintf(f.secret, sizeof(f.secret), "%s/secret", dir);
	snprintf(f.tool, sizeof(f.tool), "%s/bin/true", dir);
	test_write(f.secret, "s3cr3t\n", 0644);
	snprintf(rules, sizeof(rules), "%s/bin", dir);
	ASSERT_OK(mkdir(rules, 0755));
	test_copy("/bin/true", f.tool, 0755);
	snprintf(rules, sizeof(rules),
		 ", {\"path\": \"%s\", \"rights\": []},"
		 " {\"path\": \"%s/bin\", \"rights\": [\"read\"]}",
		 f.secret, dir);
	f.g = grant_env(rules);
	ASSERT_EQ(run_in_cgroup(f.g->cg, try_open, f.secret, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(f.g->cg, try_exec, f.tool, NULL), EPERM);
	return &f;
}

TEST(grant_path_and_exec_end_on_time_with_agentd_dead)
{
	struct fenv *f = setup();
	long long at, path_at;
	char out[4096];

	/* Long enough for the steps before the expiry on a loaded machine. */
	path_at = expiry_of(GRANT("--path", f->secret, "--rights", "read", "--for", "15s"));
	at = expiry_of(GRANT("--exec", f->tool, "--for", "15s"));
	ASSERT_EQ(run_in_cgroup(f->g->cg, try_open, f->secret, NULL), 0);
	ASSERT_EQ(run_in_cgroup(f->g->cg, try_exec, f->tool, NULL), 0);
	/* Read only: writing stays denied. */
	ASSERT_EQ(run_in_cgroup(f->g->cg, try_create, f->secret, NULL), EPERM);
	proc_stop(f->g->d.agentd, SIGKILL);
	ASSERT_EQ(run_in_cgroup(f->g->cg, try_open, f->secret, NULL), 0);
	wait_boot_clock(at > path_at ? at : path_at);
	ASSERT_EQ(run_in_cgroup(f->g->cg, try_open, f->secret, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(f->g->cg, try_exec, f->tool, NULL), EPERM);
}

TEST(grant_once_path_and_exec_exactly_once)
{
	struct fenv *f = setup();
	char out[4096];

	GRANT("--path", f->secret, "--rights", "read", "--once");
	GRANT("--exec", f->tool, "--once");
	ASSERT_EQ(run_in_cgroup(f->g->cg, try_open, f->secret, NULL), 0);
	ASSERT_EQ(run_in_cgroup(f->g->cg, try_open, f->secret, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(f->g->cg, try_exec, f->tool, NULL), 0);
	ASSERT_EQ(run_in_cgroup(f->g->cg, try_exec, f->tool, NULL), EPERM);
	ASSERT_EQ(grant_count(), 0);
	expect_audit(f->g, "file",
		     (const char *const[]){ "\"decision\":\"allow\"", "reason=grant", NULL });
	expect_audit(f->g, "exec",
		     (const char *const[]){ "\"decision\":\"allow\"", "reason=grant", NULL });
}
