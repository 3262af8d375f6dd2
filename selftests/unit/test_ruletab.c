// SPDX-License-Identifier: GPL-2.0
/* The file rule table as agentd writes it (ruletab.c) and as the programs read it (abi.h). */
#include <errno.h>
#include <stdlib.h>
#include "harness.h"
#include "kernel/ruletab.h"

static struct agentd_rule_bucket *table(void)
{
	struct agentd_rule_bucket *t = calloc(AGENTD_RULE_BUCKETS, sizeof(*t));

	ASSERT(t);
	return t;
}

/* What rights.bpf.h's find_rule() does, in C: the program's side of the table. */
static const struct agentd_file_rule *program_find(const struct agentd_rule_bucket *t,
						   const struct agentd_file_key *k)
{
	__u64 owner = agentd_rule_owner(k->agent_id, k->generation);
	__u64 h = agentd_rule_hash(owner, k->dev, k->ino);
	int i, j;

	for (i = 0; i < 2; i++) {
		const struct agentd_rule_bucket *bk = &t[agentd_rule_bucket(h, i)];

		for (j = 0; j < AGENTD_RULE_BUCKET_SLOTS; j++)
			if (bk->slot[j].owner == owner && bk->slot[j].dev == k->dev &&
			    bk->slot[j].ino == k->ino)
				return &bk->slot[j].rule;
	}
	return NULL;
}

static struct agentd_file_key key(__u32 agent, __u32 gen, __u64 dev, __u64 ino)
{
	return (struct agentd_file_key){ agent, gen, dev, ino };
}

static int count_entry(void *ctx, const struct agentd_file_key *k, const struct agentd_file_rule *r)
{
	(void)k;
	(void)r;
	++*(size_t *)ctx;
	return 0;
}

static size_t entries(const struct agentd_rule_bucket *t)
{
	size_t n = 0;

	ASSERT_EQ(ruletab_each(t, count_entry, &n), 0);
	return n;
}

TEST(ruletab_usage_counts_slots_and_full_buckets)
{
	struct agentd_rule_bucket *t = table();
	struct agentd_file_rule r = { 1, 1 };
	struct agentd_file_key k;
	size_t used, full, i;

	ruletab_usage(t, &used, &full);
	ASSERT(used == 0 && full == 0);
	for (i = 0; i < 5; i++) {
		k = key(3, 1, 0x800001, 100 + i);
		ASSERT_EQ(ruletab_put(t, &k, &r), 0);
	}
	ruletab_usage(t, &used, &full);
	ASSERT(used == 5 && full == 0);
	ASSERT_EQ(ruletab_delete(t, 3, 0), 5);
	ruletab_usage(t, &used, &full);
	ASSERT(used == 0 && full == 0);
	free(t);
}

TEST(ruletab_finds_each_key_and_nothing_else)
{
	struct agentd_rule_bucket *t = table();
	struct agentd_file_rule r, got;
	struct agentd_file_key k;
	__u64 ino;

	for (ino = 1; ino <= 5000; ino++) {
		k = key(3, 7, 0x800001, ino);
		r = (struct agentd_file_rule){ (__u32)ino, (__u32)ino * 3 };
		ASSERT_EQ(ruletab_put(t, &k, &r), 0);
	}
	for (ino = 1; ino <= 5000; ino++) {
		k = key(3, 7, 0x800001, ino);
		ASSERT_EQ(ruletab_get(t, &k, &got), 1);
		ASSERT_EQ(got.rule_id, ino);
		ASSERT_EQ(got.rights, ino * 3);
		ASSERT(program_find(t, &k) && program_find(t, &k)->rule_id == ino);
		/* Another generation, agent or device: nothing, for agentd and for programs. */
		k = key(3, 8, 0x800001, ino);
		ASSERT_EQ(ruletab_get(t, &k, &got), 0);
		ASSERT(!program_find(t, &k));
		k = key(4, 7, 0x800001, ino);
		ASSERT(!program_find(t, &k));
		k = key(3, 7, 0x800002, ino);
		ASSERT(!program_find(t, &k));
	}
	k = key(3, 7, 0x800001, 5001);
	ASSERT(!program_find(t, &k));
	/* The same key again: its rule in place, no second slot. */
	k = key(3, 7, 0x800001, 42);
	r = (struct agentd_file_rule){ 1000, 0 };
	ASSERT_EQ(ruletab_put(t, &k, &r), 0);
	ASSERT_EQ(entries(t), 5000);
	ASSERT_EQ(program_find(t, &k)->rule_id, 1000);
	/* Owner 0 is a free slot: no agent 0. A rule's word 0 is none: no rule id 0. */
	k = key(0, 1, 1, 1);
	ASSERT_EQ(ruletab_put(t, &k, &r), -EINVAL);
	k = key(3, 7, 0x800001, 6000);
	r = (struct agentd_file_rule){ 0, AGENTD_RIGHTS_ALL };
	ASSERT_EQ(ruletab_put(t, &k, &r), -EINVAL);
	ASSERT(!program_find(t, &k));
	free(t);
}

