// SPDX-License-Identifier: GPL-2.0
/*
 * The broker's root side: the agents' sockets, who is calling, the policy, the tools' runs,
 * the audit. It never parses an agent's raw bytes (the worker does) and never blocks: the
 * channel to the worker, the sockets and the runs are fds in the daemon's loop.
 *
 * Over 800 lines, kept whole for now: connections, calls, tool runs and the agents' sockets
 * share struct broker, bagent, bconn and call, whose lifetimes (a call outliving its connection,
 * a connection outliving a reload) are checked here in one place. The tool runner itself is
 * broker_exec.c, a run's secrets and ruleset tool_prep.c, upstream MCP servers mcp_upstream.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <openssl/sha.h>
#include <bpf/bpf.h>
#include "wire/accept.h"
#include "wire/unixsock.h"
#include "audit_hold.h"
#include "broker/approval.h"
#include "broker/broker.h"
#include "broker/broker_int.h"
#include "broker/mcp_upstream.h"
#include "kernel/cgroup.h"
#include "kernel/enforcer.h"
#include "daemon.h"
#include "grants.h"
#include "sandbox/landlock.h"
#include "log.h"
#include "kernel/probe.h"
#include "spawn.h"
#include "sandbox/tool_sandbox.h"
#include "wire/control.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

#define AGENT_CALLS_MAX 64 /* calls of one agent in flight */
/* Reply bytes of one agent handed to its worker and not yet sent (the agent does not read):
 * past this, new calls are refused and a reply to queue ends its connection. */
#define AGENT_QUEUED_MAX (32ULL << 20)
#define TOOL_PATH_ENV "PATH=/usr/local/bin:/usr/bin:/bin"
#define CONN_SLOT_BITS 8 /* BROKER_CONNS_MAX */

struct qmsg {
	struct qmsg *next;
	int fd; /* sent with the first byte; -1: none */
	size_t len, off;
	char data[];
};

struct bconn {
	bool used;
	bool via_worker; /* reply bytes wait in the worker: later ones go there too, in order */
	__u32 id;
	int fd; /* agentd's own copy, to write replies on (the worker reads) */
	__u64 handed; /* reply bytes handed to the worker, for its MSG_DRAINED */
	__u64 drained; /* of those, what the worker said it sent */
	pid_t pid;
	uid_t uid;
	char comm[AUDIT_COMM_MAX];
	long long watch_id; /* agentd.tools with watch: the id its list is sent again with; -1 */
	bool watching;
};

/* An agent's socket, its worker and the connections the worker holds for it. */
struct bagent {
	struct broker *b;
	struct agent *a;
	int lfd;
	pid_t worker;
	int chan; /* to the worker; -1: none */
	struct qmsg *qhead, *qtail;
	bool want_out;
	char *in;
	size_t in_len, in_cap;
	struct bconn conns[BROKER_CONNS_MAX];
	__u32 gen;
	char dir[PATH_MAX + 80];
	char path[PATH_MAX + 96];
	char cgrel[PATH_MAX]; /* the agent's cgroup below the cgroup2 mount */
	__u64 calls, refused;
	unsigned in_flight;
	__u64 queued; /* reply bytes handed to the worker, not yet sent: AGENT_QUEUED_MAX */
	__u64 cookie; /* of the listening socket (SO_COOKIE), in broker_sockets; 0: not there */
};

struct call {
	struct broker *b;
	struct bagent *ba; /* NULL once the agent is gone */
	struct caller who;
	__u32 conn;
	long long id;
	char tool[TOOL_NAME_MAX + 1];
	__u64 args_len;
	unsigned char args_sha[32];
	struct tool_run *run;
	struct mcp_pending *mcp; /* a call of an upstream MCP server's tool (mcp_upstream.c) */
	struct call *next;
};

struct broker {
	struct daemon *d;
	char worker_path[PATH_MAX];
	int sockets_map; /* broker_sockets (BPF LSM's unix_stream_connect); -1: not loaded */
	struct call *calls;
	char cgroot[PATH_MAX];
	char tools_cg[PATH_MAX + 16];
	char rundir[PATH_MAX];
	__u64 n_calls, n_runs;
	rlim_t nofile; /* agentd's RLIMIT_NOFILE soft limit at start, the tools' */
	int landlock_abi; /* what holds tools to their callers' files; -errno: none, tools refused */
	char tools_missing[64]; /* controllers tool cgroups do not get here: "cpu, memory, pids" */
	struct broker_stats stats;
	struct mcp_hub *mcp;
};

static struct broker *the_broker;

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ---- metrics ---- */

/* A tool's counters. known: the name is in the caller's registry (checked by the caller). */
static struct broker_tool_stats *tool_stats(struct broker *b, const char *name, bool known)
{
	struct broker_stats *s = &b->stats;
	unsigned i;

	if (!known)
		return &s->tools[0];
	for (i = 1; i < s->n_tools; i++)
		if (!strcmp(s->tools[i].name, name))
			return &s->tools[i];
	if (s->n_tools == BROKER_STATS_TOOLS)
		return &s->tools[0];
	snprintf(s->tools[i].name, sizeof(s->tools[i].name), "%s", name);
	return &s->tools[s->n_tools++];
}

/* One call's outcome (BROKER_OUTCOMES; another code counts as failed); seconds < 0: it did not
 * run. */
static void count_call(struct broker *b, const char *tool, bool known, const char *outcome,
		       double seconds)
{
	static const char *const names[BROKER_N_OUTCOMES] = BROKER_OUTCOMES;
	struct broker_tool_stats *t = tool_stats(b, tool, known);
	unsigned i;

	for (i = 0; i < BROKER_N_OUTCOMES - 1 && strcmp(names[i], outcome); i++)
		;
	t->calls[i]++;
	if (seconds >= 0)
		metrics_histogram_observe(&t->seconds, seconds);
}

const struct broker_stats *broker_stats(void)
{
	return the_broker ? &the_broker->stats : NULL;
}

/* ---- the channel to the worker ---- */

static void chan_flush(struct bagent *b)
{
	struct qmsg *q;
	ssize_t n;

	while ((q = b->qhead)) {
		n = unix_send_fd(b->chan, q->data + q->off, q->len - q->off, q->fd,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == -EINTR)
			continue;
		if (n < 0)
			break;
		if (q->fd >= 0) {
			close(q->fd);
			q->fd = -1;
		}
		q->off += n;
		if (q->off < q->len)
			break;
		b->qhead = q->next;
		if (!b->qhead)
			b->qtail = NULL;
		free(q);
	}
	if (!!b->qhead != b->want_out) {
		b->want_out = !!b->qhead;
		loop_mod(b->b->d->loop, b->chan, EPOLLIN | (b->want_out ? EPOLLOUT : 0));
	}
}

