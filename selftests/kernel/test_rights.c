// SPDX-License-Identifier: GPL-2.0
/*
 * Each file right, one operation at a time: denied (EPERM) in a tree granted every right but
 * that one, allowed in a tree granted every right, and allowed outside the agent on the very
 * object it was denied (so the deny came from agentd and the object was left intact).
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/capability.h>
#include "ops.h"

struct right_case {
	__u32 right;
	int (*fn)(void *);
	const char *a, *b; /* names under the tree */
	int flags;
};

/* Each tree: a file f, an empty directory d. */
static void populate(const char *tree)
{
	char p[PATH_MAX];

	if (mkdir(tree, 0755))
		FAIL("mkdir %s: %s", tree, strerror(errno));
	test_write(PATHF(p, "%s/f", tree), "data\n", 0644);
	op_attributes(p);
	if (mkdir(PATHF(p, "%s/d", tree), 0755))
		FAIL("mkdir %s: %s", p, strerror(errno));
}

static int run_case(const char *cgroup, const struct right_case *c, const char *tree)
{
	char a[PATH_MAX], b[PATH_MAX];
	struct op o = { .a = PATHF(a, "%s/%s", tree, c->a), .flags = c->flags };

	if (c->b)
		o.b = c->fn == op_symlink ? c->b : PATHF(b, "%s/%s", tree, c->b);
	return run_in_cgroup(cgroup, c->fn, &o, NULL);
}

static void check_right(const struct right_case *c)
{
	char top[PATH_MAX], no[PATH_MAX], yes[PATH_MAX];
	struct test_agent ag;

	test_dir(top, sizeof(top));
	populate(PATHF(no, "%s/no", top));
	populate(PATHF(yes, "%s/yes", top));
	const struct file_rule files[] = {
		{ "/", RX },
		{ no, AGENTD_RIGHTS_ALL & ~c->right },
		{ yes, AGENTD_RIGHTS_ALL },
	};
	/* CAP_SYS_ADMIN: the tests' attribute is trusted.* (the rights decide, not the capability). */
	test_agent_start(&ag,
			 &(struct ruleset){ .files = files,
					    .nfiles = 3,
					    .capabilities = 1ULL << CAP_SYS_ADMIN },
			 true);
	ASSERT_EQ(run_case(ag.cgroup, c, no), EPERM);
	ASSERT_EQ(run_case(ag.cgroup, c, yes), 0);
	ASSERT_EQ(run_case(NULL, c, no), 0);
}

#define RIGHT_TEST(name, ...)                                                                      \
	TEST(name)                                                                                 \
	{                                                                                          \
		check_right(&(struct right_case){ __VA_ARGS__ });                                  \
	}

RIGHT_TEST(read_needs_read, .right = AGENTD_RIGHT_READ, .fn = op_open, .a = "f", .flags = O_RDONLY)
RIGHT_TEST(list_dir_needs_read, .right = AGENTD_RIGHT_READ, .fn = op_open, .a = "d",
	   .flags = O_RDONLY | O_DIRECTORY)
RIGHT_TEST(write_needs_write, .right = AGENTD_RIGHT_WRITE, .fn = op_open, .a = "f",
	   .flags = O_WRONLY)
RIGHT_TEST(append_needs_write, .right = AGENTD_RIGHT_WRITE, .fn = op_open, .a = "f",
	   .flags = O_WRONLY | O_APPEND)
RIGHT_TEST(o_trunc_needs_truncate, .right = AGENTD_RIGHT_TRUNCATE, .fn = op_open, .a = "f",
	   .flags = O_WRONLY | O_TRUNC)
RIGHT_TEST(truncate_needs_truncate, .right = AGENTD_RIGHT_TRUNCATE, .fn = op_truncate, .a = "f")
RIGHT_TEST(ftruncate_needs_truncate, .right = AGENTD_RIGHT_TRUNCATE, .fn = op_ftruncate, .a = "f")
RIGHT_TEST(create_file_needs_create, .right = AGENTD_RIGHT_CREATE, .fn = op_open, .a = "new",
	   .flags = O_WRONLY | O_CREAT | O_EXCL)
RIGHT_TEST(mkdir_needs_create, .right = AGENTD_RIGHT_CREATE, .fn = op_mkdir, .a = "newdir")
RIGHT_TEST(mkfifo_needs_create, .right = AGENTD_RIGHT_CREATE, .fn = op_mkfifo, .a = "fifo")
RIGHT_TEST(symlink_needs_create, .right = AGENTD_RIGHT_CREATE, .fn = op_symlink, .a = "sym",
	   .b = "f")
RIGHT_TEST(unlink_needs_remove, .right = AGENTD_RIGHT_REMOVE, .fn = op_unlink, .a = "f")
RIGHT_TEST(rmdir_needs_remove, .right = AGENTD_RIGHT_REMOVE, .fn = op_rmdir, .a = "d")
RIGHT_TEST(link_needs_link, .right = AGENTD_RIGHT_LINK, .fn = op_link, .a = "f", .b = "f2")
RIGHT_TEST(rename_needs_link, .right = AGENTD_RIGHT_LINK, .fn = op_rename, .a = "f", .b = "g")
RIGHT_TEST(rename_needs_remove, .right = AGENTD_RIGHT_REMOVE, .fn = op_rename, .a = "f", .b = "g")
RIGHT_TEST(chmod_needs_setattr, .right = AGENTD_RIGHT_SETATTR, .fn = op_chmod, .a = "f")
RIGHT_TEST(chown_needs_setattr, .right = AGENTD_RIGHT_SETATTR, .fn = op_chown, .a = "f")
RIGHT_TEST(utimes_needs_setattr, .right = AGENTD_RIGHT_SETATTR, .fn = op_utimes, .a = "f")
RIGHT_TEST(touch_now_needs_write, .right = AGENTD_RIGHT_WRITE, .fn = op_touch, .a = "f")
RIGHT_TEST(futimens_needs_setattr, .right = AGENTD_RIGHT_SETATTR, .fn = op_futimens, .a = "f")
RIGHT_TEST(setxattr_needs_setattr, .right = AGENTD_RIGHT_SETATTR, .fn = op_setxattr, .a = "f")
RIGHT_TEST(removexattr_needs_setattr, .right = AGENTD_RIGHT_SETATTR, .fn = op_removexattr, .a = "f")
RIGHT_TEST(set_acl_needs_setattr, .right = AGENTD_RIGHT_SETATTR, .fn = op_set_acl, .a = "f")
RIGHT_TEST(remove_acl_needs_setattr, .right = AGENTD_RIGHT_SETATTR, .fn = op_remove_acl, .a = "f")
