// SPDX-License-Identifier: GPL-2.0
/*
 * An agentd of another build left its pins. Of this pin format (enforcer.h): a link pinned under
 * the name of one of this build's programs that runs other code is replaced by this build's, the
 * link of a program this build lacks is removed (its hook would go on running the old code), a
 * link of this very build is adopted, not attached twice, and pinned rules without their bits in
 * the object filter get them at load, before anything is attached. Of another format, or without
 * a format marker: refused with what to do, nothing attached or changed, until agentd --teardown
 * clears them.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
	char stale_sock[PATH_MAX + 64];
	struct probe_bpf *skel;
	struct bpf_link *link;
	__u32 id;

	test_pin_dir(pins, sizeof(pins));
	ASSERT_OK(mkdir(pins, 0700));
	snprintf(open_pin, sizeof(open_pin), "%s/link-files-file_open", pins);
	snprintf(stale, sizeof(stale), "%s/link-self-inode_permission", pins);
	snprintf(stale_sock, sizeof(stale_sock), "%s/link-sock-socket_post_create", pins);
	/* The "old build", of this pin format: its pins, but another program on file_open,
	 * pinned as file_open's and as programs this build does not have. */
	start_and_stop(pins);
	ASSERT_OK(unlink(open_pin));
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

	start_and_stop(pins);
	ASSERT(access(stale, F_OK) && errno == ENOENT);
	ASSERT(access(stale_sock, F_OK) && errno == ENOENT);
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
	struct secret_tree t = {};
	const char *sec = t.sec, *top = t.top, *s = t.s, *f = t.f;

	agent_with_secret(&ag, &t);
	/* The denying rule without its bit: the walk passes it by and the tree above allows.
	 * What the load must repair, from the rules, whatever the pinned filter says. */
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

/* Runs enforcer_load() with stderr caught in msg. */
static int load_caught(struct enforcer **e, const struct enforcer_opts *opts, char *msg, size_t sz)
{
	int fd = memfd_create("stderr", MFD_CLOEXEC), saved = dup(STDERR_FILENO), err;
	ssize_t n;

	ASSERT_OK(fd);
	ASSERT_OK(saved);
	fflush(stderr);
	ASSERT_OK(dup2(fd, STDERR_FILENO));
	err = enforcer_load(e, opts);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = pread(fd, msg, sz - 1, 0);
	close(fd);
	ASSERT_OK(n);
	msg[n] = '\0';
	fputs(msg, stderr);
	return err;
}

/* "name id" of every pin in dir (its object's id), sorted by name: what a load must not change. */
static void pin_listing(const char *dir, char *out, size_t sz)
{
	union {
		struct bpf_map_info map;
		struct bpf_link_info link;
		struct bpf_prog_info prog;
	} info; /* each begins with its type and its id */
	char pin[PATH_MAX + 300];
	struct dirent **de;
	size_t used = 0;
	int n, i, fd;
	__u32 len;

	n = scandir(dir, &de, NULL, alphasort);
	ASSERT_OK(n);
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		snprintf(pin, sizeof(pin), "%s/%s", dir, de[i]->d_name);
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		fd = de[i]->d_name[0] == '.' ? -1 : bpf_obj_get(pin);
		if (fd >= 0) {
			ASSERT_OK(bpf_obj_get_info_by_fd(fd, &info, &len));
			close(fd);
			used += snprintf(out + used, sz - used, "%s %u\n", de[i]->d_name,
					 info.map.id);
			ASSERT(used < sz);
		}
		free(de[i]);
	}
	free(de);
}

/* The highest id of a link now: a link made later has a higher one. */
static __u32 last_link_id(void)
{
	__u32 id = 0, next;

	while (!bpf_link_get_next_id(id, &next))
		id = next;
	return id;
}

/* Replaces the format marker at pins by one saying format (0: none, as before markers). */
static void mark_pins(const char *pins, __u32 format)
{
	char pin[PATH_MAX + 32];
	__u32 zero = 0;
	int fd;

	snprintf(pin, sizeof(pin), "%s/" ENFORCER_PIN_FORMAT_PIN, pins);
	ASSERT_OK(unlink(pin));
	if (!format)
		return;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, ENFORCER_PIN_FORMAT_PIN, 4, 4, 1, NULL);
	ASSERT_OK(fd);
	ASSERT_OK(bpf_map_update_elem(fd, &zero, &format, BPF_ANY));
	ASSERT_OK(bpf_obj_pin(fd, pin));
	close(fd);
}

