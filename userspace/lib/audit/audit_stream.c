// SPDX-License-Identifier: GPL-2.0
/*
 * The audit stream: subscribers on a Unix socket receive committed records as JSON lines. Each
 * has a bounded buffer; one that falls behind is disconnected, so a slow consumer never slows
 * the writer, and the disconnection becomes a loss record.
 *
 * Protocol: the subscriber sends one filter line first (audit_filter_parse() syntax; empty for
 * everything), or shuts down its sending side; records flow after that. Filters match the
 * keys the writer took from each record in memory: no line is parsed here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include "wire/accept.h"
#include "audit/audit.h"
#include "log.h"

#define DEFAULT_CAP (1U << 20)
#define FILTER_MAX 512
#define SUBS_MAX 64 /* each may hold buf_cap bytes: a bound on what subscribers cost */

struct sub {
	int fd;
	bool ready; /* its filter line has arrived */
	bool read_done;
	struct audit_filter filter;
	char in[FILTER_MAX];
	size_t inlen;
	char *out;
	size_t len;
	bool want_out; /* EPOLLOUT registered */
};

struct audit_stream {
	int listen_fd, epfd;
	size_t cap;
	struct sub **subs;
	size_t n;
	__u64 dropped; /* not yet reported */
	int (*admit)(void *ctx, int fd, char *why, size_t whysz);
	void *admit_ctx;
};

void audit_stream_set_admit(struct audit_stream *s,
			    int (*admit)(void *ctx, int fd, char *why, size_t whysz), void *ctx)
{
	s->admit = admit;
	s->admit_ctx = ctx;
}

int audit_stream_open(struct audit_stream **out, int listen_fd, size_t buf_cap)
{
	struct audit_stream *s = calloc(1, sizeof(*s));
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->listen_fd = listen_fd;
	s->cap = buf_cap ? buf_cap : DEFAULT_CAP;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0 || epoll_ctl(s->epfd, EPOLL_CTL_ADD, listen_fd, &ev)) {
		int err = -errno;

		if (s->epfd >= 0)
			close(s->epfd);
		free(s);
		return err;
	}
	*out = s;
	return 0;
}

int audit_stream_fd(const struct audit_stream *s)
{
	return s->epfd;
}

size_t audit_stream_subscribers(const struct audit_stream *s)
{
	return s->n;
}

static void sub_free(struct audit_stream *s, size_t i)
{
	struct sub *sub = s->subs[i];

	close(sub->fd); /* leaves the epoll set with it */
	free(sub->out);
	free(sub);
	s->subs[i] = s->subs[--s->n];
}

static void sub_events(struct audit_stream *s, struct sub *sub)
{
	struct epoll_event ev = { .data.ptr = sub };

	ev.events = (sub->read_done ? 0 : EPOLLIN) | (sub->len ? EPOLLOUT : 0);
	epoll_ctl(s->epfd, EPOLL_CTL_MOD, sub->fd, &ev);
	sub->want_out = sub->len;
}

/* Sends what the socket takes. Returns 0, or -errno when the subscriber is gone. */
static int sub_flush(struct audit_stream *s, struct sub *sub)
{
	size_t sent = 0;
	bool had = sub->want_out;

	while (sent < sub->len) {
		ssize_t n = send(sub->fd, sub->out + sent, sub->len - sent,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0)
			return -errno;
		sent += n;
	}
	memmove(sub->out, sub->out + sent, sub->len - sent);
	sub->len -= sent;
	if (had != (sub->len != 0))
		sub_events(s, sub);
	return 0;
}

static bool sub_queue(struct audit_stream *s, struct sub *sub, const char *p, size_t n)
{
	if (sub->len + n > s->cap)
		return false;
	if (!sub->out) {
		sub->out = malloc(s->cap);
		if (!sub->out)
			return false;
	}
	memcpy(sub->out + sub->len, p, n);
	sub->len += n;
	return true;
}

/* Queues the lines whose keys pass the filter; false when the subscriber's buffer overflows. */
static bool sub_publish(struct audit_stream *s, struct sub *sub, const char *lines, size_t len,
			const struct audit_key *keys, size_t n)
{
	size_t i, off = 0;

	if (audit_filter_empty(&sub->filter))
		return sub_queue(s, sub, lines, len);
	for (i = 0; i < n && off + keys[i].len <= len; off += keys[i].len, i++)
		if (audit_filter_match_key(&sub->filter, &keys[i]) &&
		    !sub_queue(s, sub, lines + off, keys[i].len))
			return false;
	return true;
}

static void drop(struct audit_stream *s, size_t i, const char *why)
{
	log_warn("audit: stream subscriber %d dropped: %s\n", s->subs[i]->fd, why);
	s->dropped++;
	sub_free(s, i);
}

