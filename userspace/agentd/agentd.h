/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_AGENTD_H
#define AGENTD_AGENTD_H

#include <stdbool.h>
#include "audit.h"
#include "enforcer.h"
#include "policy.h"

#define MAX_DENY 64
#define MAX_VARS 32
#define AGENT_ID 1
#define DEFAULT_PIN_DIR "/sys/fs/bpf/agentd"

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
};

/* Compiles the agent's rules (policy or deny list), registers its cgroup, attaches. */
int agent_setup(struct enforcer *e, const struct options *o, bool lsm);

/* Where kernel decisions go: one line each on stdout, and the audit log when there is one. */
struct sink {
	struct audit_writer *audit;
	__s64 mono_to_real_ns;
};
int sink_event(void *ctx, void *data, size_t len);

#endif