/* The load refuses pins of another format, naming them and saying to run agentd --teardown. */
static void load_refused(const struct secret_tree *t, const char *what)
{
	struct enforcer *e = NULL;
	char msg[8192], want[PATH_MAX + 64];

	ASSERT_EQ(load_caught(&e, &t->opts, msg, sizeof(msg)), -ESTALE);
	ASSERT(e == NULL);
	snprintf(want, sizeof(want), "%s: %s", t->pins, what);
	if (!strstr(msg, want) || !strstr(msg, "run agentd --teardown --pin-dir"))
		FAIL("no message naming %s and saying to tear down: \"%s\"", t->pins, msg);
}

/*
 * Pins of an agentd whose pin format is another (its maps may lay out or mean other bytes):
 * the load refuses them with a message naming the directory and saying to run agentd
 * --teardown, attaches nothing and changes no pin; the old links go on enforcing the old maps.
 */
TEST(pins_of_another_format_are_refused_and_left_as_they_are)
{
	char before[16384], after[16384];
	struct test_agent ag = { .id = 14 };
	struct secret_tree t = {};
	__u32 last;

	agent_with_secret(&ag, &t);
	enforcer_destroy(ag.e);
	mark_pins(t.pins, ENFORCER_PIN_FORMAT + 1);
	pin_listing(t.pins, before, sizeof(before));
	last = last_link_id();

	load_refused(&t, "pins of format");
	pin_listing(t.pins, after, sizeof(after));
	ASSERT_STREQ(after, before);
	ASSERT(last_link_id() <= last);
	ASSERT_EQ(read_in(&ag, t.s), EPERM);
	ASSERT_EQ(read_in(&ag, t.f), 0);
}

static int agentd_teardown(const char *pins)
{
	char *argv[] = { "agentd", "--teardown", "--pin-dir", (char *)pins, NULL };
	int status = proc_stop(proc_start(argv), 0);

	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * Pins without a format marker (an agentd from before markers) are refused alike; agentd
 * --teardown clears them (their links end once the kernel releases them: it cannot forget the
 * agents first in maps of a format it does not know), and a load there then starts afresh: it
 * marks the directory with this format and enforces.
 */
TEST(pins_without_a_format_marker_are_refused_until_teardown)
{
	struct test_agent ag = { .id = 15 };
	struct secret_tree t = {};
	char pin[PATH_MAX + 32];
	__u32 gen;

	agent_with_secret(&ag, &t);
	enforcer_destroy(ag.e);
	mark_pins(t.pins, 0);
	load_refused(&t, "pins without a format marker");
	ASSERT_EQ(read_in(&ag, t.s), EPERM);

	ASSERT_EQ(agentd_teardown(t.pins), 0);
	ASSERT(access(t.pins, F_OK) && errno == ENOENT);

	ASSERT_EQ(enforcer_load(&ag.e, &t.opts), 0);
	snprintf(pin, sizeof(pin), "%s/" ENFORCER_PIN_FORMAT_PIN, t.pins);
	ASSERT_OK(access(pin, F_OK));
	ASSERT_EQ(enforcer_attach_lsm(ag.e), 0);
	const struct file_rule files[] = { { "/", RX },
					   { t.top, AGENTD_RIGHTS_ALL },
					   { t.sec, 0 } };
	ASSERT_EQ(rules_apply(ag.e, ag.id, &(struct ruleset){ .files = files, .nfiles = 3 }, &gen,
			      NULL),
		  0);
	ASSERT_EQ(enforcer_add_cgroup(ag.e, ag.cgroup, ag.id), 0);
	ASSERT_EQ(read_in(&ag, t.s), EPERM);
	ASSERT_EQ(read_in(&ag, t.f), 0);
	ASSERT_EQ(enforcer_remove_cgroup(ag.e, ag.cgroup), 0);
	ASSERT_EQ(rules_remove(ag.e, ag.id), 0);
	enforcer_destroy(ag.e);
}
