// SPDX-License-Identifier: GPL-2.0
/*
 * Reading and verifying the audit log: segments in order, lines from plain or gzip files, and
 * the chain checks (docs/AUDIT.md, "Verify"). Every byte read here is untrusted.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include <zlib.h>
#include "audit/audit.h"

#define SEG_PREFIX "audit-"
#define SEG_DIGITS 20
#define READ_CHUNK 65536

struct seg {
	unsigned long long first;
	bool gz;
	char *path;
};

/* "audit-<20 digits>.log" or ".log.gz": its first seq, or -1. */
static int segment_name(const char *name, unsigned long long *first, bool *gz)
{
	const char *p = name + strlen(SEG_PREFIX);
	int i;

	if (strncmp(name, SEG_PREFIX, strlen(SEG_PREFIX)))
		return -1;
	*first = 0;
	for (i = 0; i < SEG_DIGITS; i++, p++) {
		if (*p < '0' || *p > '9')
			return -1;
		*first = *first * 10 + (*p - '0');
	}
	*gz = !strcmp(p, ".log.gz");
	return *gz || !strcmp(p, ".log") ? 0 : -1;
}

static int seg_cmp(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;

	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return x->gz - y->gz; /* a segment being compressed: its .log first */
}

static int add_path(struct audit_segments *s, const char *dir, const char *name)
{
	char **p = realloc(s->paths, (s->n + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	s->paths = p;
	if (asprintf(&p[s->n], "%s/%s", dir, name) < 0)
		return -ENOMEM;
	s->n++;
	return 0;
}

static int collect(DIR *d, const char *dir, struct seg **out, size_t *n, bool *live)
{
	struct dirent *de;
	struct seg *segs = NULL, *p;

	*n = 0;
	while ((de = readdir(d))) {
		unsigned long long first;
		bool gz;

		if (!strcmp(de->d_name, AUDIT_LIVE_NAME))
			*live = true;
		if (segment_name(de->d_name, &first, &gz))
			continue;
		p = realloc(segs, (*n + 1) * sizeof(*segs));
		if (!p)
			goto nomem;
		segs = p;
		segs[*n] = (struct seg){ first, gz, NULL };
		if (asprintf(&segs[*n].path, "%s/%s", dir, de->d_name) < 0)
			goto nomem;
		(*n)++;
	}
	*out = segs;
	return 0;
nomem:
	while (*n)
		free(segs[--*n].path);
	free(segs);
	return -ENOMEM;
}

int audit_segments_list(const char *dir, struct audit_segments *s)
{
	DIR *d = opendir(dir);
	struct seg *segs = NULL;
	bool live = false;
	size_t n = 0, i;
	int err;

	memset(s, 0, sizeof(*s));
	if (!d)
		return -errno;
	err = collect(d, dir, &segs, &n, &live);
	closedir(d);
	if (err)
		return err;
	if (n)
		qsort(segs, n, sizeof(*segs), seg_cmp);
	s->paths = calloc(n + 1, sizeof(*s->paths));
	if (!s->paths)
		err = -ENOMEM;
	for (i = 0; i < n; i++) {
		/* Both forms of one segment: compression was under way; the .log is whole. */
		if (err || (i > 0 && segs[i].first == segs[i - 1].first)) {
			free(segs[i].path);
			continue;
		}
		s->paths[s->n++] = segs[i].path;
	}
	free(segs);
	if (!err && live)
		err = add_path(s, dir, AUDIT_LIVE_NAME);
	if (err)
		audit_segments_free(s);
	return err;
}

void audit_segments_free(struct audit_segments *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->paths[i]);
	free(s->paths);
	memset(s, 0, sizeof(*s));
}

struct audit_reader {
	gzFile gz;
	char *buf;
	size_t start, end;
	bool eof, skipping;
};

int audit_reader_fdopen(struct audit_reader **out, int fd)
{
	struct audit_reader *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (r)
		r->buf = malloc(AUDIT_LINE_MAX + 1 + READ_CHUNK);
	if (r && r->buf)
		r->gz = gzdopen(fd, "rb");
	if (!r || !r->buf || !r->gz) {
		if (r)
			free(r->buf);
		free(r);
		close(fd);
		return -ENOMEM;
	}
	gzbuffer(r->gz, 1 << 17);
	*out = r;
	return 0;
}

int audit_reader_open(struct audit_reader **out, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*out = NULL;
	if (fd < 0)
		return -errno;
	return audit_reader_fdopen(out, fd);
}

void audit_reader_close(struct audit_reader *r)
{
	if (!r)
		return;
	gzclose(r->gz);
	free(r->buf);
	free(r);
}

static int fill(struct audit_reader *r)
{
	int n, errnum;

	if (r->start) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
	}
	n = gzread(r->gz, r->buf + r->end, AUDIT_LINE_MAX + READ_CHUNK - r->end);
	if (n < 0)
		return -EIO;
	if (n == 0) {
		gzerror(r->gz, &errnum);
		/* Z_BUF_ERROR at the end: the gzip stream stops in the middle */
		if (errnum != Z_OK)
			return -EIO;
		r->eof = true;
		gzclearerr(r->gz);
	}
	r->end += n;
	return 0;
}

