/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_LOSS_H
#define AGENTD_LOSS_H

#include <linux/types.h>
#include "agentd/abi.h"
#include "audit/audit.h"
#include "kernel/enforcer.h"

/* Turns the kernel's per-agent drop counters into loss records as they grow: never silent. */
struct loss_tracker {
	__u64 seen[AGENTD_MAX_AGENTS]; /* counter value already recorded */
	bool started[AGENTD_MAX_AGENTS];
};

/*
 * Records agent_id's events lost since the last call (the first call for an agent records the
 * whole counter: pinned counters survive agentd, so it may repeat drops an earlier agentd
 * recorded; repeating beats staying silent); name is the agent's. Returns the number recorded
 * now, 0 if none.
 */
__u64 loss_check(struct loss_tracker *t, struct enforcer *e, struct audit_writer *w, __u32 agent_id,
		 const char *name);

#endif
