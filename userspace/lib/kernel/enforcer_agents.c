// SPDX-License-Identifier: GPL-2.0
/*
 * Who is an agent, and under which configuration: agent cgroups (agent_cgroups, and the agent
 * levels and cgroup index of the shared section), the object filter in front of the file rules,
 * agents' configurations (agent_slots, switched half by half), and agents' loopback endpoints.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include "kernel/cgroup.h"
#include "kernel/enforcer_internal.h"
#include "kernel/ruletab.h"

/* The cgroup's level: how many components below the cgroup v2 root. */
static int cgroup_level(const char *path)
{
	char root[PATH_MAX], real[PATH_MAX];
	const char *p;
	int level = 0, err;

	err = cgroup2_mount(root, sizeof(root));
	if (err)
		return err;
	if (!realpath(path, real))
		return -errno;
	if (strncmp(real, root, strlen(root)))
		return -EXDEV;
	for (p = real + strlen(root); *p; p++)
		if (*p == '/' && p[1])
			level++;
	return level;
}

#define INDEX_MASK (AGENTD_CGROUP_INDEX_SLOTS - 1)

/* The word naming cgroup id of agent_id alone in its slot; "several" for an id out of range
 * (not agentd's: agent_cgroups, which the hash lookup reads, then decides). */
static __u64 slot_word(__u64 id, __u32 agent_id)
{
	if (!agent_id || agent_id >= AGENTD_MAX_AGENTS)
		return AGENTD_CGROUP_INDEX_SEVERAL;
	return agentd_cgroup_index_word(id, agent_id);
}

/* The word the slot of cgroup id should hold, by agent_cgroups now. An iteration restarted by
 * a concurrent deletion counts some ids twice: "several", which is never wrong. */
static int index_word(struct enforcer *e, __u64 id, __u64 *word)
{
	int fd = enforcer_map_fd(e, "agent_cgroups");
	__u64 key, next, *prev = NULL;
	__u32 agent;
	int n = 0;

	if (fd < 0)
		return fd;
	*word = 0;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if ((key & INDEX_MASK) != (id & INDEX_MASK))
			continue;
		if (bpf_map_lookup_elem(fd, &key, &agent))
			return -errno;
		*word = ++n > 1 ? AGENTD_CGROUP_INDEX_SEVERAL : slot_word(key, agent);
	}
	return errno == ENOENT ? 0 : -errno;
}

/*
 * Brings the slot of cgroup id up to date with agent_cgroups, in one 8-byte store: a program
 * reads the word before or after, whole. Callers serialize (agentd's one thread).
 */
static int index_update(struct enforcer *e, __u64 id)
{
	__u64 word;
	int err = index_word(e, id, &word);

	if (err)
		return err;
	__atomic_store_n(&e->shared->cgroup_index[id & INDEX_MASK], word, __ATOMIC_RELEASE);
	return 0;
}

/* Rewrites every slot of the cgroup index from agent_cgroups (pinned maps of an earlier agentd),
 * before any program that reads it is attached. */
static int index_sync(struct enforcer *e)
{
	int err = 0, cg_fd = enforcer_map_fd(e, "agent_cgroups");
	__u64 key, next, *prev = NULL, *words;
	__u32 agent, i;

	if (cg_fd < 0)
		return cg_fd;
	words = calloc(AGENTD_CGROUP_INDEX_SLOTS, sizeof(*words));
	if (!words)
		return -ENOMEM;
	while (!bpf_map_get_next_key(cg_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(cg_fd, &key, &agent)) {
			err = -errno;
			break;
		}
		i = key & INDEX_MASK;
		words[i] = words[i] ? AGENTD_CGROUP_INDEX_SEVERAL : slot_word(key, agent);
	}
	if (!err && errno != ENOENT)
		err = -errno;
	for (i = 0; !err && i < AGENTD_CGROUP_INDEX_SLOTS; i++)
		if (__atomic_load_n(&e->shared->cgroup_index[i], __ATOMIC_RELAXED) != words[i])
			__atomic_store_n(&e->shared->cgroup_index[i], words[i], __ATOMIC_RELEASE);
	free(words);
	return err;
}

/* Adds level to the agent levels, unless there: the level first, then the count that includes it
 * (a program reads them in the other order). -ENOSPC when there are AGENTD_MAX_AGENT_LEVELS. */
