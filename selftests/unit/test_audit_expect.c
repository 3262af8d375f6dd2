// SPDX-License-Identifier: GPL-2.0
/* verify --expect: a checkpoint (seq and hash noted earlier) catches a log rewritten wholesale,
 * which the chain alone cannot, and a log cut before the checkpoint. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "audit_test.h"
#include "harness.h"

static const struct audit_writer_opts opts = { .host = "test", .no_append_flag = true };

/* A log of n records (after log-start); agent varies the content. */
static void write_log(const char *dir, unsigned n, __u32 agent)
{
	struct audit_writer *w;
	struct audit_record r;
	unsigned i;

	ASSERT_EQ(audit_writer_open(&w, dir, &opts), 0);
	for (i = 0; i < n; i++) {
		audit_test_file_record(&r, agent, i % 2, i);
		ASSERT_EQ(audit_writer_append(w, &r), 0);
	}
	ASSERT_EQ(audit_writer_close(w), 0);
}

static int verify(const char *dir, const char *expect, struct audit_verify_result *res)
{
	struct audit_segments segs = { 0 };
	struct audit_expect x;
	int bad;

	ASSERT_EQ(audit_expect_parse(expect, &x), 0);
	ASSERT_EQ(audit_segments_list(dir, &segs), 0);
	bad = audit_verify_files_expect(segs.paths, segs.n, &x, 1, res);
	audit_segments_free(&segs);
	return bad;
}

TEST(audit_expect_parses_seq_and_hash)
{
	struct audit_expect x;
	char s[128];

	ASSERT_EQ(audit_expect_parse("42", &x), 0);
	ASSERT_EQ(x.seq, 42);
	ASSERT_STREQ(x.hash, "");
	snprintf(s, sizeof(s), "7:%s", AUDIT_GENESIS);
	ASSERT_EQ(audit_expect_parse(s, &x), 0);
	ASSERT_EQ(x.seq, 7);
	ASSERT_STREQ(x.hash, AUDIT_GENESIS);
	ASSERT_EQ(audit_expect_parse("0", &x), -EINVAL);
	ASSERT_EQ(audit_expect_parse("-1", &x), -EINVAL);
	ASSERT_EQ(audit_expect_parse("7:", &x), -EINVAL);
	ASSERT_EQ(audit_expect_parse("7:abc", &x), -EINVAL);
	ASSERT_EQ(audit_expect_parse("99999999999999999999999", &x), -EINVAL);
	snprintf(s, sizeof(s), "7:%sA", AUDIT_GENESIS);
	ASSERT_EQ(audit_expect_parse(s, &x), -EINVAL);
	s[2] = 'G';
	ASSERT_EQ(audit_expect_parse(s, &x), -EINVAL);
}

TEST(audit_expect_catches_a_log_rewritten_wholesale)
{
	char a[PATH_MAX], b[PATH_MAX], cp[128];
	struct audit_verify_result res, other;

	audit_test_dir(a, sizeof(a));
	audit_test_dir(b, sizeof(b));
	write_log(a, 50, 1);
	/* The same length, another content, a chain of its own: verify alone finds it intact. */
	write_log(b, 50, 2);
	ASSERT_EQ(audit_test_verify(a, &res), 0);
	ASSERT_EQ(audit_test_verify(b, &other), 0);
	ASSERT_EQ(res.last_seq, other.last_seq);
	/* The checkpoint noted on the real log holds there, and not on the rewritten one. */
	snprintf(cp, sizeof(cp), "%llu:%s", (unsigned long long)res.last_seq, res.last_hash);
	ASSERT_EQ(verify(a, cp, &res), 0);
	ASSERT_EQ(verify(b, cp, &res), 1);
	ASSERT_EQ(res.problem, AUDIT_CHECKPOINT);
	ASSERT_EQ(res.seq, other.last_seq);
	ASSERT(strstr(res.what, "rewritten"));
	/* A seq alone checks only that the record is there. */
	ASSERT_EQ(verify(b, "20", &res), 0);
}

TEST(audit_expect_catches_a_log_cut_before_the_checkpoint)
{
	char a[PATH_MAX], b[PATH_MAX], cp[128];
	struct audit_verify_result res;

	audit_test_dir(a, sizeof(a));
	audit_test_dir(b, sizeof(b));
	write_log(a, 50, 1);
	ASSERT_EQ(audit_test_verify(a, &res), 0);
	snprintf(cp, sizeof(cp), "%llu:%s", (unsigned long long)res.last_seq, res.last_hash);
	/* The newest records dropped: the chain of what is left is intact. */
	write_log(b, 20, 1);
	ASSERT_EQ(audit_test_verify(b, &res), 0);
	ASSERT_EQ(verify(b, cp, &res), 1);
	ASSERT_EQ(res.problem, AUDIT_CHECKPOINT);
	ASSERT(strstr(res.what, "removed from its end"));
}
