// SPDX-License-Identifier: GPL-2.0
/*
 * An agentd of another build left its pins: a link pinned under the name of one of this build's
 * programs that runs other code is replaced by this build's, the link of a program this build
 * lacks is removed (its hook would go on running the old code), and a link of this very build is
 * adopted, not attached twice, and the pin of a map only such a program read (unix_owner, the
 * socket storage of an older build's socket_post_create) is removed. Pinned rules without their
 * bits in the object filter (maps of a build before it) get them at load, before anything is
 * attached; file rules pinned in the hash map of a build before the rule table move into it;
 * and the identity maps of a build before the shared section move into that.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kernel/cgroup.h"
#include "kernel/enforcer.h"
#include "ops.h"
#include "kernel/rules.h"
#include "kernel/ruletab.h"
#include "probe.skel.h"

/* The link pinned at path: its id, and its program's name. */
static __u32 pinned_link(const char *path, char *prog, size_t sz)
{
	struct bpf_link_info link = {};
	struct bpf_prog_info info = {};
	__u32 len = sizeof(link);
	int fd = bpf_obj_get(path), pfd;

	ASSERT_OK(fd);
	ASSERT_OK(bpf_obj_get_info_by_fd(fd, &link, &len));
	pfd = bpf_prog_get_fd_by_id(link.prog_id);
	ASSERT_OK(pfd);
	len = sizeof(info);
	ASSERT_OK(bpf_obj_get_info_by_fd(pfd, &info, &len));
	snprintf(prog, sz, "%s", info.name);
	close(pfd);
	close(fd);
	return link.id;
}

static void start_and_stop(const char *pins)
{
	struct enforcer *e;

	ASSERT_EQ(enforcer_load(&e, &(struct enforcer_opts){ .lsm = true, .pin_dir = pins }), 0);
	ASSERT_EQ(enforcer_attach_lsm(e), 0);
	enforcer_destroy(e);
}

TEST(upgrade_replaces_changed_programs_and_removes_stale_links)
{
	char pins[PATH_MAX], open_pin[PATH_MAX + 64], stale[PATH_MAX + 64], prog[64];
	char stale_sock[PATH_MAX + 64], owner_pin[PATH_MAX + 64];
	struct probe_bpf *skel;
	struct bpf_link *link;
	int map;
	__u32 id;

	test_pin_dir(pins, sizeof(pins));
	ASSERT_OK(mkdir(pins, 0700));
	snprintf(open_pin, sizeof(open_pin), "%s/link-files-file_open", pins);
	snprintf(stale, sizeof(stale), "%s/link-self-inode_permission", pins);
	snprintf(stale_sock, sizeof(stale_sock), "%s/link-sock-socket_post_create", pins);
	snprintf(owner_pin, sizeof(owner_pin), "%s/unix_owner", pins);
	/* The "old build": another program on file_open, pinned as file_open's and as a program
	 * this build does not have. */
	skel = probe_bpf__open_and_load();
	ASSERT(skel);
	link = bpf_program__attach(skel->progs.probe_file_open);
	ASSERT(link);
	ASSERT_OK(bpf_obj_pin(bpf_link__fd(link), open_pin));
	ASSERT_OK(bpf_obj_pin(bpf_link__fd(link), stale));
	ASSERT_OK(bpf_obj_pin(bpf_link__fd(link), stale_sock));
	bpf_link__disconnect(link);
	bpf_link__destroy(link);
	probe_bpf__destroy(skel);
	pinned_link(open_pin, prog, sizeof(prog));
	ASSERT_STREQ(prog, "probe_file_open");
	map = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unix_owner", 4, 4, 1, NULL);
	ASSERT_OK(map);
	ASSERT_OK(bpf_obj_pin(map, owner_pin));
	close(map);

	start_and_stop(pins);
	ASSERT(access(stale, F_OK) && errno == ENOENT);
	ASSERT(access(stale_sock, F_OK) && errno == ENOENT);
	ASSERT(access(owner_pin, F_OK) && errno == ENOENT);
	id = pinned_link(open_pin, prog, sizeof(prog));
	ASSERT_STREQ(prog, "file_open");
	/* The same build again: adopted. */
	start_and_stop(pins);
	ASSERT_EQ(pinned_link(open_pin, prog, sizeof(prog)), id);
}

/* Sets or clears the object filter's bit of the object at path; returns what it was. */
static int object_bit(struct enforcer *e, const char *path, int set)
{
	__u64 *w = enforcer_shared(e)->object_filter;
	struct stat st;
	__u32 bit;
	int was;

	ASSERT_OK(stat(path, &st));
	bit = agentd_object_bit(kernel_dev(st.st_dev), st.st_ino);
	was = (w[bit / 64] >> (bit % 64)) & 1;
	if (set > 0)
		__atomic_fetch_or(&w[bit / 64], 1ULL << (bit % 64), __ATOMIC_SEQ_CST);
	else if (!set)
		__atomic_fetch_and(&w[bit / 64], ~(1ULL << (bit % 64)), __ATOMIC_SEQ_CST);
	return was;
}