static int add_level(struct enforcer *e, __u32 level)
{
	struct agentd_agent_levels *lv = &e->shared->levels;
	__u32 n = __atomic_load_n(&lv->count, __ATOMIC_RELAXED), i;

	for (i = 0; i < n && i < AGENTD_MAX_AGENT_LEVELS && lv->level[i] != level; i++)
		;
	if (i < n)
		return 0;
	if (n >= AGENTD_MAX_AGENT_LEVELS)
		return -ENOSPC;
	__atomic_store_n(&lv->level[n], level, __ATOMIC_RELAXED);
	__atomic_store_n(&lv->count, n + 1, __ATOMIC_RELEASE);
	return 0;
}

/* Maps the shared section (agent levels, cgroup index, object filter). */
static int map_shared_section(struct enforcer *e)
{
	return enforcer_map_shared(e, AGENTD_SHARED_SECTION, sizeof(*e->shared), &e->shared);
}

int enforcer_add_cgroup_id(struct enforcer *e, __u64 id, int level, __u32 agent_id)
{
	int cg_fd = enforcer_map_fd(e, "agent_cgroups");
	int err;

	if (!agent_id || agent_id >= AGENTD_MAX_AGENTS)
		return -ERANGE;
	if (level < 0 || level >= AGENTD_MAX_CGROUP_LEVEL)
		return -ELOOP;
	/* The level, then the cgroup in agent_cgroups, then its slot of the index: once a program
	 * finds the cgroup (in its slot, or in agent_cgroups through a shared one), it finds it at
	 * its level. */
	err = add_level(e, level);
	if (err)
		return err;
	if (bpf_map_update_elem(cg_fd, &id, &agent_id, BPF_ANY))
		return -errno;
	err = index_update(e, id);
	if (err) {
		bpf_map_delete_elem(cg_fd, &id);
		index_update(e, id);
	}
	return err;
}

int enforcer_add_cgroup(struct enforcer *e, const char *path, __u32 agent_id)
{
	int level = cgroup_level(path), err;
	__u64 id;

	if (level < 0)
		return level;
	err = cgroup_id(path, &id);
	if (err)
		return err;
	return enforcer_add_cgroup_id(e, id, level, agent_id);
}

int enforcer_remove_cgroup_id(struct enforcer *e, __u64 id)
{
	if (bpf_map_delete_elem(enforcer_map_fd(e, "agent_cgroups"), &id))
		return -errno;
	/* Until then the slot may still name the cgroup: removal takes effect here. */
	return index_update(e, id);
}

void enforcer_object_filter_add(struct enforcer *e, __u64 dev, __u64 ino)
{
	__u32 bit = agentd_object_bit(dev, ino);

	if (e->rules)
		__atomic_fetch_or(&e->shared->object_filter[bit / 64], 1ULL << (bit % 64),
				  __ATOMIC_SEQ_CST);
}

static void set_bit_of(__u64 *words, __u64 dev, __u64 ino)
{
	__u32 bit = agentd_object_bit(dev, ino);

	words[bit / 64] |= 1ULL << (bit % 64);
}

static int collect_rule(void *words, const struct agentd_file_key *key,
			const struct agentd_file_rule *rule)
{
	(void)rule;
	set_bit_of(words, key->dev, key->ino);
	return 0;
}

/* Sets in words the bit of every object mount_roots has an entry for. */
static int object_filter_collect(int fd, __u64 *words)
{
	enum { CHUNK = 256 };
	struct agentd_file_key keys[CHUNK];
	struct agentd_mount_root values[CHUNK];
	__u32 batch, n, i;
	void *in = NULL;
	int err;

	do {
		n = CHUNK;
		err = bpf_map_lookup_batch(fd, in, &batch, keys, values, &n, NULL);
		if (err && errno != ENOENT)
			return -errno;
		for (i = 0; i < n; i++)
			set_bit_of(words, keys[i].dev, keys[i].ino);
		in = &batch;
	} while (!err);
	return 0;
}

