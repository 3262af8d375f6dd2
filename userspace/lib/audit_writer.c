// SPDX-License-Identifier: GPL-2.0
/*
 * The audit writer: records are chained and queued in memory, and a batch is committed with one
 * write and one fdatasync when it holds batch_records or its oldest record is batch_ms old.
 * The commit runs on a thread of its own while the next batch fills (one batch in flight: a
 * batch due while the one before still syncs waits for it), and is handed on (opts.committed)
 * on the caller's thread once its fdatasync has returned.
 * Past segment_bytes the live file is closed with segment-end, renamed to audit-<firstseq>.log
 * and gzipped by a background thread while the next segment starts with segment-start.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <zlib.h>
#include "audit.h"
#include "log.h"

#define DEFAULT_BATCH_RECORDS 4096
#define DEFAULT_BATCH_MS 10
#define DEFAULT_SEGMENT_BYTES (64ULL << 20)
#define TAIL_SCAN_BYTES (1U << 20)

/*
 * Closed segments wait in a queue for one compressor thread, so that rotation never waits for
 * gzip; the writer waits only when GZ_QUEUE segments are pending (backpressure, at which point
 * compression is slower than the log grows: see docs/AUDIT.md).
 */
#define GZ_QUEUE 16

struct compressor {
	pthread_t thread;
	bool running;
	bool stop;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* work queued, work done, stop */
	int dirfd;
	char names[GZ_QUEUE][64];
	unsigned head, tail; /* queued: names[tail..head) modulo GZ_QUEUE */
	int err; /* the first error */
};

/* The batch in flight: written and fdatasync'ed by the committer thread. */
struct committer {
	pthread_t thread;
	bool running;
	bool stop;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* a batch handed over, a batch done, stop */
	bool busy; /* a batch is handed over and not yet taken back (the writer's thread only) */
	bool done; /* the thread finished it (atomic: the writer polls it without the lock) */
	int err; /* of the batch done */
	int fd;
	bool no_sync;
	char *buf;
	size_t len, cap;
	unsigned records;
	__u64 last_seq;
};

struct audit_writer {
	int dirfd, fd;
	char host[AUDIT_HOST_MAX];
	struct audit_writer_opts o;
	char *buf; /* the pending batch */
	size_t len, cap;
	char *spare; /* the buffer of the last batch committed, for the next one */
	size_t spare_cap;
	struct committer commit;
	unsigned pending;
	__u64 batch_start_ns; /* CLOCK_MONOTONIC of the batch's first record */
	__u64 seq; /* last assigned */
	__u64 committed_seq;
	char prev[AUDIT_HASH_HEX]; /* hash of the last queued line */
	__u64 size; /* of the live file, pending batch included */
	__u64 first_seq; /* of the live segment */
	bool append_only;
	bool rotating;
	int err; /* sticky: a log that failed to commit stays failed */
	struct compressor gz;
};

static __u64 now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int set_append_flag(int fd, bool on)
{
	int flags;

	if (ioctl(fd, FS_IOC_GETFLAGS, &flags))
		return -errno;
	flags = on ? flags | FS_APPEND_FL : flags & ~FS_APPEND_FL;
	return ioctl(fd, FS_IOC_SETFLAGS, &flags) ? -errno : 0;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= w;
	}
	return 0;
}

/* Threads of the writer take no signals: the daemon's handlers belong to its own thread. */
static int start_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -err;
}

