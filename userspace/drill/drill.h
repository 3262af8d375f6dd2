/* SPDX-License-Identifier: GPL-2.0 */
/*
 * agentd-drill: the drill program (docs/DRILL.md). agentd execs it outside every agent, as root;
 * for each boundary it starts one process in the drill's cgroup (a sibling of the agent's,
 * registered under the agent's policy and generation), which takes the layers agentctl run gives
 * an agent and tries what the policy denies there, and one thing it allows.
 */
#ifndef AGENTD_DRILL_H
#define AGENTD_DRILL_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>
#include "policy/policy.h"
#include "sandbox/layers.h"
#include "wire/drill_proto.h"

/* What every boundary's process needs, prepared by the drill as root before it starts them. */
struct drill_ctx {
	const struct policy *p;
	struct layers layers;
	pid_t outside; /* a task outside every agent: the drill itself */
	char cgroup_root[PATH_MAX];
	char pin_dir[PATH_MAX];
	char unix_path[PATH_MAX]; /* a path-named unix socket the drill listens on, outside */
	char abstract[64]; /* an abstract one, its name without the leading NUL */
	int tcp_port; /* the drill listens on 127.0.0.1 at it, in its network namespace */
	int ipc_key; /* a System V shared memory segment agentd made in the host's namespace */
	char probe_name[64]; /* the file the files boundary creates where writes are granted */
};

/* Tries boundary b and fills r (its own pid and the pids it forked in r->pids). */
void drill_boundary(const struct drill_ctx *c, int b, struct drill_result *r);

#endif
