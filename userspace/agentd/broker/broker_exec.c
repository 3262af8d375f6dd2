// SPDX-License-Identifier: GPL-2.0
/*
 * Running one tool: a child of agentd in a cgroup of its own, its output read through pipes
 * into buffers of the output cap plus the redaction lookahead, its timeout a timerfd that kills
 * the whole cgroup, its end the pidfd. Everything is an fd in the daemon's loop: agentd never
 * waits for a tool.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "broker/broker_int.h"
#include "kernel/cgroup.h"
#include "kernel/enforcer.h"
#include "sandbox/landlock.h"
#include "log.h"
#include "loop.h"

struct stream {
	int fd;
	char *buf;
	size_t len, total;
};

struct tool_run {
	struct loop *l;
	char cgroup[PATH_MAX];
	struct enforcer *enforcer; /* set once the cgroup is registered as a tool run's */
	__u64 cgroup_id;
	pid_t pid;
	int pidfd, timer_fd, events_fd;
	struct stream s[2]; /* stdout, stderr */
	size_t cap, keep; /* bytes returned; bytes read (cap + lookahead) */
	bool exited, timed_out, finished;
	int status;
	__u64 start_ns;
	struct redactor red;
	tool_done_fn done;
	void *ctx;
	struct tool_run_result res;
};

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void unwatch(struct tool_run *r, int *fd)
{
	if (*fd < 0)
		return;
	loop_del(r->l, *fd);
	close(*fd);
	*fd = -1;
}

static int kill_cgroup(const char *cg)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/cgroup.kill", cg);
	return cgroup_write(path, "1");
}

static bool populated(int events_fd)
{
	char buf[256];
	ssize_t n = pread(events_fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return false;
	buf[n] = '\0';
	return !strstr(buf, "populated 0");
}

static int result_stream(struct tool_run *r, int i, char **out, size_t *len)
{
	unsigned count;
	int err;

	err = redact(&r->red, r->s[i].buf ? r->s[i].buf : "", r->s[i].len,
		     r->cap < r->s[i].len ? r->cap : r->s[i].len, out, len, &count);
	if (!err)
		r->res.redacted += count;
	return err;
}

/* The run's cgroup, and then its network rule: never the rule while a process could be there. */
static int remove_cgroup(struct tool_run *r)
{
	int e;

	if (rmdir(r->cgroup))
		return -errno;
	if (r->enforcer) {
		e = enforcer_remove_tool_run(r->enforcer, r->cgroup_id);
		if (e)
			log_warn("broker: tool run %s: forgetting its network rule: %s\n",
				 r->cgroup, strerror(-e));
		r->enforcer = NULL;
	}
	return 0;
}

/* Held to its network before anything runs there; a run that cannot be is not started. */
static int register_run(struct tool_run *r, const struct tool_spec *spec)
{
	int e;

	if (!spec->enforcer)
		return 0;
	e = cgroup_id(r->cgroup, &r->cgroup_id);
	if (!e)
		e = enforcer_add_tool_run(spec->enforcer, r->cgroup_id, spec->agent_id,
					  spec->network);
	if (e)
		return e;
	r->enforcer = spec->enforcer;
	return 0;
}

/* Done when the tool has exited, both pipes are closed and nothing is left in its cgroup. */
static void check_done(struct tool_run *r)
{
	int e;

	if (r->finished || !r->exited || r->s[0].fd >= 0 || r->s[1].fd >= 0 ||
	    populated(r->events_fd))
		return;
	r->finished = true;
	unwatch(r, &r->events_fd);
	unwatch(r, &r->timer_fd);
	e = remove_cgroup(r);
	if (e)
		log_warn("broker: removing tool cgroup %s: %s\n", r->cgroup, strerror(-e));
	r->res.status = r->status;
	r->res.timed_out = r->timed_out;
	r->res.truncated = r->s[0].total > r->cap || r->s[1].total > r->cap;
	r->res.duration_us = (now_ns() - r->start_ns) / 1000;
	if (result_stream(r, 0, &r->res.out, &r->res.out_len) ||
	    result_stream(r, 1, &r->res.err, &r->res.err_len)) {
		/* Out of memory: nothing unredacted goes back. */
		free(r->res.out);
		free(r->res.err);
		r->res.out = strdup("");
		r->res.err = strdup("");
		r->res.out_len = r->res.err_len = 0;
	}
	redactor_clear(&r->red);
	r->done(r->ctx, r, &r->res);
}

static void on_output(void *ctx, int fd, uint32_t events)
{
	struct tool_run *r = ctx;
	struct stream *s = fd == r->s[0].fd ? &r->s[0] : &r->s[1];
	char scratch[16384];
	ssize_t n;

	(void)events;
	for (;;) {
		if (s->len < r->keep)
			n = read(fd, s->buf + s->len, r->keep - s->len);
		else
			n = read(fd, scratch, sizeof(scratch));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0)
			break;
		if (s->len < r->keep)
			s->len += n;
		s->total += n;
	}
	unwatch(r, &s->fd);
	check_done(r);
}

