/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The audit log (docs/AUDIT.md): one JSON line per record, each chained to the one before by
 * SHA-256, written in batches with one fdatasync each, rotated into gzip segments, verified,
 * queried and streamed to subscribers.
 */
#ifndef AGENTD_AUDIT_H
#define AGENTD_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "wire/prom.h"

#define AUDIT_SCHEMA_VERSION 1
#define AUDIT_HASH_HEX 65 /* 64 hex digits and a NUL */
/* prev of the first record of a fresh log */
#define AUDIT_GENESIS "0000000000000000000000000000000000000000000000000000000000000000"
#define AUDIT_LINE_MAX 16384 /* longest line the readers accept, newline excluded */
#define AUDIT_LIVE_NAME "audit.log"

#define AUDIT_HOST_MAX 64
#define AUDIT_NAME_MAX 64 /* agent names, operations, sources, tool names */
#define AUDIT_COMM_MAX 17
#define AUDIT_PATH_MAX 1024
#define AUDIT_ADDR_MAX 64
#define AUDIT_DETAIL_MAX 256

enum audit_kind {
	AUDIT_KIND_NONE,
	AUDIT_KIND_FILE,
	AUDIT_KIND_EXEC,
	AUDIT_KIND_NET,
	AUDIT_KIND_SOCK,
	AUDIT_KIND_SELF,
	AUDIT_KIND_TOOL,
	AUDIT_KIND_POLICY,
	AUDIT_KIND_LIFECYCLE,
	AUDIT_KIND_LOSS,
	AUDIT_KIND_MAX,
};

enum audit_decision {
	AUDIT_DECISION_NONE, /* not a decision: the key is left out */
	AUDIT_DECISION_ALLOW,
	AUDIT_DECISION_DENY,
	AUDIT_DECISION_WOULD_DENY, /* shadow mode: the agent's rules denied, the operation went on */
	AUDIT_DECISION_MAX,
};

/* Which optional parts of a record are present (audit_record.has). */
#define AUDIT_HAS_PROC (1U << 0) /* pid, tid, uid, comm */
#define AUDIT_HAS_INODE (1U << 1) /* object dev, ino */
#define AUDIT_HAS_NET (1U << 2) /* object family, addr, port */
#define AUDIT_HAS_RULE (1U << 3) /* rule, gen */
#define AUDIT_HAS_TOOL (1U << 4) /* tool */
#define AUDIT_HAS_COUNT (1U << 5) /* count (loss), source */
#define AUDIT_HAS_CGROUP (1U << 6)
#define AUDIT_HAS_TORN (1U << 7) /* torn (restart) */

/*
 * One record. Strings are bounded and NUL-terminated; any bytes may be in them (they are
 * escaped on output). seq, host and prev are the writer's to add.
 */
struct audit_record {
	__u64 time_ns; /* CLOCK_REALTIME; 0: the writer stamps the time of append */
	enum audit_kind kind;
	char op[AUDIT_NAME_MAX];
	__u32 has;
	__u32 agent; /* 0: not about an agent */
	char agent_name[AUDIT_NAME_MAX];
	__u64 cgroup;
	__u32 pid, tid, uid;
	char comm[AUDIT_COMM_MAX];
	char path[AUDIT_PATH_MAX]; /* the object: a path, or the dentry name the kernel saw */
	bool path_truncated;
	__u64 dev; /* kernel dev_t, major << 20 | minor */
	__u64 ino;
	char family[8]; /* "inet", "inet6", "unix" */
	char addr[AUDIT_ADDR_MAX];
	__u16 port;
	enum audit_decision decision;
	__u32 rule;
	__u32 gen; /* policy generation */
	char tool[AUDIT_NAME_MAX];
	__u64 args_len, out_len;
	unsigned char args_sha256[32], out_sha256[32];
	__u64 count;
	char source[AUDIT_NAME_MAX];
	__u64 torn; /* restart: bytes of a crash's torn tail before it */
	char detail[AUDIT_DETAIL_MAX]; /* free text, identifiers only, never content */
};

const char *audit_kind_name(enum audit_kind k);
const char *audit_decision_name(enum audit_decision d);
/* Returns the kind or AUDIT_KIND_NONE / the decision or AUDIT_DECISION_MAX. */
enum audit_kind audit_kind_parse(const char *s);
enum audit_decision audit_decision_parse(const char *s);

/* What the writer adds to a record. */
struct audit_stamp {
	__u64 seq;
	__u64 time_ns; /* used when the record's is 0 */
	const char *host;
	const char *prev; /* hex SHA-256 of the previous line */
};

