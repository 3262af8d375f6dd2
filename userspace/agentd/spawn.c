// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "log.h"
#include "spawn.h"

#define LOG_LINE_MAX 1024

/* The read end of one worker's stderr; freed at its EOF (the worker has ended). */
struct spawn_log {
	struct loop *l;
	char name[96];
	size_t len;
	char buf[LOG_LINE_MAX];
};

static void log_line(const struct spawn_log *s, const char *line, size_t len)
{
	log_info("%s: %.*s\n", s->name, (int)len, line);
}

/* Whole lines as they come; a line longer than the buffer is logged in pieces. */
static void on_log(void *ctx, int fd, uint32_t events)
{
	struct spawn_log *s = ctx;
	size_t off = 0, i;
	ssize_t n;

	(void)events;
	n = read(fd, s->buf + s->len, sizeof(s->buf) - s->len);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		if (s->len)
			log_line(s, s->buf, s->len);
		loop_del(s->l, fd);
		close(fd);
		free(s);
		return;
	}
	s->len += n;
	for (i = 0; i < s->len; i++)
		if (s->buf[i] == '\n') {
			log_line(s, s->buf + off, i - off);
			off = i + 1;
		}
	if (!off && s->len == sizeof(s->buf)) {
		log_line(s, s->buf, s->len);
		off = s->len;
	}
	memmove(s->buf, s->buf + off, s->len - off);
	s->len -= off;
}

/* The exec status pipe's write end in the child: closed by a successful exec. */
#define SPAWN_EXEC_FD (SPAWN_CHAN_FD + 1)

/* In the child, between fork and exec: async-signal-safe calls only. The fds are first moved
 * above the three standard ones, so that no dup2() below overwrites one still needed. A failure
 * writes its errno into the exec status pipe. */
static __attribute__((noreturn)) void child(const char *path, char *const argv[], int chan,
					    int logw, int execw)
{
	static char *const envp[] = { NULL };
	int c = fcntl(chan, F_DUPFD_CLOEXEC, 10), w = fcntl(logw, F_DUPFD_CLOEXEC, 10);
	int x = fcntl(execw, F_DUPFD_CLOEXEC, 10);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int nul = null >= 0 ? fcntl(null, F_DUPFD_CLOEXEC, 10) : -1;
	int e;

	if (x < 0 || dup3(x, SPAWN_EXEC_FD, O_CLOEXEC) < 0)
		_exit(127);
	if (c < 0 || w < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(w, 1) < 0 || dup2(w, 2) < 0 ||
	    dup2(c, SPAWN_CHAN_FD) < 0 || syscall(SYS_close_range, SPAWN_EXEC_FD + 1U, ~0U, 0U))
		goto fail;
	execve(path, argv, envp);
fail:
	e = errno;
	if (write(SPAWN_EXEC_FD, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

/* Waits until the child has exec'd (the pipe closes) or failed to (its errno comes): the
 * worker is never seen, nor talked to, as the copy of agentd it is before exec. */
static int wait_exec(pid_t pid, int execr)
{
	ssize_t n;
	int e;

	do
		n = read(execr, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(execr);
	if (n == 0)
		return 0;
	waitpid(pid, NULL, 0);
	return n == sizeof(e) ? -e : -EIO;
}

int spawn_worker(struct loop *l, const char *name, const char *path, char *const argv[], int type,
		 pid_t *pid, int *chan)
{
	struct spawn_log *s = calloc(1, sizeof(*s));
	int sv[2] = { -1, -1 }, lp[2] = { -1, -1 }, ep[2] = { -1, -1 }, err = 0;

	if (!s)
		return -ENOMEM;
	s->l = l;
	snprintf(s->name, sizeof(s->name), "%s", name);
	if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv) || pipe2(lp, O_CLOEXEC | O_NONBLOCK) ||
	    pipe2(ep, O_CLOEXEC)) {
		err = -errno;
		goto fail;
	}
	/* The worker's end blocks: only agentd's end is non-blocking. */
	if (fcntl(lp[1], F_SETFL, 0)) {
		err = -errno;
		goto fail;
	}
	*pid = fork();
	if (*pid < 0) {
		err = -errno;
		goto fail;
	}
	if (!*pid)
		child(path, argv, sv[1], lp[1], ep[1]);
	close(sv[1]);
	close(lp[1]);
	close(ep[1]);
	err = wait_exec(*pid, ep[0]);
	if (err) {
		log_err("%s: exec %s: %s\n", name, path, strerror(-err));
		close(sv[0]);
		close(lp[0]);
		free(s);
		return err;
	}
	*chan = sv[0];
	err = loop_add(l, lp[0], EPOLLIN, on_log, s);
	if (err) {
		/* The worker runs on; its log lines are lost, said once here. */
		log_warn("%s: its log is not read: %s\n", name, strerror(-err));
		close(lp[0]);
		free(s);
	}
	return 0;
fail:
	if (sv[0] >= 0) {
		close(sv[0]);
		close(sv[1]);
	}
	if (lp[0] >= 0) {
		close(lp[0]);
		close(lp[1]);
	}
	if (ep[0] >= 0) {
		close(ep[0]);
		close(ep[1]);
	}
	free(s);
	return err;
}

int spawn_path(const char *name, char *out, size_t outsz)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n < 0)
		return -errno;
	self[n] = '\0';
	/* Beside agentd in a build folder; in the libexec folder once installed. */
	if ((size_t)snprintf(out, outsz, "%s/%s", dirname(self), name) >= outsz)
		return -ENAMETOOLONG;
	if (!access(out, X_OK))
		return 0;
	if ((size_t)snprintf(out, outsz, "%s/%s", AGENTD_LIBEXECDIR, name) >= outsz)
		return -ENAMETOOLONG;
	return access(out, X_OK) ? -errno : 0;
}
