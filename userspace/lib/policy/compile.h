/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_COMPILE_H
#define AGENTD_COMPILE_H

#include "policy/policy.h"
#include "kernel/rules.h"

/* A policy compiled to the rules the kernel enforces (rules.h), with the storage they use. */
struct compiled {
	struct ruleset rs;
	struct file_rule *files;
	struct file_object *objects;
	struct net_rule *net;
	char error[256]; /* why compiling failed */
};

/*
 * Compiles p. File rules name the objects p's load found (ruleset.objects), not their paths
 * again. File rules and exec.allow entries naming the same object are merged (exec.allow
 * grants exec and read); optional paths that do not exist are left out; connect rules for the
 * same network become one rule with its port ranges. Returns 0, or -EINVAL with c->error set
 * (e.g. two protocols for one network: the kernel's rule holds one set), or -ENOMEM.
 */
int policy_compile(const struct policy *p, struct compiled *c);
void compiled_free(struct compiled *c);

#endif
