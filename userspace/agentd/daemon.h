/* SPDX-License-Identifier: GPL-2.0 */
/* Daemon mode: the agents agentd confines, kept in the state directory. */
#ifndef AGENTD_DAEMON_H
#define AGENTD_DAEMON_H

#include <limits.h>
#include "agentd.h"
#include "wire/control.h"
#include "loop.h"
#include "audit/loss.h"
#include "kernel/probe.h"
#include "kernel/state.h"

struct agent {
	struct agent_state st;
	char cgroup[PATH_MAX + CONTROL_NAME_MAX + 2];
	char limits_missing[64]; /* limits its policy sets that no controller enforces here */
	__u64 deadline_ns; /* CLOCK_MONOTONIC; 0: no wall-clock limit */
	bool expired; /* past its deadline: its processes are killed */
	__u64 audit_frozen_ns; /* CLOCK_MONOTONIC since frozen for the audit log; 0: not (audit_hold.c) */
	/* The policy applied last, and the tools registry its tools point into; NULL when an
	 * adopted agent's policy no longer loads (its pinned rules still hold). */
	struct policy *policy;
	struct tools_registry *tools;
	void *broker, *proxy; /* the services' per-agent state (services.h) */
};

struct daemon {
	const struct options *o;
	struct enforcer *e;
	struct loop *loop; /* fds of the services, polled with the control socket */
	struct sink sink;
	struct probe probe;
	bool lsm;
	char cgroup[PATH_MAX]; /* the parent of every agent's cgroup */
	char audit_dir[PATH_MAX];
	struct agent *agents[AGENTD_MAX_AGENTS]; /* by id; 0 unused */
	struct loss_tracker loss;
	__u64 next_loss_check_ns;
	char limits_missing[64]; /* controllers cgroup v2 does not offer here */
	struct stream *stream; /* the live audit stream (stream.c) */
	int metrics_fd; /* the metrics socket's listener (metrics.c); 0: none */
	char metrics_path[PATH_MAX];
};

/* Re-adopts the agents of the state directory (their cgroups and pinned rules). */
int agents_adopt(struct daemon *d);
/* Applies every agent's policy again (SIGHUP); failures are logged, the old rules stay. */
void agents_reload_all(struct daemon *d);
/* Answers one request. */
json_t *agents_handle(void *ctx, const struct control_request *req);
/* Every agent's services down, then the agents forgotten (their rules stay pinned). */
void agents_free(struct daemon *d);
/* Kills the processes of every agent past its wall-clock deadline (called every second). */
void agents_enforce_deadlines(struct daemon *d);

/* Whether the peer of fd, a connection to agentd's control or stream socket, must be refused:
 * a process of an agent or a tool of the broker (or a peer whose cgroup cannot be read). Returns
 * 1 with why, or 0 (peer.c). */
int daemon_peer_refused(const struct daemon *d, int fd, char *why, size_t whysz);

/* agent.attach and agent.detach for agent a (attach.c). */
json_t *attach_handle(struct daemon *d, struct agent *a, const struct control_request *req);
/* A re-adopted agent's attached cgroups: programs and registration again (gone ones forgotten). */
void attach_adopt(struct daemon *d, struct agent *a);
/* Detaches every attached cgroup of a (agent rm): their processes go on, no longer the agent's. */
void attach_release(struct daemon *d, struct agent *a);

/* agent.drill for agent a; the drill's record of an agent removed (drill.c, docs/DRILL.md). */
json_t *drill_handle(struct daemon *d, struct agent *a, const struct control_request *req);
void drill_forget(struct daemon *d, const char *name);
/* What a drill cut short by agentd's end left (its cgroup, scratch, probe files): at start. */
void drill_sweep(struct daemon *d);

/* A policy or lifecycle audit record about agent a (NULL: the daemon). */
void daemon_audit(struct daemon *d, enum audit_kind kind, const char *op, const struct agent *a,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
