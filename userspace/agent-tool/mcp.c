// SPDX-License-Identifier: GPL-2.0
/*
 * agent-tool mcp: an MCP server on stdin and stdout (docs/MCP.md) in front of the agent's broker
 * socket. tools/list asks the broker for the tools the agent's policy grants; tools/call is a
 * broker call, so identity (the socket's peer), the policy, the schema, limits, redaction and
 * audit are the broker's. Many requests may be in flight: one poll loop over stdin and the
 * socket, replies matched by the broker request's id.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "wire/broker_proto.h"
#include "wire/jsonrpc.h"
#include "wire/unixsock.h"
#include "version.h"
#include "agent-tool.h"

#define MCP_IN_FLIGHT 64 /* the broker runs at most 64 calls of an agent at once */
#define MCP_E_BUSY -32000 /* server error: too many requests in flight */
#define MCP_WATCH_ID 0 /* the broker request watching the agent's tools; calls count from 1 */

struct pending {
	long long bid; /* the broker request's id */
	json_t *id; /* the MCP request's id; NULL once cancelled (no reply is sent) */
	bool list; /* tools/list, else tools/call */
	bool used;
};

struct buf {
	char *data;
	size_t len, cap;
};

struct mcp {
	int fd; /* the broker socket */
	struct buf in, replies;
	bool skipping; /* dropping the rest of an over-long line */
	bool initialized;
	char *listed; /* the broker's last list on the watch (MCP_WATCH_ID), to see it change */
	long long next_bid;
	struct pending p[MCP_IN_FLIGHT];
};

static int write_all(int fd, const char *s, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		s += w, n -= w;
	}
	return 0;
}

/* Sends doc to the client (and drops it). A client that stopped reading ends the server. */
static void emit(json_t *doc)
{
	size_t len;
	char *line = doc ? jsonrpc_line(doc, &len) : NULL;

	json_decref(doc);
	if (!line) {
		fprintf(stderr, "agent-tool mcp: out of memory writing a reply\n");
		exit(EXIT_FAILURE);
	}
	if (write_all(STDOUT_FILENO, line, len)) {
		fprintf(stderr, "agent-tool mcp: stdout: %s\n", strerror(errno));
		exit(EXIT_FAILURE);
	}
	free(line);
}

static void emit_error(const json_t *id, int code, const char *fmt, const char *a, const char *b)
{
	char text[512];

	snprintf(text, sizeof(text), fmt, a, b);
	emit(jsonrpc_error(id, code, text));
}

static void fail_all(struct mcp *s, const char *why) __attribute__((noreturn));

