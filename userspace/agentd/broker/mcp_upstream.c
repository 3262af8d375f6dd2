// SPDX-License-Identifier: GPL-2.0
/*
 * Upstream MCP servers (mcp_upstream.h): each a child of agentd in a cgroup of its own, run
 * as the broker runs a tool (its ids, no_new_privs, Landlock and seccomp from the server's own
 * policy), kept running; agentd speaks MCP to it on its stdin and stdout (a message a line).
 * Everything is an fd in the daemon's loop: agentd never waits for a server.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "broker/broker_int.h"
#include "broker/mcp_upstream.h"
#include "kernel/cgroup.h"
#include "kernel/enforcer.h"
#include "log.h"
#include "loop.h"
#include "policy/policy.h"
#include "version.h"
#include "wire/jsonrpc.h"
#include "wire/mcp_client.h"

/* Servers run as MCP_ID_BASE + their number unless the registry gives an id: ids no user has,
 * below the agents' tool ids (BROKER_TOOL_ID_BASE + agent id). */
#define MCP_ID_BASE 2147221504U /* 0x7ffc0000 */
#define MCP_START_TIMEOUT 30 /* seconds for initialize and tools/list */
#define MCP_DIR "mcp" /* in the state directory: SERVER.json, the accepted digests */
#define TOOL_PATH_ENV "PATH=/usr/local/bin:/usr/bin:/bin"

enum server_state { S_DOWN, S_INIT, S_LIST, S_READY };

struct mcp_hub;
struct server;

struct mcp_pending {
	struct mcp_pending *next;
	struct server *s;
	char tool[TOOL_NAME_MAX + 1]; /* the server's name for it */
	json_t *args;
	long long rpc_id; /* 0 while queued */
	int timer_fd;
	unsigned timeout_sec;
	size_t cap;
	__u64 t0;
	mcp_done_fn done;
	void *ctx;
};

struct waiter {
	struct waiter *next;
	mcp_wait_fn fn;
	void *ctx;
	const void *owner;
};

struct server {
	struct server *next;
	struct mcp_hub *h;
	struct tool conf; /* name: the entry's; exec, env, secrets, ids, limits, programs */
	unsigned number;
	enum server_state state;
	pid_t pid;
	int pidfd, in_fd, out_fd, timer_fd;
	char cgroup[PATH_MAX + 160];
	__u64 cgroup_id; /* held to its network in tool_runs while not 0 */
	char *wbuf, *rbuf;
	size_t wlen, rlen, rcap;
	long long next_id, init_id, list_id;
	struct mcp_tool_info *tools, *listing;
	size_t n_tools, n_listing;
	json_t *accepted; /* {"tools": {NAME: digest}}, persisted */
	struct redactor red; /* the server's secrets */
	struct mcp_pending *calls;
	struct waiter *waiters;
	char error[256]; /* why it last went down */
};

struct mcp_hub {
	struct mcp_hub_env env;
	char state_dir[PATH_MAX], tools_cg[PATH_MAX];
	struct server *servers;
	unsigned n_servers;
};

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ---- the server's configuration, copied from the registry that named it ---- */

static char **strv_copy(char *const *v, size_t n, bool *oom)
{
	char **out = calloc(n + 1, sizeof(char *));
	size_t i;

	for (i = 0; out && i < n; i++)
		if (!(out[i] = strdup(v[i])))
			*oom = true;
	if (!out)
		*oom = true;
	return out;
}

static void strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

static void conf_free(struct tool *c)
{
	free(c->name);
	strv_free(c->exec, c->n_exec);
	strv_free(c->env, c->n_env);
	strv_free(c->secrets, c->n_secrets);
	strv_free(c->programs, c->n_programs);
	free(c->mcp_policy);
}

static int conf_copy(const struct tool *t, struct tool *c)
{
	bool oom = false;

	*c = (struct tool){ .effect = TOOL_ACTUATE, /* the server keeps its policy's writes */
			    .n_exec = t->n_exec,
			    .n_env = t->n_env,
			    .n_secrets = t->n_secrets,
			    .n_programs = t->n_programs,
			    .limits = t->limits,
			    .uid = t->uid,
			    .gid = t->gid,
			    .root = t->root,
			    .network_public = t->network_public };
	c->name = strdup(t->mcp_server);
	c->mcp_policy = strdup(t->mcp_policy);
	c->exec = strv_copy(t->exec, t->n_exec, &oom);
	c->env = strv_copy(t->env, t->n_env, &oom);
	c->secrets = strv_copy(t->secrets, t->n_secrets, &oom);
	c->programs = strv_copy(t->programs, t->n_programs, &oom);
	if (oom || !c->name || !c->mcp_policy) {
		conf_free(c);
		return -ENOMEM;
	}
	return 0;
}

