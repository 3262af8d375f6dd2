// SPDX-License-Identifier: GPL-2.0
/*
 * The audit writer: records are chained and queued in memory, and a batch is committed with one
 * write and one fdatasync when it holds batch_records or its oldest record is batch_ms old.
 * The commit runs on a thread of its own while the next batch fills (one batch in flight: a
 * batch due while the one before still syncs waits for it), and is handed on (opts.committed)
 * on the caller's thread once its fdatasync has returned.
 * Past segment_bytes the live file is closed with segment-end, renamed to audit-<firstseq>.log
 * and gzipped by a background thread while the next segment starts with segment-start.
 *
 * Over 800 lines, kept whole: the chain, the batch in flight, segments and the commit thread share
 * one lock and one state, whose invariants are easier to check in one file than across several.
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
#include "audit/audit.h"
#include "log.h"

#define DEFAULT_BATCH_RECORDS 4096
#define DEFAULT_BATCH_MS 10
#define DEFAULT_SEGMENT_BYTES (64ULL << 20)
#define TAIL_SCAN_BYTES (1U << 20)
#define DEFAULT_HOLD_BYTES (4U << 20)

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

/*
 * The batch in flight: written and fdatasync'ed by the committer thread. A batch that fails stays
 * here, and the writer hands it back to the thread for another attempt (audit_writer_tick):
 * after a failed write() the rest of it is appended; after a failed fdatasync() the whole batch
 * is written again at its offset, since the page cache may no longer hold it.
 */
struct committer {
	pthread_t thread;
	bool running;
	bool stop;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* a batch handed over, a batch done, stop */
	bool busy; /* holds a batch not yet handed on (the writer's thread only) */
	bool done; /* the thread finished an attempt (atomic: the writer polls it without the lock) */
	bool reaped; /* the writer has seen the failed attempt (the writer's thread only) */
	int err; /* of the attempt done */
	int fd;
	bool no_sync, append_only;
	int (*sync)(int fd);
	char *buf;
	size_t len, cap;
	size_t written; /* bytes of buf in the file */
	bool rewrite; /* an fdatasync failed: write all of buf again at off */
	__u64 off; /* file offset of buf[0] */
	unsigned records;
	struct audit_key *keys; /* one per record (with a committed callback) */
	size_t keys_cap;
	__u64 last_seq;
	__u64 attempt_ns; /* the last attempt's duration */
};

/* Records dropped while the log could not be written, per agent (0: the daemon's own). */
struct lost {
	__u32 agent;
	char name[AUDIT_NAME_MAX]; /* the agent's, as its first lost record named it */
	__u64 count, kernel; /* kernel: of them, events from the ring buffer */
};

#define LOST_MAX 256 /* agents counted apart; more are counted under agent 0 */

struct failure {
	bool on;
	int err; /* the last attempt's */
	__u64 since_ns; /* CLOCK_REALTIME of the first failure */
	__u64 retry_ns; /* CLOCK_MONOTONIC of the next attempt */
	unsigned backoff_ms;
	__u64 attempts, held;
	struct lost lost[LOST_MAX];
	unsigned nlost;
};