/*
 * Serialises r as one compact JSON line (no newline) into buf, keys in the documented order.
 * Returns the length, or -ENOSPC.
 */
int audit_record_format(const struct audit_record *r, const struct audit_stamp *st, char *buf,
			size_t bufsz);

union agentd_event;
/*
 * Fills r from one ring-buffer record as event_decode() decoded it. mono_to_real_ns turns the
 * event's CLOCK_MONOTONIC stamp into CLOCK_REALTIME (audit_mono_to_real_ns()). The event
 * carries the agent's id alone: the caller names the agent (agent_name), from what it knows of
 * that id when the event was decoded. Returns 0 or -EINVAL for an unknown type.
 */
int audit_record_from_event(struct audit_record *r, const union agentd_event *ev,
			    __s64 mono_to_real_ns);
/* CLOCK_REALTIME - CLOCK_MONOTONIC, now. */
__s64 audit_mono_to_real_ns(void);

/* "2024-05-01T12:00:00.000000001Z" into buf (at least 31 bytes). */
void audit_time_format(__u64 ns, char *buf);
/* Parses RFC 3339 (a date alone, "Z" or an offset, 0-9 fraction digits). Returns 0 or -EINVAL. */
int audit_time_parse(const char *s, __u64 *ns);

/* SHA-256 of len bytes as 64 lowercase hex digits and a NUL. */
void audit_hash_hex(const void *data, size_t len, char out[AUDIT_HASH_HEX]);

/*
 * One record's line as JSON (jansson's json_loadb() with flags), or NULL. jansson's integers are
 * signed 64-bit and a record's are unsigned (an inode number on overlayfs with xino has its top
 * bits set): a line that fails on an integer past INT64_MAX alone is read again with each such
 * integer as a string of its digits. Every reader of the log uses this, so such a record is a
 * record to verify, resume from, filter and print.
 */
struct json_t *audit_json_loadb(const char *line, size_t len, size_t flags);

/*
 * Filters, for query, follow and stream subscribers: "agent=A kind=K decision=D since=T
 * until=T" (space-separated, every key optional, each at most once; A is an agent's name, or
 * its id: ids are reused once an agent is removed, names are what every record carries).
 */
struct audit_filter {
	char agent[AUDIT_NAME_MAX];
	enum audit_kind kind;
	enum audit_decision decision; /* AUDIT_DECISION_MAX: any */
	__u64 since_ns, until_ns; /* until 0: no bound */
};

/*
 * What a filter looks at in a record, taken once from the record: from the audit_record in
 * memory (audit_key_of()), or from its line parsed once (audit_key_from_json()).
 */
struct audit_key {
	__u64 time_ns;
	long long agent; /* the "agent" key's value */
	bool has_time, has_agent;
	enum audit_kind kind; /* AUDIT_KIND_NONE: missing or unknown */
	enum audit_decision decision; /* AUDIT_DECISION_MAX: a value of no known decision */
	char agent_name[AUDIT_NAME_MAX]; /* "": none (or longer than any filter names) */
	__u32 len; /* of the record's line, newline included (the writer's committed batches) */
};

void audit_filter_init(struct audit_filter *f);
/* Sets one key (agent, kind, decision, since, until). Returns 0 or -EINVAL. */
int audit_filter_set(struct audit_filter *f, const char *key, const char *value);
int audit_filter_parse(struct audit_filter *f, const char *line);
bool audit_filter_empty(const struct audit_filter *f);
/* r's key; time_ns is the time its line carries (r's own, or the writer's stamp). */
void audit_key_of(const struct audit_record *r, __u64 time_ns, struct audit_key *k);
/* The key of a parsed line. Returns 0, or -EINVAL when rec is not an object. */
int audit_key_from_json(struct json_t *rec, struct audit_key *k);
bool audit_filter_match_key(const struct audit_filter *f, const struct audit_key *k);
/* Whether the parsed line passes (the readers that parse each line once for all they do). */
bool audit_filter_match_json(const struct audit_filter *f, struct json_t *rec);
/* Whether the JSON line (no newline) passes; lines that do not parse do not pass. */
bool audit_filter_match(const struct audit_filter *f, const char *line, size_t len);

/* ---- writer ---- */