static bool strv_equal(char *const *a, size_t na, char *const *b, size_t nb)
{
	size_t i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++)
		if (strcmp(a[i], b[i]))
			return false;
	return true;
}

/* Whether t is a tool of server s as it runs now (same entry name and how it runs). */
static bool conf_matches(const struct tool *c, const struct tool *t)
{
	return !strcmp(c->name, t->mcp_server) && !strcmp(c->mcp_policy, t->mcp_policy) &&
	       strv_equal(c->exec, c->n_exec, t->exec, t->n_exec) &&
	       strv_equal(c->env, c->n_env, t->env, t->n_env) &&
	       strv_equal(c->secrets, c->n_secrets, t->secrets, t->n_secrets) &&
	       strv_equal(c->programs, c->n_programs, t->programs, t->n_programs) &&
	       c->uid == t->uid && c->gid == t->gid && c->root == t->root &&
	       c->network_public == t->network_public &&
	       !memcmp(&c->limits, &t->limits, sizeof(c->limits));
}

/* ---- the accepted digests: <state-dir>/mcp/SERVER.json ---- */

static void digests_path(const struct server *s, char *path, size_t sz)
{
	snprintf(path, sz, "%s/" MCP_DIR "/%s.json", s->h->state_dir, s->conf.name);
}

static void digests_load(struct server *s)
{
	char path[PATH_MAX + 96];
	json_error_t jerr;
	json_t *doc;

	digests_path(s, path, sizeof(path));
	doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc && access(path, F_OK) == 0)
		log_err("mcp %s: %s: %s; every tool is refused until accepted again\n",
			s->conf.name, path, jerr.text);
	if (doc && !json_is_object(json_object_get(doc, "tools"))) {
		json_decref(doc);
		doc = NULL;
	}
	s->accepted = doc ? doc : json_pack("{s{}}", "tools");
	/* A file that does not read refuses everything: a marker no digest equals. */
	if (!doc && access(path, F_OK) == 0 && s->accepted)
		json_object_set_new(s->accepted, "unreadable", json_true());
}