static void *commit_thread(void *arg)
{
	struct committer *c = arg;
	int err;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		while (!c->stop && !(c->busy && !__atomic_load_n(&c->done, __ATOMIC_RELAXED)))
			pthread_cond_wait(&c->cond, &c->lock);
		if (!c->busy || __atomic_load_n(&c->done, __ATOMIC_RELAXED))
			break;
		pthread_mutex_unlock(&c->lock);
		err = write_all(c->fd, c->buf, c->len);
		if (!err && !c->no_sync && fdatasync(c->fd))
			err = -errno;
		pthread_mutex_lock(&c->lock);
		c->err = err;
		__atomic_store_n(&c->done, true, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&c->cond);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

static int committer_start(struct committer *c, bool no_sync)
{
	int err;

	c->no_sync = no_sync;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	err = start_thread(&c->thread, commit_thread, c);
	if (err) {
		pthread_mutex_destroy(&c->lock);
		pthread_cond_destroy(&c->cond);
		return err;
	}
	c->running = true;
	return 0;
}

/* The writer has taken back the last batch (audit_writer_flush). */
static void committer_stop(struct committer *c)
{
	if (!c->running)
		return;
	pthread_mutex_lock(&c->lock);
	c->stop = true;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->thread, NULL);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->cond);
	free(c->buf);
	c->running = false;
}

