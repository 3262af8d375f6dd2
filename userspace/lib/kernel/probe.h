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
	char cgroup2_controllers[256]; /* cgroup.controllers at the v2 root, "" when none */
	int landlock_abi; /* Landlock ABI version (1..), or -errno: -EOPNOTSUPP disabled at boot,
			   * -ENOSYS not built in */
	int seccomp_err; /* 0 when seccomp filters can be installed (with no_new_privs), else
			  * -errno */
	bool no_new_privs; /* prctl(PR_SET_NO_NEW_PRIVS) is known to this kernel */
	int userns; /* unprivileged user namespaces: 1 allowed, 0 refused, -errno unknown */
};

/* True when the comma-separated LSM list names lsm. */
bool lsm_list_has(const char *list, const char *lsm);

/* Mounts securityfs and bpffs where they are not mounted yet. Returns 0 or -errno. */
int mount_kernel_fs(void);

/* The running kernel's Landlock ABI version, or -errno (-EOPNOTSUPP, -ENOSYS). */
int probe_landlock_abi(void);
/* 0 when a seccomp filter answering an errno can be installed (asked, not installed), else
 * -errno. */
int probe_seccomp(void);
/* Fills p; never fails: what cannot be found is recorded in p. */
void probe_kernel(struct probe *p);
/* Whether every BPF LSM rule can be enforced on this kernel. */
bool probe_bpf_lsm_ok(const struct probe *p);
/* Whether every layer of a full enforcement is here: BPF LSM, cgroup-BPF (cgroup v2), seccomp
 * with no_new_privs. Without it agentd runs only with --allow-partial (docs/LAYERS.md). */
bool probe_full_enforcement(const struct probe *p);
/* Whether the fallback for file and exec rules is here (Landlock). */
bool probe_landlock_ok(const struct probe *p);
void probe_print(FILE *out, const struct probe *p);
int probe_print_json(FILE *out, const struct probe *p);

#endif
