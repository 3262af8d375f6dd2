// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "kernel/cgroup.h"
#include "common.h"
#include "kernel/enforcer.h"
#include "lsmcg.skel.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int bench_op_open_close(const void *path)
{
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

int bench_op_stat(const void *path)
{
	struct stat st;

	return stat(path, &st);
}

int bench_op_exec(const void *argv)
{
	char *const *av = (char *const *)argv;
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		execv(av[0], av);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int bench_op_connect(const void *sin)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0), err;

	if (fd < 0)
		return -1;
	err = connect(fd, sin, sizeof(struct sockaddr_in));
	close(fd);
	return err;
}

double bench_run(int cgroup_fd, bench_op op, const void *arg, int ops)
{
	int pipefd[2], status, i;
	double t, ns = -1;
	pid_t pid;

	if (pipe(pipefd))
		return -1;
	pid = cgroup_fork_into(cgroup_fd);
	if (pid == 0) {
		t = now_ns();
		for (i = 0; i < ops; i++)
			if (op(arg))
				_exit(1);
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

int bench_lsmcg_load(struct enforcer *e, struct lsmcg_bpf **out)
{
	struct lsmcg_bpf *skel = lsmcg_bpf__open();
	int err;

	*out = NULL;
	if (!skel)
		return -errno;
	err = enforcer_share_maps(e, skel->obj);
	err = err ?: lsmcg_bpf__load(skel);
	if (err) {
		lsmcg_bpf__destroy(skel);
		return err;
	}
	*out = skel;
	return 0;
}
