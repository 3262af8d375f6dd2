/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every agentd BPF program shares: agent identity, the maps that define it, events and
 * their loss accounting. Each object includes this; userspace makes all objects share one copy
 * of every map declared here (bpf_map__reuse_fd before load).
 */
#ifndef AGENTD_AGENT_BPF_H
#define AGENTD_AGENT_BPF_H

#include "kernel.bpf.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "agentd/abi.h"

/* Set by userspace before load; the default suits tests. */
const volatile __u64 wakeup_bytes = 256 * 1024; /* force a consumer wakeup past this backlog */

/* cgroup v2 id -> agent id. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4 * AGENTD_MAX_AGENTS);
	__type(key, __u64);
	__type(value, __u32);
} agent_cgroups SEC(".maps");

/* The agent levels, the cgroup index and the object filter (abi.h): the one variable of every
 * object's .bss, which userspace shares among the objects like the maps (and refuses an object
 * whose .bss holds anything else); a program reads it at its address, with no lookup. */
struct agentd_shared agentd_shared SEC(AGENTD_SHARED_SECTION);

/* The agent of cgroup cg, 0 for none: one load of its slot of the cgroup index (abi.h), and
 * agent_cgroups only when several agent cgroups share the slot. */
static __always_inline __u32 cgroup_agent(__u64 cg)
{
	__u64 v = *(volatile __u64 *)&agentd_shared
			   .cgroup_index[cg & (AGENTD_CGROUP_INDEX_SLOTS - 1)];
	__u32 *id;

	if (!v)
		return 0;
	if ((v & (AGENTD_CGROUP_INDEX_SLOTS - 1)) < AGENTD_MAX_AGENTS)
		return agentd_cgroup_index_word(cg, 0) == agentd_cgroup_index_word(v, 0)
			       ? v & (AGENTD_CGROUP_INDEX_SLOTS - 1)
			       : 0;
	id = bpf_map_lookup_elem(&agent_cgroups, &cg);
	return id ? *id : 0;
}

/* agent id -> its configuration, switched whole on reload (abi.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, AGENTD_MAX_AGENTS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct agentd_agent_slot);
} agent_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 * 1024 * 1024);
} events SEC(".maps");

/* Events that could not be reserved, per agent: loss is counted, never silent. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, AGENTD_MAX_AGENTS);
	__type(key, __u32);
	__type(value, __u64);
} event_drops SEC(".maps");

struct agent {
	__u32 id;
	int has_config;
	__u64 cgroup; /* the registered cgroup the task was found under (current_agent()) */
	struct agentd_agent_config cfg;
};

/* The configuration of agent id in force: the half of its slot that one load of the slot's
 * generation names. A half whose generation is not that one cannot be in force (abi.h): no
 * configuration, which denies everything. Returns 1. */
static __always_inline int agent_config(struct agent *a, __u32 id)
{
	struct agentd_agent_slot *s = bpf_map_lookup_elem(&agent_slots, &id);
	__u32 gen = s ? *(volatile __u32 *)&s->generation : 0;

	a->id = id;
	a->has_config = 0;
	if (s && gen) {
		a->cfg = s->cfg[gen & 1];
		a->has_config = a->cfg.generation == gen;
	}
	if (!a->has_config)
		__builtin_memset(&a->cfg, 0, sizeof(a->cfg));
	return 1;
}

/*
 * The agent the current task belongs to: its cgroup, or its ancestor, at a level where agents
 * sit, registered as an agent's. Returns 0 for a task of no agent, which at each level costs
 * a helper call and one load (an agent's task too, unless its slot is shared). Unrolled: a
 * handful of levels, and no loop back-edge for older verifiers to refuse.
 */
static __always_inline int current_agent(struct agent *a)
{
	const struct agentd_agent_levels *lv = &agentd_shared.levels;
	__u32 id, i;
	__u64 cg;

#pragma unroll
	for (i = 0; i < AGENTD_MAX_AGENT_LEVELS; i++) {
		if (i >= *(volatile __u32 *)&lv->count)
			return 0;
		/* Volatile, both: the level is read after the count that includes it. */
		cg = bpf_get_current_ancestor_cgroup_id(*(volatile __u32 *)&lv->level[i]);
		id = cg ? cgroup_agent(cg) : 0;
		if (id) {
			a->cgroup = cg;
			return agent_config(a, id);
		}
	}
	return 0;
}

struct task_search {
	struct cgroup *cg;
	__u32 id;
};

static long task_agent_step(__u32 i, void *ctx)
{
	struct task_search *s = ctx;
	struct cgroup *cg = s->cg;

	if (!cg)
		return 1;
	/* The index, as for the current task: the hash only where a slot is shared. */
	s->id = cgroup_agent(BPF_CORE_READ(cg, kn, id));
	if (s->id)
		return 1;
	/* self is the first member of struct cgroup: the parent css is the parent cgroup. */
	s->cg = (struct cgroup *)BPF_CORE_READ(cg, self.parent);
	return 0;
}

/* The agent of cgroup cg or of its nearest ancestor registered as an agent's; 0 for none. */
static __always_inline __u32 cgroup_tree_agent(struct cgroup *cg)
{
	struct task_search s = { .cg = cg };

	bpf_loop(AGENTD_MAX_CGROUP_LEVEL, task_agent_step, &s, 0);
	return s.id;
}

