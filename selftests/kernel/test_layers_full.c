// SPDX-License-Identifier: GPL-2.0
/*
 * VM tier: with BPF LSM, the agent the host tier runs on the fallback (test_fallback.c) runs
 * with full layers: agentd --probe says full enforcement is possible, the gap is empty,
 * agentctl run --require full starts it, and what the fallback could not hold (a deny inside an
 * allowed tree) is denied by BPF LSM (EPERM), with seccomp on top.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kernel/cgroup.h"
#include "harness.h"
#include "testlib.h"

struct fenv {
	char dir[200];
	char ws[PATH_MAX];
	char state[PATH_MAX];
	char control[PATH_MAX];
	char pins[PATH_MAX];
	char cgroup[PATH_MAX];
	char policy[PATH_MAX];
	struct proc *agentd;
};

static void join(char *out, size_t outsz, const char *dir, const char *name)
{
	if ((size_t)snprintf(out, outsz, "%s/%s", dir, name) >= outsz)
		FAIL("path too long: %s/%s", dir, name);
}

static struct fenv *setup(void)
{
	const char *ready[] = { "agentd: ready", NULL };
	static struct fenv e;
	char root[PATH_MAX - 64], path[PATH_MAX], text[3 * PATH_MAX];

	ASSERT_EQ(cgroup2_mount(root, sizeof(root)), 0);
	test_tmpdir(e.dir, sizeof(e.dir), "full");
	join(e.ws, sizeof(e.ws), e.dir, "ws");
	join(e.state, sizeof(e.state), e.dir, "state");
	join(e.control, sizeof(e.control), e.dir, "control.sock");
	join(e.policy, sizeof(e.policy), e.dir, "policy.json");
	snprintf(e.cgroup, sizeof(e.cgroup), "%s/agentd-full-%d", root, getpid());
	test_pin_dir(e.pins, sizeof(e.pins));
	test_cgroup_tree_at_end(e.cgroup);
	ASSERT_OK(mkdir(e.ws, 0755));
	join(path, sizeof(path), e.ws, "secret");
	ASSERT_OK(mkdir(path, 0755));
	join(path, sizeof(path), e.ws, "secret/key");
	test_write(path, "key\n", 0600);
	join(path, sizeof(path), e.ws, "notes");
	test_write(path, "notes\n", 0644);
	/* The host tier's policy, with the whole guest readable and executable (busybox). */
	snprintf(text, sizeof(text),
		 "{\"name\": \"fb\", \"files\": ["
		 "{\"path\": \"/\", \"rights\": [\"read\", \"exec\"]},"
		 "{\"path\": \"%s\", \"rights\": [\"read\", \"write\", \"create\", \"remove\", "
		 "\"link\", \"truncate\"]},"
		 "{\"path\": \"%s/secret\", \"rights\": []}],"
		 " \"network\": {\"sockets\": [\"inet\", \"unix\"]}}\n",
		 e.ws, e.ws);
	test_write(e.policy, text, 0644);
	setenv("AGENTD_CONTROL", e.control, 1);
	char *argv[] = { "agentd",    "--control", e.control,  "--state-dir", e.state,
			 "--pin-dir", e.pins,	   "--cgroup", e.cgroup,      NULL };
	e.agentd = proc_start(argv);
	if (!proc_wait_line(e.agentd, TEST_READY_MS, ready))
		FAIL("agentd did not get ready: \"%s\"", e.agentd->buf);
	return &e;
}

TEST(full_probe_says_full)
{
	const char *want[] = { "enforcement:", NULL };
	char *argv[] = { "agentd", "--probe", NULL };
	struct proc *p = proc_start(argv);
	const char *l = proc_wait_line(p, 20000, want);
	int status;

	if (!l || !strstr(l, "FULL"))
		FAIL("agentd --probe: %s", p->buf);
	status = proc_stop(p, 0);
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
}

TEST(full_layers_require_full_starts_and_denies)
{
	struct fenv *e = setup();
	char out[8192], key[PATH_MAX], notes[PATH_MAX];

	join(key, sizeof(key), e->ws, "secret/key");
	join(notes, sizeof(notes), e->ws, "notes");
	ASSERT_EQ(agentctl_run(out, sizeof(out), "policy", "check", "--layers",
			       "bpf-lsm,cgroup,seccomp", e->policy, NULL),
		  0);
	if (!strstr(out, "every rule is enforced by BPF LSM, cgroup-BPF, seccomp"))
		FAIL("policy check --layers: %s", out);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "add", "fb", "--policy", e->policy, NULL),
		  0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "fb", "--require", "full", "--", "cat",
			       notes, NULL),
		  0);
	ASSERT(strstr(out, "notes"));
	/* The deny inside the allowed tree, which Landlock could not hold: EPERM from BPF LSM. */
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "fb", "--require", "full", "--", "sh", "-c",
			       "cat \"$0\" 2>&1; exit 0", key, NULL),
		  0);
	if (!strstr(out, "Operation not permitted"))
		FAIL("reading the secret inside the agent: %s", out);
	/* seccomp is there too: clone3 answers ENOSYS, so busybox's unshare gets EPERM. */
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "fb", "--require", "full", "--", "sh", "-c",
			       "unshare -U true 2>&1; exit 0", NULL),
		  0);
	if (!strstr(out, "Operation not permitted"))
		FAIL("unshare -U inside the agent: %s", out);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "status", NULL), 0);
	if (!strstr(out, "files    BPF LSM") || !strstr(out, "gap      none"))
		FAIL("status: %s", out);
}
