// SPDX-License-Identifier: GPL-2.0
/*
 * agentd-drill: agentd execs it (userspace/agentd/drill.c) as root, outside every agent, with
 * its request on fd 3 (SPAWN_CHAN_FD) and its results going back there, one line per boundary
 * (wire/drill_proto.h). It is never exec'd inside an agent, so no exec list needs to name it:
 * each boundary's process is cloned straight into the drill's cgroup (clone3 with
 * CLONE_INTO_CGROUP, as agentctl run starts an agent) and takes there the layers agentctl run
 * gives an agent, in the order run gives them: a session, IPC and UTS namespaces of its own, the
 * policy's capabilities with the agent's uid (of its running processes as agentd saw them; root
 * when none runs, the strongest agent the policy allows), no_new_privs,
 * Landlock where BPF LSM is not, seccomp. The drill itself first enters a network namespace of
 * its own, with only loopback up, so that no address it tries leaves the machine.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <jansson.h>
#include "boundary.h"
#include "drill.h"
#include "kernel/probe.h"
#include "policy/load.h"
#include "sandbox/landlock.h"
#include "sandbox/sandbox_caps.h"
#include "sandbox/sandbox_seccomp.h"

#define CHAN_FD 3
#define REQUEST_MAX (1U << 20)
#define VARS_MAX 32

struct drill {
	struct drill_ctx c;
	struct sandbox_seccomp seccomp;
	struct landlock_plan *plan;
	int ruleset_fd;
	int cgroup_fd;
	uid_t uid; /* the agent's (agentd saw it on its processes), 0 when none runs */
	gid_t gid;
	int listeners[3];
	unsigned int boundaries; /* 1 << boundary */
};

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "agentd-drill: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static json_t *read_request(void)
{
	static char buf[REQUEST_MAX];
	json_error_t jerr;
	size_t len = 0;
	ssize_t n;
	json_t *j;

	while (len < sizeof(buf) && (n = read(CHAN_FD, buf + len, sizeof(buf) - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			say("reading the request: %s\n", strerror(errno));
			return NULL;
		}
		len += n;
	}
	j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!j)
		say("request: line %d column %d: %s\n", jerr.line, jerr.column, jerr.text);
	return j;
}

/* The agent's policy as agentd loaded it: its path, vars, tools and digest (a file changed since
 * refuses, as agentctl run does). */
static int load_policy(const json_t *agent, struct policy **out)
{
	struct policy_var vars[VARS_MAX];
	struct policy_vars pv = { .v = vars };
	struct policy_source src = {
		.path = json_string_value(json_object_get(agent, "policy")),
		.tools = json_string_value(json_object_get(agent, "tools")),
		.vars = &pv,
		.digest = json_string_value(json_object_get(agent, "policy_digest")),
	};
	struct policy_errors errs = { 0 };
	char line[1024] = "";
	const char *k;
	json_t *v;
	int err;

	json_object_foreach((json_t *)json_object_get(agent, "vars"), k, v)
	{
		if (pv.n == VARS_MAX)
			break;
		vars[pv.n].name = k;
		vars[pv.n++].value = json_string_value(v) ? json_string_value(v) : "";
	}
	if (!src.digest)
		src.digest = "";
	err = policy_load_full(&src, out, NULL, &errs);
	if (errs.n)
		policy_error_format(&errs.v[0], line, sizeof(line));
	policy_errors_clear(&errs);
	if (err)
		say("the agent's policy %s: %s\n", src.path ? src.path : "(none)",
		    err == -ESTALE ? "changed since agentd loaded it"
		    : line[0]	   ? line
				   : strerror(-err));
	return err;
}

static int copy(char *out, size_t outsz, const json_t *req, const char *key)
{
	const char *s = json_string_value(json_object_get(req, key));

	if (!s || (size_t)snprintf(out, outsz, "%s", s) >= outsz) {
		say("request: %s missing or too long\n", key);
		return -EINVAL;
	}
	return 0;
}

