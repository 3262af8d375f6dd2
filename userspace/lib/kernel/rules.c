// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "kernel/mounts.h"
#include "kernel/rules.h"
#include "kernel/ruletab.h"

struct maps {
	struct enforcer *e;
	struct agentd_rule_bucket *files; /* NULL without the file objects */
	int net, mounts;
};

static int get_maps(struct enforcer *e, struct maps *m)
{
	m->e = e;
	m->files = enforcer_rules(e);
	m->net = enforcer_map_fd(e, "net_rules");
	m->mounts = enforcer_map_fd(e, "mount_roots");
	return 0;
}

/* Agent and generation sit at the same offsets in both key types (after prefixlen in net's).
 * Returns how many entries it deleted, or -errno. */
static int delete_matching(int fd, size_t key_size, size_t agent_off, __u32 agent_id, __u32 keep)
{
	char *keys = NULL, *more, key[64], next[64];
	size_t n = 0, cap = 0, i;
	void *prev = NULL;
	__u32 agent, gen;

	if (fd < 0)
		return 0;
	/* Collect first: deleting while iterating would restart the iteration. */
	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, key_size);
		prev = key;
		memcpy(&agent, key + agent_off, sizeof(agent));
		memcpy(&gen, key + agent_off + sizeof(agent), sizeof(gen));
		if (agent != agent_id || gen == keep)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			more = realloc(keys, cap * key_size);
			if (!more) {
				free(keys);
				return -ENOMEM;
			}
			keys = more;
		}
		memcpy(keys + n++ * key_size, key, key_size);
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(fd, keys + i * key_size);
	free(keys);
	return (int)n;
}

/* Deletes agent_id's entries of every generation but keep (all when keep is 0), then, if any
 * object entry went, the object filter's bits that no entry needs any more (left set, a bit
 * costs a lookup, nothing more). */
static int delete_generations(const struct maps *m, __u32 agent_id, __u32 keep)
{
	size_t files = m->files ? ruletab_delete(m->files, agent_id, keep) : 0;
	int net, mounts;

	net = delete_matching(m->net, sizeof(struct agentd_net_key),
			      offsetof(struct agentd_net_key, agent_id), agent_id, keep);
	if (net < 0)
		return net;
	mounts = delete_matching(m->mounts, sizeof(struct agentd_file_key),
				 offsetof(struct agentd_file_key, agent_id), agent_id, keep);
	if (mounts < 0)
		return mounts;
	if (files || mounts)
		enforcer_object_filter_rebuild(m->e);
	return 0;
}

/* The file rules as objects, sorted by object, for the mount table's walks. */
struct object_rule {
	__u64 dev, ino;
	struct agentd_file_rule rule;
};

struct ruleset_objects {
	struct object_rule *rules;
	size_t n;
};