/* Queues a message for the worker (fd, if any, is taken over). */
static int chan_send(struct bagent *b, __u32 type, __u32 conn, const void *data, size_t len, int fd)
{
	struct bmsg m = { type, conn, (__u32)len };
	struct qmsg *q = malloc(sizeof(*q) + sizeof(m) + len);

	if (!q) {
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	q->next = NULL;
	q->fd = fd;
	q->len = sizeof(m) + len;
	q->off = 0;
	memcpy(q->data, &m, sizeof(m));
	if (len)
		memcpy(q->data + sizeof(m), data, len);
	if (b->qtail)
		b->qtail->next = q;
	else
		b->qhead = q;
	b->qtail = q;
	chan_flush(b);
	return 0;
}

/* ---- connections ---- */

static struct bconn *conn_get(struct bagent *b, __u32 id)
{
	struct bconn *c = &b->conns[id & ((1U << CONN_SLOT_BITS) - 1)];

	return c->used && c->id == id ? c : NULL;
}

/* agentd stops counting what the worker holds for c (the worker sends it, or drops it). */
static void conn_forget(struct bagent *b, struct bconn *c)
{
	b->queued -= c->handed - c->drained;
	close(c->fd);
	c->fd = -1;
	c->used = false;
	approval_conn_gone(b, c->id);
}

/* agentd forgets conn; the agent sees it close once the worker has sent what it holds. */
static void conn_end(struct bagent *b, struct bconn *c)
{
	if (!c->used)
		return;
	if (!c->via_worker || chan_send(b, MSG_CLOSE, c->id, NULL, 0, -1))
		shutdown(c->fd, SHUT_RDWR);
	conn_forget(b, c);
}

static void audit_unread(struct bagent *b, struct bconn *c, size_t len);

/*
 * An agent that does not read its replies: once AGENT_QUEUED_MAX bytes of them wait, a reply
 * that would wait too ends its connection, and what the worker holds for it is dropped (the
 * socket is shut down under both copies). Audited as a refusal.
 */
static bool over_queue(struct bagent *b, struct bconn *c, size_t len)
{
	if (b->queued < AGENT_QUEUED_MAX)
		return false;
	audit_unread(b, c, len);
	shutdown(c->fd, SHUT_RDWR);
	conn_end(b, c);
	return true;
}

/*
 * agentd writes a reply on the agent's connection itself (one hop less than through the
 * worker) unless reply bytes of that connection already wait in the worker; what the socket
 * does not take at once goes to the worker, which sends it as the agent reads: agentd never
 * blocks on an agent, and one writer at a time keeps the frames whole.
 */
static void send_frame(struct bagent *b, struct bconn *c, const char *frame, size_t len)
{
	ssize_t n = 0;

	if (!c->via_worker) {
		n = send(c->fd, frame, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == (ssize_t)len || (n < 0 && errno != EAGAIN && errno != EINTR))
			return; /* sent, or the agent is gone (the worker will say so) */
		if (n < 0)
			n = 0;
	}
	if (over_queue(b, c, len - n))
		return;
	if (chan_send(b, MSG_REPLY, c->id, frame + n, len - n, -1)) {
		conn_end(b, c); /* a frame cut short: the stream is lost */
		return;
	}
	c->via_worker = true;
	c->handed += len - n;
	b->queued += len - n;
}

static void reply(struct bagent *b, __u32 conn, json_t *doc)
{
	struct bconn *c = conn_get(b, conn);
	size_t len;
	char *frame;
	int err;

	if (!doc)
		return;
	err = c ? broker_frame_encode(doc, BROKER_REPLY_MAX, &frame, &len) : 0;
	json_decref(doc);
	if (err)
		log_err("broker: encoding a reply: %s\n", strerror(-err));
	if (!c || err)
		return;
	send_frame(b, c, frame, len);
	free(frame);
}

static struct bconn *conn_new(struct bagent *b)
{
	size_t i;

	for (i = 0; i < BROKER_CONNS_MAX; i++)
		if (!b->conns[i].used) {
			memset(&b->conns[i], 0, sizeof(b->conns[i]));
			b->conns[i].used = true;
			b->conns[i].id = (++b->gen << CONN_SLOT_BITS) | (__u32)i;
			return &b->conns[i];
		}
	return NULL;
}

/* ---- audit ---- */

static void audit_call(struct broker *b, const struct caller *who, const char *tool, bool allow,
		       __u64 args_len, const unsigned char *args_sha, const char *out,
		       size_t out_len, const char *fmt, ...) __attribute__((format(printf, 9, 10)));

static void audit_call(struct broker *b, const struct caller *who, const char *tool, bool allow,
		       __u64 args_len, const unsigned char *args_sha, const char *out,
		       size_t out_len, const char *fmt, ...)
{
	struct audit_record *r;
	va_list ap;
	int err;

	if (!b->d->sink.audit)
		return;
	r = calloc(1, sizeof(*r));
	if (!r)
		return;
	r->kind = AUDIT_KIND_TOOL;
	snprintf(r->op, sizeof(r->op), "%s", allow ? "tool-call" : "tool-refused");
	r->agent = who->agent;
	snprintf(r->agent_name, sizeof(r->agent_name), "%s", who->agent_name);
	r->has = AUDIT_HAS_TOOL | AUDIT_HAS_PROC;
	r->pid = r->tid = who->pid;
	r->uid = who->uid;
	snprintf(r->comm, sizeof(r->comm), "%s", who->comm);
	r->decision = allow ? AUDIT_DECISION_ALLOW : AUDIT_DECISION_DENY;
	snprintf(r->tool, sizeof(r->tool), "%s", tool);
	r->args_len = args_len;
	if (args_sha)
		memcpy(r->args_sha256, args_sha, 32);
	else
		SHA256((const unsigned char *)"", 0, r->args_sha256);
	r->out_len = out_len;
	SHA256((const unsigned char *)(out ? out : ""), out_len, r->out_sha256);
	va_start(ap, fmt);
	vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
	va_end(ap);
	/* Group commit, as for the kernel's decisions: the daemon's loop syncs the batch. */
	err = audit_writer_append(b->d->sink.audit, r);
	if (err)
		log_err("audit log: tool record: %s\n", strerror(-err));
	free(r);
}

static void caller_of(const struct bagent *ba, const struct bconn *c, struct caller *who)
{
	memset(who, 0, sizeof(*who));
	who->agent = ba->a->st.id;
	snprintf(who->agent_name, sizeof(who->agent_name), "%s", ba->a->st.name);
	who->pid = c->pid;
	who->uid = c->uid;
	snprintf(who->comm, sizeof(who->comm), "%s", c->comm);
}

/* Refuses a request: the reply, the audit record, the count. */
static void refuse(struct bagent *ba, struct bconn *c, long long id, const char *tool,
		   __u64 args_len, const unsigned char *args_sha, const char *code, const char *msg)
{
	struct caller who;

	caller_of(ba, c, &who);
	reply(ba, c->id, broker_reply_error(id, code, msg));
	audit_call(ba->b, &who, tool, false, args_len, args_sha, NULL, 0, "outcome=%s reason=%s",
		   code, msg);
	ba->refused++;
	count_call(ba->b, tool, ba->a->tools && tools_find(ba->a->tools, tool), code, -1);
}

static void audit_unread(struct bagent *b, struct bconn *c, size_t len)
{
	struct caller who;

	caller_of(b, c, &who);
	audit_call(b->b, &who, "?", false, 0, NULL, NULL, 0,
		   "outcome=%s reason=the agent has not read %llu bytes of replies: a reply of %zu "
		   "bytes dropped and its connection closed",
		   BROKER_E_BUSY, (unsigned long long)b->queued, len);
	b->refused++;
}

/* ---- running tools ---- */

static void call_free(struct call *call)
{
	struct call **pp;

	for (pp = &call->b->calls; *pp; pp = &(*pp)->next)
		if (*pp == call) {
			*pp = call->next;
			break;
		}
	if (call->ba)
		call->ba->in_flight--;
	tool_run_free(call->run);
	free(call);
}

static void call_done(void *ctx, struct tool_run *run, const struct tool_run_result *res)
{
	struct call *call = ctx;
	struct broker *b = call->b;
	int code = WIFEXITED(res->status)     ? WEXITSTATUS(res->status)
		   : WIFSIGNALED(res->status) ? 128 + WTERMSIG(res->status)
					      : 255;
	struct broker_output out = { res->out, res->out_len }, err = { res->err, res->err_len };
	const char *outcome = !call->ba ? "killed" : res->timed_out ? "timeout" : "ok";

	(void)run;
	if (call->ba && res->timed_out)
		reply(call->ba, call->conn,
		      broker_reply_error(call->id, BROKER_E_TIMEOUT,
					 "the tool ran past its timeout and was killed"));
	else if (call->ba)
		reply(call->ba, call->conn,
		      broker_reply_ok(call->id, code, out, err, res->truncated, res->redacted));
	audit_call(b, &call->who, call->tool, true, call->args_len, call->args_sha, res->out,
		   res->out_len,
		   "outcome=%s exit=%d duration_us=%llu truncated=%s redacted=%u err_len=%zu",
		   outcome, code, (unsigned long long)res->duration_us,
		   res->truncated ? "true" : "false", res->redacted, res->err_len);
	/* Granted when it started: the name is its registry's. */
	count_call(b, call->tool, true, outcome, res->duration_us / 1e6);
	call_free(call);
}

/* An upstream tool's call ended: as an exec tool's (the server's answer), or refused by the hub
 * (not offered, changed since accepted, off the server's schema). */
static void mcp_call_done(void *ctx, const struct mcp_result *r)
{
	struct broker_output out = { r->text ? r->text : "", r->len }, none = { "", 0 };
	struct call *call = ctx;
	struct broker *b = call->b;
	bool ran = !r->code || !strcmp(r->code, BROKER_E_TIMEOUT);
	const char *outcome = !call->ba ? "killed" : r->code ? r->code : "ok";

	call->mcp = NULL;
	if (call->ba && r->code)
		reply(call->ba, call->conn, broker_reply_error(call->id, r->code, r->message));
	else if (call->ba)
		reply(call->ba, call->conn,
		      broker_reply_ok(call->id, r->is_error ? 1 : 0, out, none, r->truncated,
				      r->redacted));
	if (ran || !call->ba)
		audit_call(b, &call->who, call->tool, true, call->args_len, call->args_sha,
			   out.data, out.len,
			   "outcome=%s exit=%d duration_us=%llu truncated=%s redacted=%u "
			   "upstream=mcp",
			   outcome, r->is_error ? 1 : 0, (unsigned long long)r->duration_us,
			   r->truncated ? "true" : "false", r->redacted);
	else
		audit_call(b, &call->who, call->tool, false, call->args_len, call->args_sha, NULL,
			   0, "outcome=%s reason=%s", r->code, r->message);
	if (call->ba && !ran)
		call->ba->refused++;
	count_call(b, call->tool, true, outcome, ran ? r->duration_us / 1e6 : -1);
	call_free(call);
}

/* One argv element with its {name} placeholders replaced. */
static char *expand(const char *tmpl, const json_t *args)
{
	const char *p = tmpl, *end, *v;
	char name[64], num[32], *out;
	size_t len;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		return NULL;
	while (*p) {
		v = NULL;
		end = *p == '{' ? strchr(p, '}') : NULL;
		if (end && (size_t)(end - p - 1) < sizeof(name)) {
			memcpy(name, p + 1, end - p - 1);
			name[end - p - 1] = '\0';
			v = broker_arg_text(args, name, num, sizeof(num));
		}
		if (v) {
			fputs(v, f);
			p = end + 1;
		} else {
			fputc(*p++, f);
		}
	}
	if (fclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}

static void strv_free(char **v, size_t n, bool wipe)
{
	size_t i;

	for (i = 0; v && i < n; i++) {
		if (v[i] && wipe)
			explicit_bzero(v[i], strlen(v[i]));
		free(v[i]);
	}
	free(v);
}

/* Root only when the registry says so; else its uid, or the agent's own tool id. */
static void tool_ids(const struct tool *t, __u32 agent, unsigned int *uid, unsigned int *gid)
{
	if (t->root)
		*uid = *gid = 0;
	else if (t->uid)
		*uid = t->uid, *gid = t->gid;
	else
		*uid = *gid = BROKER_TOOL_ID_BASE + agent;
}

/* The environment: PATH, the registry's env, the secrets (each also given to the redactor). */
static int build_env(struct broker *b, const struct tool *t, char ***envp, size_t *n,
		     struct redactor *red, char *why, size_t whysz)
{
	char **env = calloc(2 + t->n_env + t->n_secrets, sizeof(char *));
	char val[REDACT_SECRET_MAX + 1];
	size_t i, len = 0, k = 0;
	int err = 0;

	*envp = env;
	if (!env)
		return -ENOMEM;
	env[k++] = strdup(TOOL_PATH_ENV);
	for (i = 0; i < t->n_env; i++)
		env[k++] = strdup(t->env[i]);
	for (i = 0; !err && i < t->n_secrets; i++) {
		err = broker_secret_read(b->d->o->state_dir, t->secrets[i], val, sizeof(val), &len);
		if (err) {
			snprintf(why, whysz, "secret %s unavailable: %s", t->secrets[i],
				 strerror(-err));
			break;
		}
		env[k] = malloc(strlen(t->secrets[i]) + len + 2);
		if (env[k])
			sprintf(env[k], "%s=%.*s", t->secrets[i], (int)len, val);
		err = redactor_add_secret(red, val, len);
		k++;
	}
	explicit_bzero(val, sizeof(val));
	*n = k;
	for (i = 0; !err && i < k; i++)
		if (!env[i])
			err = -ENOMEM;
	if (err == -ENOMEM)
		snprintf(why, whysz, "out of memory");
	return err;
}

static int start_run(struct broker *b, struct call *call, const struct tool *t, const json_t *args,
		     char *why, size_t whysz)
{
	char cg[PATH_MAX + 16 + 2 * AUDIT_NAME_MAX], **argv = calloc(t->n_exec + 1, sizeof(char *)),
						     **env = NULL;
	struct redactor red = { 0 };
	struct sandbox_seccomp sc;
	struct tool_spec spec;
	size_t i, n_env = 0;
	int err = argv ? 0 : -ENOMEM, ruleset;

	ruleset = broker_tool_ruleset(b->landlock_abi, call->ba->a->policy, t, why, whysz);
	if (ruleset < 0) {
		free(argv);
		return ruleset;
	}
	sandbox_seccomp_from_policy(call->ba->a->policy, &sc);
	for (i = 0; !err && i < t->n_exec; i++)
		if (!(argv[i] = expand(t->exec[i], args)))
			err = -ENOMEM;
	if (!err)
		err = build_env(b, t, &env, &n_env, &red, why, whysz);
	/* agentd's pid in the name: a run left by an agentd before cannot collide. */
	snprintf(cg, sizeof(cg), "%s/%s-%d-%llu", b->tools_cg, call->who.agent_name, (int)getpid(),
		 (unsigned long long)++b->n_runs);
	spec = (struct tool_spec){ .cgroup = cg,
				   .argv = argv,
				   .envp = env,
				   .timeout_sec = t->timeout_sec,
				   .output_cap = t->output_cap,
				   .redactor = &red,
				   .nofile = b->nofile,
				   .limits = &t->limits,
				   .ruleset_fd = ruleset,
				   .seccomp = &sc,
				   .enforcer = b->d->e,
				   .agent_id = call->who.agent,
				   .network = t->network_public ? AGENTD_TOOL_NET_PUBLIC
								: AGENTD_TOOL_NET_NONE };
	tool_ids(t, call->who.agent, &spec.uid, &spec.gid);
	if (!err && t->network_public) {
		err = resolvers_sync(b->d->e);
		if (err)
			snprintf(why, whysz, "setting the name servers a public tool reaches: %s",
				 strerror(-err));
	}
	if (!err) {
		err = tool_run_start(b->d->loop, &spec, call_done, call, &call->run);
		if (err)
			snprintf(why, whysz, "starting %s: %s", t->exec[0], strerror(-err));
	} else {
		close(ruleset);
		if (err == -ENOMEM)
			snprintf(why, whysz, "out of memory");
	}
	redactor_clear(&red);
	strv_free(argv, t->n_exec, false);
	strv_free(env, n_env, true);
	return err;
}

/* A limit of the tool's whose controller tool cgroups lack here: the call is refused (fail
 * closed), with why. */
static bool limits_unenforceable(const struct broker *b, const struct tool *t, char *why,
				 size_t whysz)
{
	const char *what = t->limits.cpu_millicores && strstr(b->tools_missing, "cpu")	  ? "cpu"
			   : t->limits.memory_bytes && strstr(b->tools_missing, "memory") ? "memory"
			   : t->limits.pids && strstr(b->tools_missing, "pids")		  ? "pids"
											  : NULL;

	if (what)
		snprintf(why, whysz,
			 "the tool's %s limit cannot be enforced here (cgroup v2 has no %s "
			 "controller): not run",
			 what, what);
	return what;
}

static const struct tool *granted(const struct agent *a, const char *name)
{
	size_t i;

	if (!a->policy)
		return NULL;
	for (i = 0; i < a->policy->n_tools; i++)
		if (a->policy->tools[i].def && !strcmp(a->policy->tools[i].name, name))
			return a->policy->tools[i].def;
	return NULL;
}

static void builtin(struct bagent *ba, struct bconn *c, const struct broker_request *req,
		    const struct tool *t, __u64 args_len, const unsigned char *args_sha)
{
	struct broker_output none = { "", 0 };
	struct caller who;
	__u64 t0 = now_ns();

	caller_of(ba, c, &who);
	reply(ba, c->id, broker_reply_ok(req->id, 0, none, none, false, 0));
	audit_call(ba->b, &who, req->tool, true, args_len, args_sha, NULL, 0,
		   "outcome=ok exit=0 duration_us=%llu builtin=%s",
		   (unsigned long long)(now_ns() - t0) / 1000, t->builtin);
	count_call(ba->b, req->tool, true, "ok", (now_ns() - t0) / 1e9);
}

/* An upstream tool as its server lists it, when offered and accepted; else NULL. */
static json_t *mcp_tool_json(const struct tool *t)
{
	const char *desc;
	json_t *schema;

	if (mcp_hub_describe(the_broker->mcp, t, &desc, &schema))
		return NULL;
	return json_pack("{ss ss sO ss}", "name", t->name, "effect", tool_effect_name(t->effect),
			 "inputSchema", schema, "description", desc);
}

/* The agent's granted tools as {"tools": [{"name", "description", "effect", "inputSchema"}]}. */
static char *granted_json(const struct agent *a)
{
	const struct tool *t;
	json_t *doc = json_pack("{s[]}", "tools"), *list = json_object_get(doc, "tools"), *o;
	char *text = NULL;
	size_t i;

	for (i = 0; doc && a->policy && i < a->policy->n_tools; i++) {
		t = a->policy->tools[i].def;
		if (!t)
			continue;
		o = t->mcp_server ? mcp_tool_json(t)
				  : json_pack("{ss ss so}", "name", t->name, "effect",
					      tool_effect_name(t->effect), "inputSchema",
					      tool_input_schema(t));
		if (!o && t->mcp_server)
			continue; /* not offered now */
		if (!o ||
		    (t->description &&
		     json_object_set_new(o, "description", json_string(t->description))) ||
		    json_array_append_new(list, o))
			goto out;
	}
	text = doc ? json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
out:
	json_decref(doc);
	return text;
}

/*
 * TOOLS_LIST_NAME: answered by agentd from the agent's policy, audited as a call. With "watch":
 * true the connection gets the list again, under the same id, after each policy reload.
 */
static void list_answer(struct bagent *ba, struct bconn *c, long long id, __u64 args_len,
			const unsigned char *args_sha);

static void list_tools(struct bagent *ba, struct bconn *c, const struct broker_request *req,
		       __u64 args_len, const unsigned char *args_sha)
{
	json_t *watch = json_object_get(req->args, "watch");

	if (json_object_size(req->args) > (watch ? 1 : 0) || (watch && !json_is_boolean(watch))) {
		refuse(ba, c, req->id, req->tool, args_len, args_sha, BROKER_E_ARGS,
		       "takes only \"watch\", a boolean");
		return;
	}
	if (json_is_true(watch)) {
		c->watching = true;
		c->watch_id = req->id;
	}
	list_answer(ba, c, req->id, args_len, args_sha);
}

/* A tools list waiting for an upstream server to list its tools. */
struct list_wait {
	struct bagent *ba;
	__u32 conn;
	long long id;
	__u64 args_len;
	unsigned char args_sha[32];
};

static void list_resume(void *ctx, bool gone)
{
	struct list_wait *w = ctx;
	struct bconn *c = gone ? NULL : conn_get(w->ba, w->conn);

	if (c)
		list_answer(w->ba, c, w->id, w->args_len, w->args_sha);
	free(w);
}

/* A granted upstream tool whose server is starting or listing: the list waits for it. */
static bool list_waits(struct bagent *ba, struct bconn *c, long long id, __u64 args_len,
		       const unsigned char *args_sha)
{
	const struct tool *t;
	struct list_wait *w;
	const char *desc;
	json_t *schema;
	size_t i;

	for (i = 0; ba->a->policy && i < ba->a->policy->n_tools; i++) {
		t = ba->a->policy->tools[i].def;
		if (!t || !t->mcp_server ||
		    mcp_hub_describe(ba->b->mcp, t, &desc, &schema) != -EAGAIN)
			continue;
		w = calloc(1, sizeof(*w));
		if (!w)
			return false;
		*w = (struct list_wait){ .ba = ba, .conn = c->id, .id = id, .args_len = args_len };
		memcpy(w->args_sha, args_sha, 32);
		if (mcp_hub_wait(ba->b->mcp, t, list_resume, w, ba)) {
			free(w);
			return false;
		}
		return true;
	}
	return false;
}

static void list_answer(struct bagent *ba, struct bconn *c, long long id, __u64 args_len,
			const unsigned char *args_sha)
{
	struct broker_output none = { "", 0 }, out;
	char *text = NULL;
	struct caller who;
	__u64 t0 = now_ns();

	if (list_waits(ba, c, id, args_len, args_sha))
		return;
	text = granted_json(ba->a);
	if (!text) {
		refuse(ba, c, id, TOOLS_LIST_NAME, args_len, args_sha, BROKER_E_FAILED,
		       "out of memory");
		return;
	}
	out = (struct broker_output){ text, strlen(text) };
	caller_of(ba, c, &who);
	ba->calls++;
	reply(ba, c->id, broker_reply_ok(id, 0, out, none, false, 0));
	audit_call(ba->b, &who, TOOLS_LIST_NAME, true, args_len, args_sha, text, out.len,
		   "outcome=ok exit=0 duration_us=%llu builtin=list",
		   (unsigned long long)(now_ns() - t0) / 1000);
	/* One reserved name: its own row, as a registry tool's. */
	count_call(ba->b, TOOLS_LIST_NAME, true, "ok", (now_ns() - t0) / 1e9);
	free(text);
}

/* A call of an upstream tool: the hub checks the server's schema and the tool's digest, and may
 * end the call before it returns (mcp_call_done() frees it). */
static void mcp_call_start(struct bagent *ba, struct bconn *c, const struct broker_request *req,
			   const struct tool *t, __u64 len, const unsigned char *sha)
{
	struct call *call = calloc(1, sizeof(*call));
	int err;

	if (!call) {
		refuse(ba, c, req->id, req->tool, len, sha, BROKER_E_FAILED, "out of memory");
		return;
	}
	*call = (struct call){
		.b = ba->b, .ba = ba, .conn = c->id, .id = req->id, .args_len = len
	};
	caller_of(ba, c, &call->who);
	snprintf(call->tool, sizeof(call->tool), "%s", req->tool);
	memcpy(call->args_sha, sha, 32);
	call->next = ba->b->calls;
	ba->b->calls = call;
	ba->calls++;
	ba->in_flight++;
	err = mcp_hub_call(ba->b->mcp, t, req->args, mcp_call_done, call, &call->mcp);
	if (err) {
		ba->calls--;
		call_free(call);
		refuse(ba, c, req->id, req->tool, len, sha, BROKER_E_FAILED,
		       err == -ENOMEM ? "out of memory" : "the upstream server did not start");
	}
}

/* The policy's checks, then the call (held first when it needs approval; approved: the id of
 * the operator's approval, which holds it no more). */
static void dispatch(struct bagent *ba, struct bconn *c, const struct broker_request *req,
		     __u64 len, const unsigned char *sha, const char *approved)
{
	struct broker *b = ba->b;
	struct broker_error err = { 0 };
	struct held_call held = { .ba = ba, .conn = c->id, .req = *req, .args_len = len };
	const struct tool *t;
	struct call *call;
	char why[256];
	int hold = 0;

	caller_of(ba, c, &held.who);
	memcpy(held.args_sha, sha, 32);
	t = granted(ba->a, req->tool);
	/* A tool of its registry the policy does not grant: a grant may, for a while (a call
	 * held for approval used it when it came: when approved, the grant must still hold). */
	if (!t && ba->a->tools && tools_find(ba->a->tools, req->tool) &&
	    grants_tool_use(ba->b->d, ba->a, req->tool, approved != NULL))
		t = tools_find(ba->a->tools, req->tool);
	if (audit_blocked(ba->a)) {
		refuse(ba, c, req->id, req->tool, len, sha, BROKER_E_BUSY,
		       "the audit log cannot be written: the agent is frozen until it can");
	} else if (!strcmp(req->tool, TOOLS_LIST_NAME)) {
		list_tools(ba, c, req, len, sha);
	} else if (!t) {
		refuse(ba, c, req->id, req->tool, len, sha, BROKER_E_DENIED,
		       "the agent's policy does not grant this tool");
	} else if (!t->mcp_server && broker_args_check(t, req->args, &err)) {
		refuse(ba, c, req->id, req->tool, len, sha, err.code, err.message);
	} else if (ba->in_flight >= AGENT_CALLS_MAX) {
		refuse(ba, c, req->id, req->tool, len, sha, BROKER_E_BUSY,
		       "too many calls in flight");
	} else if (ba->queued >= AGENT_QUEUED_MAX) {
		refuse(ba, c, req->id, req->tool, len, sha, BROKER_E_BUSY,
		       "too many bytes of this agent's replies are not read yet");
	} else if (!approved && (hold = approval_hold(&held, ba->a, t, why, sizeof(why)))) {
		if (hold < 0)
			refuse(ba, c, req->id, req->tool, len, sha, BROKER_E_FAILED, why);
		else
			ba->in_flight++; /* until held_done() */
	} else if (t->builtin) {
		ba->calls++;
		builtin(ba, c, req, t, len, sha);
	} else if (t->mcp_server) {
		mcp_call_start(ba, c, req, t, len, sha);
	} else if (limits_unenforceable(b, t, why, sizeof(why))) {
		refuse(ba, c, req->id, req->tool, len, sha, BROKER_E_FAILED, why);
	} else if (!(call = calloc(1, sizeof(*call)))) {
		refuse(ba, c, req->id, req->tool, len, sha, BROKER_E_FAILED, "out of memory");
	} else {
		*call = (struct call){
			.b = b, .ba = ba, .conn = c->id, .id = req->id, .args_len = len
		};
		call->who = held.who;
		snprintf(call->tool, sizeof(call->tool), "%s", req->tool);
		memcpy(call->args_sha, sha, 32);
		if (start_run(b, call, t, req->args, why, sizeof(why))) {
			refuse(ba, c, req->id, req->tool, len, sha, BROKER_E_FAILED, why);
			free(call);
		} else {
			call->next = b->calls;
			b->calls = call;
			ba->calls++;
			ba->in_flight++;
		}
	}
}

/* A held call goes on (approval.h's approval_done_fn). */
static void held_done(const struct held_call *call, const char *approval, const char *refusal)
{
	struct bagent *ba = call->ba;
	struct bconn *c = conn_get(ba, call->conn);

	ba->in_flight--;
	if (c && refusal)
		refuse(ba, c, call->req.id, call->req.tool, call->args_len, call->args_sha,
		       BROKER_E_DENIED, refusal);
	else if (c)
		dispatch(ba, c, &call->req, call->args_len, call->args_sha, approval);
}

/* A request the worker passed on: its binary form checked and decoded, then the policy. */
static void on_request(struct bagent *ba, struct bconn *c, const char *data, size_t len)
{
	struct broker_error err = { 0 };
	unsigned char sha[32];
	struct broker_request req;
	char *args = NULL;

	ba->b->n_calls++;
	if (broker_request_decode(data, len, &req, &err)) {
		refuse(ba, c, -1, "?", len, NULL, BROKER_E_REQUEST,
		       "the worker's request is invalid");
		return;
	}
	args = json_dumps(req.args, JSON_COMPACT | JSON_SORT_KEYS);
	SHA256((const unsigned char *)(args ? args : ""), args ? strlen(args) : 0, sha);
	len = args ? strlen(args) : 0;
	free(args);
	dispatch(ba, c, &req, len, sha, NULL);
	broker_request_free(&req);
}

/* The codes a worker may refuse a frame with; anything else is an impossible message. */
static bool worker_code(const char *code)
{
	return !strcmp(code, BROKER_E_FRAME) || !strcmp(code, BROKER_E_JSON) ||
	       !strcmp(code, BROKER_E_REQUEST) || !strcmp(code, BROKER_E_FAILED);
}

static void count_frame(struct broker *b, const char *code)
{
	static const char *const codes[BROKER_N_FRAME_CODES] = BROKER_FRAME_CODES;
	unsigned i;

	for (i = 0; i < BROKER_N_FRAME_CODES; i++)
		if (!strcmp(codes[i], code))
			b->stats.frames_refused[i]++;
}

/* A frame the worker refused: agentd replies (and closes when the framing is lost), audits. */
static int on_refused(struct bagent *ba, struct bconn *c, const char *data, size_t len)
{
	struct bmsg_refused r;
	struct caller who;

	if (len != sizeof(r))
		return -EPROTO;
	memcpy(&r, data, sizeof(r));
	if (!memchr(r.err.code, '\0', sizeof(r.err.code)) ||
	    !memchr(r.err.message, '\0', sizeof(r.err.message)) || !worker_code(r.err.code) ||
	    r.id < -1 || r.id > BROKER_ID_MAX || r.close > 1 ||
	    r.len > BROKER_HDR + BROKER_REQUEST_MAX)
		return -EPROTO;
	if (!c)
		return 0;
	caller_of(ba, c, &who);
	reply(ba, c->id, broker_reply_error(r.id, r.err.code, r.err.message));
	audit_call(ba->b, &who, "?", false, r.len, r.sha256, NULL, 0, "outcome=%s reason=%s",
		   r.err.code, r.err.message);
	ba->refused++;
	count_frame(ba->b, r.err.code);
	if (r.close)
		conn_end(ba, c);
	return 0;
}

/* The worker sent reply bytes of c (a running count); once all: agentd may write on c itself. */
static int on_drained(struct bagent *ba, struct bconn *c, const char *data, size_t len)
{
	__u64 sent;

	if (len != sizeof(sent))
		return -EPROTO;
	memcpy(&sent, data, sizeof(sent));
	if (c && (sent > c->handed || sent < c->drained))
		return -EPROTO;
	if (!c)
		return 0;
	ba->queued -= sent - c->drained;
	c->drained = sent;
	if (sent == c->handed)
		c->via_worker = false;
	return 0;
}

/* One message of the worker; -EPROTO for an impossible one. c is NULL for a connection agentd
 * has forgotten (ended on its side while the worker's message was on its way). */
static int message(struct bagent *ba, const struct bmsg *m, const char *data)
{
	struct bconn *c = conn_get(ba, m->conn);

	switch (m->type) {
	case MSG_REQUEST:
		if (c)
			on_request(ba, c, data, m->len);
		return 0;
	case MSG_REFUSED:
		return on_refused(ba, c, data, m->len);
	case MSG_DRAINED:
		return on_drained(ba, c, data, m->len);
	case MSG_CLOSED:
		if (m->len)
			return -EPROTO;
		if (c)
			conn_forget(ba, c);
		return 0;
	}
	return -EPROTO;
}

/* agentd-worker AGENT-ID, exec'd by the one spawn helper, its channel as fd BMSG_FD. */
static int spawn(struct bagent *ba)
{
	char id[16], name[96];
	char *argv[] = { "agentd-worker", id, NULL };
	int err;

	_Static_assert(BMSG_FD == SPAWN_CHAN_FD, "the broker worker's channel");
	snprintf(id, sizeof(id), "%u", ba->a->st.id);
	snprintf(name, sizeof(name), "broker worker of %s", ba->a->st.name);
	err = spawn_worker(ba->b->d->loop, name, ba->b->worker_path, argv, SOCK_STREAM, &ba->worker,
			   &ba->chan);
	if (!err)
		fcntl(ba->chan, F_SETFL, O_NONBLOCK);
	return err;
}

static void on_chan(void *ctx, int fd, uint32_t events);

static int worker_start(struct bagent *ba)
{
	int err = spawn(ba);

	if (!err)
		err = loop_add(ba->b->d->loop, ba->chan, EPOLLIN, on_chan, ba);
	ba->want_out = false;
	return err;
}

/* Ends the worker and forgets its connections (the agent sees them close). */
static void worker_stop(struct bagent *ba, int *status)
{
	struct qmsg *q;
	size_t i;

	if (ba->chan >= 0) {
		loop_del(ba->b->d->loop, ba->chan);
		close(ba->chan);
		ba->chan = -1;
	}
	if (ba->worker > 0) {
		kill(ba->worker, SIGKILL);
		waitpid(ba->worker, status, 0);
		ba->worker = -1;
	}
	while ((q = ba->qhead)) {
		ba->qhead = q->next;
		if (q->fd >= 0)
			close(q->fd);
		free(q);
	}
	ba->qtail = NULL;
	ba->in_len = 0;
	for (i = 0; i < BROKER_CONNS_MAX; i++)
		if (ba->conns[i].used)
			conn_forget(ba, &ba->conns[i]);
}

/* The worker died (or misbehaved): a new one starts. */
static void worker_lost(struct bagent *ba)
{
	pid_t pid = ba->worker;
	int status = 0, err;

	worker_stop(ba, &status);
	log_err("broker: agent %s's worker %d ended (%s %d); restarting it\n", ba->a->st.name,
		(int)pid, WIFSIGNALED(status) ? "signal" : "status",
		WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	err = worker_start(ba);
	if (err)
		log_err("broker: agent %s: starting its worker: %s\n", ba->a->st.name,
			strerror(-err));
}

static void on_chan(void *ctx, int fd, uint32_t events)
{
	struct bagent *b = ctx;
	size_t off = 0;
	struct bmsg m;
	ssize_t n;

	if (events & EPOLLOUT)
		chan_flush(b);
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	/* One read per call: a worker that floods agentd waits for the loop's next pass. */
	if (b->in_cap - b->in_len < 65536) {
		char *p = realloc(b->in, b->in_cap * 2 + 65536);

		if (!p)
			return;
		b->in = p, b->in_cap = b->in_cap * 2 + 65536;
	}
	n = read(fd, b->in + b->in_len, b->in_cap - b->in_len);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		worker_lost(b);
		return;
	}
	b->in_len += n;
	while (b->in_len - off >= sizeof(m)) {
		memcpy(&m, b->in + off, sizeof(m));
		if (m.len > BMSG_MAX) {
			log_err("broker: agent %s's worker sent a message of %u bytes\n",
				b->a->st.name, m.len);
			worker_lost(b);
			return;
		}
		if (b->in_len - off - sizeof(m) < m.len)
			break;
		if (message(b, &m, b->in + off + sizeof(m))) {
			log_err("broker: agent %s's worker sent an impossible message (type %u)\n",
				b->a->st.name, m.type);
			worker_lost(b);
			return;
		}
		off += sizeof(m) + m.len;
	}
	memmove(b->in, b->in + off, b->in_len - off);
	b->in_len -= off;
}

/* ---- identity ---- */

static void peer_comm(pid_t pid, char *comm, size_t sz)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	comm[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, comm, sz - 1);
	close(fd);
	if (n > 0 && comm[n - 1] == '\n')
		n--;
	comm[n > 0 ? n : 0] = '\0';
}

/*
 * Who is at the other end: SO_PEERCRED's pid, pinned by SO_PEERPIDFD where the kernel has it
 * (so that the pid read from /proc is still the caller), must sit in the socket's agent's
 * cgroup or below. Returns 0, or -EPERM with why.
 */
static int check_peer(struct bagent *ba, int fd, struct bconn *c, char *why, size_t whysz)
{
	char cg[PATH_MAX];
	uid_t uid = 0;
	pid_t pid;
	int err;

	err = cgroup_of_peer(fd, &pid, &uid, cg, sizeof(cg));
	c->pid = pid;
	c->uid = uid;
	if (pid > 0)
		peer_comm(pid, c->comm, sizeof(c->comm));
	if (err == -ESRCH) {
		snprintf(why, whysz, "the peer %d has exited", (int)pid);
		return -EPERM;
	}
	if (err) {
		snprintf(why, whysz, "the peer %d: no cgroup: %s", (int)pid, strerror(-err));
		return -EPERM;
	}
	if (!cgroup_path_below(cg, ba->cgrel)) {
		snprintf(why, whysz, "the peer %d is in cgroup %.128s, not agent %s's", (int)pid,
			 cg, ba->a->st.name);
		return -EPERM;
	}
	return 0;
}

static void refuse_conn(struct bagent *ba, int fd, const struct bconn *c, const char *why)
{
	struct caller who;
	size_t len;
	char *frame;
	json_t *doc = broker_reply_error(-1, BROKER_E_IDENTITY, why);

	if (doc && !broker_frame_encode(doc, BROKER_REPLY_MAX, &frame, &len)) {
		if (send(fd, frame, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
			log_debug("broker: refusing a connection: %s\n", strerror(errno));
		free(frame);
	}
	json_decref(doc);
	caller_of(ba, c, &who);
	audit_call(ba->b, &who, "?", false, 0, NULL, NULL, 0, "outcome=%s reason=%s",
		   BROKER_E_IDENTITY, why);
	ba->refused++;
	ba->b->stats.conns_refused++;
}

static void on_accept(void *ctx, int lfd, uint32_t events)
{
	struct bagent *ba = ctx;
	struct bconn probe, *c;
	char why[256];
	int fd, wfd;

	(void)events;
	for (;;) {
		fd = accept_shedding(lfd, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd == -ECONNABORTED)
			continue;
		if (fd < 0)
			break;
		memset(&probe, 0, sizeof(probe));
		if (check_peer(ba, fd, &probe, why, sizeof(why))) {
			refuse_conn(ba, fd, &probe, why);
			close(fd);
			continue;
		}
		c = ba->chan >= 0 ? conn_new(ba) : NULL;
		if (!c) {
			refuse_conn(ba, fd, &probe, "too many connections");
			close(fd);
			continue;
		}
		probe.used = true;
		probe.id = c->id;
		probe.fd = fd;
		*c = probe;
		/* The worker reads from its copy; agentd keeps this one to reply on. */
		wfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (wfd < 0 || chan_send(ba, MSG_CONN, c->id, NULL, 0, wfd)) {
			close(fd);
			c->used = false;
		}
	}
}

/* ---- the services' hooks ---- */

static int mkdirs(const char *path, mode_t mode)
{
	char tmp[PATH_MAX], *p;

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(tmp, mode) && errno != EEXIST)
				return -errno;
			*p = '/';
		}
	if (mkdir(tmp, mode) && errno != EEXIST)
		return -errno;
	return 0;
}

/* Waits (up to 1 s) for the cgroup at path to empty, then removes it. */
static int remove_when_empty(const char *path)
{
	char events[PATH_MAX + 2 * NAME_MAX + 16], buf[256];
	struct pollfd pfd = { .events = POLLPRI };
	int tries;
	ssize_t n;

	snprintf(events, sizeof(events), "%s/cgroup.events", path);
	pfd.fd = open(events, O_RDONLY | O_CLOEXEC);
	for (tries = 0; pfd.fd >= 0 && tries < 10; tries++) {
		n = pread(pfd.fd, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		if (n <= 0 || strstr(buf, "populated 0"))
			break;
		poll(&pfd, 1, 100);
	}
	if (pfd.fd >= 0)
		close(pfd.fd);
	return rmdir(path) ? -errno : 0;
}

/* Tools an agentd before this one left running (it was killed mid-call) go now. */
static void reap_leftovers(const char *tools_cg)
{
	char path[PATH_MAX + 2 * NAME_MAX];
	struct dirent *de;
	DIR *dir = opendir(tools_cg);
	int err;

	while (dir && (de = readdir(dir))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/cgroup.kill", tools_cg, de->d_name);
		cgroup_write(path, "1");
		snprintf(path, sizeof(path), "%s/%s", tools_cg, de->d_name);
		err = remove_when_empty(path);
		if (err)
			log_warn("broker: a tool cgroup left from before, %s: %s, ignoring\n", path,
				 strerror(-err));
		else
			log_info("broker: killed and removed %s, left from before\n", path);
	}
	if (dir)
		closedir(dir);
}

/*
 * Agents that are not root reach their sockets only through the control socket's directory:
 * it becomes searchable (not listable). The control socket keeps its own mode 0600 and uid check.
 */
static void searchable(const char *control)
{
	char copy[PATH_MAX], *dir;
	struct stat st;

	snprintf(copy, sizeof(copy), "%s", control);
	dir = dirname(copy);
	if (stat(dir, &st) || (st.st_mode & 0111) == 0111)
		return;
	if (chmod(dir, (st.st_mode & 07777) | 0111))
		log_warn("broker: %s: %s: agents that are not root cannot reach their sockets\n",
			 dir, strerror(errno));
	else
		log_info("broker: made %s searchable (mode %04o) for the agents' sockets\n", dir,
			 (st.st_mode & 07777) | 0111);
}

/*
 * broker_sockets, pinned by the enforcer where BPF LSM runs: emptied (the sockets of an agentd
 * before are gone). -1 where it is not loaded.
 */
static int sockets_map_open(const char *pin_dir)
{
	char path[PATH_MAX];
	__u64 key, next;
	int fd;

	snprintf(path, sizeof(path), "%s/broker_sockets", pin_dir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -1;
	while (!bpf_map_get_next_key(fd, NULL, &next)) {
		key = next;
		if (bpf_map_delete_elem(fd, &key))
			break;
	}
	return fd;
}

/* The kernel's side of "this socket is this agent's": where BPF LSM runs. */
static void sockets_map_add(struct bagent *ba)
{
	socklen_t len = sizeof(__u64);
	__u32 id = ba->a->st.id;
	__u64 cookie;

	if (ba->b->sockets_map < 0)
		return;
	if (getsockopt(ba->lfd, SOL_SOCKET, SO_COOKIE, &cookie, &len) ||
	    bpf_map_update_elem(ba->b->sockets_map, &cookie, &id, BPF_ANY))
		log_warn("broker: agent %s: broker_sockets: %s; agentd's peer check still holds\n",
			 ba->a->st.name, strerror(errno));
	else
		ba->cookie = cookie;
}

/* cpu, memory and pids for the tools' cgroups, where cgroup v2 has them. */
static void tools_controllers(struct broker *b)
{
	int err = limits_enable(b->cgroot, b->tools_cg, b->tools_missing, sizeof(b->tools_missing));

	if (err) {
		log_warn("broker: enabling controllers for %s: %s; tools with limits are refused\n",
			 b->tools_cg, strerror(-err));
		snprintf(b->tools_missing, sizeof(b->tools_missing), "cpu, memory, pids");
	} else if (b->tools_missing[0]) {
		log_warn("broker: cgroup v2 offers no %s controller here: tools that declare "
			 "such limits are refused\n",
			 b->tools_missing);
	}
}

/* agentd keeps an fd per agent connection (up to BROKER_CONNS_MAX per agent). */
static void more_fds(struct broker *b)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	b->nofile = rl.rlim_cur;
	if (rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		log_warn("broker: raising RLIMIT_NOFILE to %llu: %s, ignoring\n",
			 (unsigned long long)rl.rlim_max, strerror(errno));
}

int broker_start(struct daemon *d)
{
	struct broker *b = calloc(1, sizeof(*b));
	int err;

	if (!b)
		return -ENOMEM;
	b->nofile = RLIM_INFINITY;
	strcpy(b->stats.tools[0].name, "?");
	b->stats.n_tools = 1;
	more_fds(b);
	b->landlock_abi = probe_landlock_abi();
	if (b->landlock_abi < 1)
		log_warn("broker: Landlock is not available (%s): exec tools are refused (nothing "
			 "would hold them to their callers' files)\n",
			 strerror(-b->landlock_abi));
	b->d = d;
	snprintf(b->tools_cg, sizeof(b->tools_cg), "%s/" BROKER_TOOLS_CGROUP, d->cgroup);
	b->sockets_map = sockets_map_open(d->o->pin_dir);
	err = path_beside(d->o->control, PATH_AGENTS_DIR_NAME, b->rundir, sizeof(b->rundir));
	if (!err)
		err = spawn_path("agentd-worker", b->worker_path, sizeof(b->worker_path));
	if (err) {
		log_err("broker: %s: %s\n", b->worker_path[0] ? b->worker_path : b->rundir,
			strerror(-err));
		if (b->sockets_map >= 0)
			close(b->sockets_map);
		free(b);
		return err;
	}
	err = cgroup2_mount(b->cgroot, sizeof(b->cgroot));
	if (!err && mkdir(b->tools_cg, 0755) && errno != EEXIST)
		err = -errno;
	if (!err) {
		reap_leftovers(b->tools_cg);
		/* Their network rules too: the cgroups they name are gone. */
		err = enforcer_clear_tool_runs(d->e);
	}
	if (!err)
		tools_controllers(b);
	if (!err)
		err = mkdirs(b->rundir, 0711);
	if (!err)
		searchable(d->o->control);
	if (err) {
		log_err("broker: %s: %s\n", b->tools_cg, strerror(-err));
		if (b->sockets_map >= 0)
			close(b->sockets_map);
		free(b);
		return err;
	}
	err = mcp_hub_new(&(struct mcp_hub_env){ .loop = d->loop,
						 .state_dir = d->o->state_dir,
						 .tools_cg = b->tools_cg,
						 .nofile = b->nofile,
						 .landlock_abi = b->landlock_abi,
						 .enforcer = d->e },
			  &b->mcp);
	if (err) {
		if (b->sockets_map >= 0)
			close(b->sockets_map);
		free(b);
		return err;
	}
	the_broker = b;
	return approval_start(d, held_done);
}

/* After every agent's broker_agent_down(). */
void broker_stop(struct daemon *d)
{
	struct broker *b = the_broker;
	struct call *call;

	(void)d;
	if (!b)
		return;
	approval_stop();
	/* The servers go first: their calls' done never comes. */
	mcp_hub_free(b->mcp);
	while ((call = b->calls)) {
		b->calls = call->next;
		if (call->run)
			tool_run_abort(call->run);
		free(call);
	}
	rmdir(b->tools_cg);
	rmdir(b->rundir);
	if (b->sockets_map >= 0)
		close(b->sockets_map);
	free(b);
	the_broker = NULL;
}

static int listen_at(struct bagent *ba)
{
	/* Anyone may connect (agents run as any user); who is let in is the peer check's call. */
	int fd = unix_listen(ba->path, 0666, 128);

	if (fd < 0) {
		unlink(ba->path);
		return fd;
	}
	ba->lfd = fd;
	return 0;
}

static struct call *mcp_call_of(struct broker *b, const struct bagent *ba)
{
	struct call *call;

	for (call = b->calls; call; call = call->next)
		if (call->ba == ba && call->mcp)
			return call;
	return NULL;
}

/* The upstream servers of the agent's granted tools start before its first call. */
static void start_servers(struct broker *b, const struct agent *a)
{
	size_t i;

	for (i = 0; a->policy && i < a->policy->n_tools; i++)
		if (a->policy->tools[i].def && a->policy->tools[i].def->mcp_server)
			mcp_hub_start(b->mcp, a->policy->tools[i].def);
}

json_t *broker_tools_accept(struct daemon *d, const struct control_request *req)
{
	char why[256];

	(void)d;
	if (!the_broker)
		return control_reply_error(req->id, CONTROL_E_UNSUPPORTED,
					   "the broker is not running");
	if (mcp_hub_accept(the_broker->mcp, req->tool, why, sizeof(why)))
		return control_reply_error(req->id, CONTROL_E_FAILED, why);
	return control_reply_ok(req->id);
}

int broker_agent_up(struct daemon *d, struct agent *a, char *why, size_t whysz)
{
	struct broker *b = the_broker;
	struct bagent *ba;
	char real[PATH_MAX], root[PATH_MAX];
	int err;

	(void)d;
	if (!b || a->broker)
		return 0;
	ba = calloc(1, sizeof(*ba));
	if (!ba)
		return -ENOMEM;
	ba->b = b;
	ba->a = a;
	ba->lfd = -1;
	ba->chan = -1;
	if (!realpath(a->cgroup, real) || !realpath(b->cgroot, root) ||
	    !cgroup_path_below(real, root)) {
		err = -EINVAL;
		snprintf(why, whysz, "broker: the cgroup %s is not below %s", a->cgroup, b->cgroot);
		goto fail;
	}
	snprintf(ba->cgrel, sizeof(ba->cgrel), "%s",
		 real[strlen(root)] ? real + strlen(root) : "/");
	snprintf(ba->dir, sizeof(ba->dir), "%s/%s", b->rundir, a->st.name);
	snprintf(ba->path, sizeof(ba->path), "%s/tool.sock", ba->dir);
	err = mkdirs(ba->dir, 0711);
	if (!err)
		err = listen_at(ba);
	if (!err)
		err = loop_add(b->d->loop, ba->lfd, EPOLLIN, on_accept, ba);
	if (err) {
		snprintf(why, whysz, "broker: socket %s/tool.sock: %s", ba->dir, strerror(-err));
		goto fail;
	}
	err = worker_start(ba);
	if (err) {
		snprintf(why, whysz, "broker: starting %s: %s", b->worker_path, strerror(-err));
		goto fail;
	}
	sockets_map_add(ba);
	a->broker = ba;
	start_servers(b, a);
	return 0;
fail:
	worker_stop(ba, NULL);
	if (ba->lfd >= 0) {
		loop_del(b->d->loop, ba->lfd);
		close(ba->lfd);
		unlink(ba->path);
	}
	rmdir(ba->dir);
	free(ba);
	return err;
}

/* The agent's policy changed: connections that watch its tools get the new list. */
void broker_agent_reloaded(struct daemon *d, struct agent *a)
{
	struct broker_output none = { "", 0 }, out;
	struct bagent *ba = a->broker;
	char *text;
	size_t i;

	(void)d;
	if (ba)
		start_servers(ba->b, a);
	for (i = 0; ba && i < BROKER_CONNS_MAX; i++) {
		if (!ba->conns[i].used || !ba->conns[i].watching)
			continue;
		text = granted_json(a);
		if (!text) {
			log_err("broker: agent %s: the list of tools after a reload: out of "
				"memory\n",
				a->st.name);
			return;
		}
		out = (struct broker_output){ text, strlen(text) };
		reply(ba, ba->conns[i].id,
		      broker_reply_ok(ba->conns[i].watch_id, 0, out, none, false, 0));
		free(text);
	}
}

void broker_agent_down(struct daemon *d, struct agent *a)
{
	struct broker *b = the_broker;
	struct bagent *ba = a->broker;
	struct call *call;

	(void)d;
	if (!b || !ba)
		return;
	approval_agent_down(ba, a->st.id);
	if (ba->cookie)
		bpf_map_delete_elem(b->sockets_map, &ba->cookie);
	loop_del(b->d->loop, ba->lfd);
	close(ba->lfd);
	unlink(ba->path);
	rmdir(ba->dir);
	worker_stop(ba, NULL);
	free(ba->in);
	mcp_hub_forget(b->mcp, ba);
	while ((call = mcp_call_of(b, ba))) {
		call->ba = NULL;
		mcp_hub_cancel(call->mcp); /* ends the call */
	}
	for (call = b->calls; call; call = call->next)
		if (call->ba == ba) {
			call->ba = NULL;
			tool_run_kill(call->run);
		}
	a->broker = NULL;
	free(ba);
}

void broker_agent_json(struct daemon *d, const struct agent *a, json_t *obj)
{
	const struct bagent *ba = a->broker;

	(void)d;
	if (!ba)
		return;
	json_object_set_new(obj, "broker",
			    json_pack("{s:s, s:i, s:I, s:I, s:i, s:I, s:b}", "socket", ba->path,
				      "worker_pid", (int)ba->worker, "calls", (json_int_t)ba->calls,
				      "refused", (json_int_t)ba->refused, "in_flight",
				      (int)ba->in_flight, "replies_queued", (json_int_t)ba->queued,
				      "kernel_check", ba->cookie != 0));
}

void broker_status_json(struct daemon *d, json_t *reply)
{
	const struct broker *b = the_broker;

	(void)d;
	if (!b)
		return;
	json_object_set_new(reply, "broker",
			    json_pack("{s:s, s:I, s:s, s:s, s:i}", "worker", b->worker_path,
				      "requests", (json_int_t)b->n_calls, "tools_cgroup",
				      b->tools_cg, "tool_limits_unavailable", b->tools_missing,
				      "tool_landlock_abi",
				      b->landlock_abi > 0 ? b->landlock_abi : 0));
	json_object_set_new(json_object_get(reply, "broker"), "mcp_servers", mcp_hub_json(b->mcp));
}