/* The agent a task belongs to, walking up its cgroup ancestry; 0 for none. */
static __always_inline __u32 task_agent(struct task_struct *t)
{
	return cgroup_tree_agent(BPF_CORE_READ(t, cgroups, dfl_cgrp));
}

static __always_inline void *event_reserve(__u32 agent_id, __u64 size)
{
	void *e = bpf_ringbuf_reserve(&events, size, 0);
	__u64 *drops;

	if (e)
		return e;
	drops = bpf_map_lookup_elem(&event_drops, &agent_id);
	if (drops)
		*drops += 1;
	return NULL;
}

/*
 * No wakeup per event: the consumer polls on a timer, and is woken when the backlog crosses a
 * multiple of wakeup_bytes (once per wakeup_bytes of growth, not once per event past it: each
 * forced wakeup queues an irq_work, a self-IPI, which costs the hooked task more than the rest
 * of the event, most of all in a guest). e is filled (event_fill()): its header has its length.
 */
static __always_inline void event_submit(void *e)
{
	__u64 avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	/* What this record takes in the ring: its header, rounded up to 8 bytes. */
	__u64 size = (((struct agentd_event_hdr *)e)->len + BPF_RINGBUF_HDR_SZ + 7) & ~7ULL;
	__u64 flags = BPF_RB_NO_WAKEUP;

	/* avail counts this record, reserved and not yet committed: avail - size is before it. */
	if (avail >= size && avail / wakeup_bytes != (avail - size) / wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(e, flags);
}

/*
 * Shadow mode (docs/SHADOW.md): the denies of the agent's own file, exec, socket-family and
 * network rules, and the file walks that fail closed, are recorded as would-deny and let
 * through. Everything else stays enforced: self-protection and containment (capabilities,
 * tasks, IPC, unix sockets and cgroups outside the agent), protocols and IP options no hook
 * follows, unreadable destinations, and the structural network deny unless agentd's host
 * option puts it in shadow too (AGENTD_AGENT_SHADOW_STRUCTURAL).
 */
#define SHADOW_REASONS                                                                             \
	((1U << AGENTD_REASON_RULE) | (1U << AGENTD_REASON_NO_RULE) |                              \
	 (1U << AGENTD_REASON_WALK_TOO_DEEP) | (1U << AGENTD_REASON_LINK_WIDENS) |                 \
	 (1U << AGENTD_REASON_WRITABLE_EXEC) | (1U << AGENTD_REASON_ANON_EXEC) |                   \
	 (1U << AGENTD_REASON_UNKNOWN_MOUNT) | (1U << AGENTD_REASON_DEVICE))

/* Whether a deny of agent a for reason is one its shadow mode records and lets through. */
static __always_inline int shadowed(const struct agent *a, __u32 reason)
{
	__u32 flags = a->cfg.flags;

	if (!(flags & AGENTD_AGENT_SHADOW))
		return 0;
	if (reason == AGENTD_REASON_STRUCTURAL)
		return !!(flags & AGENTD_AGENT_SHADOW_STRUCTURAL);
	return reason < 32 && (SHADOW_REASONS >> reason & 1);
}

/* Whether a deny stands: not one that the agent's shadow mode lets through. An allow costs
 * the one test of deny, so that enforce mode's allow path is what it was. */
static __always_inline int enforced(const struct agent *a, int deny, __u32 reason)
{
	return deny && !shadowed(a, reason);
}

static __always_inline void event_fill(struct agentd_event_hdr *hdr, __u16 type, __u32 len,
				       struct agentd_task *task, const struct agent *a,
				       struct agentd_verdict *v, __u32 hook, int deny, __u32 reason,
				       __u32 rule_id)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	hdr->type = type;
	hdr->version = AGENTD_EVENT_VERSION;
	hdr->len = len;
	hdr->ts_ns = bpf_ktime_get_ns();
	task->cgroup_id = bpf_get_current_cgroup_id();
	task->agent_id = a->id;
	task->generation = a->cfg.generation;
	task->pid = pid_tgid >> 32;
	task->tid = (__u32)pid_tgid;
	task->uid = (__u32)bpf_get_current_uid_gid();
	task->pad = 0;
	bpf_get_current_comm(task->comm, sizeof(task->comm));
	v->hook = hook;
	v->decision = !deny		    ? AGENTD_DECISION_ALLOW
		      : shadowed(a, reason) ? AGENTD_DECISION_WOULD_DENY
					    : AGENTD_DECISION_DENY;
	v->reason = reason;
	v->rule_id = rule_id;
}

/*
 * Verdicts as branches on an opaque flag: the verifier checks LSM return values against
 * [-4095, 0] and cgroup ones against [0, 1] (Linux 6.x), and cannot range arithmetic that
 * clang would otherwise make of "deny ? -EPERM : 0".
 */
static __always_inline int lsm_verdict(int deny)
{
	barrier_var(deny);
	if (deny)
		return -EPERM;
	return 0;
}

static __always_inline int cgroup_verdict(int deny)
{
	barrier_var(deny);
	if (deny)
		return 0;
	return 1;
}

static __always_inline int want_event(const struct agent *a, int deny)
{
	return deny || (a->cfg.flags & AGENTD_AGENT_LOG_ALLOWS);
}

#endif /* AGENTD_AGENT_BPF_H */
