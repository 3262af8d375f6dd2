// SPDX-License-Identifier: GPL-2.0
/*
 * A log that cannot be written: the writer holds records, retries with a back-off until writes
 * work again, and then records the outage and what it could not keep. Writes fail for real:
 * RLIMIT_FSIZE makes write() past a size fail with EFBIG (after a short write), as a full file
 * system does with ENOSPC; fdatasync failures are injected (opts.sync).
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include "audit_test.h"
#include "harness.h"

static struct rlimit saved_fsize;

static void restore_fsize(void *arg)
{
	(void)arg;
	setrlimit(RLIMIT_FSIZE, &saved_fsize);
}

static off_t live_size(const char *dir)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "%s/" AUDIT_LIVE_NAME, dir);
	ASSERT_OK(stat(path, &st));
	return st.st_size;
}

/* Files of this process may not grow past limit bytes (-1: as before). */
static void limit_fsize(off_t limit)
{
	struct rlimit rl = saved_fsize;

	if (limit >= 0)
		rl.rlim_cur = limit;
	ASSERT_OK(setrlimit(RLIMIT_FSIZE, &rl));
}

static void failing_setup(char *dir, size_t dirsz)
{
	audit_test_dir(dir, dirsz);
	ASSERT_OK(getrlimit(RLIMIT_FSIZE, &saved_fsize));
	test_defer(restore_fsize, NULL); /* runs before the directory is copied and removed */
	signal(SIGXFSZ, SIG_IGN);
}

/* The daemon's loop in small: wait as the writer says, tick, until writes work again. */
static void run_until_recovered(struct audit_writer *w)
{
	int i, t;

	for (i = 0; audit_writer_failing(w, NULL); i++) {
		if (i == 1000)
			FAIL("the writer did not recover (%s)",
			     strerror(-audit_writer_failing(w, NULL)));
		t = audit_writer_timeout_ms(w);
		ASSERT(t >= 0 && t <= 1001);
		poll(NULL, 0, t);
		ASSERT_EQ(audit_writer_tick(w), 0);
	}
}

static void append_n(struct audit_writer *w, __u32 agent, unsigned n, unsigned from)
{
	struct audit_record r;
	unsigned i;

	for (i = 0; i < n; i++) {
		audit_test_file_record(&r, agent, true, from + i);
		ASSERT_EQ(audit_writer_append(w, &r), 0);
	}
}

static char *live(const char *dir, size_t *len)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/" AUDIT_LIVE_NAME, dir);
	return audit_test_slurp(path, len);
}

TEST(audit_writer_retries_after_a_failed_write)
{
	struct audit_writer_opts o = { .host = "test", .no_append_flag = true };
	struct audit_verify_result res;
	struct audit_writer *w;
	char dir[64], *data;
	__u64 since = 0;
	off_t limit;
	size_t len;

	failing_setup(dir, sizeof(dir));
	ASSERT_EQ(audit_writer_open(&w, dir, &o), 0);
	append_n(w, 1, 20, 0);
	ASSERT_EQ(audit_writer_flush(w), 0);
	/* room for part of the next batch: a short write, then EFBIG */
	limit = live_size(dir) + 100;
	limit_fsize(limit);
	append_n(w, 1, 30, 20);
	ASSERT_EQ(audit_writer_flush(w), -EFBIG);
	ASSERT_EQ(audit_writer_failing(w, &since), -EFBIG);
	ASSERT(since > 0);
	ASSERT_EQ(live_size(dir), limit);
	/* held while the log fails */
	append_n(w, 1, 5, 50);
	ASSERT_EQ(audit_writer_flush(w), -EFBIG);
	limit_fsize(-1);
	run_until_recovered(w);
	ASSERT_EQ(audit_writer_close(w), 0);

	ASSERT_EQ(audit_test_verify(dir, &res), 0);
	/* log-start, 55 records, log-resumed, log-stop: nothing lost */
	ASSERT_EQ(res.records, 58);
	data = live(dir, &len);
	ASSERT(strstr(data, "\"op\":\"log-resumed\""));
	ASSERT(strstr(data, "error=EFBIG"));
	ASSERT(strstr(data, "held=5 lost=0"));
	ASSERT(!strstr(data, "\"kind\":\"loss\""));
	free(data);
}

static bool hold_agent_1(void *ctx, __u32 agent)
{
	(void)ctx;
	return agent != 2;
}

TEST(audit_writer_counts_records_it_does_not_hold_in_loss_records)
{
	struct audit_writer_opts o = { .host = "test",
				       .no_append_flag = true,
				       .hold = hold_agent_1 };
	struct audit_verify_result res;
	struct audit_writer *w;
	char dir[64], *data;
	size_t len;

	failing_setup(dir, sizeof(dir));
	ASSERT_EQ(audit_writer_open(&w, dir, &o), 0);
	limit_fsize(live_size(dir));
	append_n(w, 1, 3, 0);
	ASSERT_EQ(audit_writer_flush(w), -EFBIG);
	/* agent 2 runs on (on_failure continue): its records are counted, not kept */
	append_n(w, 2, 7, 3);
	append_n(w, 1, 4, 10);
	limit_fsize(-1);
	run_until_recovered(w);
	ASSERT_EQ(audit_writer_close(w), 0);

	ASSERT_EQ(audit_test_verify(dir, &res), 0);
	data = live(dir, &len);
	ASSERT(!strstr(data, "\"agent\":2,\"cgroup\""));
	ASSERT(strstr(data, "\"kind\":\"loss\",\"op\":\"not-written\",\"agent\":2,\"count\":7,"
			    "\"source\":\"log\",\"detail\":\"from="));
	ASSERT(strstr(data, "kernel_events=7: the audit log could not be written"));
	ASSERT(strstr(data, "held=4 lost=7"));
	/* log-start, 3 + 4 of agent 1, log-resumed, the loss record, log-stop */
	ASSERT_EQ(res.records, 11);
	free(data);
}

