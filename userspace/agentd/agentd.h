/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_AGENTD_H
#define AGENTD_AGENTD_H

#include <stdbool.h>
#include "audit.h"
#include "compile.h"
#include "enforcer.h"
#include "policy.h"

#define MAX_DENY 64
#define MAX_VARS 32
#define AGENT_ID 1
#define DEFAULT_PIN_DIR "/sys/fs/bpf/agentd"
#define DEFAULT_CONTROL "/run/agentd/control.sock"
#define DEFAULT_STATE_DIR "/var/lib/agentd"
#define DEFAULT_PROXY_IDLE_SEC 600
#define AGENTD_VERSION "0.1.0"

struct options {
	bool probe;
	bool json;
	const char *agent_cgroup;
	const char *deny[MAX_DENY];
	int ndeny;
	const char *policy;
	const char *tools;
	struct policy_var vars[MAX_VARS];
	int nvars;
	const char *audit_dir;
	const char *pin_dir;
	bool teardown;
	/* daemon mode (no --agent-cgroup) */
	const char *control;
	const char *state_dir;
	const char *cgroup; /* parent of every agent's cgroup; NULL: <cgroup2>/agentd */
	bool allow_partial;
	const char *stream; /* the audit stream socket; NULL: audit.sock beside control */
	const char *stream_group; /* NULL: root only */
	unsigned proxy_idle_sec; /* a relayed connection silent both ways this long is closed */
	unsigned ring_mb; /* the events ring buffer, MiB (a power of two) */
	bool verbose;
	char audit_buf[4096];
};

/* Single-agent mode's rules: its policy (or deny list), compiled. */
struct agent_rules {
	struct policy *p; /* NULL for a deny list; outlives c, whose rules name its paths */
	struct compiled c;
};

/* Loads and compiles the agent's rules, before any program loads: a broken policy is refused
 * at once, with nothing loaded, pinned or written. Returns 0 or -errno (errors logged). r is
 * freed with agent_rules_free() either way. */
int agent_rules_prepare(const struct options *o, struct agent_rules *r);
void agent_rules_free(struct agent_rules *r);

/* Applies the prepared rules to the loaded programs, registers the agent's cgroup, attaches. */
int agent_setup(struct enforcer *e, const struct options *o, bool lsm, struct agent_rules *r);

/*
 * Loads and compiles a policy; *p must outlive c (rules name its paths). Every error goes to
 * errs (the caller clears it); the first ("file:line:col: pointer: message") is also in why.
 * With reg, the tools registry is kept there (the policy's tools point into it; NULL when the
 * agent has none); without, it is freed. Returns 0 or -errno.
 */
int policy_rules_load(const char *policy, const char *tools, const struct policy_vars *vars,
		      struct policy **p, struct tools_registry **reg, struct compiled *c,
		      struct policy_errors *errs, char *why, size_t whysz);

/* Daemon mode: many agents over the control socket (daemon.c). Returns 0 or -errno. */
int daemon_run(const struct options *o);

/* Where kernel decisions go: one line each on stdout, and the audit log when there is one. */
struct sink {
	struct audit_writer *audit;
	__s64 mono_to_real_ns;
	bool quiet; /* no line on stdout (the daemon: the audit log is the record; -v prints) */
	/* Events per pass before consumption stops with -EAGAIN, so that a busy agent cannot
	 * starve the control socket; 0: no limit. */
	unsigned budget, used;
	/* Decisions recorded, by agent id, audit kind and decision (the metrics socket). */
	__u64 decisions[AGENTD_MAX_AGENTS][AUDIT_KIND_MAX][AUDIT_DECISION_MAX];
};
int sink_event(void *ctx, void *data, size_t len);

#endif
