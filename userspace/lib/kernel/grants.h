/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's half of time-limited grants (abi.h, bpf/grants.bpf.h): the key a grant's target
 * makes, and its entry in file_grants or net_grants. The expiry is the kernel's to check, on the
 * boot clock; agentd keeps the list and removes what is over (userspace/agentd/grants.c).
 */
#ifndef AGENTD_KERNEL_GRANTS_H
#define AGENTD_KERNEL_GRANTS_H

#include <stdbool.h>
#include <stddef.h>
#include "agentd/abi.h"

struct enforcer;

struct grant_key {
	bool is_net;
	union {
		struct agentd_file_key file; /* generation 0 */
		struct agentd_grant_net_key net;
	};
};

/* The object path names now (followed through symlinks), as the rules name objects. Returns 0
 * or -errno with why. */
int grant_key_file(struct grant_key *k, __u32 agent_id, const char *path, char *why, size_t whysz);
/* "CIDR:PORT" ("198.51.100.0/24:443", "[2001:db8::/32]:443"; an address alone is one host).
 * Refuses a network in the structural deny list: no grant opens it. Returns 0 or -EINVAL with
 * why. */
int grant_key_net(struct grant_key *k, __u32 agent_id, const char *target, char *why, size_t whysz);

/* Adds g under k: -EEXIST when k has a grant already, -ENOSPC when the map is full. */
int grant_map_add(struct enforcer *e, const struct grant_key *k, const struct agentd_grant *g);
/* The grant under k into *g: 0 or -ENOENT. */
int grant_map_get(struct enforcer *e, const struct grant_key *k, struct agentd_grant *g);
int grant_map_del(struct enforcer *e, const struct grant_key *k);

/* CLOCK_BOOTTIME in ns: bpf_ktime_get_boot_ns()'s clock. */
__u64 grant_boot_ns(void);

#endif