int enforcer_object_filter_rebuild(struct enforcer *e)
{
	int mounts = enforcer_map_fd(e, "mount_roots");
	__u64 *words;
	__u32 i;
	int err;

	if (!e->rules || mounts < 0)
		return 0;
	words = calloc(AGENTD_OBJECT_FILTER_WORDS, sizeof(*words));
	if (!words)
		return -ENOMEM;
	err = ruletab_each(e->rules, collect_rule, words);
	err = err ?: object_filter_collect(mounts, words);
	/* Word by word, with one store each: a program reads a word as it was or as it is, and
	 * both have the bit of every entry now in the maps. Bits are only set before an entry
	 * exists (callers serialize), so the new words only ever clear bits. */
	for (i = 0; !err && i < AGENTD_OBJECT_FILTER_WORDS; i++)
		if (__atomic_load_n(&e->shared->object_filter[i], __ATOMIC_RELAXED) != words[i])
			__atomic_store_n(&e->shared->object_filter[i], words[i], __ATOMIC_SEQ_CST);
	free(words);
	return err;
}

/* Maps rule_buckets, then sets the object filter's bits of every entry already in the maps
 * (pinned by an earlier agentd) and clears the others, before any program is attached. */
static int object_filter_map(struct enforcer *e)
{
	int err = enforcer_map_shared(e, "rule_buckets", RULETAB_BYTES, &e->rules);

	if (err)
		return err == -ENOENT ? 0 : err; /* no file objects: no table, no filter */
	return enforcer_object_filter_rebuild(e);
}

struct agentd_rule_bucket *enforcer_rules(struct enforcer *e)
{
	return e->rules;
}

struct agentd_shared *enforcer_shared(struct enforcer *e)
{
	return e->shared;
}

/* A multiple of the page size (1024 slots of 72 bytes: 18 pages), as mmap() of a map wants. */
#define SLOTS_BYTES (AGENTD_MAX_AGENTS * sizeof(struct agentd_agent_slot))
_Static_assert(SLOTS_BYTES % 4096 == 0, "agent_slots maps whole pages");

int enforcer_wait_for_programs(struct enforcer *e)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	int inner, outer, err = 0;
	__u32 zero = 0;

	inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, sizeof(__u32), sizeof(__u32), 1, NULL);
	if (inner < 0)
		return -errno;
	opts.inner_map_fd = inner;
	outer = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, NULL, sizeof(__u32), sizeof(__u32), 1,
			       &opts);
	if (outer < 0 || bpf_map_update_elem(outer, &zero, &inner, BPF_ANY))
		err = -errno;
	if (outer >= 0)
		close(outer);
	close(inner);
	if (!err)
		e->unsettled = false;
	return err;
}

int enforcer_agent_config(const struct enforcer *e, __u32 agent_id, struct agentd_agent_config *cfg)
{
	const struct agentd_agent_slot *s;
	__u32 gen;

	if (agent_id >= AGENTD_MAX_AGENTS)
		return -EINVAL;
	s = &e->slots[agent_id];
	gen = __atomic_load_n(&s->generation, __ATOMIC_ACQUIRE);
	if (!gen)
		return -ENOENT;
	*cfg = s->cfg[gen & 1];
	return 0;
}

int enforcer_agent_switch(struct enforcer *e, __u32 agent_id, const struct agentd_agent_config *cfg)
{
	struct agentd_agent_slot *s;
	__u32 cur;
	int err;

	if (agent_id >= AGENTD_MAX_AGENTS || !cfg->generation)
		return -EINVAL;
	s = &e->slots[agent_id];
	cur = __atomic_load_n(&s->generation, __ATOMIC_RELAXED);
	if (cur && !((cur ^ cfg->generation) & 1))
		return -EINVAL; /* the half in force itself */
	if (e->unsettled) {
		err = enforcer_wait_for_programs(e);
		if (err)
			return err;
	}
	/* No program reads this half now (the wait above, or one since it was last left). The
	 * release store orders the half's bytes before the generation that names it; a program's
	 * read of the half depends on the generation it loaded. */
	s->cfg[cfg->generation & 1] = *cfg;
	__atomic_store_n(&s->generation, cfg->generation, __ATOMIC_RELEASE);
	e->unsettled = true;
	return 0;
}

int enforcer_agent_clear(struct enforcer *e, __u32 agent_id)
{
	if (agent_id >= AGENTD_MAX_AGENTS)
		return -EINVAL;
	__atomic_store_n(&e->slots[agent_id].generation, 0, __ATOMIC_RELEASE);
	e->unsettled = true;
	return 0;
}

/* Maps agent_slots. */
static int agent_slots_map(struct enforcer *e)
{
	int err = enforcer_map_shared(e, "agent_slots", SLOTS_BYTES, &e->slots);

	if (!err)
		e->unsettled = true;
	return err;
}

