// SPDX-License-Identifier: GPL-2.0
/*
 * Rights on trees: the most specific rule wins, rules cross mount points, the walk bound fails
 * closed, link and rename never widen rights, and every path to an object (hard links,
 * /proc/self/fd, /proc/self/root) reaches the same verdict.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ops.h"

#define R AGENTD_RIGHT_READ
#define W AGENTD_RIGHT_WRITE
#define ALL AGENTD_RIGHTS_ALL

static void mkdir_ok(const char *path)
{
	if (mkdir(path, 0755))
		FAIL("mkdir %s: %s", path, strerror(errno));
}

static int read_in(const struct test_agent *ag, const char *path)
{
	return test_agent_run(ag, op_open, OP(.a = path, .flags = O_RDONLY));
}

static int write_in(const struct test_agent *ag, const char *path)
{
	return test_agent_run(ag, op_open, OP(.a = path, .flags = O_WRONLY));
}

static void start(struct test_agent *ag, const struct file_rule *files, size_t n)
{
	test_agent_start(ag, &(struct ruleset){ .files = files, .nfiles = n }, true);
}

TEST(no_rule_no_rights)
{
	char top[PATH_MAX], ruled[PATH_MAX], f[PATH_MAX], g[PATH_MAX];
	struct test_agent ag;

	test_dir(top, sizeof(top));
	mkdir_ok(PATHF(ruled, "%s/ruled", top));
	test_write(PATHF(f, "%s/f", top), "x\n", 0644);
	test_write(PATHF(g, "%s/g", ruled), "x\n", 0644);
	const struct file_rule files[] = { { ruled, R } };
	start(&ag, files, 1);
	ASSERT_EQ(read_in(&ag, f), EPERM);
	ASSERT_EQ(read_in(&ag, g), 0);
}

TEST(deny_inside_allowed_tree)
{
	char top[PATH_MAX], sec[PATH_MAX], f[PATH_MAX], s[PATH_MAX];
	struct test_agent ag;

	test_dir(top, sizeof(top));
	mkdir_ok(PATHF(sec, "%s/secret", top));
	test_write(PATHF(f, "%s/f", top), "x\n", 0644);
	test_write(PATHF(s, "%s/s", sec), "x\n", 0644);
	const struct file_rule files[] = { { "/", RX }, { top, ALL }, { sec, 0 } };
	start(&ag, files, 3);
	ASSERT_EQ(read_in(&ag, s), EPERM);
	ASSERT_EQ(read_in(&ag, f), 0);
	ASSERT_EQ(write_in(&ag, f), 0);
}

TEST(allow_inside_denied_tree)
{
	char top[PATH_MAX], pub[PATH_MAX], f[PATH_MAX], p[PATH_MAX];
	struct test_agent ag;

	test_dir(top, sizeof(top));
	mkdir_ok(PATHF(pub, "%s/pub", top));
	test_write(PATHF(f, "%s/f", top), "x\n", 0644);
	test_write(PATHF(p, "%s/p", pub), "x\n", 0644);
	const struct file_rule files[] = { { "/", RX }, { top, 0 }, { pub, R | W } };
	start(&ag, files, 3);
	ASSERT_EQ(read_in(&ag, f), EPERM);
	ASSERT_EQ(read_in(&ag, p), 0);
	ASSERT_EQ(write_in(&ag, p), 0);
}

/* A rule on the object itself decides before its directory's. */
TEST(rule_on_file_beats_its_directory)
{
	char top[PATH_MAX], f[PATH_MAX], g[PATH_MAX];
	struct test_agent ag;

	test_dir(top, sizeof(top));
	test_write(PATHF(f, "%s/f", top), "x\n", 0644);
	test_write(PATHF(g, "%s/g", top), "x\n", 0644);
	const struct file_rule files[] = { { top, R | W }, { f, R } };
	start(&ag, files, 2);
	ASSERT_EQ(write_in(&ag, f), EPERM);
	ASSERT_EQ(read_in(&ag, f), 0);
	ASSERT_EQ(write_in(&ag, g), 0);
}

/* A new directory dir/name with a tmpfs mounted on it and a file f there (its path in f). */
static void file_in_new_mount(const char *dir, const char *name, char f[PATH_MAX])
{
	char m[PATH_MAX];

	mkdir_ok(PATHF(m, "%s/%s", dir, name));
	test_mount_tmpfs(m);
	test_write(pathf(f, PATH_MAX, "%s/f", m), "x\n", 0644);
}

