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

/* In the child, between fork and exec: async-signal-safe calls only. The fds are first moved
 * above the three standard ones, so that no dup2() below overwrites one still needed. */
static __attribute__((noreturn)) void child(const char *path, char *const argv[], int chan,
					    int logw)
{
	static char *const envp[] = { NULL };
	int c = fcntl(chan, F_DUPFD_CLOEXEC, 10), w = fcntl(logw, F_DUPFD_CLOEXEC, 10);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int nul = null >= 0 ? fcntl(null, F_DUPFD_CLOEXEC, 10) : -1;

	if (c < 0 || w < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(w, 1) < 0 || dup2(w, 2) < 0 ||
	    dup2(c, SPAWN_CHAN_FD) < 0 || syscall(SYS_close_range, SPAWN_CHAN_FD + 1U, ~0U, 0U))
		_exit(127);
	execve(path, argv, envp);
	_exit(127);
}

int spawn_worker(struct loop *l, const char *name, const char *path, char *const argv[], int type,
		 pid_t *pid, int *chan)
{
	struct spawn_log *s = calloc(1, sizeof(*s));
	int sv[2] = { -1, -1 }, lp[2] = { -1, -1 }, err = 0;

	if (!s)
		return -ENOMEM;
	s->l = l;
	snprintf(s->name, sizeof(s->name), "%s", name);
	if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv) || pipe2(lp, O_CLOEXEC | O_NONBLOCK)) {
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
		child(path, argv, sv[1], lp[1]);
	close(sv[1]);
	close(lp[1]);
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
	if ((size_t)snprintf(out, outsz, "%s/%s", dirname(self), name) >= outsz)
		return -ENAMETOOLONG;
	return access(out, X_OK) ? -errno : 0;
}
