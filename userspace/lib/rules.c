// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "rules.h"

struct maps {
	int agents, files, net;
};

static int get_maps(struct enforcer *e, struct maps *m)
{
	m->agents = enforcer_map_fd(e, "agents");
	m->files = enforcer_map_fd(e, "file_rules");
	m->net = enforcer_map_fd(e, "net_rules");
	return m->agents < 0 ? m->agents : 0;
}

/* Agent and generation sit at the same offsets in both key types (after prefixlen in net's). */
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
	return 0;
}

/* Deletes agent_id's entries of every generation but keep (all when keep is 0). */
static int delete_generations(const struct maps *m, __u32 agent_id, __u32 keep)
{
	int err;

	err = delete_matching(m->files, sizeof(struct agentd_file_key),
			      offsetof(struct agentd_file_key, agent_id), agent_id, keep);
	if (!err)
		err = delete_matching(m->net, sizeof(struct agentd_net_key),
				      offsetof(struct agentd_net_key, agent_id), agent_id, keep);
	return err;
}

static int write_files(const struct maps *m, __u32 agent_id, __u32 gen, const struct ruleset *rs,
		       int *failed)
{
	struct agentd_file_key key = { .agent_id = agent_id, .generation = gen };
	struct agentd_file_rule rule;
	struct stat st;
	size_t i;

	for (i = 0; i < rs->nfiles; i++) {
		if (stat(rs->files[i].path, &st)) {
			*failed = i;
			return -errno;
		}
		key.dev = kernel_dev(st.st_dev);
		key.ino = st.st_ino;
		rule.rule_id = i + 1;
		rule.rights = rs->files[i].rights;
		/* Without the BPF LSM objects there is no file layer to fill (the caller chose
		 * and reports it); the paths are still resolved, so errors do not depend on it. */
		if (m->files < 0)
			continue;
		if (bpf_map_update_elem(m->files, &key, &rule, BPF_ANY)) {
			*failed = i;
			return -errno;
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

/*
 * Returns once every BPF program running when it was called has finished. Programs read an
 * agent's generation, then its rules: the old generation may go only when no program can still
 * hold it. The kernel waits for an RCU grace period after each update of a map-in-map
 * (maybe_wait_bpf_programs() in kernel/bpf/syscall.c), and non-sleepable programs, all of ours,
 * run inside RCU read-side sections.
 */
static int wait_for_programs(void)
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
	return err;
}

int rules_apply(struct enforcer *e, __u32 agent_id, const struct ruleset *rs, __u32 *generation,
		int *failed)
{
	struct agentd_agent_config cfg = {}, old = {};
	int err, bad = -1;
	struct maps m;

	err = get_maps(e, &m);
	if (err)
		return err;
	if (!bpf_map_lookup_elem(m.agents, &agent_id, &old))
		cfg.generation = old.generation + 1;
	else
		cfg.generation = 1;
	if (!cfg.generation)
		cfg.generation = 1;
	cfg.flags = rs->flags;
	cfg.sock_families = rs->sock_families;
	cfg.sock_types = rs->sock_types;

	err = write_files(&m, agent_id, cfg.generation, rs, &bad);
	if (!err)
		err = write_net(&m, agent_id, cfg.generation, rs);
	/* The switch: readers see the old configuration or the new one, never a mix. */
	if (!err && bpf_map_update_elem(m.agents, &agent_id, &cfg, BPF_ANY))
		err = -errno;
	if (err) {
		if (failed)
			*failed = bad;
		delete_generations(&m, agent_id, old.generation);
		return err;
	}
	*generation = cfg.generation;
	/* The new rules are in force. Old entries left by a failure here can never match (their
	 * generation is not current) and go at the next apply. */
	if (!wait_for_programs())
		delete_generations(&m, agent_id, cfg.generation);
	return 0;
}

int rules_remove(struct enforcer *e, __u32 agent_id)
{
	struct maps m;
	int err = get_maps(e, &m);

	if (err)
		return err;
	if (bpf_map_delete_elem(m.agents, &agent_id) && errno != ENOENT)
		return -errno;
	return delete_generations(&m, agent_id, 0);
}
