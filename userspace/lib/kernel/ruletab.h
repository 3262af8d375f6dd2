/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_RULETAB_H
#define AGENTD_RULETAB_H

#include <stddef.h>
#include <linux/types.h>
#include "agentd/abi.h"

/*
 * The file rule table (abi.h, rule_buckets) as agentd writes it: t is AGENTD_RULE_BUCKETS
 * buckets, the map mapped, which programs read while these run. One writer at a time (callers
 * serialize); a reader sees a slot's object and rule before its owner.
 *
 * ruletab_put(): key's rule, in place when key has one, else in a free slot of the emptier of
 * its two buckets; -ENOSPC when both are full, -EINVAL for agent id or rule id 0.
 * ruletab_get(): 1 and *rule when key has one, else 0.
 * ruletab_delete(): frees every slot of agent_id's generations but keep (every one when keep is
 * 0); returns how many; only for generations no program can hold (abi.h).
 * ruletab_remove(): frees key's slot; 1 if it had one, else 0; the same caution (or no program
 * running that could look it up: the benchmark's own rules).
 * ruletab_each(): calls fn on every entry until it returns non-zero, which it returns.
 * ruletab_usage(): the slots in use, and the buckets with no free slot (a key whose two buckets
 * are both full cannot be added).
 */
int ruletab_put(struct agentd_rule_bucket *t, const struct agentd_file_key *key,
		const struct agentd_file_rule *rule);
int ruletab_get(const struct agentd_rule_bucket *t, const struct agentd_file_key *key,
		struct agentd_file_rule *rule);
size_t ruletab_delete(struct agentd_rule_bucket *t, __u32 agent_id, __u32 keep);
int ruletab_remove(struct agentd_rule_bucket *t, const struct agentd_file_key *key);
typedef int (*ruletab_fn)(void *ctx, const struct agentd_file_key *key,
			  const struct agentd_file_rule *rule);
int ruletab_each(const struct agentd_rule_bucket *t, ruletab_fn fn, void *ctx);
void ruletab_usage(const struct agentd_rule_bucket *t, size_t *used, size_t *full_buckets);

#define RULETAB_BYTES ((size_t)AGENTD_RULE_BUCKETS * sizeof(struct agentd_rule_bucket))

#endif
