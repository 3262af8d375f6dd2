// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cgroup.h"
#include "common.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

double bench_open_close(int cgroup_fd, const char *path, int ops)
{
	int pipefd[2], status, i, fd;
	double t, ns = -1;
	pid_t pid;

	if (pipe(pipefd))
		return -1;
	pid = cgroup_fork_into(cgroup_fd);
	if (pid == 0) {
		t = now_ns();
		for (i = 0; i < ops; i++) {
			fd = open(path, O_RDONLY);
			if (fd < 0)
				_exit(1);
			close(fd);
		}
		t = (now_ns() - t) / ops;
		_exit(write(pipefd[1], &t, sizeof(t)) == sizeof(t) ? 0 : 1);
	}
	close(pipefd[1]);
	if (pid > 0 && read(pipefd[0], &ns, sizeof(ns)) != sizeof(ns))
		ns = -1;
	close(pipefd[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	return ns;
}

int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int bench_cgroup(const char *root, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, name);
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}