TEST(ruletab_delete_frees_only_the_generations_it_names)
{
	struct agentd_rule_bucket *t = table();
	struct agentd_file_rule r = { 1, 1 };
	struct agentd_file_key k;
	__u32 agent, gen;
	__u64 ino;

	for (agent = 1; agent <= 2; agent++)
		for (gen = 1; gen <= 3; gen++)
			for (ino = 1; ino <= 100; ino++) {
				k = key(agent, gen, 5, ino);
				ASSERT_EQ(ruletab_put(t, &k, &r), 0);
			}
	ASSERT_EQ(entries(t), 600);
	ASSERT_EQ(ruletab_delete(t, 1, 2), 200); /* agent 1's generations 1 and 3 */
	ASSERT_EQ(entries(t), 400);
	k = key(1, 2, 5, 50);
	ASSERT(program_find(t, &k));
	k = key(1, 3, 5, 50);
	ASSERT(!program_find(t, &k));
	k = key(2, 3, 5, 50);
	ASSERT(program_find(t, &k));
	ASSERT_EQ(ruletab_delete(t, 2, 0), 300); /* all of agent 2's */
	ASSERT_EQ(entries(t), 100);
	k = key(1, 2, 5, 51);
	ASSERT_EQ(ruletab_remove(t, &k), 1);
	ASSERT_EQ(ruletab_remove(t, &k), 0);
	ASSERT(!program_find(t, &k));
	ASSERT_EQ(entries(t), 99);
	/* Freed slots take entries again. */
	k = key(2, 9, 5, 51);
	ASSERT_EQ(ruletab_put(t, &k, &r), 0);
	ASSERT(program_find(t, &k));
	free(t);
}

/*
 * Filled with keys at random until a put fails: it fails cleanly (-ENOSPC, nothing written)
 * only once both buckets of a key are full, past the 262,144 entries of the hash map it
 * replaced, and every entry put before is still found.
 */
TEST(ruletab_full_is_enospc_past_the_old_capacity)
{
	struct agentd_rule_bucket *t = table();
	size_t n = 0, i, max = (size_t)AGENTD_RULE_BUCKETS * AGENTD_RULE_BUCKET_SLOTS;
	struct agentd_file_key *keys = calloc(max, sizeof(*keys));
	struct agentd_file_rule r = { 1, 1 };
	__u64 x = 0x9E3779B97F4A7C15ULL;
	int err = 0;

	ASSERT(keys);
	while (n < max) {
		/* xorshift64: inode numbers at random, on eight devices. */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		keys[n] = key(1 + (x & 7), 1, 0x800000 + ((x >> 3) & 7), x >> 16);
		err = ruletab_put(t, &keys[n], &r);
		if (err)
			break;
		n++;
	}
	ASSERT_EQ(err, -ENOSPC);
	ASSERT(n > 262144);
	ASSERT(!program_find(t, &keys[n]));
	ASSERT_EQ(entries(t), n);
	/* What status reports: every entry a used slot, and both buckets of the refused key full. */
	{
		__u64 h = agentd_rule_hash(agentd_rule_owner(keys[n].agent_id, keys[n].generation),
					   keys[n].dev, keys[n].ino);
		size_t used, full, own = 0;

		ruletab_usage(t, &used, &full);
		ASSERT_EQ(used, n);
		for (i = 0; i < AGENTD_RULE_BUCKET_SLOTS; i++)
			own += !!t[agentd_rule_bucket(h, 0)].slot[i].owner +
			       !!t[agentd_rule_bucket(h, 1)].slot[i].owner;
		ASSERT_EQ(own, 2 * AGENTD_RULE_BUCKET_SLOTS);
		ASSERT(full >= 2 && full < AGENTD_RULE_BUCKETS);
	}
	for (i = 0; i < n; i++)
		ASSERT(program_find(t, &keys[i]));
	free(keys);
	free(t);
}
