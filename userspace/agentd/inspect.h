/* SPDX-License-Identifier: GPL-2.0 */
/*
 * agent.inspect (docs/INSPECT.md): per boundary of an agent, what its policy declares, what the
 * kernel is observed to hold now, and what its last drill proved; per process the same from
 * /proc; then findings. Built fresh at each request from bpf() queries, map reads and /proc.
 */
#ifndef AGENTD_INSPECT_H
#define AGENTD_INSPECT_H

#include <jansson.h>
#include "boundary.h"
#include "daemon.h"
#include "kernel/observe.h"
#include "policy/drill_record.h"

#define INSPECT_TASKS_MAX 16 /* processes shown (the reply is one frame); all are checked */
#define INSPECT_FINDINGS_MAX 40 /* findings shown; the rest summed up in one */

enum severity { SEV_INFO, SEV_LOW, SEV_MEDIUM, SEV_HIGH, SEV_CRITICAL };

struct row {
	char declared[256];
	json_t *rules; /* the rule ids it declares; NULL: none */
	char observed[512];
	bool match; /* what the kernel holds is what agentd applied */
};

struct inspection {
	struct daemon *d;
	struct agent *a;
	struct compiled c;
	bool compiled;
	struct agentd_agent_config cfg; /* in force, read from agent_slots */
	int cfg_err;
	struct observed_prog *progs;
	size_t nprogs;
	struct row rows[BOUNDARY_COUNT];
	struct drill_record drill;
	int drill_err; /* 0, -ENOENT (never drilled), or the reason in drill_why */
	char drill_why[512];
	char digest[OBSERVE_DIGEST_HEX + 64];
	json_t *findings;
	unsigned findings_more; /* past INSPECT_FINDINGS_MAX */
	enum severity findings_more_worst;
	json_t *tasks;
	unsigned ntasks;
};

/* The agent.inspect reply for a. */
json_t *inspect_handle(struct daemon *d, struct agent *a, const struct control_request *req);
/* Adds to each agent of a status reply "inspect": declared == observed, and its last drill. */
void inspect_status_json(struct daemon *d, json_t *reply);

/* inspect_task.c: every process of the agent's cgroups, into in->tasks and in->findings. */
void inspect_tasks(struct inspection *in);
/* A finding: severity, confidence ("high", "medium"), the boundary, what was seen, why it
 * matters, the fix. */
void inspect_finding(struct inspection *in, enum severity sev, const char *confidence,
		     enum boundary b, int pid, const char *seen, const char *why, const char *fix);
const char *inspect_severity_name(enum severity s);

#endif
