/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Calls held for an operator's approval (docs/BROKER.md, "Approvals"): a tool, or an agent's
 * grant of it, marked "approval": "required" waits in the broker until agentctl approve or
 * deny, or its timeout denies it. Nothing blocks: each held call is a record and a timerfd in
 * the daemon's loop, and the call goes on through broker.c's callback.
 */
#ifndef AGENTD_BROKER_APPROVAL_H
#define AGENTD_BROKER_APPROVAL_H

#include <stdbool.h>
#include <jansson.h>
#include "broker/broker_int.h"

struct agent;
struct bagent;
struct daemon;
struct tool;
struct control_request;

/* What a held call needs to go on. */
struct held_call {
	struct bagent *ba;
	__u32 conn;
	struct broker_request req; /* owns req.args */
	__u64 args_len;
	unsigned char args_sha[32];
	struct caller who;
};

/* broker.c's side: the call goes on, approved (the approval's id) or refused (why), unless its
 * connection is gone; either way it no longer counts in its agent's calls in flight. */
typedef void (*approval_done_fn)(const struct held_call *call, const char *approval,
				 const char *refusal);

/* done: how every held call goes on (a callback: approval.c does not call into broker.c). */
int approval_start(struct daemon *d, approval_done_fn done);
void approval_stop(void);
/*
 * Whether the call waits for an operator: 1 when it is held (the caller counts it in flight
 * and waits for the callback); 0 when it needs no approval, or an earlier approve --for
 * covers it (audited), and goes on now; -errno with why when it needs one and cannot be held
 * (the caller refuses it: fail closed).
 */
int approval_hold(const struct held_call *call, const struct agent *a, const struct tool *t,
		  char *why, size_t whysz);
/* The connection ended: its held calls are withdrawn (audited). */
void approval_conn_gone(struct bagent *ba, __u32 conn);
/* The agent is removed: its held calls are withdrawn and its standing approvals end. */
void approval_agent_down(struct bagent *ba, __u32 agent);

#endif