static int digests_save(struct server *s)
{
	char path[PATH_MAX + 96], tmp[PATH_MAX + 112], dir[PATH_MAX + 16];
	int err = 0;

	snprintf(dir, sizeof(dir), "%s/" MCP_DIR, s->h->state_dir);
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	digests_path(s, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (json_dump_file(s->accepted, tmp, JSON_INDENT(1) | JSON_SORT_KEYS) || chmod(tmp, 0600) ||
	    rename(tmp, path))
		err = -EIO;
	if (err)
		unlink(tmp);
	return err;
}

/* The digest agentd accepted for a tool: NULL when none (the file unreadable: ""). */
static const char *accepted_digest(const struct server *s, const char *tool)
{
	if (json_object_get(s->accepted, "unreadable"))
		return "";
	return json_string_value(json_object_get(json_object_get(s->accepted, "tools"), tool));
}

/* ---- the process ---- */

static void unwatch(struct server *s, int *fd)
{
	if (*fd < 0)
		return;
	loop_del(s->h->env.loop, *fd);
	close(*fd);
	*fd = -1;
}

static void pending_finish(struct mcp_pending *p, const struct mcp_result *r);

static void fail_pending(struct server *s, const char *code, const char *msg)
{
	struct mcp_result r = { .code = code, .message = msg };

	while (s->calls)
		pending_finish(s->calls, &r);
}

static void wake_waiters(struct server *s)
{
	struct waiter *w;

	while ((w = s->waiters)) {
		s->waiters = w->next;
		w->fn(w->ctx, false);
		free(w);
	}
}

/* The server goes down (it exited, misbehaved or agentd stops): its calls fail with why. */
static void server_down(struct server *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void server_down(struct server *s, const char *fmt, ...)
{
	char path[PATH_MAX + 192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->error, sizeof(s->error), fmt, ap);
	va_end(ap);
	if (s->state != S_DOWN)
		log_warn("mcp %s: %s\n", s->conf.name, s->error);
	s->state = S_DOWN;
	if (s->pid > 0) {
		snprintf(path, sizeof(path), "%s/cgroup.kill", s->cgroup);
		cgroup_write(path, "1");
		waitpid(s->pid, NULL, 0);
		s->pid = -1;
	}
	unwatch(s, &s->pidfd);
	unwatch(s, &s->in_fd);
	unwatch(s, &s->out_fd);
	unwatch(s, &s->timer_fd);
	if (s->cgroup[0] && rmdir(s->cgroup) && errno != ENOENT)
		log_warn("mcp %s: removing %s: %s\n", s->conf.name, s->cgroup, strerror(errno));
	/* The network rule goes after the cgroup: never while a process could be there. */
	if (s->cgroup_id && enforcer_remove_tool_run(s->h->env.enforcer, s->cgroup_id))
		log_warn("mcp %s: forgetting its network rule, ignoring\n", s->conf.name);
	s->cgroup_id = 0;
	s->cgroup[0] = '\0';
	free(s->wbuf);
	s->wbuf = NULL;
	s->wlen = s->rlen = 0;
	mcp_tool_infos_free(s->listing, s->n_listing);
	s->listing = NULL;
	s->n_listing = 0;
	redactor_clear(&s->red);
	fail_pending(s, BROKER_E_FAILED, s->error);
	wake_waiters(s);
}

static void flush(struct server *s)
{
	ssize_t n;

	while (s->wlen) {
		n = write(s->in_fd, s->wbuf, s->wlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0) {
			/* Its end comes from the loop (pidfd, EPOLLERR): calls in progress here
			 * are not ended under their caller. */
			log_warn("mcp %s: writing to the server: %s\n", s->conf.name,
				 strerror(errno));
			s->wlen = 0;
			break;
		}
		memmove(s->wbuf, s->wbuf + n, s->wlen - n);
		s->wlen -= n;
	}
	loop_mod(s->h->env.loop, s->in_fd, s->wlen ? EPOLLOUT : 0);
}

static int send_doc(struct server *s, json_t *doc)
{
	size_t len;
	char *line = doc ? jsonrpc_line(doc, &len) : NULL, *p;

	json_decref(doc);
	if (!line)
		return -ENOMEM;
	p = realloc(s->wbuf, s->wlen + len);
	if (!p) {
		free(line);
		return -ENOMEM;
	}
	memcpy(p + s->wlen, line, len);
	s->wbuf = p;
	s->wlen += len;
	free(line);
	flush(s);
	return 0;
}

static long long request(struct server *s, const char *method, json_t *params)
{
	long long id = ++s->next_id;
	json_t *doc = json_pack("{ss sI ss so}", "jsonrpc", "2.0", "id", (json_int_t)id, "method",
				method, "params", params ? params : json_object());

	return send_doc(s, doc) ? -1 : id;
}

static void on_in(void *ctx, int fd, uint32_t events)
{
	struct server *s = ctx;

	(void)fd;
	if (events & (EPOLLERR | EPOLLHUP))
		server_down(s, "the upstream server ended: it closed its stdin");
	else
		flush(s);
}

static void on_exit_fd(void *ctx, int fd, uint32_t events)
{
	struct server *s = ctx;
	int status = 0;

	(void)fd, (void)events;
	if (waitpid(s->pid, &status, WNOHANG) <= 0)
		return;
	s->pid = -1;
	server_down(s, "the upstream server ended: it exited (%s %d)",
		    WIFSIGNALED(status) ? "signal" : "status",
		    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

static void on_start_timeout(void *ctx, int fd, uint32_t events)
{
	struct server *s = ctx;

	(void)fd, (void)events;
	server_down(s, "the server did not initialize and list its tools within %d s",
		    MCP_START_TIMEOUT);
}

static void on_line(struct server *s, const char *line, size_t len);

static void on_out(void *ctx, int fd, uint32_t events)
{
	struct server *s = ctx;
	char *nl, *p;
	size_t off;
	ssize_t n;

	(void)events;
	if (s->rcap - s->rlen < 65536) {
		if (s->rcap > MCP_CLIENT_LINE_MAX + 65536) {
			server_down(s, "the server sent a line over %u bytes", MCP_CLIENT_LINE_MAX);
			return;
		}
		p = realloc(s->rbuf, s->rcap * 2 + 65536);
		if (!p)
			return;
		s->rbuf = p;
		s->rcap = s->rcap * 2 + 65536;
	}
	n = read(fd, s->rbuf + s->rlen, s->rcap - s->rlen);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		server_down(s, "the upstream server ended: it closed its stdout");
		return;
	}
	s->rlen += n;
	for (off = 0; s->state != S_DOWN && (nl = memchr(s->rbuf + off, '\n', s->rlen - off));
	     off = nl + 1 - s->rbuf)
		on_line(s, s->rbuf + off, nl - (s->rbuf + off));
	if (s->state == S_DOWN)
		return;
	memmove(s->rbuf, s->rbuf + off, s->rlen - off);
	s->rlen -= off;
}

/* The environment: PATH, the registry's env, the secrets (each also in the redactor). */
static char **server_env(struct server *s, size_t *n)
{
	char **env = calloc(2 + s->conf.n_env + s->conf.n_secrets, sizeof(char *));
	char val[REDACT_SECRET_MAX + 1];
	size_t i, k = 0, len;
	int err = env ? 0 : -ENOMEM;

	if (env)
		env[k++] = strdup(TOOL_PATH_ENV);
	for (i = 0; env && i < s->conf.n_env; i++)
		env[k++] = strdup(s->conf.env[i]);
	for (i = 0; !err && i < s->conf.n_secrets; i++) {
		err = broker_secret_read(s->h->state_dir, s->conf.secrets[i], val, sizeof(val),
					 &len);
		if (err) {
			snprintf(s->error, sizeof(s->error), "secret %s unavailable: %s",
				 s->conf.secrets[i], strerror(-err));
			break;
		}
		if (asprintf(&env[k], "%s=%.*s", s->conf.secrets[i], (int)len, val) < 0)
			env[k] = NULL;
		k++;
		err = redactor_add_secret(&s->red, val, len);
	}
	explicit_bzero(val, sizeof(val));
	for (i = 0; !err && i < k; i++)
		if (!env[i])
			err = -ENOMEM;
	*n = k;
	if (err == -ENOMEM)
		snprintf(s->error, sizeof(s->error), "out of memory");
	if (err) {
		for (i = 0; env && i < k; i++)
			if (env[i])
				explicit_bzero(env[i], strlen(env[i]));
		strv_free(env, k);
		return NULL;
	}
	return env;
}

/* The server's own policy: its file rights (Landlock) and system calls (seccomp). */
static int server_sandbox(struct server *s, struct sandbox_seccomp *sc)
{
	struct policy_errors errs = {};
	struct policy *p = NULL;
	int fd, err;

	err = policy_load(s->conf.mcp_policy, NULL, NULL, &p, &errs);
	if (err) {
		if (errs.n)
			policy_error_format(&errs.v[0], s->error, sizeof(s->error));
		else
			snprintf(s->error, sizeof(s->error), "its policy %s: %s",
				 s->conf.mcp_policy, strerror(-err));
		policy_errors_clear(&errs);
		return err;
	}
	policy_errors_clear(&errs);
	fd = broker_tool_ruleset(s->h->env.landlock_abi, p, &s->conf, s->error, sizeof(s->error));
	sandbox_seccomp_from_policy(p, sc);
	policy_free(p);
	return fd;
}

static void child(const struct tool_spec *spec, int in, int out)
{
	sigset_t none;
	int null = open("/dev/null", O_WRONLY);

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	setsid();
	/* stderr goes nowhere: a server's log may hold its secrets. */
	if (null < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(null, 2) < 0)
		_exit(127);
	tool_child_confine(spec);
	syscall(SYS_close_range, 3U, ~0U, 0U);
	execve(spec->argv[0], spec->argv, spec->envp);
	_exit(127);
}

/* fork into the cgroup, stdin and stdout piped; the child confines itself and executes. */
static int spawn(struct server *s, const struct tool_spec *spec)
{
	int cgfd, in[2], out[2];

	cgfd = open(s->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgfd < 0)
		return -errno;
	if (pipe2(in, O_CLOEXEC)) {
		close(cgfd);
		return -errno;
	}
	if (pipe2(out, O_CLOEXEC)) {
		close(cgfd);
		close(in[0]);
		close(in[1]);
		return -errno;
	}
	s->pid = cgroup_fork_into(cgfd);
	if (s->pid == 0)
		child(spec, in[0], out[1]);
	close(cgfd);
	close(in[0]);
	close(out[1]);
	if (s->pid < 0) {
		close(in[1]);
		close(out[0]);
		return s->pid;
	}
	s->in_fd = in[1];
	s->out_fd = out[0];
	fcntl(s->in_fd, F_SETFL, O_NONBLOCK);
	fcntl(s->out_fd, F_SETFL, O_NONBLOCK);
	return 0;
}

static int watch(struct server *s)
{
	struct itimerspec its = { .it_value = { .tv_sec = MCP_START_TIMEOUT } };
	struct loop *l = s->h->env.loop;
	int e;

	s->pidfd = (int)syscall(SYS_pidfd_open, s->pid, 0);
	s->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (s->pidfd < 0 || s->timer_fd < 0 || timerfd_settime(s->timer_fd, 0, &its, NULL))
		return -errno;
	e = loop_add(l, s->out_fd, EPOLLIN, on_out, s);
	if (!e)
		e = loop_add(l, s->in_fd, 0, on_in, s);
	if (!e)
		e = loop_add(l, s->pidfd, EPOLLIN, on_exit_fd, s);
	if (!e)
		e = loop_add(l, s->timer_fd, EPOLLIN, on_start_timeout, s);
	return e;
}

static int limits_set(const char *cg, const struct limits *l)
{
	char missing[64];
	int e;

	if (!l->cpu_millicores && !l->memory_bytes && !l->pids)
		return 0;
	e = limits_apply(cg, l, missing, sizeof(missing));
	return e ? e : missing[0] ? -EOPNOTSUPP : 0;
}

/* Held to its network before anything runs in its cgroup; a server that cannot be is not run. */
static int hold_network(struct server *s)
{
	__u64 id;
	int e;

	if (!s->h->env.enforcer)
		return 0;
	e = cgroup_id(s->cgroup, &id);
	/* A public server resolves names: the host's name servers, as for a public tool. */
	if (!e && s->conf.network_public)
		e = resolvers_sync(s->h->env.enforcer);
	if (!e)
		e = enforcer_add_tool_run(s->h->env.enforcer, id, 0,
					  s->conf.network_public ? AGENTD_TOOL_NET_PUBLIC
								 : AGENTD_TOOL_NET_NONE);
	if (e)
		snprintf(s->error, sizeof(s->error), "holding its cgroup to its network: %s",
			 strerror(-e));
	else
		s->cgroup_id = id;
	return e;
}

static int server_start(struct server *s)
{
	struct sandbox_seccomp sc;
	struct tool_spec spec = { .argv = s->conf.exec,
				  .nofile = s->h->env.nofile,
				  .limits = &s->conf.limits,
				  .seccomp = &sc };
	size_t n_env = 0, i;
	char **env;
	int ruleset, err;

	s->error[0] = '\0';
	ruleset = server_sandbox(s, &sc);
	if (ruleset < 0)
		return ruleset;
	spec.ruleset_fd = ruleset;
	env = server_env(s, &n_env);
	if (!env) {
		close(ruleset);
		return -EPERM;
	}
	spec.envp = env;
	spec.uid = s->conf.root ? 0 : s->conf.uid ? s->conf.uid : MCP_ID_BASE + s->number;
	spec.gid = s->conf.root ? 0 : s->conf.uid ? s->conf.gid : MCP_ID_BASE + s->number;
	snprintf(s->cgroup, sizeof(s->cgroup), "%s/mcp-%s-%d-%u", s->h->tools_cg, s->conf.name,
		 (int)getpid(), s->number);
	err = mkdir(s->cgroup, 0755) ? -errno : 0;
	if (err)
		s->cgroup[0] = '\0';
	if (!err)
		err = limits_set(s->cgroup, &s->conf.limits);
	if (!err)
		err = hold_network(s);
	if (!err)
		err = spawn(s, &spec);
	close(ruleset);
	for (i = 0; i < n_env; i++)
		explicit_bzero(env[i], strlen(env[i]));
	strv_free(env, n_env);
	if (!err)
		err = watch(s);
	if (err && !s->error[0])
		snprintf(s->error, sizeof(s->error), "starting %s: %s", s->conf.exec[0],
			 strerror(-err));
	if (err)
		return err;
	s->state = S_INIT;
	s->init_id = request(s, "initialize",
			     json_pack("{ss s{} s{ss ss}}", "protocolVersion", mcp_versions[0],
				       "capabilities", "clientInfo", "name", "agentd", "version",
				       AGENTD_VERSION));
	return s->init_id < 0 ? -ENOMEM : 0;
}

static void server_ensure(struct server *s)
{
	int err;

	if (s->state != S_DOWN)
		return;
	err = server_start(s);
	if (err)
		server_down(s, "%s", s->error[0] ? s->error : strerror(-err));
}

/* ---- what the server says ---- */

static const struct mcp_tool_info *listed(const struct server *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->n_tools; i++)
		if (!strcmp(s->tools[i].name, name))
			return &s->tools[i];
	return NULL;
}

/* Whether the listed tool is the one accepted: its first listing is accepted (and saved). */
static bool tool_accepted(struct server *s, const struct mcp_tool_info *t)
{
	const char *have = accepted_digest(s, t->name);

	return have && !strcmp(have, t->digest);
}

/* A new list: tools seen for the first time are recorded; changed ones logged (refused). */
static void list_done(struct server *s)
{
	json_t *known = json_object_get(s->accepted, "tools");
	bool added = false;
	const char *have;
	size_t i;

	mcp_tool_infos_free(s->tools, s->n_tools);
	s->tools = s->listing;
	s->n_tools = s->n_listing;
	s->listing = NULL;
	s->n_listing = 0;
	for (i = 0; i < s->n_tools; i++) {
		have = accepted_digest(s, s->tools[i].name);
		if (!have && known &&
		    !json_object_set_new(known, s->tools[i].name, json_string(s->tools[i].digest)))
			added = true;
		else if (have && strcmp(have, s->tools[i].digest))
			log_warn("mcp %s: tool %s changed (its description or inputSchema) since "
				 "it was accepted: refused until agentctl tools accept %s.%s\n",
				 s->conf.name, s->tools[i].name, s->conf.name, s->tools[i].name);
	}
	if (added && digests_save(s))
		log_err("mcp %s: saving the tools' digests: %s\n", s->conf.name, strerror(EIO));
	s->state = S_READY;
	timerfd_settime(s->timer_fd, 0, &(struct itimerspec){ 0 }, NULL);
}

static void dispatch(struct server *s);

static void on_list(struct server *s, const struct mcp_in *m)
{
	char why[256], *cursor = NULL;

	if (!m->result) {
		server_down(s, "tools/list failed: %d %.128s", m->code, m->message);
		return;
	}
	if (mcp_in_tools(m->result, &s->listing, &s->n_listing, &cursor, why, sizeof(why))) {
		server_down(s, "tools/list: %s", why);
		return;
	}
	if (cursor) {
		s->list_id = request(s, "tools/list", json_pack("{ss}", "cursor", cursor));
		free(cursor);
		return;
	}
	list_done(s);
	wake_waiters(s);
	dispatch(s);
}

static void relist(struct server *s)
{
	mcp_tool_infos_free(s->listing, s->n_listing);
	s->listing = NULL;
	s->n_listing = 0;
	s->state = S_LIST;
	s->list_id = request(s, "tools/list", NULL);
}

static void on_init(struct server *s, const struct mcp_in *m)
{
	char why[256];

	if (!m->result) {
		server_down(s, "initialize failed: %d %.128s", m->code, m->message);
		return;
	}
	if (!mcp_in_initialized(m->result, why, sizeof(why))) {
		server_down(s, "initialize: %s", why);
		return;
	}
	send_doc(s, jsonrpc_notification("notifications/initialized", NULL));
	relist(s);
}

static struct mcp_pending *pending_by_id(struct server *s, long long id)
{
	struct mcp_pending *p;

	for (p = s->calls; p; p = p->next)
		if (p->rpc_id == id)
			return p;
	return NULL;
}

static void on_call_reply(struct mcp_pending *p, const struct mcp_in *m)
{
	struct mcp_result r = { 0 };
	char why[256], msg[320], *text = NULL, *out = NULL;
	size_t len = 0;

	if (!m->result) {
		snprintf(msg, sizeof(msg), "the upstream server's error %d: %.200s", m->code,
			 m->message);
		r.code = BROKER_E_FAILED;
		r.message = msg;
	} else if (mcp_in_call_result(m->result, &text, &len, &r.is_error, why, sizeof(why))) {
		snprintf(msg, sizeof(msg), "the upstream server's reply: %s", why);
		r.code = BROKER_E_FAILED;
		r.message = msg;
	} else if (redact(&p->s->red, text, len, p->cap < len ? p->cap : len, &out, &r.len,
			  &r.redacted)) {
		r.code = BROKER_E_FAILED;
		r.message = "out of memory";
	} else {
		r.text = out;
		r.truncated = len > p->cap;
	}
	pending_finish(p, &r);
	free(text);
	free(out);
}

/* A request of the server's own: ping is answered; agentd offers nothing else. */
static void on_server_request(struct server *s, const struct mcp_in *m)
{
	if (!m->req_id) {
		if (!strcmp(m->method, "notifications/tools/list_changed") && s->state == S_READY)
			relist(s);
		return;
	}
	if (!strcmp(m->method, "ping"))
		send_doc(s, jsonrpc_result(m->req_id, json_object()));
	else
		send_doc(s, jsonrpc_error(m->req_id, JSONRPC_METHOD_NOT_FOUND,
					  "agentd offers the server no methods"));
}

static void on_line(struct server *s, const char *line, size_t len)
{
	struct mcp_pending *p;
	struct mcp_in m;
	char why[256];

	if (!len)
		return;
	if (mcp_in_parse(line, len, &m, why, sizeof(why))) {
		server_down(s, "the server sent a malformed message: %s", why);
		return;
	}
	if (m.method)
		on_server_request(s, &m);
	else if (s->state == S_INIT && m.id == s->init_id)
		on_init(s, &m);
	else if (s->state == S_LIST && m.id == s->list_id)
		on_list(s, &m);
	else if ((p = pending_by_id(s, m.id)))
		on_call_reply(p, &m);
	mcp_in_free(&m);
}

/* ---- calls ---- */

static void pending_finish(struct mcp_pending *p, const struct mcp_result *r)
{
	struct mcp_pending **pp;
	struct mcp_result out = *r;

	for (pp = &p->s->calls; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	if (p->timer_fd >= 0) {
		loop_del(p->s->h->env.loop, p->timer_fd);
		close(p->timer_fd);
	}
	out.duration_us = (now_ns() - p->t0) / 1000;
	if (p->done)
		p->done(p->ctx, &out);
	json_decref(p->args);
	free(p);
}

static void cancel_upstream(struct mcp_pending *p, const char *reason)
{
	if (p->rpc_id > 0 && p->s->state != S_DOWN)
		send_doc(p->s,
			 jsonrpc_notification("notifications/cancelled",
					      json_pack("{sI ss}", "requestId",
							(json_int_t)p->rpc_id, "reason", reason)));
}

static void on_call_timeout(void *ctx, int fd, uint32_t events)
{
	struct mcp_pending *p = ctx;
	struct mcp_result r = { .code = BROKER_E_TIMEOUT,
				.message = "the upstream tool ran past its timeout" };

	(void)fd, (void)events;
	cancel_upstream(p, "timeout");
	pending_finish(p, &r);
}

/* A queued call once the server is ready: listed, accepted, its arguments on the schema. */
static void send_call(struct mcp_pending *p)
{
	struct server *s = p->s;
	const struct mcp_tool_info *t = listed(s, p->tool);
	struct mcp_result r = { .code = BROKER_E_FAILED };
	char why[256], msg[400];

	if (!t) {
		snprintf(msg, sizeof(msg), "the upstream server %s does not offer %s now",
			 s->conf.name, p->tool);
	} else if (!tool_accepted(s, t)) {
		r.code = BROKER_E_DENIED;
		snprintf(msg, sizeof(msg),
			 "the upstream tool %s.%s changed (its description or inputSchema) since "
			 "it was accepted: refused until agentctl tools accept %s.%s",
			 s->conf.name, p->tool, s->conf.name, p->tool);
	} else if (mcp_schema_check(t->schema, p->args, why, sizeof(why))) {
		r.code = BROKER_E_ARGS;
		snprintf(msg, sizeof(msg), "%s", why);
	} else {
		p->rpc_id = request(s, "tools/call",
				    json_pack("{ss sO}", "name", p->tool, "arguments", p->args));
		if (p->rpc_id > 0)
			return;
		snprintf(msg, sizeof(msg), "out of memory");
	}
	r.message = msg;
	pending_finish(p, &r);
}

static void dispatch(struct server *s)
{
	struct mcp_pending *p, *next;

	for (p = s->calls; s->state == S_READY && p; p = next) {
		next = p->next;
		if (!p->rpc_id)
			send_call(p);
	}
}

static struct server *server_for(struct mcp_hub *h, const struct tool *t, bool create)
{
	struct server *s;

	for (s = h->servers; s; s = s->next)
		if (conf_matches(&s->conf, t))
			return s;
	if (!create || !(s = calloc(1, sizeof(*s))))
		return NULL;
	if (conf_copy(t, &s->conf)) {
		free(s);
		return NULL;
	}
	s->h = h;
	s->number = h->n_servers++;
	s->pid = -1;
	s->pidfd = s->in_fd = s->out_fd = s->timer_fd = -1;
	digests_load(s);
	s->next = h->servers;
	h->servers = s;
	return s;
}

int mcp_hub_call(struct mcp_hub *h, const struct tool *t, const json_t *args, mcp_done_fn done,
		 void *ctx, struct mcp_pending **out)
{
	struct itimerspec its = { .it_value = { .tv_sec = t->timeout_sec } };
	struct server *s = server_for(h, t, true);
	struct mcp_pending *p;

	*out = NULL;
	if (!s || !(p = calloc(1, sizeof(*p))))
		return -ENOMEM;
	*p = (struct mcp_pending){ .s = s,
				   .args = json_deep_copy(args),
				   .timer_fd = -1,
				   .timeout_sec = t->timeout_sec,
				   .cap = t->output_cap,
				   .t0 = now_ns(),
				   .done = done,
				   .ctx = ctx };
	snprintf(p->tool, sizeof(p->tool), "%s", t->mcp_tool);
	p->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (!p->args || p->timer_fd < 0 || timerfd_settime(p->timer_fd, 0, &its, NULL) ||
	    loop_add(h->env.loop, p->timer_fd, EPOLLIN, on_call_timeout, p)) {
		if (p->timer_fd >= 0)
			close(p->timer_fd);
		json_decref(p->args);
		free(p);
		return -ENOMEM;
	}
	p->next = s->calls;
	s->calls = p;
	*out = p;
	server_ensure(s);
	if (s->state == S_READY && !p->rpc_id)
		send_call(p);
	return 0;
}

void mcp_hub_cancel(struct mcp_pending *p)
{
	struct mcp_result r = { .code = "killed", .message = "the caller went away" };

	cancel_upstream(p, "the caller went away");
	pending_finish(p, &r);
}

void mcp_hub_start(struct mcp_hub *h, const struct tool *t)
{
	struct server *s = server_for(h, t, true);

	if (s)
		server_ensure(s);
}

int mcp_hub_describe(struct mcp_hub *h, const struct tool *t, const char **description,
		     json_t **schema)
{
	struct server *s = server_for(h, t, false);
	const struct mcp_tool_info *i;

	if (!s)
		return -EAGAIN;
	if (s->state == S_DOWN)
		return -ENOENT;
	if (s->state == S_INIT || (s->state == S_LIST && !s->n_tools))
		return -EAGAIN;
	i = listed(s, t->mcp_tool);
	if (!i || !tool_accepted(s, i))
		return -ENOENT;
	*description = i->description;
	*schema = i->schema;
	return 0;
}

int mcp_hub_wait(struct mcp_hub *h, const struct tool *t, mcp_wait_fn fn, void *ctx,
		 const void *owner)
{
	struct server *s = server_for(h, t, true);
	struct waiter *w;

	if (!s || !(w = calloc(1, sizeof(*w))))
		return -ENOMEM;
	*w = (struct waiter){ .next = s->waiters, .fn = fn, .ctx = ctx, .owner = owner };
	s->waiters = w;
	server_ensure(s);
	return 0;
}

void mcp_hub_forget(struct mcp_hub *h, const void *owner)
{
	struct waiter **pp, *w;
	struct server *s;

	for (s = h ? h->servers : NULL; s; s = s->next)
		for (pp = &s->waiters; (w = *pp);) {
			if (w->owner != owner) {
				pp = &w->next;
				continue;
			}
			*pp = w->next;
			w->fn(w->ctx, true);
			free(w);
		}
}

int mcp_hub_accept(struct mcp_hub *h, const char *name, char *why, size_t whysz)
{
	const struct mcp_tool_info *t;
	const char *dot = strchr(name, '.');
	struct server *s;
	int found = 0;

	for (s = h->servers; dot && s; s = s->next) {
		if (strlen(s->conf.name) != (size_t)(dot - name) ||
		    strncmp(s->conf.name, name, dot - name) || !(t = listed(s, dot + 1)))
			continue;
		json_object_del(s->accepted, "unreadable");
		if (json_object_set_new(json_object_get(s->accepted, "tools"), t->name,
					json_string(t->digest)) ||
		    digests_save(s)) {
			snprintf(why, whysz, "saving the digest of %s: %s", name, strerror(EIO));
			return -EIO;
		}
		log_info("mcp %s: tool %s accepted as listed now (digest %.16s...)\n", s->conf.name,
			 t->name, t->digest);
		found = 1;
	}
	if (!found) {
		snprintf(why, whysz,
			 "no running upstream server lists %s (SERVER.TOOL, as an agent's policy "
			 "names it)",
			 name);
		return -ENOENT;
	}
	return 0;
}

json_t *mcp_hub_json(const struct mcp_hub *h)
{
	static const char *const states[] = { "down", "initializing", "listing", "ready" };
	json_t *list = json_array(), *o, *tools;
	const struct server *s;
	size_t i;

	for (s = h ? h->servers : NULL; list && s; s = s->next) {
		tools = json_object();
		for (i = 0; tools && i < s->n_tools; i++)
			json_object_set_new(
				tools, s->tools[i].name,
				json_string(tool_accepted((struct server *)s, &s->tools[i])
						    ? "accepted"
						    : "changed"));
		o = json_pack("{ss ss si so* ss}", "name", s->conf.name, "state", states[s->state],
			      "pid", (int)s->pid, "tools", tools, "error", s->error);
		json_array_append_new(list, o);
	}
	return list;
}

int mcp_hub_new(const struct mcp_hub_env *env, struct mcp_hub **out)
{
	struct mcp_hub *h = calloc(1, sizeof(*h));

	*out = NULL;
	if (!h)
		return -ENOMEM;
	h->env = *env;
	snprintf(h->state_dir, sizeof(h->state_dir), "%s", env->state_dir);
	snprintf(h->tools_cg, sizeof(h->tools_cg), "%s", env->tools_cg);
	h->env.state_dir = h->state_dir;
	h->env.tools_cg = h->tools_cg;
	*out = h;
	return 0;
}

void mcp_hub_free(struct mcp_hub *h)
{
	struct mcp_pending *p;
	struct server *s;

	while (h && (s = h->servers)) {
		h->servers = s->next;
		for (p = s->calls; p; p = p->next)
			p->done = NULL;
		server_down(s, "agentd stops");
		mcp_tool_infos_free(s->tools, s->n_tools);
		json_decref(s->accepted);
		free(s->rbuf);
		conf_free(&s->conf);
		free(s);
	}
	free(h);
}