static int read_in(const struct test_agent *ag, const char *path)
{
	return test_agent_run(ag, op_open, OP(.a = path, .flags = O_RDONLY));
}

/* A tree with a denied subtree: top (all rights) holds f and secret (none), which holds s. */
struct secret_tree {
	char pins[PATH_MAX], top[PATH_MAX], sec[PATH_MAX], s[PATH_MAX], f[PATH_MAX];
	struct enforcer_opts opts;
	__u32 gen;
};

/* Agent ag under that tree's rules ("/" read and exec above it), its maps and links pinned. */
static void agent_with_secret(struct test_agent *ag, struct secret_tree *t)
{
	test_pin_dir(t->pins, sizeof(t->pins));
	t->opts = (struct enforcer_opts){ .lsm = true, .pin_dir = t->pins };
	test_dir(t->top, sizeof(t->top));
	ASSERT_OK(mkdir(PATHF(t->sec, "%s/secret", t->top), 0755));
	test_write(PATHF(t->s, "%s/s", t->sec), "x\n", 0644);
	test_write(PATHF(t->f, "%s/f", t->top), "x\n", 0644);
	const struct file_rule files[] = { { "/", RX },
					   { t->top, AGENTD_RIGHTS_ALL },
					   { t->sec, 0 } };
	test_cgroup(ag->cgroup, sizeof(ag->cgroup));
	ASSERT_EQ(enforcer_load(&ag->e, &t->opts), 0);
	ASSERT_EQ(enforcer_attach_lsm(ag->e), 0);
	ASSERT_EQ(rules_apply(ag->e, ag->id, &(struct ruleset){ .files = files, .nfiles = 3 },
			      &t->gen, NULL),
		  0);
	ASSERT_EQ(enforcer_add_cgroup(ag->e, ag->cgroup, ag->id), 0);
	ASSERT_EQ(read_in(ag, t->s), EPERM);
	ASSERT_EQ(read_in(ag, t->f), 0);
}

TEST(object_filter_is_rebuilt_from_pinned_rules)
{
	struct test_agent ag = { .id = 11 };
	struct secret_tree t;
	const char *sec = t.sec, *top = t.top, *s = t.s, *f = t.f;

	agent_with_secret(&ag, &t);
	/* The denying rule without its bit, as pins of a build before the filter have it: the
	 * walk passes it by and the tree above allows. What the load must repair. */
	ASSERT_EQ(object_bit(ag.e, sec, 0), 1);
	ASSERT_EQ(read_in(&ag, s), 0);
	enforcer_destroy(ag.e);
	ASSERT_EQ(enforcer_load(&ag.e, &t.opts), 0);
	ASSERT_EQ(object_bit(ag.e, sec, -1), 1);
	ASSERT_EQ(read_in(&ag, s), EPERM);
	ASSERT_EQ(read_in(&ag, f), 0);
	/* Rules gone, bits gone: no other entry of these maps names these objects. */
	ASSERT_EQ(enforcer_remove_cgroup(ag.e, ag.cgroup), 0);
	ASSERT_EQ(rules_remove(ag.e, ag.id), 0);
	ASSERT_EQ(object_bit(ag.e, sec, -1), 0);
	ASSERT_EQ(object_bit(ag.e, top, -1), 0);
	enforcer_destroy(ag.e);
}

/* Pins at pins/name an empty array map of n elements of size bytes, as an earlier build had. */
static int pin_old_map(const char *pins, const char *name, __u32 size, __u32 n)
{
	char pin[PATH_MAX + 32];
	int fd = bpf_map_create(
		BPF_MAP_TYPE_ARRAY, name, sizeof(__u32), size, n,
		&(struct bpf_map_create_opts){ .sz = sizeof(struct bpf_map_create_opts),
					       .map_flags = BPF_F_MMAPABLE });

	ASSERT_OK(fd);
	snprintf(pin, sizeof(pin), "%s/%s", pins, name);
	ASSERT_OK(bpf_obj_pin(fd, pin));
	return fd;
}

static bool pinned(const char *pins, const char *name)
{
	char pin[PATH_MAX + 32];

	snprintf(pin, sizeof(pin), "%s/%s", pins, name);
	return !access(pin, F_OK);
}

/*
 * Pins of a build before the shared section: the agent levels, the cgroup
 * index and the object filter in maps of their own, the filter empty as in a build before it.
 * The load carries the levels into the shared section, rebuilds the index from agent_cgroups
 * and the filter from the pinned rules, and removes the old pins; the links of the first load,
 * whose programs read another section, are replaced. Without the levels no task would be an
 * agent's, and the denied file would open.
 */