static int object_cmp(const void *a, const void *b)
{
	const struct object_rule *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static int object_lookup(void *ctx, __u64 dev, __u64 ino, __u32 *rule_id, __u32 *rights)
{
	const struct ruleset_objects *o = ctx;
	struct object_rule key = { .dev = dev, .ino = ino }, *r;

	r = bsearch(&key, o->rules, o->n, sizeof(key), object_cmp);
	if (!r)
		return 0;
	*rule_id = r->rule.rule_id;
	*rights = r->rule.rights;
	return 1;
}

/*
 * For the hooks that see no mount: every mount root of agentd's mount namespace, with the
 * rights above its mount point (rights.bpf.h). Tasks in another mount namespace are judged by
 * the mounts they share with agentd's; a file system none of them shows denies.
 */
static int root_cmp(const void *a, const void *b)
{
	const struct mount_root *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* Deletes gen's mount roots that roots (sorted) no longer has; returns how many. */
static size_t delete_vanished(int fd, __u32 agent_id, __u32 gen, const struct mount_root *roots,
			      size_t n)
{
	struct agentd_file_key key, next, *gone = NULL, *more;
	size_t ngone = 0, cap = 0, i;
	struct mount_root probe = {};
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		probe.dev = key.dev;
		probe.ino = key.ino;
		if (key.agent_id != agent_id || key.generation != gen ||
		    bsearch(&probe, roots, n, sizeof(*roots), root_cmp))
			continue;
		if (ngone == cap) {
			cap = cap ? 2 * cap : 16;
			more = realloc(gone, cap * sizeof(*gone));
			if (!more)
				break; /* stale roots only narrow rights; the next apply drops them */
			gone = more;
		}
		gone[ngone++] = key;
	}
	for (i = 0; i < ngone; i++)
		bpf_map_delete_elem(fd, &gone[i]);
	free(gone);
	return ngone;
}

/*
 * For the hooks that see no mount: every mount root of agentd's mount namespace, with the
 * rights above its mount point (rights.bpf.h). Tasks in another mount namespace are judged by
 * the mounts they share with agentd's; a file system none of them shows denies. With prune,
 * roots gen had and the table no longer shows are deleted (after the new ones are in).
 */
static int write_mounts(const struct maps *m, __u32 agent_id, __u32 gen,
			const struct ruleset_objects *o, bool prune)
{
	struct agentd_file_key key = { .agent_id = agent_id, .generation = gen };
	struct agentd_mount_root value;
	struct mount_root *roots = NULL;
	size_t n = 0, i;
	FILE *f;
	int err;

	if (m->mounts < 0)
		return 0;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	err = mount_roots_read(f, object_lookup, (void *)o, &roots, &n);
	fclose(f);
	for (i = 0; !err && i < n; i++) {
		key.dev = roots[i].dev;
		key.ino = roots[i].ino;
		value.rule_id = roots[i].rule_id;
		value.rights = roots[i].rights;
		enforcer_object_filter_add(m->e, key.dev, key.ino);
		if (bpf_map_update_elem(m->mounts, &key, &value, BPF_ANY))
			err = -errno;
	}
	if (!err && prune) {
		qsort(roots, n, sizeof(*roots), root_cmp);
		if (delete_vanished(m->mounts, agent_id, gen, roots, n))
			enforcer_object_filter_rebuild(m->e);
	}
	free(roots);
	return err;
}

struct objects_of {
	__u32 agent_id, gen;
	size_t cap;
	struct ruleset_objects *o;
};

static int collect_object(void *ctx, const struct agentd_file_key *key,
			  const struct agentd_file_rule *rule)
{
	struct objects_of *c = ctx;
	struct ruleset_objects *o = c->o;
	struct object_rule *more;

	if (key->agent_id != c->agent_id || key->generation != c->gen)
		return 0;
	if (o->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		more = realloc(o->rules, c->cap * sizeof(*o->rules));
		if (!more)
			return -ENOMEM;
		o->rules = more;
	}
	o->rules[o->n++] = (struct object_rule){ .dev = key->dev, .ino = key->ino, .rule = *rule };
	return 0;
}

/* The current generation's file rules, read back from the table. */
static int read_objects(const struct maps *m, __u32 agent_id, __u32 gen, struct ruleset_objects *o)
{
	struct objects_of c = { .agent_id = agent_id, .gen = gen, .o = o };
	int err = ruletab_each(m->files, collect_object, &c);

	if (err)
		return err;
	qsort(o->rules, o->n, sizeof(*o->rules), object_cmp);
	return 0;
}

/* The object file rule i names: the one its policy's load found, or its path's now. */
static int rule_object(const struct ruleset *rs, size_t i, struct agentd_file_key *key)
{
	struct stat st;

	if (rs->objects) {
		key->dev = kernel_dev(rs->objects[i].dev);
		key->ino = rs->objects[i].ino;
		return 0;
	}
	if (stat(rs->files[i].path, &st))
		return -errno;
	key->dev = kernel_dev(st.st_dev);
	key->ino = st.st_ino;
	return 0;
}

static int write_files(const struct maps *m, __u32 agent_id, __u32 gen, const struct ruleset *rs,
		       struct ruleset_objects *o, int *failed)
{
	struct agentd_file_key key = { .agent_id = agent_id, .generation = gen };
	struct agentd_file_rule rule;
	size_t i;
	int err;

	o->rules = calloc(rs->nfiles ? rs->nfiles : 1, sizeof(*o->rules));
	if (!o->rules)
		return -ENOMEM;
	for (i = 0; i < rs->nfiles; i++) {
		err = rule_object(rs, i, &key);
		if (err) {
			*failed = i;
			return err;
		}
		rule.rule_id = i + 1;
		rule.rights = rs->files[i].rights;
		o->rules[o->n++] =
			(struct object_rule){ .dev = key.dev, .ino = key.ino, .rule = rule };
		/* Without the BPF LSM objects there is no file layer to fill (the caller chose
		 * and reports it); the paths are still resolved, so errors do not depend on it. */
		if (!m->files)
			continue;
		enforcer_object_filter_add(m->e, key.dev, key.ino);
		err = ruletab_put(m->files, &key, &rule);
		if (err) {
			*failed = i;
			return err;
		}
	}
	return 0;
}

static int write_net(const struct maps *m, __u32 agent_id, __u32 gen, const struct ruleset *rs)
{
	struct agentd_net_key key = { .agent_id = agent_id, .generation = gen };
	struct agentd_net_rule rule;
	size_t i;

	if (rs->nnet && m->net < 0)
		return m->net;
	for (i = 0; i < rs->nnet; i++) {
		const struct net_rule *r = &rs->net[i];

		if (r->nranges > AGENTD_NET_PORT_RANGES)
			return -E2BIG;
		key.prefixlen = 64 + r->cidr.prefixlen;
		memcpy(key.addr, r->cidr.addr, sizeof(key.addr));
		memset(&rule, 0, sizeof(rule));
		rule.rule_id = i + 1;
		rule.protocols = r->protocols;
		rule.nranges = r->nranges;
		memcpy(rule.port_lo, r->port_lo, sizeof(rule.port_lo));
		memcpy(rule.port_hi, r->port_hi, sizeof(rule.port_hi));
		if (bpf_map_update_elem(m->net, &key, &rule, BPF_ANY))
			return -errno;
	}
	return 0;
}

int rules_apply(struct enforcer *e, __u32 agent_id, const struct ruleset *rs, __u32 *generation,
		int *failed)
{
	struct agentd_agent_config cfg = {}, old = {};
	struct ruleset_objects objects = {};
	int err, bad = -1;
	struct maps m;

	if (agent_id >= AGENTD_MAX_AGENTS)
		return -EINVAL;
	err = get_maps(e, &m);
	if (err)
		return err;
	if (!enforcer_agent_config(e, agent_id, &old))
		cfg.generation = old.generation + 1;
	else
		cfg.generation = 1;
	/* Past 2^32 - 1 (odd) comes 2: the new generation names the other half of the slot. */
	if (!cfg.generation)
		cfg.generation = 2;
	cfg.flags = rs->flags;
	cfg.sock_families = rs->sock_families;
	cfg.sock_types = rs->sock_types;
	cfg.capabilities = rs->capabilities;

	err = write_files(&m, agent_id, cfg.generation, rs, &objects, &bad);
	if (!err) {
		qsort(objects.rules, objects.n, sizeof(*objects.rules), object_cmp);
		err = write_mounts(&m, agent_id, cfg.generation, &objects, false);
	}
	free(objects.rules);
	if (!err)
		err = write_net(&m, agent_id, cfg.generation, rs);
	/* The switch: readers see the old configuration or the new one, never a mix. */
	if (!err)
		err = enforcer_agent_switch(e, agent_id, &cfg);
	if (err) {
		if (failed)
			*failed = bad;
		delete_generations(&m, agent_id, old.generation);
		return err;
	}
	*generation = cfg.generation;
	/* The new rules are in force. The old generation may go only when no program can still
	 * hold it: programs read an agent's generation, then its rules. Old entries left by a
	 * failure here can never match (their generation is not current) and go at the next
	 * apply. */
	if (!enforcer_wait_for_programs(e))
		delete_generations(&m, agent_id, cfg.generation);
	return 0;
}

const char *rules_strerror(int err, int failed)
{
	if (err == -ENOSPC && failed >= 0)
		return "no room in the file rule table for this object (both its buckets are "
		       "full; docs/ARCHITECTURE.md)";
	return strerror(-err);
}

int rules_remove(struct enforcer *e, __u32 agent_id)
{
	struct maps m;
	int err = get_maps(e, &m);

	if (err)
		return err;
	err = enforcer_agent_clear(e, agent_id);
	if (err)
		return err;
	/* As after a switch: a program that read the generation before the clear may still look
	 * its rules up. Should the wait fail, they go all the same (the agent id may be given
	 * again, from generation 1). */
	enforcer_wait_for_programs(e);
	return delete_generations(&m, agent_id, 0);
}

int rules_refresh_mounts(struct enforcer *e, __u32 agent_id)
{
	struct ruleset_objects objects = {};
	struct agentd_agent_config cfg;
	struct maps m;
	int err;

	err = get_maps(e, &m);
	if (err || !m.files || m.mounts < 0)
		return err;
	err = enforcer_agent_config(e, agent_id, &cfg);
	if (err)
		return err == -ENOENT ? 0 : err;
	err = read_objects(&m, agent_id, cfg.generation, &objects);
	if (!err)
		err = write_mounts(&m, agent_id, cfg.generation, &objects, true);
	free(objects.rules);
	return err;
}
