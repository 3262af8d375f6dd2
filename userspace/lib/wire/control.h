/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The control protocol between agentctl and agentd (docs/CONTROL.md): frames (wire/frame.h)
 * of at most CONTROL_FRAME_MAX bytes of JSON. Every field is checked here, before anyone
 * uses it; the daemon and the client only see validated structures.
 */
#ifndef AGENTD_CONTROL_H
#define AGENTD_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "wire/frame.h"

#define CONTROL_HDR FRAME_HDR
#define CONTROL_FRAME_MAX 65536 /* payload bytes */
#define CONTROL_NAME_MAX 63 /* agent names: [a-z0-9][a-z0-9-]{0,62} */
#define CONTROL_PATH_MAX 4095
#define CONTROL_VARS_MAX 32
#define CONTROL_VAR_NAME_MAX 63
#define CONTROL_ID_MAX 9007199254740991LL /* 2^53 - 1: exact in every JSON reader */
#define CONTROL_PID_MAX 4194304 /* PID_MAX_LIMIT */
#define CONTROL_APPROVAL_ID_MAX 32 /* [0-9a-f-] */
#define CONTROL_APPROVE_FOR_MAX 86400 /* seconds an approval may stand for later calls */

enum control_cmd {
	CONTROL_AGENT_ADD,
	CONTROL_AGENT_RM,
	CONTROL_AGENT_LS,
	CONTROL_AGENT_INFO,
	CONTROL_AGENT_KILL,
	CONTROL_POLICY_RELOAD,
	CONTROL_STATUS,
	CONTROL_AGENT_ATTACH,
	CONTROL_AGENT_DETACH,
	CONTROL_AGENT_MODE,
	CONTROL_AGENT_INSPECT,
	CONTROL_APPROVAL_LS,
	CONTROL_APPROVAL_APPROVE,
	CONTROL_APPROVAL_DENY,
	CONTROL_TOOLS_ACCEPT,
	CONTROL_GRANT_ADD,
	CONTROL_GRANT_LS,
	CONTROL_GRANT_RM,
	CONTROL_AGENT_DRILL,
	CONTROL_CMD_MAX,
};

struct control_var {
	char name[CONTROL_VAR_NAME_MAX + 1];
	char value[CONTROL_PATH_MAX + 1];
};

/* grant.add and grant.rm (control_grant.c, docs/CONTROL.md). */
#define CONTROL_GRANT_FOR_MAX_MS (366LL * 24 * 3600 * 1000)
struct control_grant {
	char kind[8]; /* "path", "exec", "connect", "host", "tool"; "" when not given */
	char target[CONTROL_PATH_MAX + 1]; /* the path, CIDR:PORT, host name or tool name */
	char rights[128]; /* path: right names as in policies, comma-separated */
	long long for_ms; /* 0: not given */
	bool once;
	long long id; /* grant.rm: the grant's id, 1..CONTROL_ID_MAX */
};

struct control_request {
	long long id; /* -1 when the request had none usable (the reply's id is then null) */
	enum control_cmd cmd;
	char name[CONTROL_NAME_MAX + 1]; /* "" when not given (agent.ls, status, reload of all) */
	char policy[CONTROL_PATH_MAX + 1]; /* agent.add: an absolute path */
	char tools[CONTROL_PATH_MAX + 1]; /* agent.add: "" or an absolute path */
	struct control_var vars[CONTROL_VARS_MAX];
	size_t nvars;
	/* agent.attach: exactly one of pid and cgroup; agent.detach: cgroup */
	int pid; /* 0 when not given */
	char cgroup[CONTROL_PATH_MAX + 1]; /* an absolute path, "" when not given */
	bool allow_partial; /* attach where only cgroup-BPF can hold */
	char approval[CONTROL_APPROVAL_ID_MAX + 1]; /* approval.approve, approval.deny */
	unsigned int for_sec; /* approval.approve: later identical calls too, for so long; 0 */
	/* Who asked: SO_PEERCRED of the connection, set by the server, never parsed. */
	int peer_pid;
	unsigned int peer_uid;
	char tool[65]; /* tools.accept: an upstream MCP tool, SERVER.TOOL */
	char mode[8]; /* agent.mode: "shadow" or "enforce" */
	struct control_grant grant;
	unsigned int boundaries; /* agent.drill: 1 << boundary (boundary.h) of each named; 0: all */
};

/* Error codes, stable: clients match on them. */
#define CONTROL_E_FRAME "bad-frame" /* length 0, over CONTROL_FRAME_MAX, or truncated */
#define CONTROL_E_JSON "bad-json" /* not a JSON object */
#define CONTROL_E_REQUEST "bad-request" /* a field missing, of the wrong type, too long, unknown */
#define CONTROL_E_COMMAND "unknown-command"
#define CONTROL_E_PERM "permission" /* the peer is not root */
#define CONTROL_E_NOENT "no-such-agent"
#define CONTROL_E_NOPROC "no-such-process"
#define CONTROL_E_NOT_ATTACHED "not-attached" /* detach of a cgroup the agent does not have */
#define CONTROL_E_EXISTS "exists"
#define CONTROL_E_POLICY "bad-policy" /* it does not load or compile: the message says where */
#define CONTROL_E_LIMIT "limit" /* out of agent ids or clients */
#define CONTROL_E_UNSUPPORTED "unsupported"
#define CONTROL_E_REFUSED "refused" /* it would confine agentd or cross another agent */
#define CONTROL_E_PARTIAL "partial" /* only some layers would hold: allow_partial to go on */
#define CONTROL_E_FAILED "failed" /* the kernel or the file system said no: errno in message */
#define CONTROL_E_NO_APPROVAL "no-such-approval" /* decided, timed out, withdrawn, or never */
#define CONTROL_E_GRANT "bad-grant" /* a grant's target does not resolve, or no grant opens it */
#define CONTROL_E_NOGRANT "no-such-grant"

struct control_error {
	char code[32];
	char message[512];
};

const char *control_cmd_name(enum control_cmd cmd);

/* Whether s is a valid agent name. */
bool control_name_valid(const char *s);

/* frame_check() and frame_encode() (compact) with the control protocol's limit. */
int control_frame_check(const void *buf, size_t len, size_t *payload_len);
int control_frame_encode(const json_t *doc, char **out, size_t *outlen);

/* Parses and validates one request payload. Returns 0, or -EINVAL with err filled (and
 * req->id set when the request carried a usable id). */
int control_request_parse(const char *payload, size_t len, struct control_request *req,
			  struct control_error *err);
/* The request as JSON (the client's side of control_request_parse). */
json_t *control_request_json(const struct control_request *req);

/* A grant field of req (control_grant.c): 0 or -EINVAL with err filled; 1 when key is none. */
int control_grant_arg(const char *key, json_t *v, struct control_request *req,
		      struct control_error *err);
/* What grant.add and grant.rm need given and consistent: 0 or -EINVAL with err filled. */
int control_grant_check(const struct control_request *req, struct control_error *err);
/* Adds req's grant fields to doc (the client's side). */
void control_grant_json(const struct control_request *req, json_t *doc);

/* {"id": id, "ok": true}, to which the caller adds its results; id < 0 gives null. */
json_t *control_reply_ok(long long id);
json_t *control_reply_error(long long id, const char *code, const char *message);

/*
 * Parses a reply payload. Returns 1 with *body (a new reference) for ok replies, 0 with err
 * filled for error replies, -EINVAL with err filled for a malformed reply or one whose id is
 * not want_id.
 */
int control_reply_parse(const char *payload, size_t len, long long want_id, json_t **body,
			struct control_error *err);

#endif
