// SPDX-License-Identifier: GPL-2.0
/*
 * The audit writer's counters (agentd's metrics): batches, records and bytes committed match the
 * log on disk, records behind count what is appended and not yet durable, and each failed
 * attempt is a write error (fdatasync failures injected through opts.sync).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/stat.h>
#include "audit_test.h"
#include "harness.h"

static int syncs_to_fail;

static int sync_failing(int fd)
{
	if (syncs_to_fail-- > 0)
		return -EIO;
	return fdatasync(fd) ? -errno : 0;
}

static void append_n(struct audit_writer *w, unsigned n)
{
	struct audit_record r;
	unsigned i;

	for (i = 0; i < n; i++) {
		audit_test_file_record(&r, 1, true, i);
		ASSERT_EQ(audit_writer_append(w, &r), 0);
	}
}

static __u64 live_size(const char *dir)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "%s/" AUDIT_LIVE_NAME, dir);
	ASSERT_OK(stat(path, &st));
	return st.st_size;
}

TEST(audit_writer_stats_match_the_log_and_count_failures)
{
	struct audit_writer_opts o = { .host = "test",
				       .no_append_flag = true,
				       .sync = sync_failing };
	struct audit_writer_stats s;
	struct audit_writer *w;
	char dir[64];
	int i;

	audit_test_dir(dir, sizeof(dir));
	ASSERT_EQ(audit_writer_open(&w, dir, &o), 0);
	append_n(w, 10);
	audit_writer_stats(w, &s);
	ASSERT_EQ(s.behind, 10); /* log-start is committed when the log opens */
	ASSERT_EQ(audit_writer_flush(w), 0);
	audit_writer_stats(w, &s);
	ASSERT_EQ(s.behind, 0);
	ASSERT_EQ(s.records, 11);
	ASSERT_EQ(s.bytes, live_size(dir));
	ASSERT(s.batches >= 1);
	ASSERT_EQ(s.commit_seconds.count, s.batches);
	ASSERT_EQ(s.write_errors, 0);

	syncs_to_fail = 2;
	append_n(w, 5);
	ASSERT_EQ(audit_writer_flush(w), -EIO);
	audit_writer_stats(w, &s);
	ASSERT_EQ(s.write_errors, 1);
	ASSERT_EQ(s.behind, 5);
	ASSERT_EQ(s.records, 11);
	for (i = 0; audit_writer_failing(w, NULL); i++) {
		ASSERT(i < 1000);
		poll(NULL, 0, audit_writer_timeout_ms(w));
		audit_writer_tick(w);
	}
	ASSERT_EQ(audit_writer_flush(w), 0);
	audit_writer_stats(w, &s);
	ASSERT_EQ(s.write_errors, 2);
	ASSERT_EQ(s.behind, 0);
	/* the five, then log-resumed once writes work */
	ASSERT_EQ(s.records, 11 + 5 + 1);
	ASSERT_EQ(s.bytes, live_size(dir));
	ASSERT_EQ(s.commit_seconds.count, s.batches);
	ASSERT_EQ(audit_writer_close(w), 0);
}