struct audit_writer {
	int dirfd, fd;
	char host[AUDIT_HOST_MAX];
	struct audit_writer_opts o;
	char *buf; /* the pending batch */
	size_t len, cap;
	char *spare; /* the buffer of the last batch committed, for the next one */
	size_t spare_cap;
	struct audit_key *keys, *spare_keys; /* of the records in buf and spare */
	size_t keys_cap, spare_keys_cap;
	struct committer commit;
	unsigned pending;
	__u64 batch_start_ns; /* CLOCK_MONOTONIC of the batch's first record */
	__u64 seq; /* last assigned */
	__u64 committed_seq;
	char prev[AUDIT_HASH_HEX]; /* hash of the last queued line */
	__u64 size; /* of the live file, pending batch included */
	__u64 first_seq; /* of the live segment */
	bool append_only;
	/* The batch in flight ends the live segment with segment-end, and the pending one begins
	 * the next with segment-start: once it is committed, switch_name is renamed. */
	bool switching;
	char switch_name[64];
	struct failure fail;
	struct compressor gz;
	struct audit_writer_stats stats; /* behind is filled in by audit_writer_stats() */
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

/* Appends buf[*done..n); *done counts what reached the file, also on failure. */
static int write_rest(int fd, const char *buf, size_t n, size_t *done)
{
	while (*done < n) {
		ssize_t w = write(fd, buf + *done, n - *done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		*done += w;
	}
	return 0;
}

/*
 * Writes the whole batch again at its offset, over whatever the failed fdatasync left there:
 * O_APPEND (and the append-only flag, which forbids clearing it) are lifted meanwhile.
 */
static int rewrite_batch(struct committer *c)
{
	int fl = fcntl(c->fd, F_GETFL), err = 0;
	size_t done = 0;

	if (fl < 0)
		return -errno;
	if (c->append_only)
		err = set_append_flag(c->fd, false);
	if (!err && fcntl(c->fd, F_SETFL, fl & ~O_APPEND))
		err = -errno;
	while (!err && done < c->len) {
		ssize_t w = pwrite(c->fd, c->buf + done, c->len - done, c->off + done);

		if (w < 0 && errno != EINTR)
			err = -errno;
		else if (w > 0)
			done += w;
	}
	fcntl(c->fd, F_SETFL, fl);
	if (c->append_only)
		set_append_flag(c->fd, true);
	c->written = err ? 0 : c->len;
	return err;
}

/* One attempt at the batch: write what is not written, then make it durable. */
static int commit_attempt(struct committer *c)
{
	int err = c->rewrite ? rewrite_batch(c) : write_rest(c->fd, c->buf, c->len, &c->written);

	if (err || c->no_sync)
		return err;
	err = c->sync ? c->sync(c->fd) : fdatasync(c->fd) ? -errno : 0;
	/* Linux marks the pages clean after a failed writeback: they may be gone from disk and
	 * from the cache, and a second fdatasync would succeed without writing them. */
	if (err)
		c->rewrite = true;
	return err;
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

/* A thread with the lock and condition it shares with the writer; nothing is left on failure. */
static int start_locked_thread(pthread_t *t, pthread_mutex_t *lock, pthread_cond_t *cond,
			       void *(*fn)(void *), void *arg)
{
	int err;

	pthread_mutex_init(lock, NULL);
	pthread_cond_init(cond, NULL);
	err = start_thread(t, fn, arg);
	if (err) {
		pthread_mutex_destroy(lock);
		pthread_cond_destroy(cond);
	}
	return err;
}

static void *commit_thread(void *arg)
{
	struct committer *c = arg;
	__u64 t0;
	int err;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		while (!c->stop && !(c->busy && !__atomic_load_n(&c->done, __ATOMIC_RELAXED)))
			pthread_cond_wait(&c->cond, &c->lock);
		if (!c->busy || __atomic_load_n(&c->done, __ATOMIC_RELAXED))
			break;
		pthread_mutex_unlock(&c->lock);
		t0 = now_ns(CLOCK_MONOTONIC);
		err = commit_attempt(c);
		pthread_mutex_lock(&c->lock);
		c->attempt_ns = now_ns(CLOCK_MONOTONIC) - t0;
		c->err = err;
		__atomic_store_n(&c->done, true, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&c->cond);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

static int committer_start(struct committer *c, bool no_sync, int (*sync)(int fd))
{
	int err;

	c->no_sync = no_sync;
	c->sync = sync;
	err = start_locked_thread(&c->thread, &c->lock, &c->cond, commit_thread, c);
	if (err)
		return err;
	c->running = true;
	return 0;
}

/* The writer has taken back the last batch (audit_writer_flush), or gives it up. */
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
	free(c->keys);
	c->running = false;
}

/* Sets the committer on its batch (again), with the lock: the thread takes it from here. */
static void commit_go(struct committer *c)
{
	pthread_mutex_lock(&c->lock);
	c->busy = true;
	c->reaped = false;
	__atomic_store_n(&c->done, false, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

/* Hands the pending batch to the committer (none in flight); the spare buffer takes its place. */
static void commit_start(struct audit_writer *w)
{
	struct committer *c = &w->commit;

	c->buf = w->buf;
	c->cap = w->cap;
	c->len = w->len;
	c->written = 0;
	c->rewrite = false;
	c->off = w->size - w->len;
	c->records = w->pending;
	c->keys = w->keys;
	c->keys_cap = w->keys_cap;
	c->last_seq = w->seq;
	c->fd = w->fd;
	c->append_only = w->append_only;
	w->buf = w->spare;
	w->cap = w->spare_cap;
	w->spare = NULL;
	w->spare_cap = 0;
	w->keys = w->spare_keys;
	w->keys_cap = w->spare_keys_cap;
	w->spare_keys = NULL;
	w->spare_keys_cap = 0;
	w->len = 0;
	w->pending = 0;
	commit_go(c);
}

static void fmt_time(__u64 ns, char *buf)
{
	audit_time_format(ns, buf);
}

/* The log stopped taking writes (or failed again): hold on, try again later. */
static void failed(struct audit_writer *w, int err)
{
	struct failure *f = &w->fail;

	if (!f->on) {
		log_err("audit: cannot write %s: %s; records are held (up to %zu bytes) and the "
			"write retried until it succeeds\n",
			AUDIT_LIVE_NAME, strerror(-err), w->o.hold_bytes);
		f->on = true;
		f->since_ns = now_ns(CLOCK_REALTIME);
		f->backoff_ms = 0;
	}
	f->err = err;
	f->attempts++;
	w->stats.write_errors++;
	/* 10 ms, doubling to 1 s: a full disk is not watched in a busy loop */
	f->backoff_ms = f->backoff_ms ? f->backoff_ms * 2 : 10;
	if (f->backoff_ms > 1000)
		f->backoff_ms = 1000;
	f->retry_ns = now_ns(CLOCK_MONOTONIC) + f->backoff_ms * 1000000ULL;
}

static int queue(struct audit_writer *w, const struct audit_record *r);

static void record_lost(struct audit_writer *w, const struct lost *l, const char *since,
			const char *until)
{
	struct audit_record *r = calloc(1, sizeof(*r));

	if (!r)
		return;
	r->kind = AUDIT_KIND_LOSS;
	strcpy(r->op, "not-written");
	r->agent = l->agent;
	memcpy(r->agent_name, l->name, sizeof(r->agent_name));
	r->has = AUDIT_HAS_COUNT;
	r->count = l->count;
	strcpy(r->source, "log");
	snprintf(r->detail, sizeof(r->detail),
		 "from=%s until=%s kernel_events=%llu: the audit log could not be written", since,
		 until, (unsigned long long)l->kernel);
	queue(w, r);
	free(r);
}

/* Writes work again: a record of the outage, and one loss record per agent that lost some. */
static void recovered(struct audit_writer *w)
{
	struct failure *f = &w->fail;
	struct audit_record *r = calloc(1, sizeof(*r));
	char since[40], until[40];
	__u64 lost = 0, now = now_ns(CLOCK_REALTIME);
	unsigned i;

	f->on = false;
	fmt_time(f->since_ns, since);
	fmt_time(now, until);
	for (i = 0; i < f->nlost; i++)
		lost += f->lost[i].count;
	log_info("audit: %s takes writes again after %llu ms (%llu records held, %llu lost)\n",
		 AUDIT_LIVE_NAME, (unsigned long long)(now - f->since_ns) / 1000000,
		 (unsigned long long)f->held, (unsigned long long)lost);
	if (r) {
		r->kind = AUDIT_KIND_LIFECYCLE;
		strcpy(r->op, "log-resumed");
		snprintf(r->detail, sizeof(r->detail),
			 "from=%s until=%s ms=%llu error=%s attempts=%llu held=%llu lost=%llu",
			 since, until, (unsigned long long)(now - f->since_ns) / 1000000,
			 strerrorname_np(-f->err) ? strerrorname_np(-f->err) : "?",
			 (unsigned long long)f->attempts, (unsigned long long)f->held,
			 (unsigned long long)lost);
		queue(w, r);
		free(r);
	}
	for (i = 0; i < f->nlost; i++)
		record_lost(w, &f->lost[i], since, until);
	memset(f, 0, sizeof(*f));
}

/*
 * Takes back the batch in flight once its attempt is done (waiting for that when wait), and
 * hands it on: the committed callback, the committed seq. A failed batch stays for the next
 * attempt. Returns 0, or the error the log fails with.
 */
static int commit_reap(struct audit_writer *w, bool wait)
{
	struct committer *c = &w->commit;
	int err;

	if (!c->busy)
		return w->fail.on ? w->fail.err : 0;
	if (c->reaped || (!wait && !__atomic_load_n(&c->done, __ATOMIC_ACQUIRE)))
		return w->fail.on ? w->fail.err : 0;
	pthread_mutex_lock(&c->lock);
	while (!c->done)
		pthread_cond_wait(&c->cond, &c->lock);
	err = c->err;
	pthread_mutex_unlock(&c->lock);
	if (err) {
		c->reaped = true;
		failed(w, err);
		return err;
	}
	c->busy = false;
	w->stats.batches++;
	w->stats.records += c->records;
	w->stats.bytes += c->len;
	metrics_histogram_observe(&w->stats.commit_seconds, c->attempt_ns / 1e9);
	if (w->o.committed)
		w->o.committed(w->o.ctx, c->buf, c->len, c->keys, c->records);
	w->committed_seq = c->last_seq;
	free(w->spare);
	w->spare = c->buf;
	w->spare_cap = c->cap;
	c->buf = NULL;
	free(w->spare_keys);
	w->spare_keys = c->keys;
	w->spare_keys_cap = c->keys_cap;
	c->keys = NULL;
	if (w->fail.on && !w->switching)
		recovered(w);
	return 0;
}

static int switch_segment(struct audit_writer *w);

/*
 * While the log fails: once the back-off has passed (or now, when force), the next attempt: the
 * batch held again, or the segment switch. Returns 0 or the error the log still fails with.
 */
static int retry(struct audit_writer *w, bool force)
{
	int err;

	if (!w->fail.on)
		return 0;
	if (!force && now_ns(CLOCK_MONOTONIC) < w->fail.retry_ns)
		return w->fail.err;
	if (w->commit.busy) {
		if (w->commit.reaped)
			commit_go(&w->commit);
		return commit_reap(w, force);
	}
	/* the batch that ended the segment is committed; switch_segment() ends the outage */
	err = switch_segment(w);
	if (err)
		failed(w, err);
	return err;
}

int audit_writer_flush(struct audit_writer *w)
{
	int err = commit_reap(w, true);

	if (err)
		return err;
	if (w->switching) {
		err = switch_segment(w);
		if (err) {
			failed(w, err);
			return err;
		}
	}
	if (!w->len)
		return 0;
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

	if (w->fail.on)
		return retry(w, false);
	if (err || !w->pending || !batch_due(w))
		return err;
	/* One batch in flight at most: a batch stays within batch_records, and so do publishes. */
	err = commit_reap(w, true);
	if (!err && w->switching)
		err = switch_segment(w);
	if (err) {
		if (!w->fail.on)
			failed(w, err);
		return err;
	}
	commit_start(w);
	return 0;
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
		err = start_locked_thread(&c->thread, &c->lock, &c->cond, compress_thread, c);
		if (err)
			return err;
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
	if (w->fd < 0)
		return -errno;
	if (fstat(w->fd, &st)) {
		err = -errno;
		close(w->fd);
		w->fd = -1;
		return err;
	}
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

/*
 * The batch that ends the live segment is committed: rename the file, open the next one (the
 * pending batch, which begins with segment-start, goes there), gzip the old one. Each step
 * that is done stays done when a later one fails: the next attempt goes on from there.
 */
static int switch_segment(struct audit_writer *w)
{
	int err;

	if (w->fd >= 0) {
		if (w->append_only)
			set_append_flag(w->fd, false);
		if (renameat(w->dirfd, AUDIT_LIVE_NAME, w->dirfd, w->switch_name)) {
			err = -errno;
			if (w->append_only)
				set_append_flag(w->fd, true);
			return err;
		}
		close(w->fd);
		w->fd = -1;
	}
	if (fsync(w->dirfd))
		return -errno;
	err = open_live(w);
	if (err)
		return err;
	w->size += w->len;
	w->switching = false;
	err = compressor_start(&w->gz, w->dirfd, w->switch_name);
	if (err)
		log_err("audit: cannot start compressing %s: %s; the next start does it\n",
			w->switch_name, strerror(-err));
	if (w->fail.on && !w->commit.busy)
		recovered(w);
	return 0;
}

/*
 * Ends the live segment with segment-end, alone in the batch that goes to this file, and queues
 * segment-start first in the next one, which goes to the next file (switch_segment).
 */
static int rotate(struct audit_writer *w)
{
	char detail[128];
	int err = commit_reap(w, true);

	if (!err)
		err = lifecycle(w, "segment-end", "");
	if (err)
		return err;
	snprintf(w->switch_name, sizeof(w->switch_name), "audit-%020llu.log",
		 (unsigned long long)w->first_seq);
	commit_start(w);
	w->switching = true;
	w->first_seq = w->seq + 1;
	snprintf(detail, sizeof(detail), "after %s", w->switch_name);
	err = lifecycle(w, "segment-start", detail);
	if (!err)
		err = audit_writer_flush(w);
	return err;
}

static int grow(struct audit_writer *w)
{
	size_t need = w->len + AUDIT_LINE_MAX + 2;
	struct audit_key *k;
	char *p;

	if (w->o.committed && w->pending == w->keys_cap) {
		k = realloc(w->keys, (w->keys_cap * 2 + 64) * sizeof(*k));
		if (!k)
			return -ENOMEM;
		w->keys = k;
		w->keys_cap = w->keys_cap * 2 + 64;
	}
	if (need <= w->cap)
		return 0;
	p = realloc(w->buf, need * 2);
	if (!p)
		return -ENOMEM;
	w->buf = p;
	w->cap = need * 2;
	return 0;
}

/* A record the failing log does not keep: counted for its agent's loss record. */
static void count_lost(struct audit_writer *w, const struct audit_record *r)
{
	struct failure *f = &w->fail;
	__u32 agent = r->agent;
	unsigned i;

	for (i = 0; i < f->nlost && f->lost[i].agent != agent; i++)
		;
	/* the last slot is agent 0's, which takes every agent past the others */
	if (i == f->nlost && i == LOST_MAX - 1 && agent) {
		agent = 0;
		for (i = 0; i < f->nlost && f->lost[i].agent; i++)
			;
	}
	if (i == f->nlost) {
		f->lost[i].agent = agent;
		if (agent == r->agent)
			memcpy(f->lost[i].name, r->agent_name, sizeof(f->lost[i].name));
		f->nlost++;
	}
	f->lost[i].count++;
	if (r->kind >= AUDIT_KIND_FILE && r->kind <= AUDIT_KIND_SELF)
		f->lost[i].kernel++;
}

/* While the log fails: whether r is held for later, or counted lost. */
static bool drop(struct audit_writer *w, const struct audit_record *r)
{
	if (!w->fail.on)
		return false;
	if (w->len < w->o.hold_bytes && (!w->o.hold || w->o.hold(w->o.ctx, r->agent))) {
		w->fail.held++;
		return false;
	}
	count_lost(w, r);
	return true;
}

static int queue(struct audit_writer *w, const struct audit_record *r)
{
	struct audit_stamp st = { .host = w->host, .prev = w->prev };
	int n, err;

	if (drop(w, r))
		return 0;
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
	/* what subscribers filter on, taken from r now rather than parsed from the line later */
	if (w->o.committed) {
		audit_key_of(r, r->time_ns ? r->time_ns : st.time_ns, &w->keys[w->pending]);
		w->keys[w->pending].len = n + 1;
	}
	w->pending++;
	return 0;
}

int audit_writer_append(struct audit_writer *w, const struct audit_record *r)
{
	int err = queue(w, r);

	if (err)
		return err;
	/* A log that cannot be written is audit_writer_failing()'s: logged once, retried. */
	if (w->size >= w->o.segment_bytes && !w->switching && !w->fail.on)
		rotate(w);
	else
		commit_due(w);
	return 0;
}

int audit_writer_loss(struct audit_writer *w, __u32 agent, const char *name, __u64 count,
		      const char *source, const char *detail)
{
	struct audit_record *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	r->kind = AUDIT_KIND_LOSS;
	strcpy(r->op, "dropped");
	r->agent = agent;
	snprintf(r->agent_name, sizeof(r->agent_name), "%s", name ? name : "");
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
	struct committer *c = &w->commit;
	__u64 now = now_ns(CLOCK_MONOTONIC), age;

	/* A batch in flight is looked at again every millisecond, to hand it on once synced. */
	if (c->busy && !c->reaped)
		return __atomic_load_n(&c->done, __ATOMIC_ACQUIRE) ? 0 : 1;
	if (w->fail.on)
		return now >= w->fail.retry_ns ? 0 : (int)((w->fail.retry_ns - now) / 1000000 + 1);
	if (!w->pending)
		return -1;
	age = (now - w->batch_start_ns) / 1000000ULL;
	return age >= w->o.batch_ms ? 0 : (int)(w->o.batch_ms - age);
}

int audit_writer_tick(struct audit_writer *w)
{
	commit_due(w);
	return 0;
}

int audit_writer_failing(const struct audit_writer *w, __u64 *since_ns)
{
	if (since_ns)
		*since_ns = w->fail.on ? w->fail.since_ns : 0;
	return w->fail.on ? w->fail.err : 0;
}

void audit_writer_stats(const struct audit_writer *w, struct audit_writer_stats *out)
{
	*out = w->stats;
	out->behind = w->seq - w->committed_seq;
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
	bool unterminated; /* it lacks its newline: a crash came between its last byte and that */
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
		bool nl = buf[end - 1] == '\n';

		while (start > 0 && buf[start - 1] != '\n')
			start--;
		if (nl && parse_record(buf + start, end - 1 - start, r)) {
			r->torn = want - end;
			err = 0;
			break;
		}
		/* Not torn: a whole record whose newline a crash kept from the file. */
		if (!nl && parse_record(buf + start, end - start, r)) {
			r->unterminated = true;
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

/* The restart record: the gap since the last record, and the torn bytes verify may accept. */
static int restart(struct audit_writer *w, const struct resume *last)
{
	struct audit_record *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	r->kind = AUDIT_KIND_LIFECYCLE;
	strcpy(r->op, "restart");
	r->has = AUDIT_HAS_TORN;
	r->torn = last->torn;
	snprintf(r->detail, sizeof(r->detail), "last record seq %llu at %s (%s); %llu torn bytes",
		 (unsigned long long)last->seq, last->time, last->op,
		 (unsigned long long)last->torn);
	err = queue(w, r);
	free(r);
	return err;
}

static int start_chain(struct audit_writer *w, const char *dir)
{
	struct resume r = { 0 };
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
	if (r.torn || r.unterminated) {
		w->buf[w->len++] = '\n';
		w->size++;
	}
	return restart(w, &r);
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
	free(w->keys);
	free(w->spare_keys);
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
	if (!w->o.hold_bytes)
		w->o.hold_bytes = DEFAULT_HOLD_BYTES;
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
	err = committer_start(&w->commit, w->o.no_sync, w->o.sync);
	if (!err)
		err = open_live(w);
	if (!err)
		err = grow(w);
	if (!err)
		err = start_chain(w, dir);
	if (err)
		goto fail;
	/* A log that cannot take this commit is failing, not broken: it is retried. */
	audit_writer_flush(w);
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
	/* One last attempt, whatever the back-off says: what is still held then is lost. */
	if (err && w->fail.on && !retry(w, true))
		err = audit_writer_flush(w);
	if (err)
		log_err("audit: closing with records not written to %s: %s\n", AUDIT_LIVE_NAME,
			strerror(-err));
	gzerr = compressor_wait(&w->gz);
	writer_free(w);
	return err ? err : gzerr;
}