TEST(audit_writer_holds_at_most_hold_bytes)
{
	struct audit_writer_opts o = { .host = "test", .no_append_flag = true, .hold_bytes = 4096 };
	struct audit_verify_result res;
	struct audit_writer *w;
	char dir[64], *data;
	size_t len;

	failing_setup(dir, sizeof(dir));
	ASSERT_EQ(audit_writer_open(&w, dir, &o), 0);
	limit_fsize(live_size(dir));
	append_n(w, 1, 1, 0);
	ASSERT_EQ(audit_writer_flush(w), -EFBIG);
	append_n(w, 1, 100, 1);
	limit_fsize(-1);
	run_until_recovered(w);
	ASSERT_EQ(audit_writer_close(w), 0);
	ASSERT_EQ(audit_test_verify(dir, &res), 0);
	data = live(dir, &len);
	ASSERT(strstr(data, "\"op\":\"not-written\",\"agent\":1,\"count\":"));
	/* about 4 KiB of ~420-byte records held, the rest counted */
	ASSERT(res.records > 5 && res.records < 20);
	free(data);
}

/* A failed fdatasync, and the page cache lost the batch (as Linux may, having marked the pages
 * clean): the file is cut back to where the batch began. */
static off_t batch_at;
static int syncs_to_fail;

static int sync_losing_the_batch(int fd)
{
	if (syncs_to_fail <= 0)
		return fdatasync(fd) ? -errno : 0;
	syncs_to_fail--;
	if (ftruncate(fd, batch_at))
		return -errno;
	return -EIO;
}

TEST(audit_writer_rewrites_a_batch_whose_fdatasync_failed)
{
	struct audit_writer_opts o = { .host = "test",
				       .no_append_flag = true,
				       .sync = sync_losing_the_batch };
	struct audit_verify_result res;
	struct audit_writer *w;
	char dir[64], *data;
	size_t len;

	audit_test_dir(dir, sizeof(dir));
	ASSERT_EQ(audit_writer_open(&w, dir, &o), 0);
	append_n(w, 1, 10, 0);
	ASSERT_EQ(audit_writer_flush(w), 0);
	batch_at = live_size(dir);
	syncs_to_fail = 2;
	append_n(w, 1, 10, 10);
	ASSERT_EQ(audit_writer_flush(w), -EIO);
	ASSERT_EQ(live_size(dir), batch_at);
	run_until_recovered(w);
	ASSERT_EQ(audit_writer_close(w), 0);
	ASSERT_EQ(audit_test_verify(dir, &res), 0);
	/* log-start, 20 records, log-resumed, log-stop */
	ASSERT_EQ(res.records, 23);
	data = live(dir, &len);
	ASSERT(strstr(data, "error=EIO attempts=2 "));
	free(data);
}

/* The batch that ends a segment fails: the switch to the next segment waits for it, held
 * records go to the next segment after segment-start, and the chain runs across both. */
TEST(audit_writer_rotation_waits_for_a_failed_segment_end)
{
	struct audit_writer_opts o = { .host = "test",
				       .no_append_flag = true,
				       .segment_bytes = 8192,
				       .batch_records = 100000,
				       .batch_ms = 100000 };
	struct audit_verify_result res;
	struct audit_segments segs;
	struct audit_writer *w;
	char dir[64], *data;
	size_t len;

	failing_setup(dir, sizeof(dir));
	ASSERT_EQ(audit_writer_open(&w, dir, &o), 0);
	limit_fsize(live_size(dir) + 2000);
	/* about 20 records of ~420 bytes pass 8 KiB: segment-end is queued, its batch fails */
	append_n(w, 1, 30, 0);
	ASSERT_EQ(audit_writer_failing(w, NULL), -EFBIG);
	append_n(w, 1, 10, 30);
	limit_fsize(-1);
	run_until_recovered(w);
	append_n(w, 1, 5, 40);
	ASSERT_EQ(audit_writer_close(w), 0);
	ASSERT_EQ(audit_test_verify(dir, &res), 0);
	/* the held records and log-resumed follow the second segment's segment-start */
	ASSERT_EQ(audit_segments_list(dir, &segs), 0);
	ASSERT(segs.n >= 2);
	data = audit_test_slurp(segs.paths[1], &len);
	audit_segments_free(&segs);
	ASSERT(strstr(data, "\"op\":\"segment-start\""));
	ASSERT(strstr(data, "\"op\":\"log-resumed\""));
	free(data);
	/* every record numbered, none lost: 45, and the writer's own */
	ASSERT_EQ(res.first_seq, 1);
	ASSERT_EQ(res.last_seq, res.records);
	ASSERT(res.records >= 45 + 6);
}