static int parse(const json_t *req, struct drill *d)
{
	const json_t *v;
	size_t i;
	int b;

	if (copy(d->c.cgroup_root, sizeof(d->c.cgroup_root), req, "cgroup_root") ||
	    copy(d->c.pin_dir, sizeof(d->c.pin_dir), req, "pin_dir") ||
	    copy(d->c.unix_path, sizeof(d->c.unix_path), req, "unix_path") ||
	    copy(d->c.probe_name, sizeof(d->c.probe_name), req, "probe_name"))
		return -EINVAL;
	d->c.ipc_key = (int)json_integer_value(json_object_get(req, "ipc_key"));
	d->uid = (uid_t)json_integer_value(json_object_get(req, "uid"));
	d->gid = (gid_t)json_integer_value(json_object_get(req, "gid"));
	json_array_foreach((json_t *)json_object_get(req, "boundaries"), i, v)
	{
		b = boundary_from_name(json_string_value(v) ? json_string_value(v) : "");
		if (b < 0) {
			say("request: no boundary %s\n", json_string_value(v));
			return -EINVAL;
		}
		d->boundaries |= 1U << b;
	}
	return 0;
}

/* What the layers need, opened as root: Landlock's paths, the cgroup. */
static int prepare(const json_t *req, struct drill *d)
{
	const char *cg = json_string_value(json_object_get(req, "cgroup")), *bad = "";
	int err;

	layers_for_run(json_is_true(json_object_get(req, "lsm")), probe_landlock_abi(),
		       probe_seccomp() == 0, d->c.cgroup_root, &d->c.layers);
	sandbox_seccomp_from_policy(d->c.p, &d->seccomp);
	d->cgroup_fd = cg ? open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (d->cgroup_fd < 0) {
		say("the drill's cgroup %s: %s\n", cg ? cg : "(none)", strerror(errno));
		return -ENOENT;
	}
	if (!layers_use_landlock(&d->c.layers))
		return 0;
	err = landlock_compile(d->c.p, d->c.layers.landlock_abi, &d->plan);
	if (!err)
		err = landlock_open(d->plan, &bad);
	if (!err) {
		d->ruleset_fd = landlock_ruleset(d->plan);
		err = d->ruleset_fd < 0 ? d->ruleset_fd : 0;
	}
	if (err)
		say("Landlock ruleset%s%s: %s\n", *bad ? " at " : "", bad, landlock_strerror(err));
	return err;
}

/* A network namespace of the drill's own, loopback up: nothing tried leaves the machine. */
static int own_network(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd, err = 0;

	if (unshare(CLONE_NEWNET))
		return -errno;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr))
		err = -errno;
	ifr.ifr_flags |= IFF_UP;
	if (!err && ioctl(fd, SIOCSIFFLAGS, &ifr))
		err = -errno;
	if (fd >= 0)
		close(fd);
	return err;
}

static int listen_on(int fd, const struct sockaddr *a, socklen_t len)
{
	if (fd < 0)
		return -errno;
	if (bind(fd, a, len) || listen(fd, 8))
		return -errno;
	return 0;
}

/* Endpoints outside the agent for its processes to try: TCP on loopback, a path-named and an
 * abstract unix socket. */
static int listeners(struct drill *d)
{
	struct sockaddr_in in = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_un un = { .sun_family = AF_UNIX }, ab = { .sun_family = AF_UNIX };
	socklen_t len = sizeof(in);
	int err;

	d->listeners[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	err = listen_on(d->listeners[0], (struct sockaddr *)&in, sizeof(in));
	if (!err && getsockname(d->listeners[0], (struct sockaddr *)&in, &len))
		err = -errno;
	d->c.tcp_port = ntohs(in.sin_port);
	if (strlen(d->c.unix_path) >= sizeof(un.sun_path)) {
		say("%s: too long for a unix socket\n", d->c.unix_path);
		return -ENAMETOOLONG;
	}
	memcpy(un.sun_path, d->c.unix_path, strlen(d->c.unix_path));
	unlink(d->c.unix_path);
	d->listeners[1] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!err)
		err = listen_on(d->listeners[1], (struct sockaddr *)&un, sizeof(un));
	snprintf(d->c.abstract, sizeof(d->c.abstract), "agentd-drill-%d", (int)getpid());
	snprintf(ab.sun_path + 1, sizeof(ab.sun_path) - 1, "%s", d->c.abstract);
	d->listeners[2] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!err)
		err = listen_on(d->listeners[2], (struct sockaddr *)&ab,
				offsetof(struct sockaddr_un, sun_path) + 1 + strlen(d->c.abstract));
	if (err)
		say("a listener outside the agent: %s\n", strerror(-err));
	return err;
}

