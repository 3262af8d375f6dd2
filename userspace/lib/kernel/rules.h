/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_RULES_H
#define AGENTD_RULES_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>
#include "agentd/abi.h"
#include "kernel/enforcer.h"

/* An agent's rules as the kernel enforces them; a policy compiles to this. */
struct file_rule {
	const char *path; /* for messages; resolved when applied unless ruleset.objects is set */
	__u32 rights; /* AGENTD_RIGHT_* */
};

/* The object a file rule names, as a policy's load found it (stat()). */
struct file_object {
	dev_t dev; /* st_dev */
	ino_t ino;
};

struct net_rule {
	struct agentd_addr_key cidr; /* IPv4 as IPv4-mapped (netdeny_parse_cidr) */
	__u32 protocols; /* AGENTD_PROTO_* */
	__u32 nranges; /* 0: every port */
	__u16 port_lo[AGENTD_NET_PORT_RANGES];
	__u16 port_hi[AGENTD_NET_PORT_RANGES];
};

struct ruleset {
	__u32 flags; /* AGENTD_AGENT_* */
	__u64 sock_families; /* bit n: AF_n */
	__u32 sock_types; /* bit n: SOCK_n */
	__u64 capabilities; /* bit n: capability n (CAP_*) */
	const struct file_rule *files;
	/* nfiles objects, one per rule (policy_compile() sets them): applied as they are, the
	 * paths not looked up again, so that a path renamed over since the policy's load cannot
	 * give its rule to another object. NULL (rules written by path, in tests): each path is
	 * resolved when applied. */
	const struct file_object *objects;
	size_t nfiles;
	const struct net_rule *net;
	size_t nnet;
};

/*
 * Makes rs agent_id's rules: written as a new generation beside the current one, then switched
 * to in one map update, then the old generation is removed. On failure nothing changes: the new
 * generation's entries are removed and the agent keeps its rules. *failed (may be NULL) is the
 * index of the file rule that could not be resolved, or -1.
 * Returns 0 or -errno; *generation is the generation now in force. File rules need the BPF LSM
 * objects: an enforcer loaded without them resolves their paths and stores nothing (its caller
 * reports that file rules are not enforced). The old generation is deleted only once no running
 * program can still hold it.
 */
int rules_apply(struct enforcer *e, __u32 agent_id, const struct ruleset *rs, __u32 *generation,
		int *failed);
/* What rules_apply()'s err says, for people: the file rule table's being full (-ENOSPC at a
 * file rule, *failed >= 0) is said so, the rest as strerror() says it. */
const char *rules_strerror(int err, int failed);
/*
 * Brings agent_id's mount roots (the table the hooks that see no mount use, rights.bpf.h) up to
 * date with agentd's mount table, in its current generation: new and changed roots first, then
 * vanished ones deleted. A mount made between the change and this call is not known yet: its
 * file system denies, or, for a bind mount inside one already known, it narrows nothing yet.
 * Returns 0 or -errno; nothing to do for an agent without rules.
 */
int rules_refresh_mounts(struct enforcer *e, __u32 agent_id);
/* Removes every rule and the configuration of agent_id: its tasks are then denied (no policy). */
int rules_remove(struct enforcer *e, __u32 agent_id);

#endif