/* A tmpfs mounted inside a tree inherits the tree's rights through its mount point. */
TEST(mount_inherits_rights_of_mount_point)
{
	char top[PATH_MAX], ro[PATH_MAX], no[PATH_MAX], f1[PATH_MAX], f2[PATH_MAX];
	struct test_agent ag;

	test_dir(top, sizeof(top));
	mkdir_ok(PATHF(ro, "%s/ro", top));
	mkdir_ok(PATHF(no, "%s/no", top));
	file_in_new_mount(ro, "m", f1);
	file_in_new_mount(no, "m", f2);
	const struct file_rule files[] = { { "/", RX }, { ro, R }, { no, 0 } };
	start(&ag, files, 3);
	ASSERT_EQ(read_in(&ag, f1), 0);
	ASSERT_EQ(write_in(&ag, f1), EPERM);
	ASSERT_EQ(read_in(&ag, f2), EPERM);
}

/*
 * The objects built for every kernel load and decide on this one too, where the kernel has
 * bpf_rdonly_cast() and agentd loads its own build of files and exec (6.12): the walk across a
 * mount, which the two builds read differently, finds the rules above it (an allow, a deny by a
 * narrower right, a deny by a rule of no rights) and ends without one (a deny).
 */
TEST(plain_objects_walk_across_mounts)
{
	char top[PATH_MAX], ro[PATH_MAX], no[PATH_MAX], f1[PATH_MAX], f2[PATH_MAX], f3[PATH_MAX];
	struct test_agent ag;

	test_dir(top, sizeof(top));
	mkdir_ok(PATHF(ro, "%s/ro", top));
	mkdir_ok(PATHF(no, "%s/no", top));
	file_in_new_mount(ro, "m", f1);
	file_in_new_mount(no, "m", f2);
	file_in_new_mount(top, "unruled", f3);
	const struct file_rule files[] = { { ro, R }, { no, 0 } };
	test_agent_start_plain(&ag, &(struct ruleset){ .files = files, .nfiles = 2 });
	ASSERT_EQ(read_in(&ag, f1), 0);
	ASSERT_EQ(write_in(&ag, f1), EPERM);
	ASSERT_EQ(read_in(&ag, f2), EPERM);
	ASSERT_EQ(read_in(&ag, f3), EPERM);
}

/* A rule naming a mount point names the mounted root: it decides inside the mount. */
TEST(rule_on_mount_root)
{
	char top[PATH_MAX], m[PATH_MAX], f[PATH_MAX], g[PATH_MAX];
	struct test_agent ag;

	test_dir(top, sizeof(top));
	mkdir_ok(PATHF(m, "%s/m", top));
	test_mount_tmpfs(m);
	test_write(PATHF(f, "%s/f", m), "x\n", 0644);
	test_write(PATHF(g, "%s/g", top), "x\n", 0644);
	const struct file_rule files[] = { { "/", RX }, { top, 0 }, { m, R | W } };
	start(&ag, files, 3);
	ASSERT_EQ(read_in(&ag, g), EPERM);
	ASSERT_EQ(read_in(&ag, f), 0);
	ASSERT_EQ(write_in(&ag, f), 0);
}

/* Builds top/d/d/.../d/f with n directories; path receives the file's path. */
static void deep_file(const char *top, int n, char *path, size_t sz)
{
	size_t len = strlen(top);
	int i;

	if (len + 2 * n + 3 > sz)
		FAIL("path too long");
	strcpy(path, top);
	for (i = 0; i < n; i++) {
		strcpy(path + len, "/d");
		len += 2;
		if (mkdir(path, 0755) && errno != EEXIST)
			FAIL("mkdir %s: %s", path, strerror(errno));
	}
	strcpy(path + len, "/f");
	test_write(path, "x\n", 0644);
}

/* The walk from an object to its rule takes at most AGENTD_MAX_WALK steps: the object at
 * AGENTD_MAX_WALK - 1 steps below its rule is allowed, one step deeper is denied, although the
 * whole tree is allowed. */
TEST(walk_deeper_than_bound_denied)
{
	char top[PATH_MAX], edge[PATH_MAX], deep[PATH_MAX];
	struct test_agent ag;

	test_dir(top, sizeof(top));
	deep_file(top, AGENTD_MAX_WALK - 2, edge, sizeof(edge));
	deep_file(top, AGENTD_MAX_WALK - 1, deep, sizeof(deep));
	const struct file_rule files[] = { { top, R } };
	start(&ag, files, 1);
	ASSERT_EQ(read_in(&ag, edge), 0);
	ASSERT_EQ(read_in(&ag, deep), EPERM);
}

