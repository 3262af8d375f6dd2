// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark only (make bench), never loaded by agentd: the two hottest hooks of agentd,
 * file_open and inode_permission (once per path component), with agentd's very decisions,
 * attached two ways, to choose between them by the numbers:
 *   lsm/         global: every task runs the program, a task of no agent returns after the
 *                identity lookup (what agentd does);
 *   lsm_cgroup/  attached to the agent's cgroup: the kernel runs the program only for tasks in
 *                it (at most 10 such hooks per cgroup; Linux 6.0+).
 */
#include "files.bpf.h"
#include "self.bpf.h"

char LICENSE[] SEC("license") = "GPL";

SEC("lsm/file_open")
int BPF_PROG(global_file_open, struct file *file, int ret)
{
	return ret ? ret : lsm_verdict(file_open_denied(file));
}

SEC("lsm/inode_permission")
int BPF_PROG(global_inode_permission, struct inode *inode, int mask, int ret)
{
	return ret ? ret : cgroup_write_check(inode, mask);
}

/* lsm_cgroup programs answer 1 (allow) or 0 (deny: -EPERM). */
SEC("lsm_cgroup/file_open")
int BPF_PROG(cgroup_file_open, struct file *file)
{
	return cgroup_verdict(file_open_denied(file));
}

SEC("lsm_cgroup/inode_permission")
int BPF_PROG(cgroup_inode_permission, struct inode *inode, int mask)
{
	return cgroup_verdict(cgroup_write_check(inode, mask) != 0);
}