/* In the boundary's process: the layers agentctl run gives an agent (run.c, child()). */
static int become_agent(const struct drill *d, int out)
{
	int err;

	/* Not dumpable: the agent's own processes (the same agent to BPF LSM) cannot ptrace it
	 * to forge its results without CAP_SYS_PTRACE. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) || setsid() < 0 || dup3(out, CHAN_FD, O_CLOEXEC) < 0)
		return -errno;
	err = sandbox_caps_begin(d->c.p->capabilities);
	if (!err && (d->gid || d->uid) && (setgroups(0, NULL) || setgid(d->gid) || setuid(d->uid)))
		err = -errno;
	if (!err)
		err = sandbox_caps_finish(d->c.p->capabilities);
	if (!err && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		err = -errno;
	if (!err && d->ruleset_fd >= 0)
		err = landlock_restrict(d->ruleset_fd);
	/* Nothing of the drill's beyond its result pipe: not the listeners, not the cgroup. */
	if (!err && close_range(CHAN_FD + 1, ~0U, 0))
		err = -errno;
	if (!err && (d->c.layers.set & LAYER_SECCOMP))
		err = sandbox_seccomp_load(&d->seccomp);
	return err;
}

static void boundary_child(const struct drill *d, int b, int out)
{
	struct drill_result r = {};
	json_t *j;
	char *s;
	int err = become_agent(d, out);

	if (err) {
		r.boundary = b;
		snprintf(r.why, sizeof(r.why),
			 DRILL_WHY_BROKEN "the drill could not take the agent's layers: %s",
			 strerror(-err));
	} else {
		drill_boundary(&d->c, b, &r);
	}
	j = drill_result_json(&r);
	s = j ? json_dumps(j, JSON_COMPACT) : NULL;
	if (s && write(CHAN_FD, s, strlen(s)) < 0)
		_exit(1);
	_exit(s ? 0 : 1);
}

/* One boundary: its process, its result line relayed to agentd (or why it gave none). */
static int run_boundary(const struct drill *d, int b)
{
	struct clone_args args = {
		.flags = CLONE_INTO_CGROUP | CLONE_NEWIPC | CLONE_NEWUTS,
		.exit_signal = SIGCHLD,
		.cgroup = (__u64)d->cgroup_fd,
	};
	char line[DRILL_LINE_MAX + 1];
	struct drill_result r = {};
	size_t len = 0;
	int p[2], status = 0;
	ssize_t n;
	long pid;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid == 0)
		boundary_child(d, b, p[1]);
	close(p[1]);
	while (pid > 0 && len < sizeof(line) - 1 &&
	       (n = read(p[0], line + len, sizeof(line) - 1 - len)) != 0)
		if (n > 0)
			len += n;
		else if (errno != EINTR)
			break;
	close(p[0]);
	if (pid < 0)
		return -errno;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!len || status) {
		r.boundary = b;
		r.pids[r.n_pids++] = (int)pid;
		snprintf(r.why, sizeof(r.why),
			 DRILL_WHY_BROKEN "its process ended without a result (%s %d)",
			 WIFSIGNALED(status) ? "signal" : "exit",
			 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
		json_t *j = drill_result_json(&r);
		char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;

		len = s ? (size_t)snprintf(line, sizeof(line), "%s", s) : 0;
		free(s);
		json_decref(j);
	}
	line[len++] = '\n';
	return write(CHAN_FD, line, len) == (ssize_t)len ? 0 : -errno;
}

int main(void)
{
	struct drill d = { .ruleset_fd = -1, .cgroup_fd = -1, .listeners = { -1, -1, -1 } };
	struct policy *p = NULL;
	json_t *req;
	int b, err;

	/* Ends with agentd, which removes what it left at its next start (drill_sweep()). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	req = read_request();
	err = req ? parse(req, &d) : -EINVAL;

	if (!err)
		err = load_policy(json_object_get(req, "agent"), &p);
	d.c.p = p;
	d.c.outside = getpid();
	if (!err)
		err = prepare(req, &d);
	if (!err && (err = own_network()))
		say("a network namespace of its own: %s\n", strerror(-err));
	if (!err)
		err = listeners(&d);
	for (b = 0; !err && b < BOUNDARY_COUNT; b++)
		if (d.boundaries & (1U << b) && (err = run_boundary(&d, b)))
			say("boundary %s: %s\n", boundary_name(b), strerror(-err));
	if (d.c.unix_path[0])
		unlink(d.c.unix_path);
	json_decref(req);
	return err ? 1 : 0;
}
