// SPDX-License-Identifier: GPL-2.0
/*
 * File policy. Today: deny opening named file-system objects (device + inode) to an agent.
 *
 * Fails closed where it can decide: a registered agent opening a denied object gets EPERM
 * whether or not its event can be recorded. A task of no agent is allowed after one lookup.
 */
#include "agent.bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct agentd_file_key);
	__type(value, struct agentd_file_rule);
} file_rules SEC(".maps");

static __always_inline void emit_file_event(const struct agentd_agent *agent, __u64 cgroup_id,
					    struct file *file, const struct agentd_file_key *key,
					    __u32 rule_id, __u32 hook, __u32 decision)
{
	struct agentd_file_event *e;
	const unsigned char *name;
	long n;

	e = event_reserve(agent->agent_id, sizeof(*e));
	if (!e)
		return;
	event_fill_task(&e->hdr, AGENTD_EV_FILE, sizeof(*e), &e->pid, &e->tid, &e->uid, e->comm);
	e->cgroup_id = cgroup_id;
	e->agent_id = agent->agent_id;
	e->generation = agent->generation;
	e->hook = hook;
	e->decision = decision;
	e->rule_id = rule_id;
	e->dev = key->dev;
	e->ino = key->ino;
	e->flags = 0;
	name = BPF_CORE_READ(file, f_path.dentry, d_name.name);
	n = bpf_probe_read_kernel_str(e->name, sizeof(e->name), name);
	if (n < 0) {
		e->name[0] = '\0';
		n = 1;
	}
	e->name_len = n - 1;
	if (BPF_CORE_READ(file, f_path.dentry, d_name.len) > e->name_len)
		e->flags |= AGENTD_EVF_NAME_TRUNCATED;
	event_submit(e);
}

SEC("lsm/file_open")
int BPF_PROG(file_open, struct file *file, int ret)
{
	const struct agentd_agent *agent;
	struct agentd_file_rule *rule;
	struct agentd_file_key key = {};
	__u64 cgroup_id;

	if (ret)
		return ret;
	agent = current_agent(&cgroup_id);
	if (!agent)
		return 0;

	key.agent_id = agent->agent_id;
	key.dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
	key.ino = BPF_CORE_READ(file, f_inode, i_ino);
	rule = bpf_map_lookup_elem(&file_rules, &key);
	if (!rule)
		return 0;

	emit_file_event(agent, cgroup_id, file, &key, rule->rule_id, AGENTD_HOOK_FILE_OPEN,
			AGENTD_DECISION_DENY);
	return -EPERM;
}
