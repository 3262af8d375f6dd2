// SPDX-License-Identifier: GPL-2.0
/*
 * VM tier: agentctl attach under BPF LSM. A process that was running outside every agent, and
 * the processes of a cgroup outside agentd's tree, are held to the agent's file rules once
 * attached: the secret the policy denies opens before and fails with EPERM after, while a file
 * the policy allows stays readable. Everything is removed on every exit path.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kernel/cgroup.h"
#include "harness.h"
#include "testlib.h"

struct aenv {
	char dir[256];
	char state[PATH_MAX];
	char control[PATH_MAX];
	char audit[PATH_MAX];
	char pins[PATH_MAX];
	char cgroup[PATH_MAX];
	char policy[PATH_MAX];
	char secret[PATH_MAX];
	char allowed[PATH_MAX];
	struct proc *agentd;
};

static void start(struct aenv *e)
{
	const char *ready[] = { "agentd: ready", NULL };
	char *argv[] = { "agentd", "--control", e->control, "--state-dir", e->state,  "--audit-dir",
			 e->audit, "--pin-dir", e->pins,    "--cgroup",	   e->cgroup, NULL };

	e->agentd = proc_start(argv);
	if (!proc_wait_line(e->agentd, TEST_READY_MS, ready))
		FAIL("agentd did not get ready: \"%s\"", e->agentd->buf);
}

static struct aenv *setup(void)
{
	static struct aenv e;
	char root[PATH_MAX - 64], text[3 * PATH_MAX], out[4096];

	ASSERT_EQ(cgroup2_mount(root, sizeof(root)), 0);
	test_tmpdir(e.dir, sizeof(e.dir), "vmattach");
	snprintf(e.state, sizeof(e.state), "%s/state", e.dir);
	snprintf(e.control, sizeof(e.control), "%s/control.sock", e.dir);
	snprintf(e.audit, sizeof(e.audit), "%s/audit", e.dir);
	snprintf(e.policy, sizeof(e.policy), "%s/policy.json", e.dir);
	snprintf(e.secret, sizeof(e.secret), "%s/secret", e.dir);
	snprintf(e.allowed, sizeof(e.allowed), "%s/allowed", e.dir);
	snprintf(e.cgroup, sizeof(e.cgroup), "%s/agentd-test-%d", root, getpid());
	test_write(e.secret, "s3cr3t\n", 0644);
	test_write(e.allowed, "fine\n", 0644);
	snprintf(text, sizeof(text),
		 "{\"name\": \"t\", \"files\": ["
		 "{\"path\": \"/\", \"rights\": [\"read\", \"exec\"]},"
		 "{\"path\": \"%s\", \"rights\": []}],"
		 "\"network\": {\"sockets\": [\"inet\", \"unix\"]}}\n",
		 e.secret);
	test_write(e.policy, text, 0644);
	test_pin_dir(e.pins, sizeof(e.pins));
	test_cgroup_tree_at_end(e.cgroup);
	setenv("AGENTD_CONTROL", e.control, 1);
	start(&e);
	if (agentctl_run(out, sizeof(out), "agent", "add", "t-att", "--policy", e.policy, NULL))
		FAIL("agent add: %s", out);
	return &e;
}

/* A process that opens a path when asked (the path on cmd, the errno back on res). */
struct opener {
	pid_t pid;
	int cmd, res;
};

static void opener_loop(int cmd, int res)
{
	char path[PATH_MAX];
	int fd, err;

	while (read(cmd, path, sizeof(path)) == sizeof(path)) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		err = fd < 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
		if (write(res, &err, sizeof(err)) != sizeof(err))
			break;
	}
	_exit(0);
}

static void opener_kill(void *arg)
{
	struct opener *o = arg;

	kill(o->pid, SIGKILL);
	waitpid(o->pid, NULL, 0);
	close(o->cmd);
	close(o->res);
	free(o);
}

/* Started in the cgroup at path, or where the test runs (NULL). */
static struct opener *opener_start(const char *path)
{
	struct opener *o = calloc(1, sizeof(*o));
	int cmd[2], res[2], cgfd;

