// SPDX-License-Identifier: GPL-2.0
/*
 * What the kernel holds for an agent (observe.h). Every answer comes from a bpf() query or a map
 * read at the time of the call: the links behind the pins, the programs behind the links, the
 * effective programs of a cgroup, the entries of the maps; never from what agentd recorded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <openssl/evp.h>
#include "kernel/cgroup.h"
#include "kernel/enforcer_internal.h"
#include "kernel/kdev.h"
#include "kernel/observe.h"
#include "kernel/ruletab.h"

#define MAX_EFFECTIVE 64

static const struct {
	const char *object, *prefix;
	enum boundary b;
} hook_boundaries[] = {
	/* The first match wins: specific hooks before their object's default. */
	{ "self", "task_kill", BOUNDARY_SIGNALS },
	{ "self", "ptrace", BOUNDARY_SIGNALS },
	{ "self", "task_alloc", BOUNDARY_CGROUP },
	{ "self", "", BOUNDARY_SELF },
	{ "sock", "unix_", BOUNDARY_UNIX },
	{ "sock", "socket_create", BOUNDARY_SOCKETS },
	{ "sock", "", BOUNDARY_EGRESS },
	{ "contain", "shm_", BOUNDARY_IPC },
	{ "contain", "msg_", BOUNDARY_IPC },
	{ "contain", "sem_", BOUNDARY_IPC },
	{ "contain", "ipc_", BOUNDARY_IPC },
	{ "contain", "task_", BOUNDARY_SIGNALS },
	{ "contain", "file_send_sigiotask", BOUNDARY_SIGNALS },
	{ "contain", "file_set_fowner", BOUNDARY_SIGNALS },
	{ "contain", "", BOUNDARY_CAPABILITIES },
	{ "files", "", BOUNDARY_FILES },
	{ "exec", "", BOUNDARY_EXEC },
	{ "net", "bind", BOUNDARY_LOOPBACK },
	{ "net", "post_bind", BOUNDARY_LOOPBACK },
	{ "net", "sock_create", BOUNDARY_SOCKETS },
	{ "net", "", BOUNDARY_EGRESS },
};

static enum boundary boundary_of(const char *object, const char *hook)
{
	size_t i;

	for (i = 0; i < sizeof(hook_boundaries) / sizeof(hook_boundaries[0]); i++)
		if (!strcmp(object, hook_boundaries[i].object) &&
		    !strncmp(hook, hook_boundaries[i].prefix, strlen(hook_boundaries[i].prefix)))
			return hook_boundaries[i].b;
	return BOUNDARY_SELF;
}

static int prog_tag_of(int fd, __u8 tag[8])
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	memcpy(tag, info.tag, 8);
	return 0;
}

/* The ids of the programs the kernel runs at the cgroup for type, its ancestors' included. */
static int effective_ids(int cgroup_fd, enum bpf_attach_type type, __u32 *ids, __u32 *n)
{
	__u32 flags = 0;

	*n = MAX_EFFECTIVE;
	if (bpf_prog_query(cgroup_fd, type, BPF_F_QUERY_EFFECTIVE, &flags, ids, n))
		return -errno;
	return 0;
}

#define MAX_PROG_MAPS 64

static int map_ids(int prog_fd, __u32 *ids, __u32 *n)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	info.nr_map_ids = MAX_PROG_MAPS;
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	if (info.nr_map_ids > MAX_PROG_MAPS)
		return -E2BIG;
	*n = info.nr_map_ids;
	return 0;
}

/* Whether the map of this id is made afresh at each load (an object's .rodata, "obj.rodata"),
 * and so differs between two loads of the same program; the shared maps do not. */
static bool per_load(__u32 id)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd = bpf_map_get_fd_by_id(id);
	const char *dot;
	bool own;

	if (fd < 0)
		return false;
	own = !bpf_obj_get_info_by_fd(fd, &info, &len) && (dot = strchr(info.name, '.')) &&
	      strcmp(dot, AGENTD_SHARED_SECTION);
	close(fd);
	return own;
}

