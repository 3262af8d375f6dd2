// SPDX-License-Identifier: GPL-2.0
/*
 * Who is an agent (its cgroup and every cgroup below it, nobody else), what an agent without a
 * policy may do (nothing), and reloads: atomic, and a failed one changes nothing.
 */
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kernel/cgroup.h"
#include "ops.h"

#define R AGENTD_RIGHT_READ

struct two_files {
	char top[PATH_MAX], a[PATH_MAX], b[PATH_MAX];
};

static void two_files(struct two_files *t)
{
	test_dir(t->top, sizeof(t->top));
	test_write(PATHF(t->a, "%s/a", t->top), "x\n", 0644);
	test_write(PATHF(t->b, "%s/b", t->top), "x\n", 0644);
}

static int read_in(const char *cgroup, const char *path)
{
	return run_in_cgroup(cgroup, op_open, OP(.a = path, .flags = O_RDONLY), NULL);
}

TEST(child_cgroup_is_the_agents)
{
	char child[PATH_MAX];
	struct two_files t;
	struct test_agent ag;

	two_files(&t);
	const struct file_rule files[] = { { "/", RX }, { t.a, 0 } };
	test_agent_start(&ag, &(struct ruleset){ .files = files, .nfiles = 2 }, true);
	test_cgroup_in(ag.cgroup, child, sizeof(child));
	ASSERT_EQ(read_in(child, t.a), EPERM);
	ASSERT_EQ(read_in(child, t.b), 0);
	ASSERT_EQ(read_in(NULL, t.a), 0);
}

static int open_socket(void *arg)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	(void)arg;
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* rules_remove leaves the agent registered and without a policy: everything is denied. */
TEST(agent_without_policy_denied_everything)
{
	struct two_files t;
	struct test_agent ag;

	two_files(&t);
	const struct file_rule files[] = { { "/", RX } };
	test_agent_start(&ag,
			 &(struct ruleset){ .files = files,
					    .nfiles = 1,
					    .sock_families = 1ULL << AF_UNIX,
					    .sock_types = 1U << SOCK_STREAM },
			 true);
	ASSERT_EQ(read_in(ag.cgroup, t.a), 0);
	ASSERT_EQ(test_agent_run(&ag, open_socket, NULL), 0);
	ASSERT_EQ(rules_remove(ag.e, ag.id), 0);
	ASSERT_EQ(read_in(ag.cgroup, t.a), EPERM);
	ASSERT_EQ(test_agent_run(&ag, open_socket, NULL), EPERM);
	ASSERT_EQ(read_in(NULL, t.a), 0);
	ASSERT_EQ(run_in_cgroup(NULL, open_socket, NULL, NULL), 0);
}

TEST(reload_switches_generation)
{
	struct two_files t;
	struct test_agent ag;

	two_files(&t);
	const struct file_rule gen1[] = { { t.a, R } }, gen2[] = { { t.b, R } };
	test_agent_start(&ag, &(struct ruleset){ .files = gen1, .nfiles = 1 }, true);
	ASSERT_EQ(ag.generation, 1);
	ASSERT_EQ(read_in(ag.cgroup, t.a), 0);
	ASSERT_EQ(read_in(ag.cgroup, t.b), EPERM);
	test_agent_apply(&ag, &(struct ruleset){ .files = gen2, .nfiles = 1 });
	ASSERT_EQ(ag.generation, 2);
	ASSERT_EQ(read_in(ag.cgroup, t.a), EPERM);
	ASSERT_EQ(read_in(ag.cgroup, t.b), 0);
}

TEST(failed_reload_changes_nothing)
{
	char missing[PATH_MAX];
	struct two_files t;
	struct test_agent ag;
	int failed = -1;
	__u32 gen = 0;

	two_files(&t);
	const struct file_rule good[] = { { t.a, R } };
	const struct file_rule bad[] = { { t.b, R }, { PATHF(missing, "%s/missing", t.top), R } };
	test_agent_start(&ag, &(struct ruleset){ .files = good, .nfiles = 1 }, true);
	ASSERT_EQ(rules_apply(ag.e, ag.id, &(struct ruleset){ .files = bad, .nfiles = 2 }, &gen,
			      &failed),
		  -ENOENT);
	ASSERT_EQ(failed, 1);
	ASSERT_EQ(read_in(ag.cgroup, t.a), 0);
	ASSERT_EQ(read_in(ag.cgroup, t.b), EPERM);
	/* The next reload follows the generation in force. */
	test_agent_apply(&ag, &(struct ruleset){ .files = good, .nfiles = 1 });
	ASSERT_EQ(ag.generation, 2);
}

#define RELOADS 200
#define MAX_TRIES 1000000

struct hammer {
	const char *allowed, *denied;
	int stop_fd;
};

/* Opens both files until told to stop: exits 0 when every verdict held, else 1, 2 or 3. */
static int hammer(void *arg)
{
	const struct hammer *h = arg;
	struct pollfd pfd = { .fd = h->stop_fd, .events = POLLIN };
	int i, tries = 0;

	for (i = 0; i < MAX_TRIES; i++) {
		if (op_open(OP(.a = h->denied, .flags = O_RDONLY)) != EPERM)
			return 1;
		if (op_open(OP(.a = h->allowed, .flags = O_RDONLY)) != 0)
			return 2;
		tries++;
		if (poll(&pfd, 1, 0))
			break;
	}
	return tries ? 0 : 3;
}

/* Reloads in a loop while an agent task opens a file both generations deny and one both
 * allow: neither verdict ever flips. */
TEST(verdicts_hold_during_reloads)
{
	struct two_files t;
	struct test_agent ag;
	int stop[2], status, cgfd, i;
	pid_t pid;

	two_files(&t);
	const struct file_rule gen1[] = { { "/", RX }, { t.top, R }, { t.b, 0 } };
	const struct file_rule gen2[] = { { "/", R }, { t.a, R }, { t.b, 0 } };
	test_agent_start(&ag, &(struct ruleset){ .files = gen1, .nfiles = 3 }, true);
	ASSERT_OK(pipe2(stop, O_CLOEXEC));
	cgfd = open(ag.cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_OK(cgfd);
	pid = cgroup_fork_into(cgfd);
	ASSERT_OK(pid);
	if (pid == 0) {
		close(stop[1]);
		_exit(hammer(
			&(struct hammer){ .allowed = t.a, .denied = t.b, .stop_fd = stop[0] }));
	}
	close(stop[0]);
	for (i = 0; i < RELOADS; i++)
		test_agent_apply(&ag,
				 &(struct ruleset){ .files = i % 2 ? gen1 : gen2, .nfiles = 3 });
	close(stop[1]);
	ASSERT_OK(waitpid(pid, &status, 0));
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
}