TEST(identity_pins_of_an_earlier_build_move_into_the_shared_section)
{
	struct test_agent ag = { .id = 13 };
	struct agentd_agent_levels lv;
	char pin[PATH_MAX + 32];
	struct secret_tree t;
	__u32 zero = 0, i;
	__u64 id;
	int fd;

	agent_with_secret(&ag, &t);
	lv = enforcer_shared(ag.e)->levels;
	ASSERT_EQ(lv.count, 1);
	ASSERT_EQ(cgroup_id(ag.cgroup, &id), 0);
	enforcer_destroy(ag.e);
	snprintf(pin, sizeof(pin), "%s/" AGENTD_SHARED_PIN, t.pins);
	ASSERT_OK(unlink(pin));
	fd = pin_old_map(t.pins, "agent_levels", sizeof(lv), 1);
	ASSERT_OK(bpf_map_update_elem(fd, &zero, &lv, BPF_ANY));
	close(fd);
	close(pin_old_map(t.pins, "agent_cgroup_index", sizeof(__u64), AGENTD_CGROUP_INDEX_SLOTS));
	close(pin_old_map(t.pins, "object_filter", AGENTD_OBJECT_FILTER_WORDS * sizeof(__u64), 1));

	ASSERT_EQ(enforcer_load(&ag.e, &t.opts), 0);
	ASSERT_EQ(enforcer_attach_lsm(ag.e), 0);
	ASSERT(pinned(t.pins, AGENTD_SHARED_PIN));
	ASSERT(!pinned(t.pins, "agent_levels"));
	ASSERT(!pinned(t.pins, "agent_cgroup_index"));
	ASSERT(!pinned(t.pins, "object_filter"));
	ASSERT_EQ(enforcer_shared(ag.e)->levels.count, 1);
	ASSERT_EQ(enforcer_shared(ag.e)->levels.level[0], lv.level[0]);
	i = id & (AGENTD_CGROUP_INDEX_SLOTS - 1);
	ASSERT_EQ(enforcer_shared(ag.e)->cgroup_index[i], agentd_cgroup_index_word(id, ag.id));
	ASSERT_EQ(object_bit(ag.e, t.sec, -1), 1);
	ASSERT_EQ(read_in(&ag, t.s), EPERM);
	ASSERT_EQ(read_in(&ag, t.f), 0);
	ASSERT_EQ(enforcer_remove_cgroup(ag.e, ag.cgroup), 0);
	ASSERT_EQ(rules_remove(ag.e, ag.id), 0);
	enforcer_destroy(ag.e);
}

struct copy_ctx {
	int fd;
	__u32 agent_id;
	int n;
};

static int copy_rule(void *ctx, const struct agentd_file_key *key,
		     const struct agentd_file_rule *rule)
{
	struct copy_ctx *c = ctx;

	if (key->agent_id != c->agent_id)
		return 0;
	ASSERT_OK(bpf_map_update_elem(c->fd, key, rule, BPF_NOEXIST));
	c->n++;
	return 0;
}

/*
 * A build before rule_buckets pinned its file rules in a hash map named file_rules: the load
 * moves the entries of each agent's generation in force into the table before anything is
 * attached, and removes the pin; entries of other generations stay behind.
 */
TEST(pinned_file_rules_of_an_earlier_build_move_into_the_table)
{
	struct agentd_file_rule rule = { 77, AGENTD_RIGHTS_ALL }, got;
	struct test_agent ag = { .id = 12 };
	char old_pin[PATH_MAX + 16];
	struct agentd_file_key stale;
	struct copy_ctx c = {};
	struct secret_tree t;
	struct stat st;

	agent_with_secret(&ag, &t);
	snprintf(old_pin, sizeof(old_pin), "%s/file_rules", t.pins);
	/* The old build's map: this generation's rules, and one of a generation not in force
	 * (all rights on the denied tree) that must not come back. */
	c.fd = bpf_map_create(BPF_MAP_TYPE_HASH, "file_rules", sizeof(struct agentd_file_key),
			      sizeof(struct agentd_file_rule), 64, NULL);
	ASSERT_OK(c.fd);
	c.agent_id = ag.id;
	ASSERT_EQ(ruletab_each(enforcer_rules(ag.e), copy_rule, &c), 0);
	ASSERT_EQ(c.n, 3);
	ASSERT_OK(stat(t.sec, &st));
	stale = (struct agentd_file_key){ ag.id, t.gen + 1, kernel_dev(st.st_dev), st.st_ino };
	ASSERT_OK(bpf_map_update_elem(c.fd, &stale, &rule, BPF_NOEXIST));
	ASSERT_OK(bpf_obj_pin(c.fd, old_pin));
	close(c.fd);
	/* The table as that build left it: without them. */
	ASSERT_EQ(ruletab_delete(enforcer_rules(ag.e), ag.id, 0), 3);
	ASSERT_EQ(enforcer_object_filter_rebuild(ag.e), 0);
	ASSERT_EQ(read_in(&ag, t.f), EPERM);
	enforcer_destroy(ag.e);

	ASSERT_EQ(enforcer_load(&ag.e, &t.opts), 0);
	ASSERT(access(old_pin, F_OK) && errno == ENOENT);
	ASSERT_EQ(read_in(&ag, t.s), EPERM);
	ASSERT_EQ(read_in(&ag, t.f), 0);
	ASSERT_EQ(ruletab_get(enforcer_rules(ag.e), &stale, &got), 0);
	ASSERT_EQ(enforcer_remove_cgroup(ag.e, ag.cgroup), 0);
	ASSERT_EQ(rules_remove(ag.e, ag.id), 0);
	enforcer_destroy(ag.e);
}