/* Whether the linked program reads every shared map the build's program reads: the same code
 * loaded against other maps has the same tag. */
static bool same_maps(int linked, int build)
{
	__u32 a[MAX_PROG_MAPS], b[MAX_PROG_MAPS], na, nb, i, j;

	if (map_ids(linked, a, &na) || map_ids(build, b, &nb))
		return false;
	for (i = 0; i < nb; i++) {
		for (j = 0; j < na && a[j] != b[i]; j++)
			;
		if (j == na && !per_load(b[i]))
			return false;
	}
	return true;
}

/* The link pinned at path: its id, the program it runs, the cgroup it is attached to. */
static void read_link(const char *path, int build_fd, struct observed_prog *p, __u64 cgroup_id)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	__u8 tag[8];
	int fd = bpf_obj_get(path), pfd;

	if (fd < 0)
		return;
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		close(fd);
		return;
	}
	close(fd);
	p->link_id = info.id;
	p->prog_id = info.prog_id;
	pfd = bpf_prog_get_fd_by_id(info.prog_id);
	p->same_code = pfd >= 0 && !prog_tag_of(pfd, tag) && !memcmp(tag, p->tag, sizeof(tag)) &&
		       same_maps(pfd, build_fd);
	if (pfd >= 0)
		close(pfd);
	/* A detached cgroup link reports no cgroup; a tracing (LSM) link is attached while it
	 * exists, and has no detach operation. */
	p->attached =
		p->lsm ? info.type == BPF_LINK_TYPE_TRACING
		       : info.type == BPF_LINK_TYPE_CGROUP && info.cgroup.cgroup_id == cgroup_id;
}

static void observe_one(const struct object *o, struct bpf_program *prog, const char *pin_dir,
			__u64 cgroup_id, int agent_cgroup_fd, struct observed_prog *p)
{
	const char *sec = bpf_program__section_name(prog), *slash = strchr(sec, '/');
	__u32 ids[MAX_EFFECTIVE], n, i;
	char path[PATH_MAX + 160];

	memset(p, 0, sizeof(*p));
	snprintf(p->object, sizeof(p->object), "%s", o->name);
	snprintf(p->hook, sizeof(p->hook), "%s", slash ? slash + 1 : sec);
	p->lsm = o->lsm;
	p->boundary = boundary_of(o->name, p->hook);
	prog_tag_of(bpf_program__fd(prog), p->tag);
	if (pin_dir && pin_dir[0] && o->lsm)
		snprintf(path, sizeof(path), "%s/link-%s-%s", pin_dir, o->name,
			 bpf_program__name(prog));
	else if (pin_dir && pin_dir[0])
		snprintf(path, sizeof(path), "%s/link-%s-%s-%llu", pin_dir, o->name,
			 bpf_program__name(prog), (unsigned long long)cgroup_id);
	else
		path[0] = '\0';
	if (path[0])
		read_link(path, bpf_program__fd(prog), p, cgroup_id);
	if (o->lsm || agent_cgroup_fd < 0 || !p->prog_id ||
	    effective_ids(agent_cgroup_fd, bpf_program__expected_attach_type(prog), ids, &n))
		return;
	for (i = 0; i < n && i < MAX_EFFECTIVE; i++)
		if (ids[i] == p->prog_id)
			p->effective = true;
}

int observe_programs(const struct enforcer *e, const char *pin_dir, __u64 attach_cgroup_id,
		     int agent_cgroup_fd, struct observed_prog **out, size_t *n)
{
	struct observed_prog *list = calloc(2 * MAX_LINKS, sizeof(*list));
	struct bpf_program *prog;
	size_t i, k = 0;

	if (!list)
		return -ENOMEM;
	for (i = 0; i < ENFORCER_NOBJS; i++) {
		if (!e->objs[i].obj)
			continue;
		bpf_object__for_each_program(prog, e->objs[i].obj)
		{
			if (!bpf_program__autoload(prog) || k == 2 * MAX_LINKS)
				continue;
			observe_one(&e->objs[i], prog, pin_dir, attach_cgroup_id, agent_cgroup_fd,
				    &list[k++]);
		}
	}
	*out = list;
	*n = k;
	return 0;
}

