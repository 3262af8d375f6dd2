// SPDX-License-Identifier: GPL-2.0
/* The writer and the verifier: chains, rotation, every kind of tampering, crashes. */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
#include <jansson.h>
#include "audit_test.h"
#include "harness.h"

static const struct audit_writer_opts test_opts = {
	.host = "test", .no_append_flag = true, /* these tests edit the log as an attacker would */
};

static void write_log(const char *dir, const struct audit_writer_opts *o, unsigned n)
{
	struct audit_writer *w;
	struct audit_record r;
	unsigned i;

	ASSERT_EQ(audit_writer_open(&w, dir, o), 0);
	for (i = 0; i < n; i++) {
		audit_test_file_record(&r, 1 + i % 3, i % 2, i);
		ASSERT_EQ(audit_writer_append(w, &r), 0);
	}
	ASSERT_EQ(audit_writer_close(w), 0);
}

static char *live_path(const char *dir)
{
	static char path[4200];

	snprintf(path, sizeof(path), "%s/" AUDIT_LIVE_NAME, dir);
	return path;
}

static void assert_problem(const char *dir, enum audit_problem p, const char *file_end, __u64 line)
{
	struct audit_verify_result res;

	ASSERT_EQ(audit_test_verify(dir, &res), 1);
	if (res.problem != p)
		FAIL("problem %s (%s), expected %s", audit_problem_name(res.problem), res.what,
		     audit_problem_name(p));
	ASSERT(strlen(res.file) >= strlen(file_end));
	ASSERT_STREQ(res.file + strlen(res.file) - strlen(file_end), file_end);
	if (line)
		ASSERT_EQ(res.line, line);
}

/* Rewrites one file through fn(lines, n), which returns the new count. */
static void tamper(const char *path, bool gz, size_t (*fn)(char **lines, size_t n))
{
	size_t len, n;
	char *data = audit_test_slurp(path, &len), **lines, *out;

	n = audit_test_lines(data, len, &lines);
	n = fn(lines, n);
	out = audit_test_join(lines, n, &len);
	audit_test_spew(path, out, len, gz);
	free(out);
	free(lines);
	free(data);
}

TEST(audit_fresh_log_chains_and_verifies)
{
	struct audit_verify_result res;
	char dir[64];
	size_t len, n;
	char *data, **lines;

	audit_test_dir(dir, sizeof(dir));
	write_log(dir, &test_opts, 100);
	ASSERT_EQ(audit_test_verify(dir, &res), 0);
	ASSERT_EQ(res.records, 102);
	ASSERT_EQ(res.first_seq, 1);
	ASSERT_EQ(res.last_seq, 102);
	ASSERT(!res.torn_tail && !res.head_missing);
	data = audit_test_slurp(live_path(dir), &len);
	n = audit_test_lines(data, len, &lines);
	ASSERT_EQ(n, 102);
	ASSERT(strstr(lines[0], "\"seq\":1,") && strstr(lines[0], "\"op\":\"log-start\""));
	ASSERT(strstr(lines[0], "\"prev\":\"" AUDIT_GENESIS "\""));
	ASSERT(strstr(lines[101], "\"op\":\"log-stop\""));
	free(lines);
	free(data);
}

TEST(audit_reopen_resumes_the_chain)
{
	struct audit_verify_result res;
	char dir[64];
	size_t len;
	char *data;

	audit_test_dir(dir, sizeof(dir));
	write_log(dir, &test_opts, 10);
	write_log(dir, &test_opts, 10);
	ASSERT_EQ(audit_test_verify(dir, &res), 0);
	ASSERT_EQ(res.last_seq, 12 + 12);
	data = audit_test_slurp(live_path(dir), &len);
	ASSERT(strstr(data, "\"seq\":13,") < strstr(data, "\"op\":\"restart\""));
	ASSERT(strstr(data, "last record seq 12 at "));
	free(data);
}

