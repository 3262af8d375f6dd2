/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tool broker (docs/BROKER.md): one Unix socket per agent; each connection is checked
 * against the agent whose socket it reached (SO_PEERCRED, SO_PEERPIDFD, the peer's cgroup),
 * then handed to an unprivileged, seccomp-confined worker that reads and parses the agent's
 * frames. The worker passes each request back in a strict binary form; the root side checks it
 * again, checks the agent's policy and the tool's schema, runs the tool in a cgroup of its own,
 * redacts, replies on its own copy of the connection and audits. The services hooks
 * (services.h) call these.
 */
#ifndef AGENTD_BROKER_H
#define AGENTD_BROKER_H

#include <jansson.h>
#include <stddef.h>
#include "policy/tools.h"
#include "wire/prom.h"

/* The tools' cgroups sit below this one, under agentd's cgroup (not an agent name: a dot). */
#define BROKER_TOOLS_CGROUP "tools.broker"

struct daemon;
struct agent;

/*
 * Calls counted per tool (docs/METRICS.md). Tool names come from the agents' tools registries,
 * never from a request: a call naming no tool of its agent's registry counts under "?", and so
 * do the tools past BROKER_STATS_TOOLS.
 */
#define BROKER_STATS_TOOLS 128
/* A call's outcome: it ran (ok, timeout, killed with its agent) or was refused with a code. */
#define BROKER_OUTCOMES                                                                            \
	{                                                                                          \
		"ok", "timeout", "killed", "denied", "bad-args", "bad-request", "busy", "failed"   \
	}
#define BROKER_N_OUTCOMES 8
/* Frames the worker refused, by code (the worker's codes, broker.c's worker_code()). */
#define BROKER_FRAME_CODES                                                                         \
	{                                                                                          \
		"bad-frame", "bad-json", "bad-request", "failed"                                   \
	}
#define BROKER_N_FRAME_CODES 4

struct broker_tool_stats {
	char name[TOOL_NAME_MAX + 1];
	__u64 calls[BROKER_N_OUTCOMES];
	struct metrics_histogram seconds; /* of the calls that ran, start to exit */
};

struct broker_stats {
	struct broker_tool_stats tools[BROKER_STATS_TOOLS]; /* [0] is "?" */
	unsigned n_tools;
	__u64 frames_refused[BROKER_N_FRAME_CODES];
	__u64 conns_refused; /* connections from a process not the socket's agent's */
};

/* The counters since the broker started; NULL when it did not. */
const struct broker_stats *broker_stats(void);

int broker_start(struct daemon *d);
void broker_stop(struct daemon *d);
int broker_agent_up(struct daemon *d, struct agent *a, char *why, size_t whysz);
void broker_agent_down(struct daemon *d, struct agent *a);
void broker_agent_reloaded(struct daemon *d, struct agent *a);
void broker_agent_json(struct daemon *d, const struct agent *a, json_t *obj);
void broker_status_json(struct daemon *d, json_t *reply);
/* approval.ls, approval.approve, approval.deny: calls held for an operator (approval.c). */
struct control_request;
json_t *approval_handle(struct daemon *d, const struct control_request *req);
struct control_request;
/* tools.accept: an upstream MCP tool's current digest becomes the accepted one
 * (mcp_upstream.h); the control reply. */
json_t *broker_tools_accept(struct daemon *d, const struct control_request *req);

#endif
