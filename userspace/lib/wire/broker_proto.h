/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tool broker's protocol (docs/BROKER.md): frames (wire/frame.h) of JSON, as on the
 * control socket. A request is {"id", "tool", "args"}; a reply
 * {"id", "ok": true, "exit", "stdout", "stderr", "truncated", "redacted"} or {"id", "ok": false,
 * "error": {"code", "message"}}. Nothing in a request names the caller: the socket does.
 */
#ifndef AGENTD_BROKER_PROTO_H
#define AGENTD_BROKER_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include <linux/types.h>
#include "wire/frame.h"
#include "policy/tools.h"

#define BROKER_HDR FRAME_HDR
#define BROKER_REQUEST_MAX (2U << 20) /* request payload bytes: args up to 1 MiB, escaped */
#define BROKER_REPLY_MAX (128U << 20) /* reply payload bytes: 2 x 16 MiB, escaped */
#define BROKER_ARGS_MAX 32 /* arguments per call */
#define BROKER_ID_MAX 9007199254740991LL /* 2^53 - 1 */

/* Error codes, stable: clients match on them. */
#define BROKER_E_FRAME "bad-frame" /* length 0 or over the limit */
#define BROKER_E_JSON "bad-json" /* not a JSON object */
#define BROKER_E_REQUEST "bad-request" /* a field missing, of the wrong type, unknown */
#define BROKER_E_DENIED "denied" /* the tool is not in the agent's policy */
#define BROKER_E_ARGS "bad-args" /* the arguments do not match the tool's schema */
#define BROKER_E_IDENTITY "identity" /* the peer is not the socket's agent */
#define BROKER_E_BUSY "busy" /* too many calls in flight */
#define BROKER_E_TIMEOUT "timeout" /* killed at the tool's timeout */
#define BROKER_E_FAILED "failed" /* the tool could not be started: errno in message */

struct broker_error {
	char code[32];
	char message[256];
};

/* A request after broker_request_parse(): args is an object of strings, integers, booleans. */
struct broker_request {
	long long id; /* -1 when the request had none usable (the reply's id is then null) */
	char tool[TOOL_NAME_MAX + 1];
	json_t *args; /* owned; never NULL after a successful parse */
};

/* frame_check(), and frame_encode() compact with the keys sorted. */
int broker_frame_check(const void *buf, size_t len, size_t max, size_t *payload_len);
int broker_frame_encode(const json_t *doc, size_t max, char **out, size_t *outlen);

/*
 * Parses and checks the shape of one request payload: an object with "tool" (a tool name),
 * optional "id" (0 to 2^53-1) and optional "args" (an object of at most BROKER_ARGS_MAX
 * strings, integers and booleans); any other key is refused. Returns 0, or -EINVAL with err
 * filled (req->id set when the request carried a usable one). Free with broker_request_free().
 */
int broker_request_parse(const char *payload, size_t len, struct broker_request *req,
			 struct broker_error *err);
void broker_request_free(struct broker_request *req);
/* The request as JSON: the canonical form the worker passes on, and the client's request. */
json_t *broker_request_json(const struct broker_request *req);

/*
 * Checks args against the tool's schema: every declared argument present, none undeclared,
 * each of its type, strings within max_length, in the enum, matching the pattern. Returns 0 or
 * -EINVAL with err (code bad-args) naming the argument and the problem.
 */
int broker_args_check(const struct tool *t, const json_t *args, struct broker_error *err);
/* An argument's value as exec text ("42", "true", the string). NULL when absent. */
const char *broker_arg_text(const json_t *args, const char *name, char *buf, size_t bufsz);

struct broker_output {
	const char *data;
	size_t len;
};

/*
 * The replies. Output bytes that are not UTF-8 (and NULs) become U+FFFD, since JSON strings
 * carry text. id < 0 gives null.
 */
json_t *broker_reply_ok(long long id, int exit_code, struct broker_output out,
			struct broker_output err, bool truncated, unsigned redacted);
json_t *broker_reply_error(long long id, const char *code, const char *message);

/* A reply as the client sees it. */
struct broker_reply {
	long long id; /* -1: null */
	bool ok;
	int exit_code;
	char *out, *err; /* NUL-terminated, owned */
	size_t out_len, err_len;
	bool truncated;
	unsigned long long redacted;
	struct broker_error error; /* when !ok */
};

/* Parses a reply payload. Returns 0 (ok or error reply, see r->ok) or -EINVAL with r->error
 * saying what is wrong. Free with broker_reply_free(). */