static void rotated_log(char *dir, size_t dirsz, struct audit_segments *segs)
{
	struct audit_writer_opts o = test_opts;
	struct audit_verify_result res;

	o.segment_bytes = 16384;
	audit_test_dir(dir, dirsz);
	write_log(dir, &o, 400);
	ASSERT_EQ(audit_test_verify(dir, &res), 0);
	ASSERT_EQ(audit_segments_list(dir, segs), 0);
	ASSERT(segs->n >= 4);
	ASSERT(strstr(segs->paths[0], "/audit-00000000000000000001.log.gz"));
	ASSERT(strstr(segs->paths[segs->n - 1], "/" AUDIT_LIVE_NAME));
}

TEST(audit_rotation_compresses_and_chains_across_segments)
{
	struct audit_verify_result res;
	struct audit_segments segs;
	char dir[64];
	size_t len, n, i;
	char *data, **lines;

	rotated_log(dir, sizeof(dir), &segs);
	ASSERT_EQ(audit_test_verify(dir, &res), 0);
	ASSERT_EQ(res.first_seq, 1);
	for (i = 1; i < segs.n; i++) {
		data = audit_test_slurp(segs.paths[i], &len);
		n = audit_test_lines(data, len, &lines);
		ASSERT(strstr(lines[0], "\"op\":\"segment-start\""));
		if (i + 1 < segs.n)
			ASSERT(strstr(lines[n - 1], "\"op\":\"segment-end\""));
		free(lines);
		free(data);
	}
	audit_segments_free(&segs);
}

TEST(audit_restarts_between_rotations_keep_segment_names)
{
	struct audit_writer_opts o = test_opts;
	struct audit_verify_result res;
	char dir[64];
	int i;

	o.segment_bytes = 8192;
	audit_test_dir(dir, sizeof(dir));
	for (i = 0; i < 6; i++)
		write_log(dir, &o, 23);
	ASSERT_EQ(audit_test_verify(dir, &res), 0);
	ASSERT_EQ(res.first_seq, 1);
	ASSERT_EQ(res.records, res.last_seq);
	ASSERT(res.records > 6 * 25); /* and segment-end, segment-start pairs */
}

static size_t edit_line_5(char **lines, size_t n)
{
	char *p = strstr(lines[4], "\"uid\":1000");

	ASSERT(p);
	p[6] = '2';
	return n;
}

static size_t delete_line_5(char **lines, size_t n)
{
	memmove(lines + 4, lines + 5, (n - 5) * sizeof(*lines));
	return n - 1;
}

static size_t swap_lines_5_6(char **lines, size_t n)
{
	char *t = lines[4];

	lines[4] = lines[5];
	lines[5] = t;
	return n;
}

static size_t drop_last_2(char **lines, size_t n)
{
	(void)lines;
	return n - 2;
}

static size_t drop_first(char **lines, size_t n)
{
	memmove(lines, lines + 1, (n - 1) * sizeof(*lines));
	return n - 1;
}

TEST(audit_verify_catches_an_edited_record)
{
	char dir[64];

	audit_test_dir(dir, sizeof(dir));
	write_log(dir, &test_opts, 20);
	tamper(live_path(dir), false, edit_line_5);
	assert_problem(dir, AUDIT_HASH_MISMATCH, "/audit.log", 6);
}

TEST(audit_verify_catches_a_deleted_record)
{
	char dir[64];

	audit_test_dir(dir, sizeof(dir));
	write_log(dir, &test_opts, 20);
	tamper(live_path(dir), false, delete_line_5);
	assert_problem(dir, AUDIT_SEQ_GAP, "/audit.log", 5);
}

TEST(audit_verify_catches_swapped_records)
{
	char dir[64];

	audit_test_dir(dir, sizeof(dir));
	write_log(dir, &test_opts, 20);
	tamper(live_path(dir), false, swap_lines_5_6);
	assert_problem(dir, AUDIT_SEQ_GAP, "/audit.log", 5);
}

