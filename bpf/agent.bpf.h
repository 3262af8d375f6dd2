/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers every agentd BPF program shares: agent identity, events and their loss accounting. */
#ifndef AGENTD_AGENT_BPF_H
#define AGENTD_AGENT_BPF_H

#include "kernel.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "agentd/abi.h"

#define EPERM 1

/* Set by userspace before load; the defaults suit tests. */
const volatile __u64 wakeup_bytes = 256 * 1024; /* force a consumer wakeup past this backlog */

/* cgroup v2 id -> agent. A task whose cgroup is absent here is no agent's: one lookup, done. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, AGENTD_MAX_AGENTS);
	__type(key, __u64);
	__type(value, struct agentd_agent);
} agent_cgroups SEC(".maps");

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

static __always_inline const struct agentd_agent *current_agent(__u64 *cgroup_id)
{
	*cgroup_id = bpf_get_current_cgroup_id();
	return bpf_map_lookup_elem(&agent_cgroups, cgroup_id);
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

/* No wakeup per event: the consumer polls on a short timer, and is woken only past a backlog. */
static __always_inline void event_submit(void *e)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(e, flags);
}

static __always_inline void event_fill_task(struct agentd_event_hdr *hdr, __u16 type, __u32 len,
					    __u32 *pid, __u32 *tid, __u32 *uid, char *comm)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	hdr->type = type;
	hdr->version = AGENTD_EVENT_VERSION;
	hdr->len = len;
	hdr->ts_ns = bpf_ktime_get_ns();
	*pid = pid_tgid >> 32;
	*tid = (__u32)pid_tgid;
	*uid = (__u32)bpf_get_current_uid_gid();
	bpf_get_current_comm(comm, AGENTD_COMM_LEN);
}

#endif /* AGENTD_AGENT_BPF_H */
