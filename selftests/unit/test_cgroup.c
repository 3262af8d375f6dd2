// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include "kernel/cgroup.h"
#include "harness.h"

static int find(const char *text, char *out, size_t outsz)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int err;

	ASSERT(f);
	err = mountinfo_find_cgroup2(f, out, outsz);
	fclose(f);
	return err;
}

/* The hybrid layout of ENVIRONMENT.md: v1 controllers, v2 at .../unified. */
TEST(mountinfo_hybrid_host)
{
	char out[64];

	ASSERT_EQ(
		find("25 30 0:23 / /sys rw - sysfs sysfs rw\n"
		     "31 25 0:26 / /sys/fs/cgroup ro,nosuid shared:9 - tmpfs tmpfs ro,mode=755\n"
		     "32 31 0:27 / /sys/fs/cgroup/unified rw shared:10 - cgroup2 cgroup2 rw\n"
		     "33 31 0:28 / /sys/fs/cgroup/memory rw shared:11 - cgroup cgroup rw,memory\n",
		     out, sizeof(out)),
		0);
	ASSERT_STREQ(out, "/sys/fs/cgroup/unified");
}

TEST(mountinfo_no_optional_fields_and_escapes)
{
	char out[64];

	ASSERT_EQ(find("40 1 0:40 / /mnt/my\\040cgroups rw - cgroup2 none rw\n", out, sizeof(out)),
		  0);
	ASSERT_STREQ(out, "/mnt/my cgroups");
}

TEST(mountinfo_none)
{
	char out[64];

	ASSERT_EQ(find("25 30 0:23 / /sys rw - sysfs sysfs rw\n", out, sizeof(out)), -ENOENT);
	ASSERT_EQ(find("", out, sizeof(out)), -ENOENT);
	/* A line cut short, as a truncated read would leave it, is skipped, not misread. */
	ASSERT_EQ(find("32 31 0:27 / /sys/fs/cgroup rw shared:10\n", out, sizeof(out)), -ENOENT);
}

TEST(mountinfo_mount_point_named_like_a_separator)
{
	char out[64];

	/* A mount point called "-" must not be taken for the separator. */
	ASSERT_EQ(find("50 1 0:50 / - rw - tmpfs tmpfs rw\n"
		       "51 1 0:51 / /cg rw - cgroup2 cgroup2 rw\n",
		       out, sizeof(out)),
		  0);
	ASSERT_STREQ(out, "/cg");
}

TEST(mountinfo_out_too_small)
{
	char out[4];

	ASSERT_EQ(find("32 31 0:27 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", out, sizeof(out)),
		  -ENAMETOOLONG);
}