TEST(audit_verify_catches_a_truncated_record)
{
	struct audit_verify_result res;
	char dir[64];
	size_t len;
	char *data;

	audit_test_dir(dir, sizeof(dir));
	write_log(dir, &test_opts, 20);
	data = audit_test_slurp(live_path(dir), &len);
	/* Cut in the middle of record 10: lines 1-9 intact, then half a record, then the rest. */
	memmove(strstr(data, "{\"v\":1,\"seq\":10,") + 40, strstr(data, "{\"v\":1,\"seq\":11,"),
		strlen(strstr(data, "{\"v\":1,\"seq\":11,")) + 1);
	audit_test_spew(live_path(dir), data, strlen(data), false);
	free(data);
	ASSERT_EQ(audit_test_verify(dir, &res), 1);
	ASSERT(res.problem == AUDIT_BAD_RECORD || res.problem == AUDIT_SEQ_GAP);
	ASSERT_EQ(res.line, 10);
}

TEST(audit_verify_catches_a_cut_head)
{
	char dir[64];

	audit_test_dir(dir, sizeof(dir));
	write_log(dir, &test_opts, 20);
	tamper(live_path(dir), false, drop_first);
	assert_problem(dir, AUDIT_BAD_START, "/audit.log", 1);
}

TEST(audit_verify_catches_records_cut_from_a_segment)
{
	struct audit_segments segs;
	char dir[64];

	rotated_log(dir, sizeof(dir), &segs);
	tamper(segs.paths[1], true, drop_last_2);
	assert_problem(dir, AUDIT_SEGMENT_TRUNCATED, strrchr(segs.paths[1], '/'), 0);
	audit_segments_free(&segs);
}

TEST(audit_verify_catches_an_edit_inside_a_segment)
{
	struct audit_segments segs;
	char dir[64];

	rotated_log(dir, sizeof(dir), &segs);
	tamper(segs.paths[1], true, edit_line_5);
	assert_problem(dir, AUDIT_HASH_MISMATCH, strrchr(segs.paths[1], '/'), 6);
	audit_segments_free(&segs);
}

TEST(audit_verify_catches_a_removed_segment)
{
	struct audit_segments segs;
	char dir[64];

	rotated_log(dir, sizeof(dir), &segs);
	ASSERT_OK(unlink(segs.paths[1]));
	assert_problem(dir, AUDIT_SEGMENT_MISSING, strrchr(segs.paths[2], '/'), 1);
	audit_segments_free(&segs);
}

TEST(audit_verify_catches_a_renamed_segment)
{
	struct audit_segments segs;
	char dir[64], to[128];

	rotated_log(dir, sizeof(dir), &segs);
	snprintf(to, sizeof(to), "%s/audit-00000000000000000002.log.gz", dir);
	ASSERT_OK(rename(segs.paths[0], to));
	assert_problem(dir, AUDIT_SEGMENT_NAME, "/audit-00000000000000000002.log.gz", 1);
	audit_segments_free(&segs);
}

TEST(audit_verify_catches_a_truncated_gzip_segment)
{
	struct audit_segments segs;
	char dir[64];

	rotated_log(dir, sizeof(dir), &segs);
	ASSERT_OK(truncate(segs.paths[1], 2000));
	assert_problem(dir, AUDIT_SEGMENT_TRUNCATED, strrchr(segs.paths[1], '/'), 0);
	audit_segments_free(&segs);
}

TEST(audit_verify_catches_a_corrupt_gzip_segment)
{
	struct audit_segments segs;
	struct audit_verify_result res;
	char dir[64], byte;
	int fd;

	rotated_log(dir, sizeof(dir), &segs);
	fd = open(segs.paths[1], O_RDWR);
	ASSERT_OK(fd);
	ASSERT_EQ(pread(fd, &byte, 1, 1000), 1);
	byte ^= 0x55;
	ASSERT_EQ(pwrite(fd, &byte, 1, 1000), 1);
	close(fd);
	ASSERT_EQ(audit_test_verify(dir, &res), 1);
	ASSERT(strstr(res.file, strrchr(segs.paths[1], '/')));
	audit_segments_free(&segs);
}