int broker_reply_parse(const char *payload, size_t len, struct broker_reply *r);
void broker_reply_free(struct broker_reply *r);

/*
 * Between agentd and an agent's broker worker (agentd-worker), on their stream socketpair: a
 * struct bmsg and len bytes; a MSG_CONN carries the agent's connection as SCM_RIGHTS. The
 * worker is exec'd with its end as fd BMSG_FD.
 */
#define BMSG_FD 3
/*
 * Each agent's worker runs as uid and gid BMSG_WORKER_ID_BASE + the agent's id: ids no user has,
 * and different per agent, so that no agent (and no other worker) may signal or trace it.
 */
#define BMSG_WORKER_ID_BASE 2147352576U /* 0x7ffe0000 */
/*
 * An exec tool without uid or "user": "root" in the registry runs as uid and gid
 * BROKER_TOOL_ID_BASE + the calling agent's id: ids no user has, no capabilities; each run in a
 * Landlock domain of its own, so that one run cannot signal or trace another.
 */
#define BROKER_TOOL_ID_BASE 2147287040U /* 0x7ffd0000 */
enum bmsg_type {
	/* root -> worker */
	MSG_CONN = 1, /* a checked connection (the fd), known from now on as conn */
	MSG_REPLY, /* reply bytes (whole frames, or the tail of one) to send on conn, in order */
	MSG_CLOSE, /* close conn once what it holds for it is sent */
	/* worker -> root */
	MSG_REQUEST, /* a request: struct bmsg_request and its arguments */
	MSG_REFUSED, /* a frame the worker refused: struct bmsg_refused; root replies */
	MSG_CLOSED, /* the agent closed conn (or the worker did) */
	MSG_DRAINED, /* a __u64: every reply byte handed over for conn so far is sent */
};

struct bmsg {
	__u32 type;
	__u32 conn;
	__u32 len;
};

struct bmsg_refused {
	__u64 len; /* of the refused payload */
	unsigned char sha256[32];
	long long id; /* -1: none */
	__u32 close; /* 1: the framing is lost; root replies, then closes conn */
	__u32 pad;
	struct broker_error err;
};
_Static_assert(sizeof(struct bmsg_refused) == 8 + 32 + 8 + 8 + 32 + 256, "bmsg_refused layout");

/*
 * A request from the worker, binary so that the root side parses no JSON: fixed fields, then
 * nargs arguments, each a struct bmsg_arg, its name_len name bytes and value_len value bytes,
 * in strictly ascending bytewise order of names (so no two alike, and one encoding per request).
 * string: UTF-8, no NUL; integer: 8 bytes, a __s64 in host order; boolean: 1 byte, 0 or 1.
 * Padding and the tool's unused bytes are zero. broker_request_decode() checks all of it.
 */
struct bmsg_request {
	__s64 id; /* -1: none; else 0 to BROKER_ID_MAX */
	__u32 nargs; /* at most BROKER_ARGS_MAX */
	__u32 tool_len; /* 1 to TOOL_NAME_MAX, a tool name */
	char tool[TOOL_NAME_MAX];
};
_Static_assert(sizeof(struct bmsg_request) == 8 + 4 + 4 + TOOL_NAME_MAX, "bmsg_request layout");

enum bmsg_arg_type { BMSG_ARG_STRING = 1, BMSG_ARG_INTEGER, BMSG_ARG_BOOLEAN };
#define BMSG_ARG_NAME_MAX 255

struct bmsg_arg {
	__u8 type; /* enum bmsg_arg_type */
	__u8 name_len;
	__u16 pad;
	__u32 value_len;
};
_Static_assert(sizeof(struct bmsg_arg) == 8, "bmsg_arg layout");

/* A parsed request as a MSG_REQUEST payload, malloc'ed. Returns 0, -ENOMEM, or -EINVAL for
 * what the encoding cannot carry (an argument name over BMSG_ARG_NAME_MAX bytes). */
int broker_request_encode(const struct broker_request *req, char **out, size_t *outlen);
/* Checks and decodes a MSG_REQUEST payload (untrusted: the worker's). Returns 0, or -EINVAL
 * with err saying what is wrong. Free with broker_request_free(). */
int broker_request_decode(const void *buf, size_t len, struct broker_request *req,
			  struct broker_error *err);

#define BMSG_MAX (BROKER_HDR + BROKER_REPLY_MAX)
#define BROKER_CONNS_MAX 256 /* connections of one agent */

#endif