struct audit_writer_opts {
	const char *host; /* NULL: gethostname() */
	unsigned batch_records; /* 0: 4096 */
	unsigned batch_ms; /* 0: 10 */
	__u64 segment_bytes; /* rotate past this size; 0: 64 MiB */
	bool no_append_flag; /* do not set FS_APPEND_FL (tests that tamper with the log) */
	bool no_sync; /* skip fdatasync (benchmarks of the rest only; never in production) */
	/*
	 * Called with each committed batch (whole lines, each ending in \n), after its fdatasync,
	 * with each line's key (n of them, in order; keys[i].len is line i's length), so that
	 * subscribers filter the records without parsing their lines again.
	 */
	void (*committed)(void *ctx, const char *lines, size_t len, const struct audit_key *keys,
			  size_t n);
	/*
	 * While the log cannot be written: whether the records of agent (0: not about an agent)
	 * are held to be written later (true), or counted for a loss record (false). NULL: held.
	 */
	bool (*hold)(void *ctx, __u32 agent);
	void *ctx; /* of committed and hold */
	size_t hold_bytes; /* records held while the log fails, at most; past it, lost; 0: 4 MiB */
	int (*sync)(int fd); /* makes a batch durable; NULL: fdatasync (tests inject failures) */
};

struct audit_writer;

/*
 * Opens (creating) the log in dir and resumes its chain from the last complete record, or
 * starts a fresh one with log-start. After a crash it appends a lifecycle restart record that
 * names the torn bytes and the time since the last record. Returns 0 or -errno.
 */
int audit_writer_open(struct audit_writer **out, const char *dir,
		      const struct audit_writer_opts *opts);
/*
 * Assigns seq, time and prev and queues r; commits when the batch is full or old. While the log
 * cannot be written, r is held or counted lost (opts.hold) and 0 returned: the failure is
 * audit_writer_failing()'s. Returns 0, or -errno for a record that cannot be formatted.
 */
int audit_writer_append(struct audit_writer *w, const struct audit_record *r);
/* A loss record: count events of agent (0: none; name: its name, or NULL) lost at source. */
int audit_writer_loss(struct audit_writer *w, __u32 agent, const char *name, __u64 count,
		      const char *source, const char *detail);
/*
 * Commits the pending batch: one write, one fdatasync. Returns 0, or -errno while the log cannot
 * be written (the records stay held).
 */
int audit_writer_flush(struct audit_writer *w);
/*
 * Milliseconds until the pending batch must be committed, or the failing log tried again
 * (-1: nothing pending): a poll timeout.
 */
int audit_writer_timeout_ms(struct audit_writer *w);
/* Commits the pending batch if it is due; tries a failing log again once its back-off passed. */
int audit_writer_tick(struct audit_writer *w);
/*
 * 0 while the log takes writes; while it does not, the last error, and with since_ns (may be
 * NULL) the CLOCK_REALTIME of the first failure. When writes work again, the writer appends
 * lifecycle/log-resumed and a loss record per agent whose records were not kept.
 */
int audit_writer_failing(const struct audit_writer *w, __u64 *since_ns);
/* Whether FS_APPEND_FL holds on the live file. */
bool audit_writer_append_only(const struct audit_writer *w);
__u64 audit_writer_last_seq(const struct audit_writer *w);

/* What the writer has done since it opened (docs/METRICS.md). */
struct audit_writer_stats {
	__u64 batches, records, bytes; /* committed (written and fdatasync'ed) */
	__u64 write_errors; /* failed attempts: a write, an fdatasync, a segment switch */
	__u64 behind; /* records appended and not yet committed (queued or in flight) */
	struct metrics_histogram commit_seconds; /* the write and fdatasync of each batch */
};
void audit_writer_stats(const struct audit_writer *w, struct audit_writer_stats *out);
/* Commits, records log-stop, closes; accepts NULL. Returns 0 or the last error. */
int audit_writer_close(struct audit_writer *w);

/* ---- segments, verify, read ---- */

/* The segment files of the log in dir, oldest first, the live one last. */
struct audit_segments {
	char **paths;
	size_t n;
};
int audit_segments_list(const char *dir, struct audit_segments *s);
void audit_segments_free(struct audit_segments *s);

/* Reads lines from a plain or gzip file (zlib tells them apart). */
struct audit_reader;
int audit_reader_open(struct audit_reader **out, const char *path);
/* Follows an fd (taken over; closed by audit_reader_close). */
int audit_reader_fdopen(struct audit_reader **out, int fd);
/*
 * Next line, without its newline, NUL-terminated in *line (len bytes; it may hold other NULs).
 * Returns 1 for a line, 2 for an unterminated last line, 0 at the end, -E2BIG for a line longer
 * than AUDIT_LINE_MAX (skipped: the next call goes on after it), -EIO for a corrupt or
 * truncated gzip stream.
 */
int audit_reader_next(struct audit_reader *r, char **line, size_t *len);
/* After the end: look for more (a live file that grows). */
void audit_reader_rearm(struct audit_reader *r);
void audit_reader_close(struct audit_reader *r);