TEST(audit_verify_notes_removed_oldest_segments)
{
	struct audit_segments segs;
	struct audit_verify_result res;
	char dir[64];

	rotated_log(dir, sizeof(dir), &segs);
	ASSERT_OK(unlink(segs.paths[0]));
	ASSERT_EQ(audit_test_verify(dir, &res), 0);
	ASSERT(res.head_missing);
	audit_segments_free(&segs);
}

static void report_commit(void *ctx, const char *lines, size_t len, const struct audit_key *keys,
			  size_t n)
{
	/* the last line's seq, from its fixed prefix {"v":1,"seq": */
	const char *last = lines + len - 1;
	unsigned long long seq;

	while (last > lines && last[-1] != '\n')
		last--;
	(void)keys, (void)n;
	seq = strtoull(last + strlen("{\"v\":1,\"seq\":"), NULL, 10);
	if (write(*(int *)ctx, &seq, sizeof(seq)) != sizeof(seq))
		_exit(1);
}

static void child_writer(const char *dir, int fd)
{
	struct audit_writer_opts o = test_opts;
	struct audit_writer *w;
	struct audit_record r;
	unsigned i;

	o.batch_records = 100;
	o.committed = report_commit;
	o.ctx = &fd;
	if (audit_writer_open(&w, dir, &o))
		_exit(1);
	for (i = 0;; i++) {
		audit_test_file_record(&r, 1, true, i);
		if (audit_writer_append(w, &r))
			_exit(1);
	}
}

TEST(audit_crash_mid_batch_verifies_to_the_last_commit)
{
	struct audit_verify_result res;
	unsigned long long seq, committed = 0;
	char dir[64], torn[48], *nl;
	int p[2], fd, status;
	pid_t pid;
	size_t len, tail;
	char *data;

	audit_test_dir(dir, sizeof(dir));
	ASSERT_OK(pipe(p));
	pid = fork();
	ASSERT_OK(pid);
	if (!pid) {
		close(p[0]);
		child_writer(dir, p[1]);
	}
	close(p[1]);
	while (committed < 5000 && read(p[0], &seq, sizeof(seq)) == sizeof(seq))
		committed = seq;
	ASSERT_OK(kill(pid, SIGKILL));
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	while (read(p[0], &seq, sizeof(seq)) == sizeof(seq))
		committed = seq;
	close(p[0]);
	ASSERT(committed >= 5000);

	/* As if the kill had landed inside write(): half a record at the end (after any part of
	 * a line the kill really left, when it landed inside a long write()). */
	data = audit_test_slurp(live_path(dir), &len);
	ASSERT(data);
	nl = memrchr(data, '\n', len);
	tail = nl ? len - (size_t)(nl - data + 1) : len;
	free(data);
	snprintf(torn, sizeof(torn), "%zu torn bytes", tail + 25);
	fd = open(live_path(dir), O_WRONLY | O_APPEND);
	ASSERT_OK(fd);
	ASSERT_EQ(write(fd, "{\"v\":1,\"seq\":99999999,\"ti", 25), 25);
	close(fd);
	ASSERT_EQ(audit_test_verify(dir, &res), 0);
	ASSERT(res.torn_tail);
	ASSERT(res.last_seq >= committed);

	/* The restart ends the torn line and chains past it. */
	write_log(dir, &test_opts, 10);
	ASSERT_EQ(audit_test_verify(dir, &res), 0);
	ASSERT(!res.torn_tail);
	data = audit_test_slurp(live_path(dir), &len);
	ASSERT(strstr(data, "\"ti\n{\"v\":1,"));
	ASSERT(strstr(data, torn));
	free(data);
}

