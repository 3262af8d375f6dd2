// SPDX-License-Identifier: GPL-2.0
/*
 * agentctl run NAME [--user USER] [--cwd DIR] -- CMD [ARGS...]: CMD inside the agent's cgroup
 * from its first instruction (clone3 with CLONE_INTO_CGROUP), never a moment outside it.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cgroup.h"
#include "client.h"
#include "cmds.h"
#include "log.h"

struct run_opts {
	const char *name, *user, *cwd;
	char **cmd;
};

static volatile sig_atomic_t child_pid;
static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static void forward(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

static int usage(void)
{
	log_err("usage: agentctl run NAME [--user USER] [--cwd DIR] [--control PATH] -- CMD "
		"[ARGS...]\n");
	return EXIT_USAGE;
}

static int parse(int argc, char **argv, struct run_opts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	if (argc < 2 || !control_name_valid(argv[1]))
		return -EINVAL;
	o->name = argv[1];
	for (i = 2; i < argc && strcmp(argv[i], "--"); i++) {
		if (i + 1 >= argc)
			return -EINVAL;
		if (!strcmp(argv[i], "--user"))
			o->user = argv[++i];
		else if (!strcmp(argv[i], "--cwd"))
			o->cwd = argv[++i];
		else
			return -EINVAL;
	}
	if (i + 1 >= argc)
		return -EINVAL;
	o->cmd = argv + i + 1;
	return 0;
}

/* In the child: who it runs as, where, then the command. Never returns. */
static void child(const struct run_opts *o, const struct passwd *pw)
{
	size_t i;

	for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		signal(forwarded[i], SIG_DFL);
	if (pw &&
	    (initgroups(pw->pw_name, pw->pw_gid) || setgid(pw->pw_gid) || setuid(pw->pw_uid))) {
		fprintf(stderr, "agentctl: run: becoming %s: %s\n", pw->pw_name, strerror(errno));
		_exit(126);
	}
	if (o->cwd && chdir(o->cwd)) {
		fprintf(stderr, "agentctl: run: chdir %s: %s\n", o->cwd, strerror(errno));
		_exit(126);
	}
	execvp(o->cmd[0], o->cmd);
	fprintf(stderr, "agentctl: run: %s: %s\n", o->cmd[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* Waits for the child, forwarding signals; its status as a shell reports it. */
static int wait_child(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return EXIT_FAIL;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

static int cgroup_of(const struct ctl *c, const char *name, int *fd)
{
	struct control_request req = { .id = 1, .cmd = CONTROL_AGENT_INFO };
	const char *path;
	json_t *reply;
	int status;

	snprintf(req.name, sizeof(req.name), "%s", name);
	status = ctl_call(c, &req, &reply);
	if (status)
		return status;
	path = json_string_value(json_object_get(json_object_get(reply, "agent"), "cgroup"));
	*fd = path ? open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (*fd < 0)
		log_err("agent %s: cgroup %s: %s\n", name, path ? path : "(none)", strerror(errno));
	json_decref(reply);
	return *fd < 0 ? EXIT_FAIL : 0;
}

int do_run(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = forward };
	struct passwd *pw = NULL;
	struct run_opts o;
	int status, fd;
	struct ctl c;
	pid_t pid;
	size_t i;

	argc = ctl_args(argc, argv, &c);
	if (parse(argc, argv, &o))
		return usage();
	if (o.user && !(pw = getpwnam(o.user))) {
		log_err("run: no user %s\n", o.user);
		return EXIT_FAIL;
	}
	status = cgroup_of(&c, o.name, &fd);
	if (status)
		return status;
	for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaction(forwarded[i], &sa, NULL);
	pid = cgroup_fork_into(fd);
	if (pid == 0)
		child(&o, pw);
	close(fd);
	if (pid < 0) {
		log_err("run: clone3 into the cgroup of agent %s: %s\n", o.name, strerror(-pid));
		return EXIT_FAIL;
	}
	child_pid = pid;
	return wait_child(pid);
}