/* Entries as fixed-size records, sorted, then SHA-256: the same set gives the same digest. */
struct entries {
	char *buf;
	size_t n, cap, size;
};

static int entries_add(struct entries *s, const void *key, size_t ksz, const void *val, size_t vsz)
{
	char *more;

	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		more = realloc(s->buf, s->cap * s->size);
		if (!more)
			return -ENOMEM;
		s->buf = more;
	}
	memcpy(s->buf + s->n * s->size, key, ksz);
	memcpy(s->buf + s->n * s->size + ksz, val, vsz);
	s->n++;
	return 0;
}

static size_t cmp_size;

static int record_cmp(const void *a, const void *b)
{
	return memcmp(a, b, cmp_size);
}

static int entries_digest(struct entries *s, struct observed_entries *o)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;
	int ok;

	cmp_size = s->size;
	if (s->n)
		qsort(s->buf, s->n, s->size, record_cmp);
	ok = EVP_Digest(s->buf ? s->buf : "", s->n * s->size, md, &mdlen, EVP_sha256(), NULL);
	free(s->buf);
	s->buf = NULL;
	if (!ok)
		return -EIO;
	o->n = s->n;
	for (i = 0; i < mdlen && 2 * i + 2 < sizeof(o->digest); i++)
		snprintf(o->digest + 2 * i, 3, "%02x", md[i]);
	return 0;
}

struct file_walk {
	__u32 agent_id, gen;
	struct entries *s;
};

static int file_entry(void *ctx, const struct agentd_file_key *key,
		      const struct agentd_file_rule *rule)
{
	struct file_walk *w = ctx;

	if (key->agent_id != w->agent_id || key->generation != w->gen)
		return 0;
	return entries_add(w->s, key, sizeof(*key), rule, sizeof(*rule));
}

int observe_file_rules(const struct enforcer *e, __u32 agent_id, __u32 gen,
		       struct observed_entries *o)
{
	struct entries s = { .size = sizeof(struct agentd_file_key) +
				     sizeof(struct agentd_file_rule) };
	struct file_walk w = { agent_id, gen, &s };
	int err;

	if (!e->rules)
		return -ENOENT;
	/* The table is the kernel's map memory, mapped: this reads what the programs read. */
	err = ruletab_each(e->rules, file_entry, &w);
	if (err) {
		free(s.buf);
		return err;
	}
	return entries_digest(&s, o);
}

int expect_file_rules(const struct ruleset *rs, __u32 agent_id, __u32 gen,
		      struct observed_entries *o)
{
	struct entries s = { .size = sizeof(struct agentd_file_key) +
				     sizeof(struct agentd_file_rule) };
	struct agentd_file_key key = { .agent_id = agent_id, .generation = gen };
	struct agentd_file_rule rule;
	size_t i;
	int err = 0;

	for (i = 0; !err && rs->objects && i < rs->nfiles; i++) {
		key.dev = kernel_dev(rs->objects[i].dev);
		key.ino = rs->objects[i].ino;
		rule.rule_id = i + 1;
		rule.rights = rs->files[i].rights;
		err = entries_add(&s, &key, sizeof(key), &rule, sizeof(rule));
	}
	if (err) {
		free(s.buf);
		return err;
	}
	return entries_digest(&s, o);
}

