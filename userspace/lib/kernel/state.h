/* SPDX-License-Identifier: GPL-2.0 */
/*
 * agentd's state directory: one JSON file per agent (agents/<name>.json), so that a restarted
 * agentd re-adopts its agents. Files are written whole and renamed into place.
 */
#ifndef AGENTD_STATE_H
#define AGENTD_STATE_H

#include <stddef.h>
#include <linux/types.h>
#include "wire/control.h"

#define STATE_CGROUPS_MAX 8

struct agent_state {
	char name[CONTROL_NAME_MAX + 1];
	__u32 id; /* 1..AGENTD_MAX_AGENTS-1 */
	char policy[CONTROL_PATH_MAX + 1];
	char tools[CONTROL_PATH_MAX + 1]; /* "" when none */
	struct control_var vars[CONTROL_VARS_MAX];
	size_t nvars;
	__u32 generation; /* of the rules in force when the file was written */
	/* Cgroups outside agentd's tree put under the agent (agentctl attach --cgroup). */
	char cgroups[STATE_CGROUPS_MAX][CONTROL_PATH_MAX + 1];
	size_t ncgroups;
	/* CLOCK_REALTIME of the add, in ns: a wall-clock limit counts from it, across restarts
	 * of agentd. 0: unknown (a file from before it was kept; counted from adoption). */
	__u64 started_ns;
	/* agentctl agent mode: "shadow" or "enforce" over the policy's mode; "" for the policy's. */
	char mode[8];
};

json_t *agent_state_json(const struct agent_state *s);
/* Parses and validates one state file's bytes. Returns 0 or -EINVAL. */
int agent_state_parse(const char *buf, size_t len, struct agent_state *s);

/* <dir>/agents/<name>.json, written to a temporary file, synced and renamed. */
int agent_state_save(const char *dir, const struct agent_state *s);
int agent_state_remove(const char *dir, const char *name);
/*
 * Calls fn for each agent in dir (files that do not parse are skipped and counted in *bad).
 * Returns 0 or -errno (a missing directory is no agent).
 */
int agent_state_each(const char *dir, int (*fn)(void *ctx, const struct agent_state *s), void *ctx,
		     int *bad);

#endif