int audit_reader_next(struct audit_reader *r, char **line, size_t *len)
{
	for (;;) {
		char *nl = memchr(r->buf + r->start, '\n', r->end - r->start);
		int err;

		if (nl) {
			size_t at = r->start;

			*nl = '\0';
			r->start = nl + 1 - r->buf;
			if (r->skipping) {
				r->skipping = false;
				continue;
			}
			*line = r->buf + at;
			*len = nl - (r->buf + at);
			return 1;
		}
		if (r->end - r->start > AUDIT_LINE_MAX) {
			r->start = r->end;
			if (r->skipping)
				continue;
			r->skipping = true;
			return -E2BIG;
		}
		if (r->eof) {
			if (r->start == r->end || r->skipping)
				return 0;
			r->buf[r->end] = '\0';
			*line = r->buf + r->start;
			*len = r->end - r->start;
			r->start = r->end;
			return 2;
		}
		err = fill(r);
		if (err)
			return err;
	}
}

/* Resume after EOF: for follow, which reads a file that keeps growing. */
void audit_reader_rearm(struct audit_reader *r)
{
	r->eof = false;
}

struct verifier {
	struct audit_verify_result *res;
	char hash[AUDIT_HASH_HEX]; /* of the last record */
	bool have_prev;
	/* the current file */
	const char *file;
	bool closed; /* a rotated segment: must end in segment-end */
	unsigned long long name_seq; /* from audit-<seq>.log, or 0 */
	__u64 line;
	bool first_in_file;
	char last_op[AUDIT_NAME_MAX];
	__u64 remnant_line; /* first line of unparsable bytes awaiting a restart record */
	__u64 remnant_bytes; /* their length, joined by their newlines */
	/* every record the chain covers, with its line as parsed here */
	void (*each)(void *ctx, const char *line, size_t len, json_t *rec);
	void *ctx;
	const struct audit_expect *expect; /* checkpoints, met ones marked in met */
	size_t nexpect;
	bool *met;
};

static int problem(struct verifier *v, enum audit_problem p, __u64 line, __u64 seq, const char *fmt,
		   ...) __attribute__((format(printf, 5, 6)));

static int problem(struct verifier *v, enum audit_problem p, __u64 line, __u64 seq, const char *fmt,
		   ...)
{
	va_list ap;

	v->res->problem = p;
	snprintf(v->res->file, sizeof(v->res->file), "%s", v->file);
	v->res->line = line;
	v->res->seq = seq;
	va_start(ap, fmt);
	vsnprintf(v->res->what, sizeof(v->res->what), fmt, ap);
	va_end(ap);
	return 1;
}

struct fields {
	__u64 seq;
	const char *prev, *op, *kind;
	__u64 torn; /* restart: torn bytes before it */
};

static bool is_hex64(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[64] == '\0';
}

/*
 * The torn bytes a restart record names: its torn field, or in a record from before that field
 * its detail ("...; N torn bytes"), which the writer has always written.
 */
static __u64 restart_torn(json_t *rec)
{
	json_t *torn = json_object_get(rec, "torn");
	const char *detail = json_string_value(json_object_get(rec, "detail")), *p;
	unsigned long long n;

	if (json_is_integer(torn))
		return json_integer_value(torn) > 0 ? json_integer_value(torn) : 0;
	if (torn || !detail || !(p = strrchr(detail, ';')) ||
	    sscanf(p, "; %llu torn bytes", &n) != 1)
		return 0;
	return n;
}

