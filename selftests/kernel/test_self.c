// SPDX-License-Identifier: GPL-2.0
/*
 * Self-protection: what no agent may do whatever its policy (EPERM), and what the same call
 * does from a task of no agent (succeeds), or, for signals and ptrace, aimed inside the agent.
 */
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cgroup.h"
#include "ops.h"

static void self_agent(struct test_agent *ag)
{
	const struct file_rule files[] = { { "/", RX } };

	test_agent_start(ag, &(struct ruleset){ .files = files, .nfiles = 1 }, true);
}

/* Checks that fn fails with EPERM inside the agent and succeeds outside it. */
static void denied_inside_only(int (*fn)(void *), void *arg)
{
	struct test_agent ag;

	self_agent(&ag);
	ASSERT_EQ(test_agent_run(&ag, fn, arg), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, fn, arg, NULL), 0);
}

static int try_bpf(void *arg)
{
	union bpf_attr attr = {
		.map_type = BPF_MAP_TYPE_ARRAY,
		.key_size = 4,
		.value_size = 4,
		.max_entries = 1,
	};

	(void)arg;
	return syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr)) < 0 ? errno : 0;
}

TEST(self_bpf_denied)
{
	denied_inside_only(try_bpf, NULL);
}

/*
 * Not a module, but longer than an ELF header (shorter is refused before any hook): a kernel
 * that reads it answers ENOEXEC, so EPERM can only be the hook's.
 */
static const char not_a_module[256] = "agentd: not an ELF module\n";

static int try_finit_module(void *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	if (fd < 0)
		return 100 + errno;
	r = syscall(SYS_finit_module, fd, "", 0) < 0 ? errno : 0;
	close(fd);
	return r;
}

static int try_init_module(void *arg)
{
	(void)arg;
	return syscall(SYS_init_module, not_a_module, sizeof(not_a_module), "") < 0 ? errno : 0;
}

/* Module loading from a file (kernel_read_file) and from memory (kernel_load_data). */
TEST(self_module_loading_denied)
{
	struct test_agent ag;
	char path[PATH_MAX];

	test_file(path, sizeof(path), "fake.ko", not_a_module);
	self_agent(&ag);
	ASSERT_EQ(test_agent_run(&ag, try_finit_module, path), EPERM);
	ASSERT_EQ(test_agent_run(&ag, try_init_module, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, try_finit_module, path, NULL), ENOEXEC);
	ASSERT_EQ(run_in_cgroup(NULL, try_init_module, NULL, NULL), ENOEXEC);
}

static int try_mount(void *dir)
{
	if (mount("tmpfs", dir, "tmpfs", 0, "size=1m"))
		return errno;
	return umount(dir) ? 100 + errno : 0;
}

TEST(self_mount_denied)
{
	char dir[PATH_MAX];

	test_dir(dir, sizeof(dir));
	denied_inside_only(try_mount, dir);
}

static int try_userns(void *arg)
{
	(void)arg;
	return unshare(CLONE_NEWUSER) ? errno : 0;
}

TEST(self_user_namespace_denied)
{
	denied_inside_only(try_userns, NULL);
}

static int try_move_self(void *procs)
{
	int fd = open(procs, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return errno;
	if (write(fd, "0", 1) != 1)
		return 100 + errno;
	return 0;
}

TEST(self_cgroup_procs_write_denied)
{
	char other[PATH_MAX], procs[PATH_MAX];

	test_cgroup(other, sizeof(other));
	denied_inside_only(try_move_self, PATHF(procs, "%s/cgroup.procs", other));
}

/* With cgroup.procs opened before the task joined the agent, the write is checked too. */
static int try_write_preopened(void *fdp)
{
	return write(*(int *)fdp, "0", 1) == 1 ? 0 : errno;
}

TEST(self_cgroup_procs_preopened_write_denied)
{
	char other[PATH_MAX], procs[PATH_MAX];
	int fd;

	test_cgroup(other, sizeof(other));
	fd = open(PATHF(procs, "%s/cgroup.procs", other), O_WRONLY | O_CLOEXEC);
	ASSERT_OK(fd);
	denied_inside_only(try_write_preopened, &fd);
}

static int try_clone_into(void *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), status;
	pid_t pid;

	if (fd < 0)
		return 100 + errno;
	pid = cgroup_fork_into(fd);
	if (pid < 0)
		return -pid;
	if (pid == 0)
		_exit(0);
	waitpid(pid, &status, 0);
	return 0;
}

