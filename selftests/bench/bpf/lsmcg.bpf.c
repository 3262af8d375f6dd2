// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark only (make bench), never loaded by agentd: agentd's hottest hook, file_open, with
 * agentd's very decision (self-protection, then the file policy), attached two ways, to choose
 * between them by the numbers (and bench_open's floors, at the end):
 *   lsm/         global: every task runs the program, a task of no agent returns after the
 *                identity lookup (what agentd does);
 *   lsm_cgroup/  attached to the agent's cgroup: the kernel runs the program only for tasks in
 *                it (at most 10 such hooks per cgroup; Linux 6.0+).
 */
#include "files.bpf.h"

char LICENSE[] SEC("license") = "GPL";

SEC("lsm/file_open")
int BPF_PROG(global_file_open, struct file *file, int ret)
{
	return ret ? ret : file_open_verdict(file);
}

/* lsm_cgroup programs answer 1 (allow) or 0 (deny: -EPERM). */
SEC("lsm_cgroup/file_open")
int BPF_PROG(cgroup_file_open, struct file *file)
{
	return cgroup_verdict(file_open_verdict(file) != 0);
}

/* The floor: a program on file_open that decides nothing, which any BPF LSM design pays (the
 * trampoline and one program call) before it decides anything. */
SEC("lsm/file_open")
int BPF_PROG(empty_file_open, struct file *file, int ret)
{
	return ret;
}

/* The floor and the kernel helper agentd's identity check calls at each agent level (agent.bpf.h:
 * current_agent()), for the first level, its result unused: what the kernel's half of that
 * check costs, apart from agentd's loads and compares. */
SEC("lsm/file_open")
int BPF_PROG(ident_file_open, struct file *file, int ret)
{
	bpf_get_current_ancestor_cgroup_id(*(volatile __u32 *)&agentd_shared.levels.level[0]);
	return ret;
}

/*
 * For bench_open's before/after comparison only: the guard agentd had before self-protection
 * moved into the once-per-operation hooks, inode_permission denying agents write permission
 * on cgroup file system objects. It runs once per path component of every lookup.
 */
#define MAY_WRITE 0x2
#define MAY_APPEND 0x8

SEC("lsm/inode_permission")
int BPF_PROG(old_inode_permission, struct inode *inode, int mask, int ret)
{
	if (ret || !(mask & (MAY_WRITE | MAY_APPEND)))
		return ret;
	if (!on_cgroupfs(inode->i_sb))
		return 0;
	return deny_agents(AGENTD_HOOK_CGROUP_WRITE, mask);
}