/* The fields verify relies on, typed; false when the line is not a record. */
static bool record_fields(json_t *rec, struct fields *f)
{
	json_t *v = json_object_get(rec, "v"), *seq = json_object_get(rec, "seq");

	f->prev = json_string_value(json_object_get(rec, "prev"));
	f->op = json_string_value(json_object_get(rec, "op"));
	f->kind = json_string_value(json_object_get(rec, "kind"));
	if (!json_is_integer(v) || json_integer_value(v) != AUDIT_SCHEMA_VERSION ||
	    !json_is_integer(seq) || json_integer_value(seq) <= 0 || !f->prev ||
	    !is_hex64(f->prev) || !f->op || !f->kind ||
	    !json_is_string(json_object_get(rec, "time")))
		return false;
	f->seq = json_integer_value(seq);
	f->torn = restart_torn(rec);
	return true;
}

static int check_first(struct verifier *v, const struct fields *f)
{
	struct audit_verify_result *res = v->res;

	if (!strcmp(f->op, "log-start") && f->seq == 1 && !strcmp(f->prev, AUDIT_GENESIS))
		return 0;
	if (!strcmp(f->op, "segment-start")) {
		res->head_missing = true;
		return 0;
	}
	return problem(v, AUDIT_BAD_START, v->line, f->seq,
		       "the log does not begin with log-start or segment-start: its head was cut");
}

static int check_chain(struct verifier *v, const struct fields *f)
{
	__u64 want = v->res->last_seq + 1;

	if (f->seq != want && v->first_in_file)
		return problem(v, AUDIT_SEGMENT_MISSING, v->line, f->seq,
			       "first record has seq %llu, the previous file ended at %llu: "
			       "a segment or records are missing",
			       (unsigned long long)f->seq, (unsigned long long)v->res->last_seq);
	if (f->seq > want)
		return problem(v, AUDIT_SEQ_GAP, v->line, f->seq,
			       "seq %llu where %llu was due: records removed or reordered",
			       (unsigned long long)f->seq, (unsigned long long)want);
	if (f->seq < want)
		return problem(v, AUDIT_SEQ_BACK, v->line, f->seq,
			       "seq %llu where %llu was due: records reordered or duplicated",
			       (unsigned long long)f->seq, (unsigned long long)want);
	if (strcmp(f->prev, v->hash))
		return problem(v, AUDIT_HASH_MISMATCH, v->line, f->seq,
			       "prev is not the hash of the record before: that record (or this "
			       "one) was edited, or records were reordered");
	if (v->first_in_file && v->res->records && strcmp(f->op, "segment-start"))
		return problem(v, AUDIT_SEGMENT_MISSING, v->line, f->seq,
			       "the file does not begin with segment-start: its head was cut");
	return 0;
}

/* The record just read (its hash in v->hash) against the checkpoints naming its seq. */
static int check_expect(struct verifier *v, __u64 seq)
{
	size_t i;

	for (i = 0; i < v->nexpect; i++) {
		if (v->expect[i].seq != seq)
			continue;
		v->met[i] = true;
		if (v->expect[i].hash[0] && strcmp(v->expect[i].hash, v->hash))
			return problem(v, AUDIT_CHECKPOINT, v->line, seq,
				       "record seq %llu hashes to %.16s..., the checkpoint says "
				       "%.16s...: the log was rewritten from there on",
				       (unsigned long long)seq, v->hash, v->expect[i].hash);
	}
	return 0;
}

/*
 * A line that is not a record. A crash leaves at most one torn tail: bytes that are no JSON
 * (a record cut short), ended by the next writer's newline and followed by its restart record,
 * which names their length. A complete JSON line that is not a record is never a crash's.
 */
static int remnant(struct verifier *v, json_t *rec, size_t len)
{
	if (rec)
		return problem(v, AUDIT_BAD_RECORD, v->line, 0,
			       "a JSON line that is not a record of this schema: inserted");
	if (!v->remnant_line) {
		v->remnant_line = v->line;
		v->remnant_bytes = len;
	} else {
		v->remnant_bytes += 1 + len;
	}
	return 0;
}

