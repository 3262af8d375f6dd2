/* SPDX-License-Identifier: GPL-2.0 */
/* Self-protection verdicts, shared by self.bpf.c and the attachment benchmark (lsmcg.bpf.c). */
#ifndef AGENTD_SELF_BPF_H
#define AGENTD_SELF_BPF_H

#include "agent.bpf.h"

static __always_inline int deny_self(const struct agent *a, __u32 hook, __u32 reason,
				     __u32 target_pid, __u32 arg)
{
	struct agentd_self_event *e;

	e = event_reserve(a->id, sizeof(*e));
	if (e) {
		event_fill(&e->hdr, AGENTD_EV_SELF, sizeof(*e), &e->task, a, &e->verdict, hook, 1,
			   reason, 0);
		e->target_pid = target_pid;
		e->arg = arg;
		event_submit(e);
	}
	return -EPERM;
}

static __always_inline int deny_agents(__u32 hook, __u32 arg)
{
	struct agent a;

	if (!current_agent(&a))
		return 0;
	return deny_self(&a, hook, AGENTD_REASON_SELF_PROTECT, 0, arg);
}

/* Write permission on a cgroup file system object: the gate for both ways of moving a task
 * (cgroup.procs writes, clone3(CLONE_INTO_CGROUP)). Returns 0 or -EPERM. */
static __always_inline int cgroup_write_check(struct inode *inode, int mask)
{
	unsigned long magic;

	if (!(mask & (MAY_WRITE | MAY_APPEND)))
		return 0;
	magic = BPF_CORE_READ(inode, i_sb, s_magic);
	if (magic != CGROUP2_SUPER_MAGIC && magic != CGROUP_SUPER_MAGIC)
		return 0;
	return deny_agents(AGENTD_HOOK_CGROUP_WRITE, mask);
}

#endif /* AGENTD_SELF_BPF_H */