TEST(audit_torn_bytes_without_a_restart_are_tampering)
{
	char dir[64];
	int fd;

	audit_test_dir(dir, sizeof(dir));
	write_log(dir, &test_opts, 10);
	fd = open(live_path(dir), O_WRONLY | O_APPEND);
	ASSERT_OK(fd);
	ASSERT_EQ(write(fd, "garbage\n", 8), 8);
	close(fd);
	assert_problem(dir, AUDIT_BAD_RECORD, "/audit.log", 13);
}

TEST(audit_live_file_is_append_only_where_supported)
{
	struct audit_writer_opts o = { .host = "test", .segment_bytes = 16384 };
	struct audit_verify_result res;
	struct audit_writer *w;
	struct audit_record r;
	char dir[64];
	int i;

	audit_test_dir(dir, sizeof(dir));
	ASSERT_EQ(audit_writer_open(&w, dir, &o), 0);
	if (!audit_writer_append_only(w)) {
		audit_writer_close(w);
		SKIP("FS_APPEND_FL does not hold here (not root, or the file system lacks it)");
	}
	ASSERT_ERRNO(open(live_path(dir), O_WRONLY), EPERM);
	ASSERT_ERRNO(unlink(live_path(dir)), EPERM);
	for (i = 0; i < 300; i++) {
		audit_test_file_record(&r, 1, true, i);
		ASSERT_EQ(audit_writer_append(w, &r), 0);
	}
	ASSERT(audit_writer_append_only(w));
	ASSERT_EQ(audit_writer_close(w), 0);
	ASSERT_EQ(audit_test_verify(dir, &res), 0);
}

/* One record of every kind and every optional part, through a rotation and a restart. */
static void write_every_kind(const char *dir)
{
	struct audit_writer_opts o = test_opts;
	struct audit_record r;
	struct audit_writer *w;
	int k;

	o.segment_bytes = 2048;
	ASSERT_EQ(audit_writer_open(&w, dir, &o), 0);
	audit_test_file_record(&r, 1, true, 1);
	strcpy(r.agent_name, "coder \"x\"\\");
	strcpy(r.path, "a\nb\xff");
	r.path_truncated = true;
	ASSERT_EQ(audit_writer_append(w, &r), 0);
	for (k = AUDIT_KIND_EXEC; k < AUDIT_KIND_MAX; k++) {
		memset(&r, 0, sizeof(r));
		r.kind = k;
		strcpy(r.op, "op");
		r.agent = k;
		r.decision = k % 2 ? AUDIT_DECISION_ALLOW : AUDIT_DECISION_DENY;
		r.has = AUDIT_HAS_RULE | AUDIT_HAS_CGROUP | AUDIT_HAS_PROC;
		if (k == AUDIT_KIND_NET || k == AUDIT_KIND_SOCK) {
			r.has |= AUDIT_HAS_NET;
			strcpy(r.family, "inet");
			strcpy(r.addr, "192.0.2.1");
			r.port = 65535;
		}
		if (k == AUDIT_KIND_TOOL) {
			r.has |= AUDIT_HAS_TOOL;
			strcpy(r.tool, "shell");
			r.args_len = 10;
		}
		if (k == AUDIT_KIND_LOSS) {
			r.has |= AUDIT_HAS_COUNT;
			r.count = 1;
			strcpy(r.source, "ringbuf");
		}
		strcpy(r.detail, "detail");
		ASSERT_EQ(audit_writer_append(w, &r), 0);
	}
	ASSERT_EQ(audit_writer_loss(w, 7, "a7", 3, "ringbuf", "per-agent drop counter"), 0);
	ASSERT_EQ(audit_writer_close(w), 0);
	write_log(dir, &o, 5);
}

