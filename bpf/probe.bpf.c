// SPDX-License-Identifier: GPL-2.0
/* The smallest BPF LSM program: agentd loads and attaches it to learn whether BPF LSM works. */
#include "kernel.bpf.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("lsm/file_open")
int BPF_PROG(probe_file_open, struct file *file, int ret)
{
	return ret;
}
