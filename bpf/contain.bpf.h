/* SPDX-License-Identifier: GPL-2.0 */
/* Containment state shared by self.bpf.c (task_alloc) and contain.bpf.c. */
#ifndef AGENTD_CONTAIN_BPF_H
#define AGENTD_CONTAIN_BPF_H

#include "self.bpf.h"

/*
 * Tasks a task of no agent created with clone3(CLONE_INTO_CGROUP) (agentctl run's child, the
 * broker's tool), until their first exec: the launcher's own code, which may still change its
 * uid and groups (CAP_SETUID, CAP_SETGID) and drop capabilities for good (CAP_SETPCAP: the
 * bounding set, the securebits) whatever the policy grants. Set in task_alloc, where
 * the creator is still outside; cleared at exec (bprm_committed_creds). A fork of such a task
 * is not marked. No agent task can make one: CLONE_INTO_CGROUP is refused to agents.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} launching SEC(".maps");

#endif /* AGENTD_CONTAIN_BPF_H */
