// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark only (make bench), never loaded by agentd: agentd's hottest hook, file_open, with
 * agentd's very decision (self-protection, then the file policy), attached two ways, to choose
 * between them by the numbers:
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