enum audit_problem {
	AUDIT_OK,
	AUDIT_BAD_RECORD, /* not JSON, or not a record of this schema */
	AUDIT_HASH_MISMATCH, /* prev is not the hash of the record before: edited or reordered */
	AUDIT_SEQ_GAP, /* records removed */
	AUDIT_SEQ_BACK, /* records reordered or duplicated */
	AUDIT_SEGMENT_MISSING, /* a segment's first record does not follow the one before */
	AUDIT_SEGMENT_TRUNCATED, /* a closed segment does not end in segment-end, or its gzip does not */
	AUDIT_SEGMENT_NAME, /* the file name does not match the first record */
	AUDIT_BAD_START, /* the log does not start with log-start or segment-start */
	AUDIT_IO, /* unreadable */
	AUDIT_CHECKPOINT, /* a record noted earlier (seq, hash) is gone or different: rewritten */
};

struct audit_verify_result {
	enum audit_problem problem;
	char file[512];
	__u64 line; /* 1-based; 0: the file as a whole */
	__u64 seq; /* seq of the offending record, 0 if unknown */
	char what[256];
	/* On success, and up to the problem otherwise: */
	__u64 records, first_seq, last_seq;
	char last_hash[AUDIT_HASH_HEX];
	bool torn_tail; /* the live file ends in an incomplete record (a crash) */
	bool head_missing; /* starts at a segment-start: earlier segments were removed */
};

/* Verifies the files in order (as audit_segments_list gives them). Returns 0 intact, 1 not. */
int audit_verify_files(char *const *paths, size_t n, struct audit_verify_result *res);

/*
 * A checkpoint: record seq, as noted earlier (verify prints the last one), with the hash of its
 * line ("" when only its presence is checked). The chain has no key, so a log rewritten
 * wholesale verifies; a checkpoint kept where the writer cannot reach catches it.
 */
struct audit_expect {
	__u64 seq;
	char hash[AUDIT_HASH_HEX];
};
/* "SEQ" or "SEQ:HASH" (64 lowercase hex digits). Returns 0 or -EINVAL. */
int audit_expect_parse(const char *s, struct audit_expect *x);
/* audit_verify_files, and each checkpoint must hold: its record present, with its hash. */
int audit_verify_files_expect(char *const *paths, size_t n, const struct audit_expect *x, size_t nx,
			      struct audit_verify_result *res);
/*
 * audit_verify_files_expect, calling each with every record the chain covers, in order, as it
 * is verified, with the line as verify parsed it (rec: filter it there, not parse it again):
 * what comes after a problem is not covered (audit query prints only these).
 */
int audit_verify_files_each(char *const *paths, size_t n, const struct audit_expect *x, size_t nx,
			    struct audit_verify_result *res,
			    void (*each)(void *ctx, const char *line, size_t len,
					 struct json_t *rec),
			    void *ctx);
/* The same over a memory buffer taken as the live file (the fuzz target's entry point). */
int audit_verify_buffer(const char *name, const char *data, size_t len,
			struct audit_verify_result *res);
const char *audit_problem_name(enum audit_problem p);

/* ---- stream ---- */

struct audit_stream;
/*
 * Serves subscribers on listen_fd (a listening Unix stream socket, owned by the caller), each
 * with an outgoing buffer of at most buf_cap bytes (0: 1 MiB).
 */
int audit_stream_open(struct audit_stream **out, int listen_fd, size_t buf_cap);
/* Every later subscriber is refused (one "error: ..." line, then closed) when admit says so: 1
 * with why, or 0. */
void audit_stream_set_admit(struct audit_stream *s,
			    int (*admit)(void *ctx, int fd, char *why, size_t whysz), void *ctx);
/* The fd to poll for POLLIN (new subscribers, filters, hang-ups). */
int audit_stream_fd(const struct audit_stream *s);
/*
 * Queues whole lines (each ending in \n; n of them, keys[i] line i's key, as the writer's
 * committed callback gives them) to every subscriber whose filter the key passes, and sends
 * what the sockets take without blocking; a subscriber whose buffer would overflow is
 * disconnected.
 */
void audit_stream_publish(struct audit_stream *s, const char *lines, size_t len,
			  const struct audit_key *keys, size_t n);
/* Accepts, reads filters, flushes buffers; call when audit_stream_fd() is ready. */
int audit_stream_service(struct audit_stream *s);
/* Fills r with a loss record for subscribers dropped since the last call; returns 1 or 0. */
int audit_stream_pop_loss(struct audit_stream *s, struct audit_record *r);
size_t audit_stream_subscribers(const struct audit_stream *s);
void audit_stream_close(struct audit_stream *s);

#endif
