// SPDX-License-Identifier: GPL-2.0
/*
 * VM tier: the Landlock layer at each kernel's own ABI (6.1 has ABI 2, 6.12 ABI 6), applied
 * without BPF LSM in the way (this task is in no agent), and the gap's ABI-dependent items held
 * to the kernel: truncate is refused from ABI 3 on and allowed before, where the gap lists it;
 * signals to a task outside are refused from ABI 6 on and allowed before, where the gap lists it.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "harness.h"
#include "sandbox/landlock.h"
#include "sandbox/layers.h"
#include "policy/policy.h"
#include "kernel/probe.h"
#include "testlib.h"

static char dir[128];
static pid_t outsider;

static bool in_gap(const struct policy *p, int abi, const char *rule)
{
	char list[64];
	struct layers l;
	bool found = false;
	struct gap g;
	size_t i;

	snprintf(list, sizeof(list), "landlock:%d,seccomp,cgroup", abi);
	ASSERT_EQ(layers_parse(list, 0, &l), 0);
	ASSERT_EQ(layers_gap(p, &l, &g), 0);
	for (i = 0; i < g.n; i++)
		found |= !strcmp(g.v[i].rule, rule);
	gap_free(&g);
	return found;
}

static int errno_of(int ret)
{
	return ret < 0 ? errno : 0;
}

/* In the restricted child: 0, or the number of the first check that failed. */
static int child_checks(bool truncate_lost, bool signals_lost)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/ws/notes", dir);
	if (errno_of(open(path, O_RDONLY | O_CLOEXEC)) != 0)
		return 1;
	snprintf(path, sizeof(path), "%s/outside", dir);
	if (errno_of(open(path, O_RDONLY | O_CLOEXEC)) != EACCES)
		return 2;
	snprintf(path, sizeof(path), "%s/ro/file", dir);
	if (errno_of(open(path, O_WRONLY | O_CLOEXEC)) != EACCES)
		return 3;
	if (errno_of(truncate(path, 1)) != (truncate_lost ? 0 : EACCES))
		return 4;
	if (errno_of(kill(outsider, 0)) != (signals_lost ? 0 : EPERM))
		return 5;
	return 0;
}

static void kill_outsider(void *arg)
{
	(void)arg;
	kill(outsider, SIGKILL);
	waitpid(outsider, NULL, 0);
}

TEST(landlock_abi_gap_matches_the_kernel)
{
	static const char policy_fmt[] = "{\"name\": \"t\", \"files\": ["
					 "{\"path\": \"%s/ws\", \"rights\": [\"read\", \"write\", "
					 "\"truncate\"]},"
					 "{\"path\": \"%s/ro\", \"rights\": [\"read\"]}]}";
	int abi = probe_landlock_abi(), status, fd;
	struct policy_errors errs = { 0 };
	struct landlock_plan *pl = NULL;
	char path[PATH_MAX], json[1024];
	bool truncate_lost, signals_lost;
	struct policy *p = NULL;
	const char *bad;
	pid_t pid;

	if (abi < 1)
		SKIP("no Landlock on this kernel");
	test_tmpdir(dir, sizeof(dir), "llabi");
	snprintf(path, sizeof(path), "%s/ws", dir);
	ASSERT_OK(mkdir(path, 0755));
	snprintf(path, sizeof(path), "%s/ro", dir);
	ASSERT_OK(mkdir(path, 0755));
	snprintf(path, sizeof(path), "%s/ws/notes", dir);
	test_write(path, "notes\n", 0644);
	snprintf(path, sizeof(path), "%s/ro/file", dir);
	test_write(path, "file\n", 0644);
	snprintf(path, sizeof(path), "%s/outside", dir);
	test_write(path, "outside\n", 0644);
	snprintf(json, sizeof(json), policy_fmt, dir, dir);
	ASSERT_EQ(policy_load_buffer("p.json", json, strlen(json), NULL, NULL, &p, &errs), 0);
	truncate_lost = in_gap(p, abi, "files: truncate");
	signals_lost = in_gap(p, abi, "self: signals");
	ASSERT_EQ(truncate_lost, abi < 3);
	ASSERT_EQ(signals_lost, abi < 6);
	ASSERT_EQ(landlock_compile(p, abi, &pl), 0);
	policy_free(p);
	outsider = fork();
	ASSERT_OK(outsider);
	if (outsider == 0) {
		for (;;)
			pause();
	}
	test_defer(kill_outsider, NULL);
	pid = fork();
	ASSERT_OK(pid);
	if (pid == 0) {
		if (landlock_open(pl, &bad) || (fd = landlock_ruleset(pl)) < 0 ||
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || landlock_restrict(fd))
			_exit(100);
		_exit(child_checks(truncate_lost, signals_lost));
	}
	landlock_plan_free(pl);
	ASSERT_OK(waitpid(pid, &status, 0));
	ASSERT(WIFEXITED(status));
	if (WEXITSTATUS(status))
		FAIL("Landlock ABI %d: check %d failed", abi, WEXITSTATUS(status));
}
