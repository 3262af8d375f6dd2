// SPDX-License-Identifier: GPL-2.0
/*
 * BPF LSM tests: run in the VM tier on each Debian kernel, and natively where the host kernel
 * loads BPF LSM programs. Each drives the real agentd and tries the operation from inside an
 * agent cgroup, checking errno; and the same operation outside, or on another object, succeeds.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "harness.h"
#include "testlib.h"

struct slice {
	char pins[PATH_MAX];
	char cgroup[PATH_MAX];
	char secret[PATH_MAX];
	char other[PATH_MAX];
	struct proc *agentd;
};

/* agentd denying "secret" to the agent cgroup. With -o omit-deny-rule the rule is left out (it
 * denies "other-decoy" instead), so that the deny tests must fail: proof that they can. */
static void slice_start(struct slice *s)
{
	char decoy[PATH_MAX];
	const char *ready[] = { "agentd: ready", NULL };

	test_cgroup(s->cgroup, sizeof(s->cgroup));
	test_file(s->secret, sizeof(s->secret), "secret", "s3cr3t\n");
	test_file(s->other, sizeof(s->other), "other", "public\n");
	test_file(decoy, sizeof(decoy), "other-decoy", "decoy\n");
	char *denied = test_option("omit-deny-rule") ? decoy : s->secret;
	test_pin_dir(s->pins, sizeof(s->pins));
	char *argv[] = { "agentd",  "--pin-dir",   s->pins, "--agent-cgroup",
			 s->cgroup, "--deny-open", denied,  NULL };
	s->agentd = proc_start(argv);
	if (!proc_wait_line(s->agentd, 20000, ready))
		FAIL("agentd did not get ready: \"%s\"", s->agentd->buf);
}

/* Opens O_PATH (which runs no file_open check), then reopens through /proc/self/fd. */
static int try_reopen_o_path(void *path)
{
	char proc_path[64];
	int fd = open(path, O_PATH | O_CLOEXEC);

	if (fd < 0)
		return 100 + errno;
	snprintf(proc_path, sizeof(proc_path), "/proc/self/fd/%d", fd);
	return try_open(proc_path);
}

TEST(probe_finds_bpf_lsm)
{
	char *argv[] = { "agentd", "--probe", NULL };
	const char *avail[] = { "BPF LSM:", "available", NULL };
	struct proc *p = proc_start(argv);
	int status;

	if (!proc_wait_line(p, 20000, avail))
		FAIL("agentd --probe does not report BPF LSM available: \"%s\"", p->buf);
	status = proc_stop(p, 0);
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
}

TEST(file_open_denied_inside_agent)
{
	char pid_field[32];
	struct slice s;
	pid_t child;

	slice_start(&s);
	ASSERT_EQ(run_in_cgroup(s.cgroup, try_open, s.secret, &child), EPERM);
	snprintf(pid_field, sizeof(pid_field), " pid=%d ", child);
	const char *want[] = { pid_field, "deny agent=1 ", "hook=file_open reason=rule rule=2 ",
			       "name=\"secret\"", NULL };
	if (!proc_wait_line(s.agentd, 10000, want))
		FAIL("agentd printed no deny event for pid %d: \"%s\"", child, s.agentd->buf);
}

TEST(file_open_other_file_allowed_inside_agent)
{
	struct slice s;

	slice_start(&s);
	ASSERT_EQ(run_in_cgroup(s.cgroup, try_open, s.other, NULL), 0);
}

TEST(file_open_allowed_outside_agent)
{
	struct slice s;

	slice_start(&s);
	ASSERT_EQ(run_in_cgroup(NULL, try_open, s.secret, NULL), 0);
}

TEST(file_open_deny_follows_the_object)
{
	char hard[PATH_MAX + 8], sym[PATH_MAX + 8];
	struct slice s;

	slice_start(&s);
	snprintf(hard, sizeof(hard), "%s.hard", s.secret);
	snprintf(sym, sizeof(sym), "%s.sym", s.secret);
	ASSERT_OK(link(s.secret, hard));
	test_unlink_at_end(hard);
	ASSERT_OK(symlink(s.secret, sym));
	test_unlink_at_end(sym);
	ASSERT_EQ(run_in_cgroup(s.cgroup, try_open, hard, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(s.cgroup, try_open, sym, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(s.cgroup, try_reopen_o_path, s.secret, NULL), EPERM);
}

TEST(agentd_stops_cleanly_on_sigterm)
{
	struct slice s;
	int status;

	slice_start(&s);
	status = proc_stop(s.agentd, SIGTERM);
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
}