int observe_net_rules(const struct enforcer *e, __u32 agent_id, __u32 gen,
		      struct observed_entries *o)
{
	struct entries s = { .size = sizeof(struct agentd_net_key) +
				     sizeof(struct agentd_net_rule) };
	int fd = enforcer_map_fd(e, "net_rules"), err = 0;
	struct agentd_net_key key, next;
	struct agentd_net_rule rule;
	void *prev = NULL;

	if (fd < 0)
		return fd;
	while (!err && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (key.agent_id != agent_id || key.generation != gen)
			continue;
		if (bpf_map_lookup_elem(fd, &key, &rule))
			err = -errno;
		else
			err = entries_add(&s, &key, sizeof(key), &rule, sizeof(rule));
	}
	if (err) {
		free(s.buf);
		return err;
	}
	return entries_digest(&s, o);
}

int expect_net_rules(const struct ruleset *rs, __u32 agent_id, __u32 gen,
		     struct observed_entries *o)
{
	struct entries s = { .size = sizeof(struct agentd_net_key) +
				     sizeof(struct agentd_net_rule) };
	struct agentd_net_key key = { .agent_id = agent_id, .generation = gen };
	struct agentd_net_rule rule;
	size_t i;
	int err = 0;

	for (i = 0; !err && i < rs->nnet; i++) {
		const struct net_rule *r = &rs->net[i];

		key.prefixlen = 64 + r->cidr.prefixlen;
		memcpy(key.addr, r->cidr.addr, sizeof(key.addr));
		memset(&rule, 0, sizeof(rule));
		rule.rule_id = i + 1;
		rule.protocols = r->protocols;
		rule.nranges = r->nranges;
		memcpy(rule.port_lo, r->port_lo, sizeof(rule.port_lo));
		memcpy(rule.port_hi, r->port_hi, sizeof(rule.port_hi));
		err = entries_add(&s, &key, sizeof(key), &rule, sizeof(rule));
	}
	if (err) {
		free(s.buf);
		return err;
	}
	return entries_digest(&s, o);
}

int observe_cgroup_agent(const struct enforcer *e, const char *path, __u32 *agent_id)
{
	int fd = enforcer_map_fd(e, "agent_cgroups");
	__u64 id;
	int err;

	if (fd < 0)
		return fd;
	err = cgroup_id(path, &id);
	if (err)
		return err;
	if (bpf_map_lookup_elem(fd, &id, agent_id))
		return -errno;
	return 0;
}

/* Entries of a map whose value (valued) or key (else) holds the agent id at offset off. */
static int count_agent(int fd, size_t ksz, size_t vsz, bool valued, size_t off, __u32 agent_id,
		       size_t *n)
{
	char key[64], next[64], val[64];
	void *prev = NULL;
	__u32 id;

	if (fd < 0)
		return fd;
	if (ksz > sizeof(key) || vsz > sizeof(val))
		return -E2BIG;
	*n = 0;
	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, ksz);
		prev = key;
		if (valued && bpf_map_lookup_elem(fd, key, val))
			continue; /* deleted meanwhile */
		memcpy(&id, (valued ? val : key) + off, sizeof(id));
		*n += id == agent_id;
	}
	return 0;
}

int observe_broker_sockets(const struct enforcer *e, __u32 agent_id, size_t *n)
{
	return count_agent(enforcer_map_fd(e, "broker_sockets"), sizeof(__u64), sizeof(__u32), true,
			   0, agent_id, n);
}

int observe_endpoints(const struct enforcer *e, __u32 agent_id, size_t *n)
{
	return count_agent(enforcer_map_fd(e, "endpoints"), sizeof(struct agentd_endpoint_key),
			   sizeof(__u32), false, offsetof(struct agentd_endpoint_key, agent_id),
			   agent_id, n);
}

int observe_structural(const struct enforcer *e, size_t *n)
{
	int fd = enforcer_map_fd(e, "structural_deny");
	struct agentd_addr_key key, next;
	void *prev = NULL;

	if (fd < 0)
		return fd;
	*n = 0;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		(*n)++;
	}
	return 0;
}