/* Torn bytes are accepted only before a restart record that names exactly their length. */
static int check_remnant(struct verifier *v, const struct fields *f)
{
	bool restart = !strcmp(f->op, "restart");

	if (v->remnant_line && !restart)
		return problem(v, AUDIT_BAD_RECORD, v->remnant_line, 0,
			       "not a record of this schema, and no restart record follows: "
			       "inserted");
	if (v->remnant_line && f->torn != v->remnant_bytes)
		return problem(v, AUDIT_BAD_RECORD, v->remnant_line, 0,
			       "%llu bytes that are not a record before a restart record that "
			       "names %llu torn bytes: inserted or altered",
			       (unsigned long long)v->remnant_bytes, (unsigned long long)f->torn);
	if (!v->remnant_line && restart && f->torn)
		return problem(v, AUDIT_BAD_RECORD, v->line, f->seq,
			       "the restart record names %llu torn bytes before it, and there are "
			       "none: removed",
			       (unsigned long long)f->torn);
	v->remnant_line = 0;
	return 0;
}

static int verify_record(struct verifier *v, const char *line, size_t len)
{
	struct fields f;
	json_t *rec = audit_json_loadb(line, len, JSON_REJECT_DUPLICATES);
	int bad;

	if (!json_is_object(rec) || !record_fields(rec, &f)) {
		bad = remnant(v, rec, len);
		json_decref(rec);
		return bad;
	}
	bad = check_remnant(v, &f);
	if (!bad)
		bad = v->have_prev ? check_chain(v, &f) : check_first(v, &f);
	if (!bad && v->first_in_file && v->name_seq && v->name_seq != f.seq)
		bad = problem(v, AUDIT_SEGMENT_NAME, v->line, f.seq,
			      "the file is named for seq %llu but begins at seq %llu", v->name_seq,
			      (unsigned long long)f.seq);
	if (!bad) {
		if (!v->res->records)
			v->res->first_seq = f.seq;
		v->res->records++;
		v->res->last_seq = f.seq;
		audit_hash_hex(line, len, v->hash);
		bad = check_expect(v, f.seq);
	}
	if (!bad) {
		snprintf(v->last_op, sizeof(v->last_op), "%s", f.op);
		v->have_prev = true;
		v->first_in_file = false;
		if (v->each)
			v->each(v->ctx, line, len, rec);
	}
	json_decref(rec);
	return bad;
}

static int end_file(struct verifier *v, bool torn)
{
	if (v->remnant_line)
		return problem(v, AUDIT_BAD_RECORD, v->remnant_line, 0,
			       "not a record of this schema");
	if (torn && v->closed)
		return problem(v, AUDIT_SEGMENT_TRUNCATED, v->line, 0,
			       "the last line is incomplete: the segment was truncated");
	if (v->closed && strcmp(v->last_op, "segment-end"))
		return problem(v, AUDIT_SEGMENT_TRUNCATED, v->line, v->res->last_seq,
			       "the segment does not end with segment-end: it was truncated");
	v->res->torn_tail = torn;
	return 0;
}

static void begin_file(struct verifier *v, const char *path, bool closed)
{
	const char *base = strrchr(path, '/');
	bool gz;

	v->file = path;
	v->closed = closed;
	v->line = 0;
	v->first_in_file = true;
	v->last_op[0] = '\0';
	v->remnant_line = 0;
	if (segment_name(base ? base + 1 : path, &v->name_seq, &gz))
		v->name_seq = 0;
}

static int verify_file(struct verifier *v, const char *path, bool closed)
{
	struct audit_reader *r;
	char *line;
	size_t len;
	int n, err;

	begin_file(v, path, closed);
	err = audit_reader_open(&r, path);
	if (err)
		return problem(v, AUDIT_IO, 0, 0, "cannot read: %s", strerror(-err));
	while ((n = audit_reader_next(r, &line, &len)) == 1) {
		v->line++;
		err = verify_record(v, line, len);
		if (err)
			break;
	}
	audit_reader_close(r);
	if (err)
		return err;
	if (n == -E2BIG)
		return problem(v, AUDIT_BAD_RECORD, v->line + 1, 0, "line longer than %d bytes",
			       AUDIT_LINE_MAX);
	if (n == -EIO)
		return problem(v, AUDIT_SEGMENT_TRUNCATED, v->line, 0,
			       "the gzip stream is corrupt or truncated");
	if (n == 2)
		v->line++;
	return end_file(v, n == 2);
}

static void verifier_init(struct verifier *v, struct audit_verify_result *res)
{
	memset(res, 0, sizeof(*res));
	memset(v, 0, sizeof(*v));
	v->res = res;
}

int audit_expect_parse(const char *s, struct audit_expect *x)
{
	char *end;

	memset(x, 0, sizeof(*x));
	if (*s < '1' || *s > '9')
		return -EINVAL;
	errno = 0;
	x->seq = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (!*end)
		return 0;
	if (*end != ':' || !is_hex64(end + 1))
		return -EINVAL;
	memcpy(x->hash, end + 1, AUDIT_HASH_HEX);
	return 0;
}

