/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_CGLIMITS_H
#define AGENTD_CGLIMITS_H

#include <stddef.h>
#include <linux/types.h>

/* An agent's resource limits (0: unset), as a policy gives them. */
struct limits {
	__u32 cpu_millicores;
	__u64 memory_bytes;
	__u32 pids;
	__u32 wall_clock_sec;
};

/*
 * Enables the cpu, memory and pids controllers on every cgroup from the cgroup v2 root down to
 * parent (cgroup.subtree_control), where the kernel offers them in cgroup v2. Those it cannot
 * enable (a hybrid host keeps them on v1) are named in missing ("" when none). Returns 0 or
 * -errno for a write the kernel refused.
 */
int limits_enable(const char *root, const char *parent, char *missing, size_t missingsz);

/*
 * Writes l to the cgroup at cg: cpu.max (quota per 100 ms period), memory.max, pids.max. A limit
 * whose controller file is absent is named in missing, never silently dropped. Returns 0 or
 * -errno for a write the kernel refused.
 */
int limits_apply(const char *cg, const struct limits *l, char *missing, size_t missingsz);

#endif