/* A read-only tree and a read-write tree, both allowing links and renames. */
struct two_trees {
	char top[PATH_MAX], ro[PATH_MAX], rw[PATH_MAX];
	char ro_f[PATH_MAX], rw_f[PATH_MAX];
	struct test_agent ag;
};

#define LINKING (AGENTD_RIGHT_CREATE | AGENTD_RIGHT_LINK | AGENTD_RIGHT_REMOVE)

static void two_trees(struct two_trees *t)
{
	test_dir(t->top, sizeof(t->top));
	mkdir_ok(PATHF(t->ro, "%s/ro", t->top));
	mkdir_ok(PATHF(t->rw, "%s/rw", t->top));
	test_write(PATHF(t->ro_f, "%s/f", t->ro), "x\n", 0644);
	test_write(PATHF(t->rw_f, "%s/f", t->rw), "x\n", 0644);
	const struct file_rule files[] = { { "/", RX }, { t->ro, R | LINKING }, { t->rw, ALL } };
	start(&t->ag, files, 3);
}

TEST(rename_may_not_widen_rights)
{
	char to[PATH_MAX];
	struct two_trees t;

	two_trees(&t);
	ASSERT_EQ(test_agent_run(&t.ag, op_rename, OP(.a = t.ro_f, .b = PATHF(to, "%s/g", t.rw))),
		  EPERM);
	ASSERT_EQ(test_agent_run(&t.ag, op_link, OP(.a = t.ro_f, .b = to)), EPERM);
	/* Within the read-only tree, or into it, is allowed; there the object is read-only. */
	ASSERT_EQ(test_agent_run(&t.ag, op_rename, OP(.a = t.rw_f, .b = PATHF(to, "%s/g", t.ro))),
		  0);
	ASSERT_EQ(write_in(&t.ag, to), EPERM);
	ASSERT_EQ(read_in(&t.ag, to), 0);
	ASSERT_EQ(test_agent_run(&t.ag, op_rename, OP(.a = t.ro_f, .b = PATHF(to, "%s/h", t.ro))),
		  0);
}

/* Replacing an existing name by rename removes the object there: that needs REMOVE on it. */
TEST(rename_over_protected_file_denied)
{
	char top[PATH_MAX], mine[PATH_MAX], kept[PATH_MAX], other[PATH_MAX];
	struct test_agent ag;

	test_dir(top, sizeof(top));
	test_write(PATHF(mine, "%s/mine", top), "agent's\n", 0644);
	test_write(PATHF(kept, "%s/kept", top), "owner's\n", 0644);
	test_write(PATHF(other, "%s/other", top), "owner's\n", 0644);
	const struct file_rule files[] = { { "/", RX }, { top, ALL }, { kept, R } };
	start(&ag, files, 3);
	ASSERT_EQ(test_agent_run(&ag, op_rename, OP(.a = mine, .b = kept)), EPERM);
	ASSERT_EQ(test_agent_run(&ag, op_rename, OP(.a = mine, .b = other)), 0);
}

/* A rule on the object follows it wherever it is linked or moved. */
TEST(rule_on_object_follows_link_and_rename)
{
	char top[PATH_MAX], ro[PATH_MAX], alias[PATH_MAX], moved[PATH_MAX], locked[PATH_MAX],
		lalias[PATH_MAX];
	struct test_agent ag;

	test_dir(top, sizeof(top));
	test_write(PATHF(ro, "%s/ro", top), "x\n", 0644);
	test_write(PATHF(locked, "%s/locked", top), "x\n", 0644);
	const struct file_rule files[] = { { "/", RX },
					   { top, ALL },
					   { ro, R | AGENTD_RIGHT_LINK | AGENTD_RIGHT_REMOVE },
					   { locked, 0 } };
	start(&ag, files, 4);
	ASSERT_EQ(test_agent_run(&ag, op_link, OP(.a = ro, .b = PATHF(alias, "%s/alias", top))), 0);
	ASSERT_EQ(write_in(&ag, alias), EPERM);
	ASSERT_EQ(read_in(&ag, alias), 0);
	ASSERT_EQ(test_agent_run(&ag, op_rename, OP(.a = ro, .b = PATHF(moved, "%s/moved", top))),
		  0);
	ASSERT_EQ(write_in(&ag, moved), EPERM);
	/* The agent cannot link a denied file; a link someone else made is denied too. */
	ASSERT_EQ(
		test_agent_run(&ag, op_link, OP(.a = locked, .b = PATHF(lalias, "%s/lalias", top))),
		EPERM);
	ASSERT_OK(link(locked, lalias));
	ASSERT_EQ(read_in(&ag, lalias), EPERM);
}

