/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_PROBE_H
#define AGENTD_PROBE_H

#include <stdbool.h>
#include <stdio.h>

#define LSM_LIST_MAX 512

/* What the running kernel offers agentd, found by reading the kernel and by real trial loads. */
struct probe {
	char lsm_list[LSM_LIST_MAX]; /* /sys/kernel/security/lsm, "" when unreadable */
	int lsm_list_err; /* 0 or -errno reading it */
	bool bpf_lsm_listed; /* "bpf" is an active LSM */
	int bpf_lsm_load_err; /* trial load+attach of an lsm/ program: 0 or -errno */
	bool btf; /* /sys/kernel/btf/vmlinux exists */
	char cgroup2[256]; /* cgroup v2 mount point, "" when none */
};

/* True when the comma-separated LSM list names lsm. */
bool lsm_list_has(const char *list, const char *lsm);

/* Mounts securityfs and bpffs where they are not mounted yet. Returns 0 or -errno. */
int mount_kernel_fs(void);

/* Fills p; never fails: what cannot be found is recorded in p. */
void probe_kernel(struct probe *p);
/* Whether every BPF LSM rule can be enforced on this kernel. */
bool probe_bpf_lsm_ok(const struct probe *p);
void probe_print(FILE *out, const struct probe *p);
int probe_print_json(FILE *out, const struct probe *p);

#endif
