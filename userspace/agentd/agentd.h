/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_AGENTD_H
#define AGENTD_AGENTD_H

#include <stdbool.h>
#include <sys/socket.h>
#include "audit/audit.h"
#include "policy/compile.h"
#include "kernel/enforcer.h"
#include "policy/policy.h"
#include "paths.h"

#define DEFAULT_PROXY_IDLE_SEC 600
#define AGENTD_VERSION "0.1.0"

struct options {
	bool probe;
	bool json;
	const char *audit_dir;
	const char *pin_dir;
	bool teardown;
	const char *control;
	const char *state_dir;
	const char *cgroup; /* parent of every agent's cgroup; NULL: <cgroup2>/agentd */
	bool allow_partial;
	const char *stream; /* the audit stream socket; NULL: audit.sock beside control */
	const char *stream_group; /* NULL: root only */
	unsigned proxy_idle_sec; /* a relayed connection silent both ways this long is closed */
	unsigned ring_mb; /* the events ring buffer, MiB (a power of two) */
	const char *metrics_listen; /* --metrics-listen as given; NULL: none */
	struct sockaddr_storage metrics_addr; /* its loopback address */
	socklen_t metrics_addr_len;
	bool verbose;
	bool shadow_structural; /* shadow mode covers the structural network deny (docs/SHADOW.md) */
};

/*
 * Loads and compiles a policy; *p must outlive c (rules name its paths). Every error goes to
 * errs (the caller clears it); the first ("file:line:col: pointer: message") is also in why.
 * With reg, the tools registry is kept there (the policy's tools point into it; NULL when the
 * agent has none); without, it is freed. Returns 0 or -errno.
 */
int policy_rules_load(const char *policy, const char *tools, const struct policy_vars *vars,
		      struct policy **p, struct tools_registry **reg, struct compiled *c,
		      struct policy_errors *errs, char *why, size_t whysz);

/* The daemon: agents added and removed over the control socket (daemon.c). Returns 0 or -errno. */
int daemon_run(const struct options *o);

/* Where kernel decisions go: the audit log, and with -v one line each on stdout. */
struct sink {
	struct audit_writer *audit;
	__s64 mono_to_real_ns;
	bool quiet; /* no line on stdout (the audit log is the record; -v prints) */
	/* Events per pass before consumption stops with -EAGAIN, so that a busy agent cannot
	 * starve the control socket; 0: no limit. */
	unsigned budget, used;
	/* Decisions recorded, by agent id, audit kind and decision (the metrics socket). */
	__u64 decisions[AGENTD_MAX_AGENTS][AUDIT_KIND_MAX][AUDIT_DECISION_MAX];
	/*
	 * The name of each id's agent, for its kernel records (events carry the id alone). A
	 * removed agent's name stays, and its id is not given out again, until the ring buffer
	 * has been read empty: its last events, already in the ring, still name it.
	 */
	char names[AGENTD_MAX_AGENTS][AUDIT_NAME_MAX];
	bool retiring[AGENTD_MAX_AGENTS];
	bool any_retiring;
	/* Sees each record of a kernel event as it is logged (agentctl drill's denials); NULL: none. */
	void (*tap)(void *ctx, const struct audit_record *r);
	void *tap_ctx;
};
int sink_event(void *ctx, void *data, size_t len);
/* id is now name's (an agent added or adopted). */
void sink_name(struct sink *s, __u32 id, const char *name);
/* id's agent is removed: its name stays for the events still in the ring buffer. */
void sink_retire(struct sink *s, __u32 id);
/* Whether id may be given to a new agent (no event of a removed one may still name it). */
bool sink_id_free(const struct sink *s, __u32 id);
/* The ring buffer was read empty: the removed agents' ids are free. */
void sink_drained(struct sink *s);

#endif
