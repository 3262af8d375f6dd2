// SPDX-License-Identifier: GPL-2.0
/*
 * Calls held for an operator (approval.h). An id is a sequence number, never reused while
 * agentd runs, and 48 random bits, so that it cannot be guessed from another; only root outside
 * every agent and tool reaches the control socket that decides (peer.c), and the decision is
 * audited with the operator's pid and uid from that socket's SO_PEERCRED. Records name the
 * arguments by their digest: values are shown only for arguments the registry marks
 * "displayable", and never written to the audit log.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <openssl/sha.h>
#include "broker/approval.h"
#include "daemon.h"
#include "log.h"

#define APPROVAL_ID_LEN 32

struct approval {
	struct approval *next;
	char id[APPROVAL_ID_LEN];
	struct held_call call;
	json_t *shown; /* the displayable arguments' values */
	__u64 since_ns; /* CLOCK_MONOTONIC */
	unsigned int timeout_sec;
	int timer;
};

/* approve --for: later calls of the agent with the same tool and argument digest go on. */
struct standing {
	struct standing *next;
	char id[APPROVAL_ID_LEN];
	__u32 agent;
	char tool[TOOL_NAME_MAX + 1];
	unsigned char args_sha[32];
	__u64 until_ns;
};

static struct {
	struct daemon *d;
	approval_done_fn done;
	struct approval *held;
	struct standing *standing;
	__u64 seq;
} A;

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void sha_hex(const unsigned char *sha, char out[65])
{
	int i;

	for (i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", sha[i]);
}

/* One record of the approval's life; by: the deciding operator's process, or NULL. */
static void audit(const struct held_call *c, const char *op, enum audit_decision decision,
		  const struct control_request *by, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void audit(const struct held_call *c, const char *op, enum audit_decision decision,
		  const struct control_request *by, const char *fmt, ...)
{
	struct audit_record *r;
	va_list ap;
	int err;

	if (!A.d->sink.audit)
		return;
	r = calloc(1, sizeof(*r));
	if (!r)
		return;
	r->kind = AUDIT_KIND_TOOL;
	snprintf(r->op, sizeof(r->op), "%s", op);
	r->agent = c->who.agent;
	snprintf(r->agent_name, sizeof(r->agent_name), "%s", c->who.agent_name);
	r->has = AUDIT_HAS_TOOL | AUDIT_HAS_PROC;
	/* The process of the record: the caller's, or for a decision the operator's. */
	r->pid = r->tid = by ? (__u32)by->peer_pid : (__u32)c->who.pid;
	r->uid = by ? by->peer_uid : c->who.uid;
	if (!by)
		snprintf(r->comm, sizeof(r->comm), "%s", c->who.comm);
	r->decision = decision;
	snprintf(r->tool, sizeof(r->tool), "%.*s", (int)sizeof(r->tool) - 1, c->req.tool);
	r->args_len = c->args_len;
	memcpy(r->args_sha256, c->args_sha, 32);
	SHA256((const unsigned char *)"", 0, r->out_sha256);
	va_start(ap, fmt);
	vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
	va_end(ap);
	err = audit_writer_append(A.d->sink.audit, r);
	if (err)
		log_err("audit log: approval record: %s\n", strerror(-err));
	free(r);
}

int approval_start(struct daemon *d, approval_done_fn done)
{
	A.d = d;
	A.done = done;
	return 0;
}

static void approval_free(struct approval *ap)
{
	struct approval **pp;

	for (pp = &A.held; *pp; pp = &(*pp)->next)
		if (*pp == ap) {
			*pp = ap->next;
			break;
		}
	if (ap->timer >= 0) {
		loop_del(A.d->loop, ap->timer);
		close(ap->timer);
	}
	broker_request_free(&ap->call.req);
	json_decref(ap->shown);
	free(ap);
}

void approval_stop(void)
{
	struct standing *s;

	while (A.held)
		approval_free(A.held);
	while ((s = A.standing)) {
		A.standing = s->next;
		free(s);
	}
}

/* The approve --for that covers the call, if one does (expired ones go). */
static const struct standing *standing_for(const struct held_call *c)
{
	struct standing **pp = &A.standing, *s;
	__u64 now = mono_ns();

	while ((s = *pp)) {
		if (s->until_ns <= now) {
			*pp = s->next;
			free(s);
			continue;
		}
		if (s->agent == c->who.agent && !strcmp(s->tool, c->req.tool) &&
		    !memcmp(s->args_sha, c->args_sha, 32))
			return s;
		pp = &s->next;
	}
	return NULL;
}

/* Whether the agent's policy (or the registry) holds its calls of t, and for how long. */
static bool required(const struct agent *a, const struct tool *t, unsigned int *timeout)
{
	size_t i;

	for (i = 0; a->policy && i < a->policy->n_tools; i++)
		if (a->policy->tools[i].def == t)
			return policy_tool_approval(&a->policy->tools[i], timeout);
	*timeout = t->approval_timeout_sec;
	return t->approval;
}

/* The values of the arguments the registry marks displayable; the others are not copied. */
static json_t *displayable(const struct tool *t, const json_t *args)
{
	json_t *o = json_object(), *v;
	size_t i;

	for (i = 0; o && i < t->n_args; i++) {
		v = t->args[i].displayable ? json_object_get(args, t->args[i].name) : NULL;
		if (v && json_object_set(o, t->args[i].name, v)) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

static void expire(void *ctx, int fd, uint32_t events);

/* A new id, its record and its timer; -errno (nothing held) on failure. */
static int hold(const struct held_call *c, const struct tool *t, unsigned int timeout,
		struct approval **out)
{
	struct itimerspec its = { .it_value = { .tv_sec = timeout } };
	struct approval *ap = calloc(1, sizeof(*ap));
	__u64 rnd = 0;
	int err = 0;

	if (!ap)
		return -ENOMEM;
	ap->timer = -1;
	if (getrandom(&rnd, 6, 0) != 6) {
		free(ap);
		return -EIO;
	}
	snprintf(ap->id, sizeof(ap->id), "%llx-%012llx", (unsigned long long)++A.seq,
		 (unsigned long long)rnd);
	ap->call = *c;
	ap->call.req.args = json_incref(c->req.args);
	ap->shown = displayable(t, c->req.args);
	ap->since_ns = mono_ns();
	ap->timeout_sec = timeout;
	ap->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (!ap->shown || ap->timer < 0 || timerfd_settime(ap->timer, 0, &its, NULL))
		err = ap->shown ? -errno : -ENOMEM;
	else
		err = loop_add(A.d->loop, ap->timer, EPOLLIN, expire, ap);
	if (err) {
		if (ap->timer >= 0)
			close(ap->timer);
		ap->timer = -1;
		approval_free(ap);
		return err;
	}
	ap->next = A.held;
	A.held = ap;
	*out = ap;
	return 0;
}

int approval_hold(const struct held_call *c, const struct agent *a, const struct tool *t, char *why,
		  size_t whysz)
{
	const struct standing *s;
	struct approval *ap;
	unsigned int timeout;
	int err;

	if (!required(a, t, &timeout))
		return 0;
	s = standing_for(c);
	if (s) {
		audit(c, "approval-decision", AUDIT_DECISION_ALLOW, NULL,
		      "approval=%s decided=standing for_s=%llu", s->id,
		      (unsigned long long)((s->until_ns - mono_ns()) / 1000000000ULL));
		return 0;
	}
	err = hold(c, t, timeout, &ap);
	if (err) {
		snprintf(why, whysz,
			 "this tool needs an operator's approval and the call cannot be held: %s",
			 strerror(-err));
		return err;
	}
	audit(c, "approval-request", AUDIT_DECISION_NONE, NULL, "approval=%s timeout_s=%u", ap->id,
	      timeout);
	log_info("broker: agent %s's call of %s waits for approval %s (agentctl approve %s)\n",
		 c->who.agent_name, c->req.tool, ap->id, ap->id);
	return 1;
}

/* The call leaves the list; it goes on (approved) or is refused (why). */
static void finish(struct approval *ap, const char *refusal)
{
	struct held_call call = ap->call;
	char id[APPROVAL_ID_LEN];

	snprintf(id, sizeof(id), "%s", ap->id);
	call.req.args = json_incref(ap->call.req.args);
	approval_free(ap);
	A.done(&call, refusal ? NULL : id, refusal);
	broker_request_free(&call.req);
}

static void expire(void *ctx, int fd, uint32_t events)
{
	struct approval *ap = ctx;
	char why[200];

	(void)fd;
	(void)events;
	audit(&ap->call, "approval-decision", AUDIT_DECISION_DENY, NULL,
	      "approval=%s decided=timeout timeout_s=%u", ap->id, ap->timeout_sec);
	snprintf(why, sizeof(why), "no operator approved this call within %u s (approval %s)",
		 ap->timeout_sec, ap->id);
	finish(ap, why);
}

/* Withdrawn: the caller cannot get the answer any more. */
static void withdraw(struct approval *ap, const char *why)
{
	audit(&ap->call, "approval-decision", AUDIT_DECISION_DENY, NULL,
	      "approval=%s decided=withdrawn reason=%s", ap->id, why);
	approval_free(ap);
}

void approval_conn_gone(struct bagent *ba, __u32 conn)
{
	struct approval *ap = A.held, *next;

	for (; ap; ap = next) {
		next = ap->next;
		if (ap->call.ba == ba && ap->call.conn == conn) {
			struct held_call call = ap->call;

			withdraw(ap, "the caller closed its connection");
			/* Only the count in flight: the connection is gone. */
			call.req.args = NULL;
			A.done(&call, NULL, "withdrawn");
		}
	}
}

void approval_agent_down(struct bagent *ba, __u32 agent)
{
	struct approval *ap = A.held, *next;
	struct standing **pp = &A.standing, *s;

	for (; ap; ap = next) {
		next = ap->next;
		if (ap->call.ba == ba)
			withdraw(ap, "the agent was removed");
	}
	while ((s = *pp)) {
		if (s->agent == agent) {
			*pp = s->next;
			free(s);
		} else {
			pp = &s->next;
		}
	}
}

static struct approval *find(const char *id)
{
	struct approval *ap;

	for (ap = A.held; ap && strcmp(ap->id, id); ap = ap->next)
		;
	return ap;
}

static json_t *approval_json(const struct approval *ap)
{
	char sha[65];

	sha_hex(ap->call.args_sha, sha);
	return json_pack("{s:s, s:s, s:i, s:s, s:i, s:s, s:s, s:I, s:O, s:I, s:i}", "id", ap->id,
			 "agent", ap->call.who.agent_name, "agent_id", (int)ap->call.who.agent,
			 "tool", ap->call.req.tool, "pid", (int)ap->call.who.pid, "comm",
			 ap->call.who.comm, "args_sha256", sha, "args_len",
			 (json_int_t)ap->call.args_len, "args", ap->shown, "age_s",
			 (json_int_t)((mono_ns() - ap->since_ns) / 1000000000ULL), "timeout_s",
			 (int)ap->timeout_sec);
}

static json_t *list(const struct control_request *req)
{
	json_t *reply = control_reply_ok(req->id), *arr = json_array();
	const struct approval *ap;

	for (ap = A.held; reply && arr && ap; ap = ap->next)
		if (json_array_append_new(arr, approval_json(ap))) {
			json_decref(arr);
			arr = NULL;
		}
	if (!reply || !arr || json_object_set_new(reply, "approvals", arr)) {
		json_decref(reply);
		return NULL;
	}
	return reply;
}

/* approve --for: the same calls of the same agent go on without asking, until then. */
static int stand(const struct approval *ap, unsigned int for_sec)
{
	struct standing *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	snprintf(s->id, sizeof(s->id), "%s", ap->id);
	s->agent = ap->call.who.agent;
	snprintf(s->tool, sizeof(s->tool), "%s", ap->call.req.tool);
	memcpy(s->args_sha, ap->call.args_sha, 32);
	s->until_ns = mono_ns() + for_sec * 1000000000ULL;
	s->next = A.standing;
	A.standing = s;
	return 0;
}

static json_t *decide(const struct control_request *req, bool approve)
{
	struct approval *ap = find(req->approval);
	json_t *reply;
	char why[200];

	if (!ap)
		return control_reply_error(req->id, CONTROL_E_NO_APPROVAL,
					   "no call waits for that approval: decided, timed out, "
					   "withdrawn, or never asked");
	if (approve && req->for_sec && stand(ap, req->for_sec))
		return control_reply_error(req->id, CONTROL_E_FAILED, "out of memory");
	reply = control_reply_ok(req->id);
	if (reply)
		json_object_set_new(reply, "approval", approval_json(ap));
	audit(&ap->call, "approval-decision", approve ? AUDIT_DECISION_ALLOW : AUDIT_DECISION_DENY,
	      req, "approval=%s decided=%s by_uid=%u by_pid=%d for_s=%u", ap->id,
	      approve ? "approve" : "deny", req->peer_uid, req->peer_pid, req->for_sec);
	snprintf(why, sizeof(why), "an operator denied this call (approval %s)", ap->id);
	finish(ap, approve ? NULL : why);
	return reply;
}

json_t *approval_handle(struct daemon *d, const struct control_request *req)
{
	(void)d;
	if (req->cmd == CONTROL_APPROVAL_LS)
		return list(req);
	return decide(req, req->cmd == CONTROL_APPROVAL_APPROVE);
}
