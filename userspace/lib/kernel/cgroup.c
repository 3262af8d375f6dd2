// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/sched.h>
#include "kernel/cgroup.h"
#include "kernel/procfs.h"
#include "kernel/mounts.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

int mountinfo_find_cgroup2(FILE *mountinfo, char *out, size_t outsz)
{
	struct mountinfo_entry m;
	char *line = NULL;
	size_t cap = 0;
	int got, err = -ENOENT;

	while ((got = mountinfo_next(mountinfo, &line, &cap, &m))) {
		if (got < 0 || strcmp(m.fstype, "cgroup2"))
			continue;
		err = strlen(m.mount_point) < outsz ? 0 : -ENAMETOOLONG;
		if (!err)
			strcpy(out, m.mount_point);
		break;
	}
	free(line);
	return err;
}

int cgroup2_mount(char *out, size_t outsz)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int err;

	if (!f)
		return -errno;
	err = mountinfo_find_cgroup2(f, out, outsz);
	fclose(f);
	return err;
}

int cgroup_id(const char *path, __u64 *id)
{
	struct {
		struct file_handle fh;
		__u64 id;
	} h = { .fh.handle_bytes = sizeof(__u64) };
	int mount_id;

	/* cgroup2 file handles carry the kernfs node id, the same id BPF sees (as in libbpf's
	 * selftests' get_cgroup_id()). */
	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0))
		return -errno;
	if (h.fh.handle_bytes != sizeof(__u64))
		return -EOPNOTSUPP;
	memcpy(id, h.fh.f_handle, sizeof(*id));
	return 0;
}

pid_t cgroup_fork_into(int cgroup_fd)
{
	struct clone_args args = {
		.flags = CLONE_INTO_CGROUP,
		.exit_signal = SIGCHLD,
		.cgroup = (__u64)cgroup_fd,
	};
	long pid = syscall(SYS_clone3, &args, sizeof(args));

	return pid < 0 ? -errno : (pid_t)pid;
}

int cgroup_write(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		err = -errno;
	close(fd);
	return err;
}

/* The pid a pidfd refers to (fdinfo's "Pid:"), or -1. */
static int pidfd_pid(int pidfd)
{
	char path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	if (procfs_read(path, buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "\nPid:");
	return p ? atoi(p + 5) : -1;
}

/* The cgroup v2 line of a /proc cgroup file. */
static int cgroup_of_file(const char *path, char *out, size_t outsz)
{
	char buf[4096], *line, *save = NULL;
	ssize_t n = procfs_read(path, buf, sizeof(buf));

	if (n < 0)
		return n == -ENOENT ? -ESRCH : (int)n;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, "0::", 3)) {
			if ((size_t)snprintf(out, outsz, "%s", line + 3) >= outsz)
				return -ENAMETOOLONG;
			return 0;
		}
	return -ENOENT;
}

int cgroup_of_pid(pid_t pid, char *out, size_t outsz)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	return cgroup_of_file(path, out, outsz);
}

int cgroup_of_task(pid_t pid, pid_t tid, char *out, size_t outsz)
{
	char path[96];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/cgroup", (int)pid, (int)tid);
	return cgroup_of_file(path, out, outsz);
}

int cgroup_of_peer(int fd, pid_t *pid, uid_t *uid, char *cg, size_t cgsz)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);
	int pidfd = -1, err;
	struct pollfd pfd;

	*pid = 0;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len))
		return -errno;
	if (uc.pid <= 0)
		return -ESRCH;
	*pid = uc.pid;
	if (uid)
		*uid = uc.uid;
	len = sizeof(pidfd);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len)) {
		/* Before 6.5 the pid alone (that race stays open); any other failure (a peer
		 * reaped, whose pid may be another process's by now) is a refusal. */
		if (errno != ENOPROTOOPT)
			return errno == EINVAL ? -ESRCH : -errno;
		pidfd = -1;
	}
	if (pidfd >= 0 && pidfd_pid(pidfd) != uc.pid) {
		close(pidfd);
		return -ESRCH;
	}
	err = cgroup_of_pid(uc.pid, cg, cgsz);
	if (pidfd >= 0) {
		pfd = (struct pollfd){ .fd = pidfd, .events = POLLIN };
		if (poll(&pfd, 1, 0) != 0)
			err = -ESRCH; /* exited meanwhile: the pid may name another process */
		close(pidfd);
	}
	return err;
}

int cgroup_path_below(const char *path, const char *top)
{
	size_t n = strlen(top);

	if (n && strspn(top, "/") == n)
		return path[0] == '/'; /* the root holds every path */
	while (n > 1 && top[n - 1] == '/')
		n--;
	return !strncmp(path, top, n) && (path[n] == '\0' || path[n] == '/');
}