void audit_stream_publish(struct audit_stream *s, const char *lines, size_t len,
			  const struct audit_key *keys, size_t n)
{
	size_t i = 0;

	while (i < s->n) {
		struct sub *sub = s->subs[i];

		if (!sub->ready) {
			i++;
			continue;
		}
		if (!sub_publish(s, sub, lines, len, keys, n)) {
			drop(s, i, "it fell behind");
			continue;
		}
		if (sub_flush(s, sub)) {
			sub_free(s, i);
			continue;
		}
		i++;
	}
}

static int sub_read(struct audit_stream *s, struct sub *sub);

/*
 * Accepts one subscriber and reads the filter line it may have sent already, so that one who
 * subscribed before a record was appended gets it. Returns 1, 0 when none waits, or -errno.
 */
static int accept_one(struct audit_stream *s)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct sub *sub, **subs;
	int fd = accept_shedding(s->listen_fd, SOCK_NONBLOCK | SOCK_CLOEXEC);
	char why[256], line[300];
	int n;

	if (fd == -ECONNABORTED)
		return 1; /* shed, or gone before accepted: more may wait */
	if (fd < 0)
		return fd == -EAGAIN || fd == -EINTR ? 0 : fd;
	if (s->admit && s->admit(s->admit_ctx, fd, why, sizeof(why))) {
		n = snprintf(line, sizeof(line), "error: refused: %s\n", why);
		send(fd, line, n < (int)sizeof(line) ? n : (int)sizeof(line) - 1,
		     MSG_DONTWAIT | MSG_NOSIGNAL);
		close(fd);
		return 1;
	}
	if (s->n == SUBS_MAX) {
		send(fd, "error: too many subscribers\n", 28, MSG_DONTWAIT | MSG_NOSIGNAL);
		close(fd);
		return 1;
	}
	sub = calloc(1, sizeof(*sub));
	subs = realloc(s->subs, (s->n + 1) * sizeof(*subs));
	if (subs)
		s->subs = subs;
	ev.data.ptr = sub;
	if (!sub || !subs || epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		free(sub);
		close(fd);
		return -ENOMEM;
	}
	sub->fd = fd;
	audit_filter_init(&sub->filter);
	s->subs[s->n++] = sub;
	if (sub_read(s, sub))
		sub_free(s, s->n - 1);
	return 1;
}

/* Reads the filter line. Returns 0, or -errno when the subscriber must go. */
static int sub_read(struct audit_stream *s, struct sub *sub)
{
	ssize_t n =
		recv(sub->fd, sub->in + sub->inlen, sizeof(sub->in) - 1 - sub->inlen, MSG_DONTWAIT);
	char *nl;

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (sub->ready && n > 0)
		return 0; /* nothing is read after the filter */
	sub->inlen += n;
	sub->in[sub->inlen] = '\0';
	nl = memchr(sub->in, '\n', sub->inlen);
	if (!nl && n > 0 && sub->inlen < sizeof(sub->in) - 1)
		return 0;
	if (!nl && n > 0)
		return -EMSGSIZE;
	if (n == 0)
		sub->read_done = true;
	if (!sub->ready) {
		if (nl)
			*nl = '\0';
		if (audit_filter_parse(&sub->filter, sub->in)) {
			send(sub->fd, "error: bad filter\n", 18, MSG_DONTWAIT | MSG_NOSIGNAL);
			return -EINVAL;
		}
		sub->ready = true;
	}
	sub_events(s, sub);
	return 0;
}

static size_t sub_index(struct audit_stream *s, struct sub *sub)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->subs[i] == sub)
			return i;
	return s->n;
}

int audit_stream_service(struct audit_stream *s)
{
	struct epoll_event evs[32];
	int n, i, err = 0;

	n = epoll_wait(s->epfd, evs, 32, 0);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (i = 0; i < n; i++) {
		struct sub *sub = evs[i].data.ptr;
		size_t at;

		if (!sub) {
			while ((err = accept_one(s)) > 0)
				;
			continue;
		}
		at = sub_index(s, sub);
		if (at == s->n)
			continue;
		if ((evs[i].events & (EPOLLERR | EPOLLHUP)) ||
		    ((evs[i].events & EPOLLIN) && sub_read(s, sub)) ||
		    ((evs[i].events & EPOLLOUT) && sub_flush(s, sub)))
			sub_free(s, at);
	}
	return err;
}

int audit_stream_pop_loss(struct audit_stream *s, struct audit_record *r)
{
	if (!s->dropped)
		return 0;
	memset(r, 0, sizeof(*r));
	r->kind = AUDIT_KIND_LOSS;
	strcpy(r->op, "subscriber-dropped");
	r->has = AUDIT_HAS_COUNT;
	r->count = s->dropped;
	strcpy(r->source, "stream");
	snprintf(r->detail, sizeof(r->detail),
		 "stream subscribers disconnected: more than %zu bytes behind", s->cap);
	s->dropped = 0;
	return 1;
}

void audit_stream_close(struct audit_stream *s)
{
	if (!s)
		return;
	while (s->n)
		sub_free(s, 0);
	free(s->subs);
	close(s->epfd);
	free(s);
}
