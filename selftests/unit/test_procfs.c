// SPDX-License-Identifier: GPL-2.0
/* Small /proc files: read whole, and a stat line's fields past a comm that holds ") ". */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "harness.h"
#include "kernel/procfs.h"

TEST(procfs_read_whole_or_errno)
{
	char buf[1024];
	ssize_t n;

	n = procfs_read("/proc/self/stat", buf, sizeof(buf));
	ASSERT(n > 0);
	ASSERT_EQ((size_t)n, strlen(buf));
	ASSERT_EQ(procfs_read("/proc/self/no-such-file", buf, sizeof(buf)), -ENOENT);
	/* Cut to the buffer, still terminated. */
	ASSERT_EQ(procfs_read("/proc/self/stat", buf, 8), 7);
	ASSERT_EQ(strlen(buf), 7);
}

TEST(procfs_stat_fields_skip_any_comm)
{
	char path[64], buf[1024], old[16];
	const char *f;

	ASSERT(!prctl(PR_GET_NAME, old));
	ASSERT(!prctl(PR_SET_NAME, "a) Z 1 (b"));
	snprintf(path, sizeof(path), "/proc/%d/stat", getpid());
	ASSERT(procfs_read(path, buf, sizeof(buf)) > 0);
	prctl(PR_SET_NAME, old);
	f = procfs_stat_fields(buf);
	ASSERT(f);
	/* Running: this very read is the task's. */
	ASSERT_EQ(f[0], 'R');
	ASSERT_EQ(procfs_stat_fields("12 (no close paren"), NULL);
}
