// SPDX-License-Identifier: GPL-2.0
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cgroup.h"
#include "enforcer.h"
#include "harness.h"
#include "testlib.h"

static void rmdir_path(void *path)
{
	rmdir(path);
	free(path);
}

static void unlink_path(void *path)
{
	unlink(path);
	free(path);
}

void test_cgroup(char *path, size_t pathsz)
{
	char root[PATH_MAX];
	int err;

	err = cgroup2_mount(root, sizeof(root));
	if (err)
		FAIL("no cgroup v2 mount: %s", strerror(-err));
	snprintf(path, pathsz, "%s/agentd-test-%d", root, getpid());
	if (mkdir(path, 0755))
		FAIL("mkdir %s: %s", path, strerror(errno));
	test_defer(rmdir_path, strdup(path));
}

static void teardown_pins(void *path)
{
	enforcer_teardown(path);
	free(path);
}

void test_pin_dir(char *path, size_t pathsz)
{
	snprintf(path, pathsz, "/sys/fs/bpf/agentd-test-%d", getpid());
	test_defer(teardown_pins, strdup(path));
}

void test_unlink_at_end(const char *path)
{
	test_defer(unlink_path, strdup(path));
}

void test_file(char *path, size_t pathsz, const char *name, const char *text)
{
	static char dir[PATH_MAX];
	FILE *f;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/agentd-test-XXXXXX");
		if (!mkdtemp(dir))
			FAIL("mkdtemp: %s", strerror(errno));
		test_defer(rmdir_path, strdup(dir));
	}
	snprintf(path, pathsz, "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		FAIL("create %s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
	test_unlink_at_end(path);
}

static void proc_kill(void *arg)
{
	struct proc *p = arg;

	if (p->pid > 0) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, NULL, 0);
	}
	close(p->out_fd);
	free(p);
}

struct proc *proc_start(char *const argv[])
{
	struct proc *p = calloc(1, sizeof(*p));
	char exe[PATH_MAX];
	int fds[2];

	if (!p)
		FAIL("out of memory");
	snprintf(exe, sizeof(exe), "%s/%s", test_bin_dir(), argv[0]);
	if (pipe2(fds, O_CLOEXEC))
		FAIL("pipe: %s", strerror(errno));
	p->pid = fork();
	if (p->pid < 0)
		FAIL("fork: %s", strerror(errno));
	if (p->pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		execv(exe, argv);
		fprintf(stderr, "exec %s: %s\n", exe, strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	p->out_fd = fds[0];
	test_defer(proc_kill, p);
	return p;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Finds the first whole line holding every needle, moves it to p->line and drops the output up to
 * it, so that a line is matched once. */
static const char *find_line(struct proc *p, const char *const needles[])
{
	char *line = p->buf, *nl;
	size_t n;
	int i;

	while ((nl = memchr(line, '\n', p->buf + p->len - line))) {
		*nl = '\0';
		for (i = 0; needles[i] && strstr(line, needles[i]); i++)
			;
		if (!needles[i]) {
			n = nl - line;
			if (n >= sizeof(p->line))
				n = sizeof(p->line) - 1;
			memcpy(p->line, line, n);
			p->line[n] = '\0';
			p->len -= nl + 1 - p->buf;
			memmove(p->buf, nl + 1, p->len);
			p->buf[p->len] = '\0';
			return p->line;
		}
		*nl = '\n';
		line = nl + 1;
	}
	return NULL;
}

const char *proc_wait_line(struct proc *p, int timeout_ms, const char *const needles[])
{
	long deadline = now_ms() + timeout_ms;
	struct pollfd pfd = { .fd = p->out_fd, .events = POLLIN };
	const char *line;
	ssize_t n;

	for (;;) {
		line = find_line(p, needles);
		if (line)
			return line;
		if (now_ms() >= deadline || p->len == sizeof(p->buf) - 1)
			return NULL;
		if (poll(&pfd, 1, deadline - now_ms()) <= 0)
			continue;
		n = read(p->out_fd, p->buf + p->len, sizeof(p->buf) - 1 - p->len);
		if (n <= 0)
			return find_line(p, needles);
		p->len += n;
		p->buf[p->len] = '\0';
	}
}

int proc_stop(struct proc *p, int sig)
{
	int status;

	kill(p->pid, sig);
	if (waitpid(p->pid, &status, 0) < 0)
		FAIL("waitpid: %s", strerror(errno));
	p->pid = 0;
	return status;
}

int run_in_cgroup(const char *path, int (*fn)(void *), void *arg, pid_t *child)
{
	int cgfd = -1, status;
	pid_t pid;

	if (path) {
		cgfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cgfd < 0)
			FAIL("open %s: %s", path, strerror(errno));
		pid = cgroup_fork_into(cgfd);
		if (pid < 0)
			FAIL("clone3(CLONE_INTO_CGROUP) into %s: %s", path, strerror(-pid));
	} else {
		pid = fork();
		if (pid < 0)
			FAIL("fork: %s", strerror(errno));
	}
	if (pid == 0)
		_exit(fn(arg));
	if (child)
		*child = pid;
	if (cgfd >= 0)
		close(cgfd);
	if (waitpid(pid, &status, 0) < 0)
		FAIL("waitpid: %s", strerror(errno));
	if (!WIFEXITED(status))
		FAIL("child killed by signal %d", WTERMSIG(status));
	return WEXITSTATUS(status);
}
