/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Time-limited grants (abi.h, docs/POLICY.md "Grants"): what the operator let through for a
 * while, looked up only on the deny path of the agent's own rules, so the allow path pays
 * nothing. The expiry is checked here, against the kernel's boot clock, which counts suspend
 * too: a grant ends on time whether agentd runs or not. agentd removes a grant once it is over;
 * until then the kernel ignores it.
 */
#ifndef AGENTD_GRANTS_BPF_H
#define AGENTD_GRANTS_BPF_H

#include "agent.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, AGENTD_MAX_GRANTS);
	__type(key, struct agentd_file_key);
	__type(value, struct agentd_grant);
} file_grants SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, AGENTD_MAX_GRANTS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct agentd_grant_net_key);
	__type(value, struct agentd_grant);
} net_grants SEC(".maps");

/* How a hook uses a once grant (AGENTD_GRANT_ONCE in abi.h). */
enum grant_use_mode {
	GRANT_CLAIM, /* the use: claims it, or finds it claimed and fails */
	GRANT_CLAIM_OR_MINE, /* an executable mapping: claims it, or finds it this process's */
	GRANT_PEEK_OR_MINE, /* the open of an exec: unclaimed or this process's; claims nothing */
};

/* Whether once grant g may be used by the current process in this mode. Claims are one
 * compare-and-swap: of two racing uses, one has it. */
static __always_inline int grant_once_ok(struct agentd_grant *g, enum grant_use_mode mode)
{
	__u32 me = bpf_get_current_pid_tgid() >> 32, was;

	if (mode == GRANT_PEEK_OR_MINE) {
		was = *(volatile __u32 *)&g->claimed_by;
		return !was || was == me;
	}
	was = __sync_val_compare_and_swap(&g->claimed_by, 0, me);
	return !was || (mode == GRANT_CLAIM_OR_MINE && was == me);
}

/* Whether grant g lets needed through now, counting the use: unexpired on the boot clock,
 * covering needed, and a once grant free for this use. Returns g's id, or 0. */
static __always_inline __u32 grant_use(struct agentd_grant *g, __u32 needed,
				       enum grant_use_mode mode)
{
	if (!g || (g->rights & needed) != needed)
		return 0;
	if (g->expires_ns && bpf_ktime_get_boot_ns() >= g->expires_ns)
		return 0;
	if ((g->flags & AGENTD_GRANT_ONCE) && !grant_once_ok(g, mode))
		return 0;
	__sync_fetch_and_add(&g->used, 1);
	return g->id;
}

/* A grant of rights needed on the object of inode to agent a, used in mode: its id, or 0. */
static __always_inline __u32 file_grant(const struct agent *a, struct inode *inode, __u32 needed,
					enum grant_use_mode mode)
{
	struct agentd_file_key k = { .agent_id = a->id };

	if (!inode)
		return 0;
	k.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	k.ino = BPF_CORE_READ(inode, i_ino);
	return grant_use(bpf_map_lookup_elem(&file_grants, &k), needed, mode);
}

/* A grant to agent a of proto (AGENTD_PROTO_*) to addr (IPv4-mapped for IPv4) and port: its
 * id, or 0. */
static __always_inline __u32 net_grant(const struct agent *a, const __u8 addr[16], __u16 port,
				       __u32 proto)
{
	struct agentd_grant_net_key k = { .prefixlen = 64 + 128, .agent_id = a->id, .port = port };

	if (!proto)
		return 0;
	__builtin_memcpy(k.addr, addr, 16);
	return grant_use(bpf_map_lookup_elem(&net_grants, &k), proto, GRANT_CLAIM);
}

#endif /* AGENTD_GRANTS_BPF_H */