/* Hands the pending batch to the committer (none in flight); the spare buffer takes its place. */
static void commit_start(struct audit_writer *w)
{
	struct committer *c = &w->commit;

	c->buf = w->buf;
	c->cap = w->cap;
	c->len = w->len;
	c->records = w->pending;
	c->last_seq = w->seq;
	c->fd = w->fd;
	w->buf = w->spare;
	w->cap = w->spare_cap;
	w->spare = NULL;
	w->spare_cap = 0;
	w->len = 0;
	w->pending = 0;
	pthread_mutex_lock(&c->lock);
	c->busy = true;
	__atomic_store_n(&c->done, false, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

/*
 * Takes back the batch in flight once it is synced (waiting for that when wait), and hands it
 * on: the committed callback, the committed seq. Returns 0 or the commit's error (sticky).
 */
static int commit_reap(struct audit_writer *w, bool wait)
{
	struct committer *c = &w->commit;
	int err;

	if (!c->busy)
		return w->err;
	if (!wait && !__atomic_load_n(&c->done, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&c->lock);
	while (!c->done)
		pthread_cond_wait(&c->cond, &c->lock);
	err = c->err;
	c->busy = false;
	pthread_mutex_unlock(&c->lock);
	if (err) {
		log_err("audit: cannot commit %u records to %s: %s\n", c->records, AUDIT_LIVE_NAME,
			strerror(-err));
		w->err = err;
	} else {
		if (w->o.committed)
			w->o.committed(w->o.ctx, c->buf, c->len);
		w->committed_seq = c->last_seq;
	}
	free(w->spare);
	w->spare = c->buf;
	w->spare_cap = c->cap;
	c->buf = NULL;
	return w->err;
}

int audit_writer_flush(struct audit_writer *w)
{
	int err = commit_reap(w, true);

	if (err || !w->len)
		return err;
	commit_start(w);
	return commit_reap(w, true);
}

static bool batch_due(struct audit_writer *w)
{
	return w->pending >= w->o.batch_records ||
	       now_ns(CLOCK_MONOTONIC) - w->batch_start_ns >= w->o.batch_ms * 1000000ULL;
}

/* Starts committing the pending batch if it is due and the one before is synced. */
static int commit_due(struct audit_writer *w)
{
	int err = commit_reap(w, false);

	if (err || !w->pending || !batch_due(w))
		return err;
	/* One batch in flight at most: a batch stays within batch_records, and so do publishes. */
	err = commit_reap(w, true);
	if (!err)
		commit_start(w);
	return err;
}

static int compress_file(int dirfd, const char *name)
{
	char tmp[80], gzname[72], chunk[65536];
	int in, out = -1, err = 0;
	gzFile gz = NULL;
	ssize_t n;

	snprintf(gzname, sizeof(gzname), "%s.gz", name);
	snprintf(tmp, sizeof(tmp), "%s.gz.tmp", name);
	in = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (in >= 0)
		out = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (in < 0 || out < 0)
		goto fail;
	gz = gzdopen(dup(out), "wb1");
	if (!gz)
		goto fail;
	while ((n = read(in, chunk, sizeof(chunk))) > 0)
		if (gzwrite(gz, chunk, n) != n)
			break;
	if (n != 0)
		goto fail;
	if (gzclose(gz) != Z_OK) {
		gz = NULL;
		goto fail;
	}
	gz = NULL;
	if (fsync(out) || renameat(dirfd, tmp, dirfd, gzname) || fsync(dirfd) ||
	    unlinkat(dirfd, name, 0) || fsync(dirfd))
		goto fail;
	goto out;
fail:
	err = errno ? -errno : -EIO;
	log_err("audit: cannot compress segment %s: %s\n", name, strerror(-err));
	unlinkat(dirfd, tmp, 0);
out:
	if (gz)
		gzclose(gz);
	if (out >= 0)
		close(out);
	if (in >= 0)
		close(in);
	return err;
}

static void *compress_thread(void *arg)
{
	struct compressor *c = arg;
	char name[64];
	int err;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		while (c->head == c->tail && !c->stop)
			pthread_cond_wait(&c->cond, &c->lock);
		if (c->head == c->tail)
			break;
		memcpy(name, c->names[c->tail % GZ_QUEUE], sizeof(name));
		pthread_mutex_unlock(&c->lock);
		err = compress_file(c->dirfd, name);
		pthread_mutex_lock(&c->lock);
		if (err && !c->err)
			c->err = err;
		c->tail++;
		pthread_cond_broadcast(&c->cond);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/* Compresses what is queued, stops the thread; returns the first compression error. */
static int compressor_wait(struct compressor *c)
{
	if (!c->running)
		return 0;
	pthread_mutex_lock(&c->lock);
	c->stop = true;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->thread, NULL);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->cond);
	c->running = false;
	return c->err;
}

static int compressor_start(struct compressor *c, int dirfd, const char *name)
{
	int err;

	if (!c->running) {
		c->dirfd = dirfd;
		c->head = c->tail = 0;
		c->stop = false;
		pthread_mutex_init(&c->lock, NULL);
		pthread_cond_init(&c->cond, NULL);
		err = start_thread(&c->thread, compress_thread, c);
		if (err) {
			pthread_mutex_destroy(&c->lock);
			pthread_cond_destroy(&c->cond);
			return err;
		}
		c->running = true;
	}
	pthread_mutex_lock(&c->lock);
	while (c->head - c->tail == GZ_QUEUE)
		pthread_cond_wait(&c->cond, &c->lock);
	snprintf(c->names[c->head % GZ_QUEUE], sizeof(c->names[0]), "%s", name);
	c->head++;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static int open_live(struct audit_writer *w)
{
	struct stat st;
	int err;

	w->fd = openat(w->dirfd, AUDIT_LIVE_NAME, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	if (w->fd < 0 || fstat(w->fd, &st))
		return -errno;
	w->size = st.st_size;
	w->append_only = false;
	if (w->o.no_append_flag)
		return 0;
	err = set_append_flag(w->fd, true);
	if (!err)
		w->append_only = true;
	else if (err != -EOPNOTSUPP && err != -ENOTTY && err != -EPERM)
		return err;
	else
		log_info("audit: %s cannot be made append-only (%s), ignoring\n", AUDIT_LIVE_NAME,
			 strerror(-err));
	return 0;
}

static int queue(struct audit_writer *w, const struct audit_record *r);

static int lifecycle(struct audit_writer *w, const char *op, const char *detail)
{
	struct audit_record *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	r->kind = AUDIT_KIND_LIFECYCLE;
	snprintf(r->op, sizeof(r->op), "%s", op);
	snprintf(r->detail, sizeof(r->detail), "%s", detail);
	err = queue(w, r);
	free(r);
	return err;
}

/* Closes the live segment with segment-end and starts the next one with segment-start. */
static int rotate(struct audit_writer *w)
{
	char name[64], detail[128];
	int err;

	w->rotating = true;
	err = lifecycle(w, "segment-end", "");
	if (!err)
		err = audit_writer_flush(w);
	if (err)
		goto out;
	if (w->append_only)
		set_append_flag(w->fd, false);
	close(w->fd);
	w->fd = -1;
	snprintf(name, sizeof(name), "audit-%020llu.log", (unsigned long long)w->first_seq);
	if (renameat(w->dirfd, AUDIT_LIVE_NAME, w->dirfd, name) || fsync(w->dirfd)) {
		err = -errno;
		log_err("audit: cannot rotate %s to %s: %s\n", AUDIT_LIVE_NAME, name,
			strerror(errno));
		goto out;
	}
	err = open_live(w);
	if (err)
		goto out;
	w->first_seq = w->seq + 1;
	snprintf(detail, sizeof(detail), "after %s", name);
	err = lifecycle(w, "segment-start", detail);
	if (!err)
		err = compressor_start(&w->gz, w->dirfd, name);
out:
	w->rotating = false;
	if (err)
		w->err = err;
	return err;
}

static int grow(struct audit_writer *w)
{
	size_t need = w->len + AUDIT_LINE_MAX + 2;
	char *p;

	if (need <= w->cap)
		return 0;
	p = realloc(w->buf, need * 2);
	if (!p)
		return -ENOMEM;
	w->buf = p;
	w->cap = need * 2;
	return 0;
}

static int queue(struct audit_writer *w, const struct audit_record *r)
{
	struct audit_stamp st = { .host = w->host, .prev = w->prev };
	int n, err;

	if (w->err)
		return w->err;
	err = grow(w);
	if (err)
		return err;
	if (!w->pending)
		w->batch_start_ns = now_ns(CLOCK_MONOTONIC);
	st.seq = w->seq + 1;
	if (!r->time_ns)
		st.time_ns = now_ns(CLOCK_REALTIME);
	n = audit_record_format(r, &st, w->buf + w->len, AUDIT_LINE_MAX + 1);
	if (n < 0)
		return n;
	w->seq++;
	audit_hash_hex(w->buf + w->len, n, w->prev);
	w->buf[w->len + n] = '\n';
	w->len += n + 1;
	w->size += n + 1;
	w->pending++;
	return 0;
}

int audit_writer_append(struct audit_writer *w, const struct audit_record *r)
{
	int err = queue(w, r);

	if (err)
		return err;
	if (w->size >= w->o.segment_bytes && !w->rotating)
		return rotate(w);
	return commit_due(w);
}

int audit_writer_loss(struct audit_writer *w, __u32 agent, __u64 count, const char *source,
		      const char *detail)
{
	struct audit_record *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	r->kind = AUDIT_KIND_LOSS;
	strcpy(r->op, "dropped");
	r->agent = agent;
	r->has = AUDIT_HAS_COUNT;
	r->count = count;
	snprintf(r->source, sizeof(r->source), "%s", source);
	snprintf(r->detail, sizeof(r->detail), "%s", detail ? detail : "");
	err = audit_writer_append(w, r);
	free(r);
	return err;
}

int audit_writer_timeout_ms(struct audit_writer *w)
{
	__u64 age;

	/* A batch in flight is looked at again every millisecond, to hand it on once synced. */
	if (w->commit.busy)
		return __atomic_load_n(&w->commit.done, __ATOMIC_ACQUIRE) ? 0 : 1;
	if (!w->pending)
		return -1;
	age = (now_ns(CLOCK_MONOTONIC) - w->batch_start_ns) / 1000000ULL;
	return age >= w->o.batch_ms ? 0 : (int)(w->o.batch_ms - age);
}

int audit_writer_tick(struct audit_writer *w)
{
	return commit_due(w);
}

bool audit_writer_append_only(const struct audit_writer *w)
{
	return w->append_only;
}

__u64 audit_writer_last_seq(const struct audit_writer *w)
{
	return w->committed_seq;
}

/* What a log's last complete record says: where the chain resumes. */
struct resume {
	__u64 seq;
	char hash[AUDIT_HASH_HEX];
	char time[40];
	char op[AUDIT_NAME_MAX];
	__u64 torn; /* bytes after it that are not a record */
};

static bool parse_record(const char *line, size_t len, struct resume *r)
{
	json_t *rec = audit_json_loadb(line, len, 0);
	json_t *seq = json_object_get(rec, "seq");
	const char *time = json_string_value(json_object_get(rec, "time"));
	const char *op = json_string_value(json_object_get(rec, "op"));
	bool ok = json_is_integer(seq) && json_integer_value(seq) > 0 && time && op;

	if (ok) {
		r->seq = json_integer_value(seq);
		snprintf(r->time, sizeof(r->time), "%s", time);
		snprintf(r->op, sizeof(r->op), "%s", op);
		audit_hash_hex(line, len, r->hash);
	}
	json_decref(rec);
	return ok;
}

/* Finds the last record of the live file from its tail; what follows it is torn. */
static int resume_live(int fd, __u64 size, struct resume *r)
{
	size_t want = size < TAIL_SCAN_BYTES ? size : TAIL_SCAN_BYTES;
	char *buf = malloc(want + 1);
	size_t end;
	int err = -EBADMSG;

	if (!buf)
		return -ENOMEM;
	if (pread(fd, buf, want, size - want) != (ssize_t)want) {
		free(buf);
		return -EIO;
	}
	/* end: one past the newline that ends the candidate line */
	for (end = want; end > 0;) {
		size_t start = end - 1;

		while (start > 0 && buf[start - 1] != '\n')
			start--;
		if (buf[end - 1] == '\n' && parse_record(buf + start, end - 1 - start, r)) {
			r->torn = want - end;
			err = 0;
			break;
		}
		end = start;
	}
	free(buf);
	if (err)
		log_err("audit: no complete record in the last %zu bytes of %s\n", want,
			AUDIT_LIVE_NAME);
	return err;
}

/* The seq of the live file's first record: the name it gets when rotated. */
static int live_first_seq(int fd, __u64 *seq)
{
	char *buf = malloc(AUDIT_LINE_MAX + 1), *nl;
	struct resume r;
	ssize_t n;
	int err = -EBADMSG;

	if (!buf)
		return -ENOMEM;
	n = pread(fd, buf, AUDIT_LINE_MAX + 1, 0);
	nl = n > 0 ? memchr(buf, '\n', n) : NULL;
	if (nl && parse_record(buf, nl - buf, &r)) {
		*seq = r.seq;
		err = 0;
	}
	free(buf);
	if (err)
		log_err("audit: the first line of %s is not a record\n", AUDIT_LIVE_NAME);
	return err;
}

/* The last record of the newest rotated segment, when the live file is empty. */
static int resume_segments(const char *dir, struct resume *r, bool *found)
{
	struct audit_segments segs;
	struct audit_reader *rd;
	char *line;
	size_t len;
	int err, n;

	*found = false;
	err = audit_segments_list(dir, &segs);
	if (err)
		return err;
	if (segs.n < 2) {
		audit_segments_free(&segs);
		return 0;
	}
	err = audit_reader_open(&rd, segs.paths[segs.n - 2]);
	if (!err) {
		while ((n = audit_reader_next(rd, &line, &len)) == 1)
			*found |= parse_record(line, len, r);
		audit_reader_close(rd);
		if (n < 0 || !*found)
			err = -EBADMSG;
	}
	if (err)
		log_err("audit: cannot resume from %s: %s\n", segs.paths[segs.n - 2],
			strerror(-err));
	audit_segments_free(&segs);
	return err;
}

/* Segments renamed but not yet compressed when the last writer stopped. */
static void finish_rotations(struct audit_writer *w, const char *dir)
{
	struct audit_segments segs;
	size_t i;

	if (audit_segments_list(dir, &segs))
		return;
	for (i = 0; i + 1 < segs.n; i++) {
		const char *base = strrchr(segs.paths[i], '/') + 1;
		size_t n = strlen(base);

		if (n > 4 && !strcmp(base + n - 4, ".log"))
			compress_file(w->dirfd, base);
	}
	audit_segments_free(&segs);
}

static int start_chain(struct audit_writer *w, const char *dir)
{
	struct resume r = { 0 };
	char detail[AUDIT_DETAIL_MAX];
	bool found = false;
	int err;

	if (w->size) {
		err = resume_live(w->fd, w->size, &r);
		if (!err)
			err = live_first_seq(w->fd, &w->first_seq);
		found = !err;
	} else {
		err = resume_segments(dir, &r, &found);
	}
	if (err)
		return err;
	if (!found) {
		strcpy(w->prev, AUDIT_GENESIS);
		w->first_seq = 1;
		return lifecycle(w, "log-start", "");
	}
	w->seq = w->committed_seq = r.seq;
	strcpy(w->prev, r.hash);
	if (!w->size) {
		w->first_seq = r.seq + 1;
		err = lifecycle(w, "segment-start", "after a rotated segment");
		if (err)
			return err;
	}
	/* A torn tail is ended by a newline so that the restart record is a line of its own. */
	if (r.torn) {
		w->buf[w->len++] = '\n';
		w->size++;
	}
	snprintf(detail, sizeof(detail), "last record seq %llu at %s (%s); %llu torn bytes",
		 (unsigned long long)r.seq, r.time, r.op, (unsigned long long)r.torn);
	return lifecycle(w, "restart", detail);
}

static void writer_free(struct audit_writer *w)
{
	commit_reap(w, true);
	committer_stop(&w->commit);
	compressor_wait(&w->gz);
	if (w->fd >= 0)
		close(w->fd);
	if (w->dirfd >= 0)
		close(w->dirfd);
	free(w->buf);
	free(w->spare);
	free(w);
}

int audit_writer_open(struct audit_writer **out, const char *dir,
		      const struct audit_writer_opts *opts)
{
	struct audit_writer *w = calloc(1, sizeof(*w));
	int err;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->fd = w->dirfd = -1;
	if (opts)
		w->o = *opts;
	if (!w->o.batch_records)
		w->o.batch_records = DEFAULT_BATCH_RECORDS;
	if (!w->o.batch_ms)
		w->o.batch_ms = DEFAULT_BATCH_MS;
	if (!w->o.segment_bytes)
		w->o.segment_bytes = DEFAULT_SEGMENT_BYTES;
	if (w->o.host)
		snprintf(w->host, sizeof(w->host), "%s", w->o.host);
	else if (gethostname(w->host, sizeof(w->host) - 1))
		strcpy(w->host, "localhost");
	w->o.host = NULL;
	if (mkdir(dir, 0750) && errno != EEXIST) {
		err = -errno;
		goto fail;
	}
	w->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->dirfd < 0) {
		err = -errno;
		goto fail;
	}
	finish_rotations(w, dir);
	err = committer_start(&w->commit, w->o.no_sync);
	if (!err)
		err = open_live(w);
	if (!err)
		err = grow(w);
	if (!err)
		err = start_chain(w, dir);
	if (!err)
		err = audit_writer_flush(w);
	if (err)
		goto fail;
	*out = w;
	return 0;
fail:
	log_err("audit: cannot open the log in %s: %s\n", dir, strerror(-err));
	writer_free(w);
	return err;
}

int audit_writer_close(struct audit_writer *w)
{
	int err, gzerr;

	if (!w)
		return 0;
	err = lifecycle(w, "log-stop", "");
	if (!err)
		err = audit_writer_flush(w);
	gzerr = compressor_wait(&w->gz);
	writer_free(w);
	return err ? err : gzerr;
}
