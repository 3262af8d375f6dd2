// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>
#include "kernel/ruletab.h"

static __u64 owner_of(const struct agentd_rule_slot *s)
{
	return __atomic_load_n(&s->owner, __ATOMIC_ACQUIRE);
}

/* The slot holding key's rule, or NULL. */
static struct agentd_rule_slot *find(const struct agentd_rule_bucket *t,
				     const struct agentd_file_key *key, __u32 *b)
{
	__u64 owner = agentd_rule_owner(key->agent_id, key->generation);
	__u64 h = agentd_rule_hash(owner, key->dev, key->ino);
	struct agentd_rule_slot *s;
	int i, j;

	for (i = 0; i < 2; i++) {
		b[i] = agentd_rule_bucket(h, i);
		for (j = 0; j < AGENTD_RULE_BUCKET_SLOTS; j++) {
			s = (struct agentd_rule_slot *)&t[b[i]].slot[j];
			if (owner_of(s) == owner && s->dev == key->dev && s->ino == key->ino)
				return s;
		}
	}
	return NULL;
}

/* The rule as one 8-byte store: a program reading a slot in place sees it whole. */
static void store_rule(struct agentd_rule_slot *s, const struct agentd_file_rule *rule)
{
	__u64 v;

	memcpy(&v, rule, sizeof(v));
	__atomic_store_n((__u64 *)&s->rule, v, __ATOMIC_RELEASE);
}

static int free_slots(const struct agentd_rule_bucket *bk, int *first)
{
	int j, n = 0;

	*first = -1;
	for (j = AGENTD_RULE_BUCKET_SLOTS - 1; j >= 0; j--) {
		if (owner_of(&bk->slot[j]))
			continue;
		n++;
		*first = j;
	}
	return n;
}

int ruletab_put(struct agentd_rule_bucket *t, const struct agentd_file_key *key,
		const struct agentd_file_rule *rule)
{
	struct agentd_rule_slot *s;
	int n0, n1, j0, j1;
	__u32 b[2];

	/* Owner 0 is a free slot, and a rule's word 0 is none (rights.bpf.h). */
	if (!key->agent_id || !rule->rule_id)
		return -EINVAL;
	s = find(t, key, b);
	if (s) {
		store_rule(s, rule);
		return 0;
	}
	n0 = free_slots(&t[b[0]], &j0);
	n1 = free_slots(&t[b[1]], &j1);
	if (!n0 && !n1)
		return -ENOSPC;
	s = n0 >= n1 ? &t[b[0]].slot[j0] : &t[b[1]].slot[j1];
	s->dev = key->dev;
	s->ino = key->ino;
	store_rule(s, rule);
	/* Last: the slot is found only once its object and rule are there. */
	__atomic_store_n(&s->owner, agentd_rule_owner(key->agent_id, key->generation),
			 __ATOMIC_RELEASE);
	return 0;
}

int ruletab_get(const struct agentd_rule_bucket *t, const struct agentd_file_key *key,
		struct agentd_file_rule *rule)
{
	const struct agentd_rule_slot *s;
	__u32 b[2];

	s = find(t, key, b);
	if (!s)
		return 0;
	*rule = s->rule;
	return 1;
}

int ruletab_remove(struct agentd_rule_bucket *t, const struct agentd_file_key *key)
{
	struct agentd_rule_slot *s;
	__u32 b[2];

	s = find(t, key, b);
	if (!s)
		return 0;
	__atomic_store_n(&s->owner, 0, __ATOMIC_RELEASE);
	return 1;
}

size_t ruletab_delete(struct agentd_rule_bucket *t, __u32 agent_id, __u32 keep)
{
	size_t i, n = 0;
	__u64 owner;

	for (i = 0; i < (size_t)AGENTD_RULE_BUCKETS * AGENTD_RULE_BUCKET_SLOTS; i++) {
		struct agentd_rule_slot *s =
			&t[i / AGENTD_RULE_BUCKET_SLOTS].slot[i % AGENTD_RULE_BUCKET_SLOTS];

		owner = owner_of(s);
		if (!owner || owner >> 32 != agent_id || (keep && (__u32)owner == keep))
			continue;
		__atomic_store_n(&s->owner, 0, __ATOMIC_RELEASE);
		n++;
	}
	return n;
}

int ruletab_each(const struct agentd_rule_bucket *t, ruletab_fn fn, void *ctx)
{
	struct agentd_file_key key;
	struct agentd_file_rule rule;
	size_t i;
	__u64 owner;
	int err;

	for (i = 0; i < (size_t)AGENTD_RULE_BUCKETS * AGENTD_RULE_BUCKET_SLOTS; i++) {
		const struct agentd_rule_slot *s =
			&t[i / AGENTD_RULE_BUCKET_SLOTS].slot[i % AGENTD_RULE_BUCKET_SLOTS];

		owner = owner_of(s);
		if (!owner)
			continue;
		key.agent_id = owner >> 32;
		key.generation = (__u32)owner;
		key.dev = s->dev;
		key.ino = s->ino;
		rule = s->rule;
		err = fn(ctx, &key, &rule);
		if (err)
			return err;
	}
	return 0;
}

void ruletab_usage(const struct agentd_rule_bucket *t, size_t *used, size_t *full_buckets)
{
	size_t b, i, n;

	*used = *full_buckets = 0;
	for (b = 0; b < AGENTD_RULE_BUCKETS; b++) {
		for (i = n = 0; i < AGENTD_RULE_BUCKET_SLOTS; i++)
			n += owner_of(&t[b].slot[i]) != 0;
		*used += n;
		*full_buckets += n == AGENTD_RULE_BUCKET_SLOTS;
	}
}
