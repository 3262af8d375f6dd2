// SPDX-License-Identifier: GPL-2.0
/* Emptying a cgroup: an agent's (agent rm, kill) and a drill's. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cgroup_kill.h"
#include "kernel/cgroup.h"

int cgroup_kill(const char *cg)
{
	char path[PATH_MAX + 16];
	int pid, err;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.kill", cg);
	err = cgroup_write(path, "1");
	if (err != -ENOENT)
		return err;
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fscanf(f, "%d", &pid) == 1)
		kill(pid, SIGKILL);
	fclose(f);
	return 0;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static bool cgroup_populated(int fd)
{
	char buf[256];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return false;
	buf[n] = '\0';
	return !strstr(buf, "populated 0");
}

/* cgroup.events signals POLLPRI on every change. */
int cgroup_wait_empty(const char *cg, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	char path[PATH_MAX + 16];
	struct pollfd pfd;
	int err = 0;

	snprintf(path, sizeof(path), "%s/cgroup.events", cg);
	pfd.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (pfd.fd < 0)
		return errno == ENOENT ? 0 : -errno;
	pfd.events = POLLPRI;
	while (cgroup_populated(pfd.fd)) {
		if (now_ms() >= deadline) {
			err = -EBUSY;
			break;
		}
		poll(&pfd, 1, (int)(deadline - now_ms()));
	}
	close(pfd.fd);
	return err;
}