TEST(audit_records_of_every_kind_match_the_schema)
{
	char dir[64], cmd[PATH_MAX + 128];
	int status;

	if (system("python3 -c 'import jsonschema' 2>/dev/null"))
		SKIP("python3-jsonschema is not installed");
	audit_test_dir(dir, sizeof(dir));
	write_every_kind(dir);
	snprintf(cmd, sizeof(cmd), "python3 %s/../selftests/audit/validate_schema.py %s >&2",
		 test_bin_dir(), dir);
	status = system(cmd);
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
}

/* jansson's integers are signed 64-bit; an inode number is not (overlayfs with xino sets the top
 * bits). A record holding one is still a record: to verify, to resume the chain from after a
 * restart, and to filter. */
TEST(audit_inode_numbers_past_int64_verify_resume_and_filter)
{
	struct audit_verify_result res;
	struct audit_writer *w;
	struct audit_filter f;
	struct audit_record r;
	char dir[64], *data, **lines;
	size_t len, n;
	int status;
	pid_t pid;

	audit_test_dir(dir, sizeof(dir));
	ASSERT_EQ(audit_writer_open(&w, dir, &test_opts), 0);
	audit_test_file_record(&r, 2, true, 1);
	r.ino = 0xfffffffffffffffeULL;
	ASSERT_EQ(audit_writer_append(w, &r), 0);
	ASSERT_EQ(audit_writer_close(w), 0);
	write_log(dir, &test_opts, 1); /* reopens after a log-stop that follows the record */
	ASSERT_EQ(audit_test_verify(dir, &res), 0);
	ASSERT_EQ(res.last_seq, 6);

	data = audit_test_slurp(live_path(dir), &len);
	n = audit_test_lines(data, len, &lines);
	ASSERT_EQ(n, 6);
	ASSERT(strstr(lines[1], "\"ino\":18446744073709551614}"));
	audit_filter_init(&f);
	ASSERT_EQ(audit_filter_set(&f, "agent", "2"), 0);
	ASSERT(audit_filter_match(&f, lines[1], strlen(lines[1])));
	ASSERT_EQ(audit_filter_set(&f, "agent", "3"), 0);
	ASSERT(!audit_filter_match(&f, lines[1], strlen(lines[1])));
	free(lines);
	free(data);

	/* The last record of a writer that died: the restart chains from it (seq 8), not from
	 * the record before it. */
	pid = fork();
	ASSERT_OK(pid);
	if (!pid) {
		if (audit_writer_open(&w, dir, &test_opts))
			_exit(1);
		audit_test_file_record(&r, 2, true, 2);
		r.ino = 1ULL << 63;
		_exit(audit_writer_append(w, &r) || audit_writer_flush(w) ? 1 : 0);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(audit_writer_open(&w, dir, &test_opts), 0);
	ASSERT_EQ(audit_writer_close(w), 0);
	ASSERT_EQ(audit_test_verify(dir, &res), 0);
	data = audit_test_slurp(live_path(dir), &len);
	ASSERT(strstr(data, "last record seq 8 at "));
	free(data);
}

/*
 * A log whose writer crashed mid-record and restarted: its live file's bytes in *len, with the
 * torn remnant (TORN) on the line before the restart record, at line *at.
 */
#define TORN "{\"v\":1,\"seq\":99999999,\"ti"

static char *crashed_log(const char *dir, size_t *len, size_t *at)
{
	char *data, **lines;
	size_t n, i;
	int fd;

	write_log(dir, &test_opts, 10);
	fd = open(live_path(dir), O_WRONLY | O_APPEND);
	ASSERT_OK(fd);
	ASSERT_EQ(write(fd, TORN, strlen(TORN)), (ssize_t)strlen(TORN));
	close(fd);
	write_log(dir, &test_opts, 3);
	data = audit_test_slurp(live_path(dir), len);
	ASSERT(strstr(data, TORN "\n{"));
	ASSERT(strstr(data, "\"op\":\"restart\",\"torn\":25,"));
	n = audit_test_lines(data, *len, &lines);
	for (i = 0; i < n && strcmp(lines[i], TORN); i++)
		;
	ASSERT(i < n);
	*at = i;
	free(lines);
	free(data);
	return audit_test_slurp(live_path(dir), len);
}

/* The crashed log with line `at` replaced by repl (NULL: removed) and, when extra, extra
 * inserted before it; verified from memory. */
static int verify_edited(const char *data, size_t len, size_t at, const char *repl,
			 const char *extra, struct audit_verify_result *res)
{
	char *copy = malloc(len + 1), **lines, **out, *joined;
	size_t n, i, m = 0;
	int bad;

	ASSERT(copy);
	memcpy(copy, data, len);
	n = audit_test_lines(copy, len, &lines);
	if (n && !*lines[n - 1])
		n--; /* the empty piece after the last newline */
	out = calloc(n + 2, sizeof(*out));
	ASSERT(out);
	for (i = 0; i < n; i++) {
		if (i == at && extra)
			out[m++] = (char *)extra;
		if (i != at)
			out[m++] = lines[i];
		else if (repl)
			out[m++] = (char *)repl;
	}
	joined = audit_test_join(out, m, &len);
	bad = audit_verify_buffer("audit.log", joined, len, res);
	free(joined);
	free(out);
	free(lines);
	free(copy);
	return bad;
}

static void assert_tampered_at(int bad, const struct audit_verify_result *res, __u64 line)
{
	ASSERT_EQ(bad, 1);
	if (res->problem != AUDIT_BAD_RECORD)
		FAIL("problem %s (%s), expected bad-record", audit_problem_name(res->problem),
		     res->what);
	ASSERT_EQ(res->line, line);
}

TEST(audit_torn_remnant_of_the_stated_length_before_a_restart_is_accepted)
{
	struct audit_verify_result res;
	char dir[64], *data;
	size_t len, at;

	audit_test_dir(dir, sizeof(dir));
	data = crashed_log(dir, &len, &at);
	ASSERT_EQ(audit_verify_buffer("audit.log", data, len, &res), 0);
	/* the same length, other bytes that are no JSON: still only a torn tail */
	ASSERT_EQ(verify_edited(data, len, at, "{\"v\":1,\"seq\":99999999,\"xx", NULL, &res), 0);
	free(data);
}

/* A crash in the restart's own commit: the first remnant and the restart record cut short are
 * the torn bytes the next restart names, as lines joined by their newlines. */
TEST(audit_crash_during_a_restart_leaves_one_torn_tail)
{
	struct audit_verify_result res;
	char dir[64], *data;
	size_t len;
	int fd;

	audit_test_dir(dir, sizeof(dir));
	write_log(dir, &test_opts, 10);
	fd = open(live_path(dir), O_WRONLY | O_APPEND);
	ASSERT_OK(fd);
	ASSERT_EQ(write(fd, TORN "\n{\"v\":1,\"seq\":13,\"ti", 45), 45);
	close(fd);
	write_log(dir, &test_opts, 3);
	ASSERT_EQ(audit_test_verify(dir, &res), 0);
	data = audit_test_slurp(live_path(dir), &len);
	ASSERT(strstr(data, "\"op\":\"restart\",\"torn\":45,"));
	free(data);
}

TEST(audit_forged_record_before_a_restart_is_tampering)
{
	static const char forged[] =
		"{\"v\":1,\"seq\":12,\"time\":\"2026-01-01T00:00:00.000000000Z\",\"host\":\"test\","
		"\"kind\":\"tool\",\"op\":\"tool-call\",\"agent\":1,\"decision\":\"allow\"}";
	struct audit_verify_result res;
	char dir[64], *data;
	size_t len, at;

	audit_test_dir(dir, sizeof(dir));
	data = crashed_log(dir, &len, &at);
	/* a complete record (no prev: not chained) beside the remnant, or in its place */
	assert_tampered_at(verify_edited(data, len, at, TORN, forged, &res), &res, at + 1);
	assert_tampered_at(verify_edited(data, len, at, forged, NULL, &res), &res, at + 1);
	ASSERT(strstr(res.what, "JSON line that is not a record"));
	/* any complete JSON, even of the stated length, is no torn record */
	assert_tampered_at(verify_edited(data, len, at, "[\"......................\"]", NULL, &res),
			   &res, at + 1);
	free(data);
}

TEST(audit_torn_remnant_of_another_length_is_tampering)
{
	struct audit_verify_result res;
	char dir[64], *data;
	size_t len, at;

	audit_test_dir(dir, sizeof(dir));
	data = crashed_log(dir, &len, &at);
	assert_tampered_at(verify_edited(data, len, at, TORN "x", NULL, &res), &res, at + 1);
	ASSERT(strstr(res.what, "26 bytes"));
	assert_tampered_at(verify_edited(data, len, at, "{\"v\":1", NULL, &res), &res, at + 1);
	/* removed: the restart record names bytes that are not there */
	assert_tampered_at(verify_edited(data, len, at, NULL, NULL, &res), &res, at + 1);
	free(data);
}

TEST(audit_two_torn_remnants_before_a_restart_are_tampering)
{
	struct audit_verify_result res;
	char dir[64], *data;
	size_t len, at;

	audit_test_dir(dir, sizeof(dir));
	data = crashed_log(dir, &len, &at);
	assert_tampered_at(
		verify_edited(data, len, at, TORN, "{\"v\":1,\"seq\":5,\"kind\":\"to", &res), &res,
		at + 1);
	free(data);
}

static void collect_line(void *ctx, const char *line, size_t len, json_t *rec)
{
	(void)rec;
	char *seen = ctx;

	if (memmem(line, len, "forged", 6))
		strcpy(seen, "forged");
}

/* audit query's reader: the lines it is handed are the chain's, never what was put beside it. */
TEST(audit_query_gets_only_records_the_chain_covers)
{
	struct audit_verify_result res;
	char dir[64], path[128], seen[8] = "", *data, *edited, *p, *paths[1] = { path };
	size_t len, at;

	audit_test_dir(dir, sizeof(dir));
	data = crashed_log(dir, &len, &at);
	edited = malloc(len + 64);
	ASSERT(edited);
	/* the old hole: a record with no prev in the remnant's place was taken for a torn tail */
	snprintf(path, sizeof(path), "%s/forged.txt", dir); /* not collected for the schema check */
	data[len] = '\0';
	p = strstr(data, TORN "\n");
	ASSERT(p);
	len = snprintf(edited, len + 64, "%.*s{\"kind\":\"tool\",\"op\":\"forged\"}%s",
		       (int)(p - data), data, p + strlen(TORN));
	audit_test_spew(path, edited, len, false);
	ASSERT_EQ(audit_verify_files_each(paths, 1, NULL, 0, &res, collect_line, seen), 1);
	ASSERT_EQ(res.problem, AUDIT_BAD_RECORD);
	ASSERT_EQ(res.line, at + 1);
	ASSERT_STREQ(seen, "");
	unlink(path);
	free(edited);
	free(data);
}

/* A crash between a record's last byte and its newline leaves a whole record: the chain
 * resumes from it, not from the one before (which verify would call tampering). */
TEST(audit_record_without_its_newline_is_resumed_from)
{
	struct audit_verify_result res;
	char dir[64], *data;
	size_t len;

	audit_test_dir(dir, sizeof(dir));
	write_log(dir, &test_opts, 10);
	data = audit_test_slurp(live_path(dir), &len);
	audit_test_spew(live_path(dir), data, len - 1, false);
	free(data);
	write_log(dir, &test_opts, 3);
	ASSERT_EQ(audit_test_verify(dir, &res), 0);
	ASSERT_EQ(res.last_seq, 12 + 1 + 3 + 1);
	data = audit_test_slurp(live_path(dir), &len);
	ASSERT(strstr(data, "\"op\":\"restart\",\"torn\":0,"));
	free(data);
}