	ASSERT(o);
	ASSERT_OK(pipe2(cmd, O_CLOEXEC));
	ASSERT_OK(pipe2(res, O_CLOEXEC));
	if (path) {
		cgfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ASSERT_OK(cgfd);
		o->pid = cgroup_fork_into(cgfd);
		close(cgfd);
	} else {
		o->pid = fork();
	}
	ASSERT_OK(o->pid);
	if (!o->pid)
		opener_loop(cmd[0], res[1]);
	close(cmd[0]);
	close(res[1]);
	o->cmd = cmd[1];
	o->res = res[0];
	test_defer(opener_kill, o);
	return o;
}

static int opener_open(struct opener *o, const char *path)
{
	char buf[PATH_MAX] = "";
	int err;

	snprintf(buf, sizeof(buf), "%s", path);
	ASSERT_EQ(write(o->cmd, buf, sizeof(buf)), sizeof(buf));
	ASSERT_EQ(read(o->res, &err, sizeof(err)), sizeof(err));
	return err;
}

TEST(vm_attach_pid_holds_a_running_process_to_the_file_rules)
{
	struct aenv *e = setup();
	char out[8192], pid_s[16];
	struct opener *o = opener_start(NULL);

	ASSERT_EQ(opener_open(o, e->secret), 0);
	snprintf(pid_s, sizeof(pid_s), "%d", o->pid);
	/* BPF LSM holds here: no --allow-partial needed, and the reply says so. */
	ASSERT_EQ(agentctl_run(out, sizeof(out), "attach", "t-att", "--pid", pid_s, NULL), 0);
	if (!strstr(out, "files    BPF LSM") || !strstr(out, "1 processes moved"))
		FAIL("attach --pid: %s", out);
	ASSERT_EQ(opener_open(o, e->secret), EPERM);
	ASSERT_EQ(opener_open(o, e->allowed), 0);
	/* Outside the agent nothing changed. */
	ASSERT_EQ(run_in_cgroup(NULL, try_open, e->secret, NULL), 0);
}

TEST(vm_attach_cgroup_holds_a_foreign_cgroup_to_the_file_rules)
{
	struct aenv *e = setup();
	char out[8192], foreign[PATH_MAX];
	struct opener *o;

	test_cgroup(foreign, sizeof(foreign));
	o = opener_start(foreign);
	ASSERT_EQ(opener_open(o, e->secret), 0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "attach", "t-att", "--cgroup", foreign, NULL), 0);
	if (!strstr(out, "files    BPF LSM"))
		FAIL("attach --cgroup: %s", out);
	ASSERT_EQ(opener_open(o, e->secret), EPERM);
	ASSERT_EQ(opener_open(o, e->allowed), 0);
	ASSERT_EQ(run_in_cgroup(foreign, try_open, e->secret, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(foreign, try_open, e->allowed, NULL), 0);
	/* detach gives it back. */
	ASSERT_EQ(agentctl_run(out, sizeof(out), "detach", "t-att", "--cgroup", foreign, NULL), 0);
	ASSERT_EQ(opener_open(o, e->secret), 0);
}

/* A cgroup file registered with an io_uring needs no descriptor to be written: a process holding
 * such a ring is refused (on every kernel's fdinfo: paths on newer ones, names on older). */
TEST(vm_attach_pid_refuses_an_io_uring_registering_a_cgroup_file)
{
	struct aenv *e = setup();
	char out[8192], pid_s[16], other[PATH_MAX], procs[PATH_MAX + 16];
	struct opener *o;
	int ring;

	test_cgroup(other, sizeof(other));
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", other);
	ring = test_ring_registering(procs);
	o = opener_start(NULL); /* inherits the ring */
	close(ring);
	snprintf(pid_s, sizeof(pid_s), "%d", o->pid);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "attach", "t-att", "--pid", pid_s, "--json", NULL),
		  1);
	if (!strstr(out, "io_uring") || !strstr(out, "cgroup.procs") || !strstr(out, "moved back"))
		FAIL("attach --pid: %s", out);
	/* Not moved: the secret still opens. */
	ASSERT_EQ(opener_open(o, e->secret), 0);
}