static void on_exit_fd(void *ctx, int fd, uint32_t events)
{
	struct tool_run *r = ctx;

	(void)fd, (void)events;
	if (waitpid(r->pid, &r->status, WNOHANG) <= 0)
		return;
	r->exited = true;
	unwatch(r, &r->pidfd);
	/* What the tool left behind goes with it (and lets go of the pipes). */
	kill_cgroup(r->cgroup);
	check_done(r);
}

static void on_timeout(void *ctx, int fd, uint32_t events)
{
	struct tool_run *r = ctx;

	(void)fd, (void)events;
	r->timed_out = true;
	unwatch(r, &r->timer_fd);
	kill_cgroup(r->cgroup);
}

static void on_events(void *ctx, int fd, uint32_t events)
{
	(void)events;
	/* Reading re-arms the notification (else EPOLLPRI stays raised). */
	populated(fd);
	check_done(ctx);
}

static void child(const struct tool_spec *spec, int out, int err)
{
	sigset_t none;
	struct rlimit rl;
	int null = open("/dev/null", O_RDONLY), e = 0;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	setsid();
	if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(127);
	/* agentd's raised fd limit stays agentd's (some tools walk every possible fd). */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && spec->nofile < rl.rlim_cur) {
		rl.rlim_cur = spec->nofile;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* The run's ids, and no group of root's: every capability goes with the uid. */
	if (spec->uid && (setgroups(0, NULL) || setresgid(spec->gid, spec->gid, spec->gid) ||
			  setresuid(spec->uid, spec->uid, spec->uid))) {
		dprintf(2, "agentd broker: running %s as %u:%u: %s\n", spec->argv[0], spec->uid,
			spec->gid, strerror(errno));
		_exit(127);
	}
	/* No exec gains privileges; then the caller's file rights and system calls, at most. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || (e = landlock_restrict(spec->ruleset_fd)) ||
	    (e = sandbox_seccomp_load(spec->seccomp))) {
		dprintf(2, "agentd broker: confining %s: %s\n", spec->argv[0],
			strerror(e ? -e : errno));
		_exit(127);
	}
	syscall(SYS_close_range, 3U, ~0U, 0U);
	execve(spec->argv[0], spec->argv, spec->envp);
	dprintf(2, "agentd broker: executing %s: %s\n", spec->argv[0], strerror(errno));
	_exit(127);
}

static int make_pipes(int out[2], int err[2])
{
	if (pipe2(out, O_CLOEXEC))
		return -errno;
	if (pipe2(err, O_CLOEXEC)) {
		close(out[0]);
		close(out[1]);
		return -errno;
	}
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	fcntl(err[0], F_SETFL, O_NONBLOCK);
	return 0;
}

/* The tool's limits on its cgroup before it starts there; one that cannot hold stops the run. */
static int set_limits(const char *cg, const struct limits *l)
{
	char missing[64];
	int e;

	if (!l->cpu_millicores && !l->memory_bytes && !l->pids)
		return 0;
	e = limits_apply(cg, l, missing, sizeof(missing));
	return e ? e : missing[0] ? -EOPNOTSUPP : 0;
}

static int spawn(struct tool_run *r, const struct tool_spec *spec)
{
	int cgfd, out[2], err[2], e;

	cgfd = open(r->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgfd < 0)
		return -errno;
	e = make_pipes(out, err);
	if (e) {
		close(cgfd);
		return e;
	}
	r->pid = cgroup_fork_into(cgfd);
	if (r->pid == 0)
		child(spec, out[1], err[1]);
	close(cgfd);
	close(out[1]);
	close(err[1]);
	if (r->pid < 0) {
		close(out[0]);
		close(err[0]);
		return r->pid;
	}
	r->s[0].fd = out[0];
	r->s[1].fd = err[0];
	return 0;
}

static int watch(struct tool_run *r, const struct tool_spec *spec)
{
	struct itimerspec its = { .it_value = { .tv_sec = spec->timeout_sec } };
	char path[PATH_MAX + 16];
	int e;

	snprintf(path, sizeof(path), "%s/cgroup.events", r->cgroup);
	r->events_fd = open(path, O_RDONLY | O_CLOEXEC);
	r->pidfd = (int)syscall(SYS_pidfd_open, r->pid, 0);
	r->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (r->events_fd < 0 || r->pidfd < 0 || r->timer_fd < 0 ||
	    timerfd_settime(r->timer_fd, 0, &its, NULL))
		return -errno;
	e = loop_add(r->l, r->s[0].fd, EPOLLIN, on_output, r);
	if (!e)
		e = loop_add(r->l, r->s[1].fd, EPOLLIN, on_output, r);
	if (!e)
		e = loop_add(r->l, r->pidfd, EPOLLIN, on_exit_fd, r);
	if (!e)
		e = loop_add(r->l, r->timer_fd, EPOLLIN, on_timeout, r);
	if (!e)
		e = loop_add(r->l, r->events_fd, EPOLLPRI, on_events, r);
	return e;
}

int tool_run_start(struct loop *l, const struct tool_spec *spec, tool_done_fn done, void *ctx,
		   struct tool_run **out)
{
	struct tool_run *r = calloc(1, sizeof(*r));
	int e;

	*out = NULL;
	if (!r) {
		redactor_clear(spec->redactor);
		close(spec->ruleset_fd);
		return -ENOMEM;
	}
	r->l = l;
	r->red = *spec->redactor;
	memset(spec->redactor, 0, sizeof(*spec->redactor));
	r->pid = -1;
	r->pidfd = r->timer_fd = r->events_fd = r->s[0].fd = r->s[1].fd = -1;
	r->cap = spec->output_cap;
	r->keep = spec->output_cap + redact_lookahead(&r->red);
	r->done = done;
	r->ctx = ctx;
	r->start_ns = now_ns();
	snprintf(r->cgroup, sizeof(r->cgroup), "%s", spec->cgroup);
	r->s[0].buf = malloc(r->keep);
	r->s[1].buf = malloc(r->keep);
	if (!r->s[0].buf || !r->s[1].buf) {
		e = -ENOMEM;
		close(spec->ruleset_fd);
		goto fail;
	}
	if (mkdir(r->cgroup, 0755)) {
		e = -errno;
		close(spec->ruleset_fd);
		goto fail;
	}
	e = register_run(r, spec);
	if (!e)
		e = set_limits(r->cgroup, spec->limits);
	if (!e)
		e = spawn(r, spec);
	close(spec->ruleset_fd);
	if (!e)
		e = watch(r, spec);
	if (e) {
		if (r->pid > 0) {
			kill_cgroup(r->cgroup);
			waitpid(r->pid, NULL, 0);
		}
		goto fail_cgroup;
	}
	*out = r;
	return 0;
fail_cgroup:
	unwatch(r, &r->s[0].fd);
	unwatch(r, &r->s[1].fd);
	unwatch(r, &r->pidfd);
	unwatch(r, &r->timer_fd);
	unwatch(r, &r->events_fd);
	remove_cgroup(r);
fail:
	redactor_clear(&r->red);
	free(r->s[0].buf);
	free(r->s[1].buf);
	free(r);
	return e;
}

void tool_run_kill(struct tool_run *r)
{
	if (!r->finished)
		kill_cgroup(r->cgroup);
}

void tool_run_abort(struct tool_run *r)
{
	if (!r->finished) {
		kill_cgroup(r->cgroup);
		if (!r->exited)
			waitpid(r->pid, NULL, 0);
		unwatch(r, &r->s[0].fd);
		unwatch(r, &r->s[1].fd);
		unwatch(r, &r->pidfd);
		unwatch(r, &r->timer_fd);
		unwatch(r, &r->events_fd);
		remove_cgroup(r);
		redactor_clear(&r->red);
	}
	tool_run_free(r);
}

void tool_run_free(struct tool_run *r)
{
	if (!r)
		return;
	free(r->s[0].buf);
	free(r->s[1].buf);
	free(r->res.out);
	free(r->res.err);
	free(r);
}
