// SPDX-License-Identifier: GPL-2.0
#include "log.h"
#include "audit/loss.h"

__u64 loss_check(struct loss_tracker *t, struct enforcer *e, struct audit_writer *w, __u32 agent_id,
		 const char *name)
{
	const char *detail = "ring buffer full";
	__u64 drops, delta;

	if (!agent_id || agent_id >= AGENTD_MAX_AGENTS || enforcer_drops(e, agent_id, &drops))
		return 0;
	if (!t->started[agent_id]) {
		t->started[agent_id] = true;
		detail = "ring buffer full; counted since the agent's programs were loaded, "
			 "possibly recorded before by an earlier agentd";
	}
	if (drops <= t->seen[agent_id])
		return 0;
	delta = drops - t->seen[agent_id];
	t->seen[agent_id] = drops;
	log_warn("agent %u: %llu events lost (ring buffer full)\n", agent_id,
		 (unsigned long long)delta);
	if (w)
		audit_writer_loss(w, agent_id, name, delta, "ringbuf", detail);
	return delta;
}
