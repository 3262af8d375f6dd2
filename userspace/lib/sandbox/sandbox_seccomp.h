/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The seccomp layer: one filter (libseccomp) on every agent agentctl run starts, in every mode,
 * with no_new_privs. It answers EPERM, never kills (docs/LAYERS.md has the list and why).
 */
#ifndef AGENTD_SANDBOX_SECCOMP_H
#define AGENTD_SANDBOX_SECCOMP_H

#include <stdbool.h>
#include <linux/types.h>
#include "policy/policy.h"

struct sandbox_seccomp {
	bool io_uring; /* the policy grants io_uring_setup/enter/register */
	__u64 families; /* 1 << AF_* the agent may create sockets of */
	__u32 types; /* 1 << SOCK_* (the type's low four bits) */
	bool icmp; /* ICMP ping sockets (SOCK_DGRAM, IPPROTO_ICMP/ICMPV6) are granted */
	bool log; /* SECCOMP_FILTER_FLAG_LOG: denials go to the kernel's audit log */
};

/* The syscalls denied outright (EPERM), NULL-terminated; clone3 answers ENOSYS, and clone,
 * unshare, personality, socket, socketpair, ioctl, kill, setpriority and ioprio_set are denied by
 * their arguments. */
extern const char *const sandbox_seccomp_denied[];

/* The filter's settings for policy p (io_uring, socket families and types, ICMP). */
void sandbox_seccomp_from_policy(const struct policy *p, struct sandbox_seccomp *s);
/* Builds the filter and loads it on the calling thread. Needs no_new_privs (or
 * CAP_SYS_ADMIN). Returns 0 or -errno. */
int sandbox_seccomp_load(const struct sandbox_seccomp *s);

#endif
