// SPDX-License-Identifier: GPL-2.0
/*
 * Hooks that see an object and no mount (utimes, extended attributes, ACLs) against mounts: a
 * bind mount never lets them grant more than the path the agent used grants, and a file system
 * mounted after the policy loaded denies until the policy is loaded again (rights.bpf.h).
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/capability.h>
#include "ops.h"

#define ALL AGENTD_RIGHTS_ALL
#define NO_SETATTR (AGENTD_RIGHTS_ALL & ~AGENTD_RIGHT_SETATTR)

struct trees {
	char top[PATH_MAX], yes[PATH_MAX], no[PATH_MAX];
};

/* top/yes granted every right, top/no every right but setattr, each with a directory d
 * holding a file f, and an empty directory m to mount on. */
static void trees(struct trees *t)
{
	const char *const *n, *const names[] = { "yes", "no", NULL };
	char p[PATH_MAX];

	test_dir(t->top, sizeof(t->top));
	PATHF(t->yes, "%s/yes", t->top);
	PATHF(t->no, "%s/no", t->top);
	for (n = names; *n; n++) {
		if (mkdir(PATHF(p, "%s/%s", t->top, *n), 0755) ||
		    mkdir(PATHF(p, "%s/%s/d", t->top, *n), 0755) ||
		    mkdir(PATHF(p, "%s/%s/m", t->top, *n), 0755))
			FAIL("mkdir %s: %s", p, strerror(errno));
		test_write(PATHF(p, "%s/%s/d/f", t->top, *n), "data\n", 0644);
	}
}

static void start(struct test_agent *ag, const struct trees *t)
{
	const struct file_rule files[] = { { "/", RX }, { t->yes, ALL }, { t->no, NO_SETATTR } };

	/* CAP_SYS_ADMIN: the tests' attribute is trusted.* (the rights decide, not the capability). */
	test_agent_start(ag,
			 &(struct ruleset){ .files = files,
					    .nfiles = 3,
					    .capabilities = 1ULL << CAP_SYS_ADMIN },
			 true);
}

static int try(const struct test_agent *ag, int (*fn)(void *), const char *fmt, const char *dir)
{
	char p[PATH_MAX];

	return run_in_cgroup(ag->cgroup, fn, OP(.a = PATHF(p, fmt, dir)), NULL);
}

/* An allowed tree mounted inside a denied one: through the mount, the path's rights hold (the
 * object's own tree would grant it). Without the mount roots this is the escape. */
TEST(setattr_through_bind_mount_under_denied_tree_denied)
{
	char from[PATH_MAX], to[PATH_MAX];
	struct test_agent ag;
	struct trees t;

	trees(&t);
	test_write(PATHF(from, "%s/g", t.yes), "data\n", 0644);
	test_bind_mount(PATHF(from, "%s/d", t.yes), PATHF(to, "%s/m", t.no));
	start(&ag, &t);
	ASSERT_EQ(try(&ag, op_utimes, "%s/m/f", t.no), EPERM);
	ASSERT_EQ(try(&ag, op_setxattr, "%s/m/f", t.no), EPERM);
	ASSERT_EQ(try(&ag, op_chmod, "%s/m/f", t.no), EPERM);
	/* The walk cannot tell which mount the object was reached through: it grants what both
	 * grant, here less than the object's own path (chmod, a path hook, knows the mount). */
	ASSERT_EQ(try(&ag, op_utimes, "%s/d/f", t.yes), EPERM);
	ASSERT_EQ(try(&ag, op_chmod, "%s/d/f", t.yes), 0);
	ASSERT_EQ(try(&ag, op_utimes, "%s/g", t.yes), 0);
	ASSERT_EQ(run_in_cgroup(NULL, op_utimes, OP(.a = PATHF(to, "%s/m/f", t.no)), NULL), 0);
}

/* A denied tree mounted inside an allowed one: the path would allow, the walk cannot tell which
 * mount it came through and grants what both grant (fails closed). */
TEST(setattr_through_bind_mount_under_allowed_tree_takes_narrower)
{
	char from[PATH_MAX], to[PATH_MAX];
	struct test_agent ag;
	struct trees t;

	trees(&t);
	test_write(PATHF(from, "%s/g", t.yes), "data\n", 0644);
	test_bind_mount(PATHF(from, "%s/d", t.no), PATHF(to, "%s/m", t.yes));
	start(&ag, &t);
	ASSERT_EQ(try(&ag, op_utimes, "%s/m/f", t.yes), EPERM);
	ASSERT_EQ(try(&ag, op_chmod, "%s/m/f", t.yes), 0);
	ASSERT_EQ(try(&ag, op_utimes, "%s/g", t.yes), 0);
	ASSERT_EQ(try(&ag, op_setxattr, "%s/g", t.yes), 0);
}

/* A file system mounted after the policy loaded is in no mount table agentd read: denied, and
 * allowed once the policy is loaded again. */
TEST(setattr_on_file_system_mounted_after_load_denied_until_reload)
{
	char dir[PATH_MAX], f[PATH_MAX];
	struct test_agent ag;

	test_dir(dir, sizeof(dir));
	const struct file_rule files[] = { { "/", RX }, { dir, ALL } };
	const struct ruleset rs = { .files = files,
				    .nfiles = 2,
				    .capabilities = 1ULL << CAP_SYS_ADMIN /* trusted.* */ };

	test_agent_start(&ag, &rs, true);
	if (mkdir(PATHF(f, "%s/late", dir), 0755))
		FAIL("mkdir %s: %s", f, strerror(errno));
	test_mount_tmpfs(f);
	test_write(PATHF(f, "%s/late/f", dir), "data\n", 0644);
	ASSERT_EQ(run_in_cgroup(ag.cgroup, op_utimes, OP(.a = f), NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(ag.cgroup, op_chmod, OP(.a = f), NULL), 0);
	test_agent_apply(&ag, &rs);
	ASSERT_EQ(run_in_cgroup(ag.cgroup, op_utimes, OP(.a = f), NULL), 0);
	ASSERT_EQ(run_in_cgroup(ag.cgroup, op_setxattr, OP(.a = f), NULL), 0);
}