int enforcer_remove_cgroup(struct enforcer *e, const char *path)
{
	__u64 id;
	int err = cgroup_id(path, &id);

	if (err)
		return err;
	return enforcer_remove_cgroup_id(e, id);
}

static void endpoint_key(struct agentd_endpoint_key *k, __u32 agent_id, const __u8 addr[16],
			 __u16 port, __u8 protocol)
{
	memset(k, 0, sizeof(*k));
	k->agent_id = agent_id;
	k->port = port;
	k->protocol = protocol;
	memcpy(k->addr, addr, 16);
}

int enforcer_add_endpoint(struct enforcer *e, __u32 agent_id, const __u8 addr[16], __u16 port,
			  __u8 protocol)
{
	struct agentd_endpoint_key k;
	__u32 one = 1;

	endpoint_key(&k, agent_id, addr, port, protocol);
	if (bpf_map_update_elem(enforcer_map_fd(e, "endpoints"), &k, &one, BPF_ANY))
		return -errno;
	return 0;
}

int enforcer_remove_endpoint(struct enforcer *e, __u32 agent_id, const __u8 addr[16], __u16 port,
			     __u8 protocol)
{
	struct agentd_endpoint_key k;

	endpoint_key(&k, agent_id, addr, port, protocol);
	if (bpf_map_delete_elem(enforcer_map_fd(e, "endpoints"), &k))
		return -errno;
	return 0;
}

int enforcer_add_tool_run(struct enforcer *e, __u64 cgroup_id, __u32 agent_id, __u32 network)
{
	struct agentd_tool_run v = { .agent_id = agent_id, .network = network };

	if (bpf_map_update_elem(enforcer_map_fd(e, "tool_runs"), &cgroup_id, &v, BPF_NOEXIST))
		return errno == E2BIG ? -ENOSPC : -errno;
	return 0;
}

int enforcer_remove_tool_run(struct enforcer *e, __u64 cgroup_id)
{
	if (bpf_map_delete_elem(enforcer_map_fd(e, "tool_runs"), &cgroup_id))
		return -errno;
	return 0;
}

int enforcer_clear_tool_runs(struct enforcer *e)
{
	int fd = enforcer_map_fd(e, "tool_runs");
	__u64 key;

	if (fd < 0)
		return fd;
	/* Deleting the key just read: the next lookup from NULL starts over. */
	while (!bpf_map_get_next_key(fd, NULL, &key))
		if (bpf_map_delete_elem(fd, &key) && errno != ENOENT)
			return -errno;
	return 0;
}

static bool resolver_listed(const struct agentd_endpoint_key *k, const __u8 (*addrs)[16], size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!memcmp(k->addr, addrs[i], 16) && k->port == 53)
			return true;
	return false;
}

int enforcer_set_resolvers(struct enforcer *e, const __u8 (*addrs)[16], size_t n)
{
	int fd = enforcer_map_fd(e, "endpoints"), err = 0;
	struct agentd_endpoint_key k, next, *prev = NULL;
	size_t i;

	if (fd < 0)
		return fd;
	for (i = 0; !err && i < n; i++)
		err = enforcer_add_endpoint(e, AGENTD_TOOL_RESOLVERS, addrs[i], 53,
					    AGENTD_PROTO_TCP)
			      ?: enforcer_add_endpoint(e, AGENTD_TOOL_RESOLVERS, addrs[i], 53,
						       AGENTD_PROTO_UDP);
	if (err)
		return err;
	/* Then the ones no longer listed; a deleted key's successor is found from its
	 * predecessor (or from the start). */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (next.agent_id == AGENTD_TOOL_RESOLVERS && !resolver_listed(&next, addrs, n)) {
			if (bpf_map_delete_elem(fd, &next) && errno != ENOENT)
				return -errno;
			continue;
		}
		k = next;
		prev = &k;
	}
	return 0;
}

int enforcer_map_agents(struct enforcer *e)
{
	return map_shared_section(e) ?: index_sync(e) ?: object_filter_map(e) ?: agent_slots_map(e);
}

void enforcer_unmap_agents(struct enforcer *e)
{
	if (e->shared)
		munmap(e->shared, sizeof(*e->shared));
	if (e->rules)
		munmap(e->rules, RULETAB_BYTES);
	if (e->slots)
		munmap(e->slots, SLOTS_BYTES);
	e->shared = NULL;
	e->rules = NULL;
	e->slots = NULL;
}