static int buf_reserve(struct buf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 65536;
	char *p;

	while (cap - b->len < more)
		cap *= 2;
	if (cap == b->cap)
		return 0;
	p = realloc(b->data, cap);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

static void buf_consume(struct buf *b, size_t n)
{
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
}

static json_t *initialize_result(const char *version)
{
	return json_pack("{ss s{s{sb}} s{ssss} ss}", "protocolVersion", version, "capabilities",
			 "tools", "listChanged", 1, "serverInfo", "name", "agentd", "version",
			 AGENTD_VERSION, "instructions",
			 "The tools of this agent, granted by its agentd policy. Each call runs "
			 "outside the agent, under policy, and is audited.");
}

static struct pending *slot(struct mcp *s)
{
	size_t i;

	for (i = 0; i < MCP_IN_FLIGHT; i++)
		if (!s->p[i].used)
			return &s->p[i];
	return NULL;
}

/* A broker request for the MCP request id: sent, and remembered until its reply. */
static void broker_call(struct mcp *s, const json_t *id, const char *tool, json_t *args, bool list)
{
	struct broker_request req = { .id = s->next_bid, .args = args };
	struct pending *p = slot(s);
	char *frame = NULL;
	size_t flen;
	json_t *doc;
	int err;

	if (!p) {
		emit_error(id, MCP_E_BUSY, "%s%s", "64 requests are in flight: wait for a reply",
			   "");
		return;
	}
	snprintf(req.tool, sizeof(req.tool), "%s", tool);
	doc = broker_request_json(&req);
	err = doc ? broker_frame_encode(doc, BROKER_REQUEST_MAX, &frame, &flen) : -ENOMEM;
	json_decref(doc);
	if (err == -EMSGSIZE) {
		emit_error(id, JSONRPC_INVALID_PARAMS, "\"arguments\": over %s bytes%s", "2097152",
			   "");
		return;
	}
	if (!err)
		err = send_request(s->fd, frame, flen);
	free(frame);
	if (err) {
		emit_error(id, JSONRPC_INTERNAL_ERROR, "the broker: %s%s", strerror(-err), "");
		return;
	}
	*p = (struct pending){
		.bid = s->next_bid++, .id = json_deep_copy(id), .list = list, .used = true
	};
}

static void on_cancelled(struct mcp *s, const json_t *params)
{
	json_t *rid = json_object_get(params, "requestId");
	size_t i;

	/* The broker call runs on (and is audited); its reply is not sent (MCP's rule). */
	for (i = 0; rid && i < MCP_IN_FLIGHT; i++)
		if (s->p[i].used && s->p[i].id && json_equal(s->p[i].id, rid)) {
			json_decref(s->p[i].id);
			s->p[i].id = NULL;
		}
}

/* Asks the broker for the agent's tools again after every policy reload. */
static int watch(struct mcp *s)
{
	struct broker_request req = { .id = MCP_WATCH_ID, .args = json_pack("{sb}", "watch", 1) };
	char *frame = NULL;
	size_t flen;
	json_t *doc;
	int err;

	snprintf(req.tool, sizeof(req.tool), "%s", TOOLS_LIST_NAME);
	doc = req.args ? broker_request_json(&req) : NULL;
	json_decref(req.args);
	err = doc ? broker_frame_encode(doc, BROKER_REQUEST_MAX, &frame, &flen) : -ENOMEM;
	json_decref(doc);
	if (!err)
		err = send_request(s->fd, frame, flen);
	free(frame);
	return err;
}

/* The watch's reply: the first is the list as the session starts; a different one after a
 * reload is MCP's list_changed. */
static void on_watch(struct mcp *s, const struct broker_reply *r)
{
	if (!r->ok) {
		fprintf(stderr, "agent-tool mcp: the broker refused to watch the tools: %s: %s\n",
			r->error.code, r->error.message);
		return;
	}
	if (s->listed && strcmp(s->listed, r->out))
		emit(jsonrpc_notification("notifications/tools/list_changed", NULL));
	free(s->listed);
	s->listed = strdup(r->out);
}

static void on_initialize(struct mcp *s, const struct jsonrpc_msg *m)
{
	const char *version;
	char why[256];

	version = mcp_initialize_version(m->params, why, sizeof(why));
	if (!version) {
		emit_error(m->id, JSONRPC_INVALID_PARAMS, "%s%s", why, "");
		return;
	}
	emit(jsonrpc_result(m->id, initialize_result(version)));
	if (!s->initialized && watch(s))
		fail_all(s, "the broker socket: sending the watch request failed");
	s->initialized = true;
}

static void on_call(struct mcp *s, const struct jsonrpc_msg *m)
{
	char why[256], tool[TOOL_NAME_MAX + 1];
	json_t *args;

	if (mcp_call_params(m->params, tool, &args, why, sizeof(why))) {
		emit_error(m->id, JSONRPC_INVALID_PARAMS, "%s%s", why, "");
		return;
	}
	broker_call(s, m->id, tool, args, false);
	json_decref(args);
}

static void on_list(struct mcp *s, const struct jsonrpc_msg *m)
{
	json_t *none = json_object();

	/* One page: a cursor can only be one the client made up. */
	if (json_object_get(m->params, "cursor"))
		emit_error(m->id, JSONRPC_INVALID_PARAMS, "%s%s",
			   "\"cursor\": the list has one page", "");
	else
		broker_call(s, m->id, TOOLS_LIST_NAME, none, true);
	json_decref(none);
}

static void on_request(struct mcp *s, const struct jsonrpc_msg *m)
{
	if (!strcmp(m->method, "initialize"))
		on_initialize(s, m);
	else if (!strcmp(m->method, "ping"))
		emit(jsonrpc_result(m->id, json_object()));
	else if (!s->initialized)
		emit_error(m->id, JSONRPC_INVALID_REQUEST, "%s: %s", m->method,
			   "the session is not initialized yet (send initialize first)");
	else if (!strcmp(m->method, "tools/list"))
		on_list(s, m);
	else if (!strcmp(m->method, "tools/call"))
		on_call(s, m);
	else
		emit_error(m->id, JSONRPC_METHOD_NOT_FOUND,
			   "method not found: \"%.64s\" (this server offers %s)", m->method,
			   "initialize, ping, tools/list, tools/call");
}

static void on_line(struct mcp *s, const char *line, size_t len)
{
	struct jsonrpc_msg m;
	char why[256];
	int code;

	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (!len)
		return;
	code = jsonrpc_parse(line, len, &m, why, sizeof(why));
	if (code)
		emit_error(m.id, code, "%s%s", why, "");
	else if (m.method && m.id)
		on_request(s, &m);
	else if (m.method && !strcmp(m.method, "notifications/cancelled"))
		on_cancelled(s, m.params);
	/* Other notifications (initialized, ...) and responses need nothing. */
	jsonrpc_msg_free(&m);
}

/* Reads what stdin has; returns 0, or 1 at end of input. */
static int read_client(struct mcp *s)
{
	char *nl, *line;
	ssize_t n;

	if (buf_reserve(&s->in, 65536))
		return -ENOMEM;
	n = read(STDIN_FILENO, s->in.data + s->in.len, s->in.cap - s->in.len);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -errno;
	if (n == 0)
		return 1;
	s->in.len += n;
	for (line = s->in.data; (nl = memchr(line, '\n', s->in.data + s->in.len - line));
	     line = nl + 1) {
		if (!s->skipping)
			on_line(s, line, nl - line);
		s->skipping = false;
	}
	buf_consume(&s->in, line - s->in.data);
	if (s->in.len > JSONRPC_LINE_MAX) {
		if (!s->skipping)
			emit_error(NULL, JSONRPC_INVALID_REQUEST,
				   "a message of more than %s bytes%s: dropped", "4194304", "");
		s->skipping = true;
		s->in.len = 0;
	}
	return 0;
}

static json_t *text_item(const char *text)
{
	return json_pack("{ss ss}", "type", "text", "text", text);
}

/* The broker's list ({"tools": [{"name", "description", "effect", "inputSchema"}]}) as MCP's. */
static json_t *list_result(const struct broker_reply *r)
{
	json_t *doc = json_loads(r->out, 0, NULL), *tools = json_array(), *t, *o, *d;
	size_t i;

	json_array_foreach(json_object_get(doc, "tools"), i, t)
	{
		o = json_pack(
			"{sO sO s{sb}}", "name", json_object_get(t, "name"), "inputSchema",
			json_object_get(t, "inputSchema"), "annotations", "readOnlyHint",
			!strcmp(json_string_value(json_object_get(t, "effect")) ?: "", "observe"));
		d = json_object_get(t, "description");
		if (!o || (d && json_object_set(o, "description", d)) ||
		    json_array_append_new(tools, o)) {
			json_decref(tools);
			tools = NULL;
			break;
		}
	}
	if (!json_is_array(json_object_get(doc, "tools"))) {
		json_decref(tools);
		tools = NULL;
	}
	json_decref(doc);
	return tools ? json_pack("{so}", "tools", tools) : NULL;
}

/* A tool that ran: its stdout, its stderr, and what went wrong; isError when exit != 0. */
static json_t *call_result(const struct broker_reply *r)
{
	json_t *content = json_array();
	char note[128];

	if (r->out_len || !r->err_len)
		json_array_append_new(content, text_item(r->out));
	if (r->err_len)
		json_array_append_new(content, text_item(r->err));
	if (r->exit_code || r->truncated) {
		snprintf(note, sizeof(note), "[agentd: exit status %d%s]", r->exit_code,
			 r->truncated ? "; output cut at the tool's output cap" : "");
		json_array_append_new(content, text_item(note));
	}
	return json_pack("{so sb}", "content", content, "isError", r->exit_code != 0);
}

/*
 * A refused or failed call. Not granted (the tool is not in tools/list) and malformed requests
 * are protocol errors; what the model can act on (arguments off the schema, a timeout, busy, a
 * tool that could not start) is a tool result with isError, as MCP asks.
 */
static void call_error(const json_t *id, const struct broker_reply *r)
{
	char text[512];

	snprintf(text, sizeof(text), "agentd: %s: %s", r->error.code, r->error.message);
	if (!strcmp(r->error.code, BROKER_E_DENIED) || !strcmp(r->error.code, BROKER_E_REQUEST))
		emit(jsonrpc_error(id, JSONRPC_INVALID_PARAMS, text));
	else if (!strcmp(r->error.code, BROKER_E_ARGS) || !strcmp(r->error.code, BROKER_E_BUSY) ||
		 !strcmp(r->error.code, BROKER_E_TIMEOUT) ||
		 !strcmp(r->error.code, BROKER_E_FAILED))
		emit(jsonrpc_result(
			id, json_pack("{s[o] sb}", "content", text_item(text), "isError", 1)));
	else
		emit(jsonrpc_error(id, JSONRPC_INTERNAL_ERROR, text));
}

static void answer(const struct pending *p, const struct broker_reply *r)
{
	json_t *res;

	if (!p->id)
		return;
	if (p->list && !r->ok) {
		emit_error(p->id, JSONRPC_INTERNAL_ERROR, "agentd: %s: %s", r->error.code,
			   r->error.message);
	} else if (p->list) {
		res = list_result(r);
		if (res)
			emit(jsonrpc_result(p->id, res));
		else
			emit_error(p->id, JSONRPC_INTERNAL_ERROR, "%s%s",
				   "the broker's list of tools is malformed", "");
	} else if (!r->ok) {
		call_error(p->id, r);
	} else {
		emit(jsonrpc_result(p->id, call_result(r)));
	}
}

/* Every request in flight gets the error; the server then ends (fail closed). */
static void fail_all(struct mcp *s, const char *why)
{
	size_t i;

	fprintf(stderr, "agent-tool mcp: %s\n", why);
	for (i = 0; i < MCP_IN_FLIGHT; i++)
		if (s->p[i].used && s->p[i].id)
			emit_error(s->p[i].id, JSONRPC_INTERNAL_ERROR, "%s%s", why, "");
	exit(EXIT_FAILURE);
}

static void on_reply(struct mcp *s, const char *payload, size_t len)
{
	struct broker_reply r = { 0 };
	char why[400];
	size_t i;

	if (broker_reply_parse(payload, len, &r)) {
		snprintf(why, sizeof(why), "the broker: a malformed reply: %s", r.error.message);
		fail_all(s, why);
	}
	if (r.id == MCP_WATCH_ID) {
		on_watch(s, &r);
		broker_reply_free(&r);
		return;
	}
	for (i = 0; i < MCP_IN_FLIGHT; i++)
		if (s->p[i].used && s->p[i].bid == r.id)
			break;
	if (i == MCP_IN_FLIGHT) {
		/* No id: the broker refused the connection (identity) or lost the framing. */
		snprintf(why, sizeof(why), "the broker: %s: %s",
			 r.ok ? "a reply to nothing" : r.error.code, r.ok ? "" : r.error.message);
		broker_reply_free(&r);
		fail_all(s, why);
	}
	answer(&s->p[i], &r);
	json_decref(s->p[i].id);
	memset(&s->p[i], 0, sizeof(s->p[i]));
	broker_reply_free(&r);
}

/* Reads what the socket has and answers every whole reply; returns 0 or -errno. */
static int read_broker(struct mcp *s)
{
	size_t n;
	ssize_t r;
	int c;

	if (buf_reserve(&s->replies, 65536))
		return -ENOMEM;
	r = recv(s->fd, s->replies.data + s->replies.len, s->replies.cap - s->replies.len,
		 MSG_DONTWAIT);
	if (r < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -errno;
	if (r == 0)
		return -ECONNRESET;
	s->replies.len += r;
	while ((c = broker_frame_check(s->replies.data, s->replies.len, BROKER_REPLY_MAX, &n)) ==
	       1) {
		on_reply(s, s->replies.data + BROKER_HDR, n);
		buf_consume(&s->replies, BROKER_HDR + n);
	}
	return c < 0 ? -EPROTO : 0;
}

int mcp_main(const char *sock)
{
	struct mcp s = { .next_bid = 1 };
	struct pollfd pfd[2];
	char why[400];
	int err = 0;

	s.fd = unix_connect(sock);
	if (s.fd < 0) {
		fprintf(stderr, "agent-tool mcp: %s: %s\n", sock, strerror(-s.fd));
		return EXIT_FAILURE;
	}
	pfd[0] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = s.fd, .events = POLLIN };
	while (!err) {
		if (poll(pfd, 2, -1) < 0) {
			err = errno == EINTR ? 0 : -errno;
			continue;
		}
		if (pfd[1].revents)
			err = read_broker(&s);
		if (!err && pfd[0].revents)
			err = read_client(&s);
	}
	if (err == 1)
		return 0; /* the client closed stdin: the session is over */
	snprintf(why, sizeof(why), "the broker socket %s: %s", sock, strerror(-err));
	fail_all(&s, why);
	return EXIT_FAILURE;
}
