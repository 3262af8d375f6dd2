// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "kernel/enforcer.h"
#include "harness.h"
#include "kernel/mounts.h"

/* A rule on "/" alone: rule 7, rights 3. */
static int root_rule(void *ctx, __u64 dev, __u64 ino, __u32 *rule_id, __u32 *rights)
{
	const struct stat *root = ctx;

	if (dev != kernel_dev(root->st_dev) || ino != root->st_ino)
		return 0;
	*rule_id = 7;
	*rights = 3;
	return 1;
}

static const struct mount_root *find_root(const struct mount_root *r, size_t n, const char *path)
{
	struct stat st;
	size_t i;

	ASSERT_OK(stat(path, &st));
	for (i = 0; i < n; i++)
		if (r[i].dev == kernel_dev(st.st_dev) && r[i].ino == st.st_ino)
			return &r[i];
	return NULL;
}

/* This process's own table: /proc is mounted on "/", whose rule is what lies above it; the
 * root mount has nothing above it. */
TEST(mount_roots_of_this_namespace)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	const struct mount_root *proc, *root;
	struct mount_root *r = NULL;
	struct stat st;
	size_t n;

	ASSERT(f);
	ASSERT_OK(stat("/", &st));
	ASSERT_EQ(mount_roots_read(f, root_rule, &st, &r, &n), 0);
	fclose(f);
	proc = find_root(r, n, "/proc");
	ASSERT(proc);
	ASSERT_EQ(proc->rule_id, 7);
	ASSERT_EQ(proc->rights, 3);
	root = find_root(r, n, "/");
	if (root)
		ASSERT_EQ(root->rights, 0);
	free(r);
}

static int read_text(const char *text, size_t *n)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct mount_root *r = NULL;
	struct stat st = {};
	int err;

	ASSERT(f);
	err = mount_roots_read(f, root_rule, &st, &r, n);
	fclose(f);
	free(r);
	return err;
}

TEST(mount_roots_skip_what_no_path_shows)
{
	size_t n = 1;

	/* Absent, and present under another mount id than the line's. */
	ASSERT_EQ(read_text("99 1 0:99 / /nonexistent/agentd rw - tmpfs tmpfs rw\n"
			    "1000000 1 0:98 / /proc rw - proc proc rw\n",
			    &n),
		  0);
	ASSERT_EQ(n, 0);
}

TEST(mount_roots_refuse_a_malformed_table)
{
	size_t n;

	ASSERT_EQ(read_text("32 31 0:27 / /sys/fs/cgroup rw shared:10\n", &n), -EINVAL);
	ASSERT_EQ(read_text("x 1 0:27 / / rw - ext4 /dev/sda rw\n", &n), -EINVAL);
}