TEST(self_clone_into_other_cgroup_denied)
{
	char other[PATH_MAX];

	test_cgroup(other, sizeof(other));
	denied_inside_only(try_clone_into, other);
}

static int try_perf(void *arg)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.disabled = 1,
	};
	long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);

	(void)arg;
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

TEST(self_perf_event_open_denied)
{
	denied_inside_only(try_perf, NULL);
}

static int try_add_key(void *arg)
{
	(void)arg;
	return syscall(SYS_add_key, "user", "agentd-test", "x", 1, KEY_SPEC_PROCESS_KEYRING) < 0
		       ? errno
		       : 0;
}

TEST(self_add_key_denied)
{
	denied_inside_only(try_add_key, NULL);
}

static int try_keyctl(void *idp)
{
	char buf[128];

	return syscall(SYS_keyctl, KEYCTL_DESCRIBE, *(long *)idp, buf, sizeof(buf)) < 0 ? errno : 0;
}

static void invalidate_key(void *idp)
{
	syscall(SYS_keyctl, KEYCTL_INVALIDATE, *(long *)idp);
}

/* A key the test (no agent) made in the session keyring its children share. */
TEST(self_keyctl_denied)
{
	static long id;

	id = syscall(SYS_add_key, "user", "agentd-test", "x", 1, KEY_SPEC_SESSION_KEYRING);
	ASSERT_OK(id);
	test_defer(invalidate_key, &id);
	denied_inside_only(try_keyctl, &id);
}

/* A child that waits to be killed; returns its pid. */
static pid_t sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

static void kill_sleeper(void *arg)
{
	pid_t pid = (pid_t)(long)arg;

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int try_kill(void *pidp)
{
	return kill(*(pid_t *)pidp, 0) ? errno : 0;
}

/* Signals a task of its own agent. */
static int kill_own(void *arg)
{
	pid_t pid = sleeper();

	(void)arg;
	if (pid < 0)
		return 100 + errno;
	if (kill(pid, SIGKILL))
		return errno;
	waitpid(pid, NULL, 0);
	return 0;
}

TEST(self_kill_outside_denied_inside_allowed)
{
	struct test_agent ag;
	pid_t outside = sleeper();

	ASSERT_OK(outside);
	test_defer(kill_sleeper, (void *)(long)outside);
	self_agent(&ag);
	ASSERT_EQ(test_agent_run(&ag, try_kill, &outside), EPERM);
	ASSERT_EQ(test_agent_run(&ag, kill_own, NULL), 0);
	ASSERT_EQ(run_in_cgroup(NULL, try_kill, &outside, NULL), 0);
}

static int try_ptrace(void *pidp)
{
	pid_t pid = *(pid_t *)pidp;

	if (ptrace(PTRACE_ATTACH, pid, 0, 0))
		return errno;
	waitpid(pid, NULL, __WALL);
	ptrace(PTRACE_DETACH, pid, 0, 0);
	return 0;
}

static int ptrace_own(void *arg)
{
	pid_t pid = sleeper();
	int err;

	(void)arg;
	if (pid < 0)
		return 100 + errno;
	err = try_ptrace(&pid);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return err;
}

TEST(self_ptrace_outside_denied_inside_allowed)
{
	struct test_agent ag;
	pid_t outside = sleeper();

	ASSERT_OK(outside);
	test_defer(kill_sleeper, (void *)(long)outside);
	self_agent(&ag);
	ASSERT_EQ(test_agent_run(&ag, try_ptrace, &outside), EPERM);
	ASSERT_EQ(test_agent_run(&ag, ptrace_own, NULL), 0);
	ASSERT_EQ(run_in_cgroup(NULL, try_ptrace, &outside, NULL), 0);
}