/* A checkpoint whose record never came: cut from the end, or removed with old segments. */
static int unmet(struct verifier *v, const struct audit_expect *x)
{
	struct audit_verify_result *res = v->res;

	if (x->seq < res->first_seq)
		return problem(v, AUDIT_CHECKPOINT, 0, x->seq,
			       "record seq %llu is no longer in the log, which begins at seq %llu: "
			       "the segment holding it was removed",
			       (unsigned long long)x->seq, (unsigned long long)res->first_seq);
	return problem(v, AUDIT_CHECKPOINT, 0, x->seq,
		       "the log ends at seq %llu, before the checkpoint's seq %llu: records were "
		       "removed from its end",
		       (unsigned long long)res->last_seq, (unsigned long long)x->seq);
}

int audit_verify_files_each(char *const *paths, size_t n, const struct audit_expect *x, size_t nx,
			    struct audit_verify_result *res,
			    void (*each)(void *ctx, const char *line, size_t len, json_t *rec),
			    void *ctx)
{
	bool *met = calloc(nx ? nx : 1, sizeof(*met));
	struct verifier v;
	size_t i;
	int bad = 0;

	verifier_init(&v, res);
	v.each = each;
	v.ctx = ctx;
	if (!met) {
		v.file = "";
		return problem(&v, AUDIT_IO, 0, 0, "out of memory");
	}
	v.expect = x;
	v.nexpect = nx;
	v.met = met;
	for (i = 0; !bad && i < n; i++)
		bad = verify_file(&v, paths[i], i + 1 < n);
	if (!bad && !res->records) {
		v.file = n ? paths[n - 1] : "";
		bad = problem(&v, AUDIT_BAD_START, 0, 0, "no records");
	}
	for (i = 0; !bad && i < nx; i++)
		if (!met[i])
			bad = unmet(&v, &x[i]);
	free(met);
	if (!bad)
		strcpy(res->last_hash, v.hash);
	return bad;
}

int audit_verify_files_expect(char *const *paths, size_t n, const struct audit_expect *x, size_t nx,
			      struct audit_verify_result *res)
{
	return audit_verify_files_each(paths, n, x, nx, res, NULL, NULL);
}

int audit_verify_files(char *const *paths, size_t n, struct audit_verify_result *res)
{
	return audit_verify_files_expect(paths, n, NULL, 0, res);
}

int audit_verify_buffer(const char *name, const char *data, size_t len,
			struct audit_verify_result *res)
{
	struct verifier v;
	size_t at = 0;
	int bad = 0;

	verifier_init(&v, res);
	begin_file(&v, name, false);
	while (at < len && !bad) {
		const char *nl = memchr(data + at, '\n', len - at);
		size_t n = (nl ? (size_t)(nl - data) : len) - at;

		v.line++;
		if (n > AUDIT_LINE_MAX)
			bad = problem(&v, AUDIT_BAD_RECORD, v.line, 0, "line too long");
		else if (!nl)
			bad = end_file(&v, true);
		else
			bad = verify_record(&v, data + at, n);
		at += n + 1;
	}
	if (!bad && (len == 0 || data[len - 1] == '\n'))
		bad = end_file(&v, false);
	if (!bad && !res->records)
		bad = problem(&v, AUDIT_BAD_START, 0, 0, "no records");
	if (!bad)
		strcpy(res->last_hash, v.hash);
	return bad;
}

const char *audit_problem_name(enum audit_problem p)
{
	static const char *const names[] = {
		[AUDIT_OK] = "ok",
		[AUDIT_BAD_RECORD] = "bad-record",
		[AUDIT_HASH_MISMATCH] = "hash-mismatch",
		[AUDIT_SEQ_GAP] = "seq-gap",
		[AUDIT_SEQ_BACK] = "seq-back",
		[AUDIT_SEGMENT_MISSING] = "segment-missing",
		[AUDIT_SEGMENT_TRUNCATED] = "segment-truncated",
		[AUDIT_SEGMENT_NAME] = "segment-name",
		[AUDIT_BAD_START] = "bad-start",
		[AUDIT_IO] = "io",
		[AUDIT_CHECKPOINT] = "checkpoint",
	};

	return p < sizeof(names) / sizeof(names[0]) ? names[p] : "unknown";
}