/* top (all rights) holds secret/ (denied) and pub/ (no rule of its own). */
TEST(rename_directory_between_allowed_and_denied)
{
	char top[PATH_MAX], sec[PATH_MAX], pub[PATH_MAX], sub[PATH_MAX], to[PATH_MAX], f[PATH_MAX];
	struct test_agent ag;

	test_dir(top, sizeof(top));
	mkdir_ok(PATHF(sec, "%s/secret", top));
	mkdir_ok(PATHF(pub, "%s/pub", top));
	mkdir_ok(PATHF(sub, "%s/sub", pub));
	test_write(PATHF(f, "%s/f", sub), "x\n", 0644);
	const struct file_rule files[] = { { "/", RX }, { top, ALL }, { sec, 0 }, { sub, R } };
	start(&ag, files, 4);
	/* An allowed subtree may not move under the denied directory ... */
	ASSERT_EQ(test_agent_run(&ag, op_rename, OP(.a = pub, .b = PATHF(to, "%s/pub", sec))),
		  EPERM);
	/* ... nor the denied directory out to an allowed name. */
	ASSERT_EQ(test_agent_run(&ag, op_rename, OP(.a = sec, .b = PATHF(to, "%s/open", top))),
		  EPERM);
	/* A subtree with its own rule keeps it when its parent moves. */
	ASSERT_EQ(test_agent_run(&ag, op_rename, OP(.a = pub, .b = PATHF(to, "%s/moved", top))), 0);
	ASSERT_EQ(read_in(&ag, PATHF(f, "%s/moved/sub/f", top)), 0);
	ASSERT_EQ(write_in(&ag, f), EPERM);
}

/* Opens O_PATH (no file_open check), then reopens through /proc/self/fd. */
static int reopen_o_path(void *path)
{
	char proc_path[64];
	int fd = open(path, O_PATH | O_CLOEXEC);

	if (fd < 0)
		return 100 + errno;
	snprintf(proc_path, sizeof(proc_path), "/proc/self/fd/%d", fd);
	return op_open(OP(.a = proc_path, .flags = O_RDONLY));
}

TEST(proc_paths_reach_the_same_verdict)
{
	char top[PATH_MAX], sec[PATH_MAX], pub[PATH_MAX], via[PATH_MAX + 16];
	struct test_agent ag;

	test_dir(top, sizeof(top));
	test_write(PATHF(sec, "%s/secret", top), "x\n", 0644);
	test_write(PATHF(pub, "%s/public", top), "x\n", 0644);
	const struct file_rule files[] = { { "/", RX }, { sec, 0 } };
	start(&ag, files, 2);
	ASSERT_EQ(test_agent_run(&ag, reopen_o_path, sec), EPERM);
	ASSERT_EQ(test_agent_run(&ag, reopen_o_path, pub), 0);
	ASSERT_EQ(read_in(&ag, PATHF(via, "/proc/self/root%s", sec)), EPERM);
	ASSERT_EQ(read_in(&ag, PATHF(via, "/proc/self/root%s", pub)), 0);
}

/* Pipes and sockets live on internal mounts no rule reaches: they work, reopened too. */
static int pipes_and_sockets(void *arg)
{
	char buf[4], proc_path[64];
	int p[2], s[2], fd;

	(void)arg;
	if (pipe(p) || socketpair(AF_UNIX, SOCK_STREAM, 0, s))
		return errno;
	if (write(p[1], "abc", 3) != 3 || read(p[0], buf, 3) != 3)
		return 100 + errno;
	if (write(s[0], "abc", 3) != 3 || read(s[1], buf, 3) != 3)
		return 110 + errno;
	snprintf(proc_path, sizeof(proc_path), "/proc/self/fd/%d", p[1]);
	fd = open(proc_path, O_WRONLY);
	if (fd < 0)
		return errno;
	return 0;
}

TEST(pipes_and_sockets_work_inside_agent)
{
	struct test_agent ag;
	const struct file_rule files[] = { { "/", RX } };
	const struct ruleset rs = {
		.files = files,
		.nfiles = 1,
		.sock_families = 1ULL << AF_UNIX,
		.sock_types = 1U << SOCK_STREAM,
	};

	test_agent_start(&ag, &rs, true);
	ASSERT_EQ(test_agent_run(&ag, pipes_and_sockets, NULL), 0);
}
