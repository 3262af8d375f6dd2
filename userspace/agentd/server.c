// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "wire/accept.h"
#include "wire/unixsock.h"
#include "log.h"
#include "server.h"

struct client {
	int fd;
	pid_t pid; /* SO_PEERCRED: who asks (approval decisions are audited with it) */
	uid_t uid;
	char in[CONTROL_HDR + CONTROL_FRAME_MAX];
	size_t inlen;
	long long frame_start_ms; /* when the pending partial frame began; 0: none */
	char *out;
	size_t outlen;
	bool closing; /* close once out is flushed: the stream cannot go on */
	uint32_t events; /* what the loop's pass saw (EPOLLIN, EPOLLOUT, EPOLLHUP, ...) */
	uint32_t watched; /* what the loop watches for */
};

struct server {
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int fd;
	uint32_t events; /* the listener's, as the loop's pass saw them */
	struct loop *loop;
	struct client *clients[SERVER_CLIENTS_MAX];
	server_handler fn;
	server_admit admit;
	void *ctx;
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int make_dir(const char *path)
{
	char copy[PATH_MAX];

	snprintf(copy, sizeof(copy), "%s", path);
	if (mkdir(dirname(copy), 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/* The loop's callback: the events wait for server_service(). */
static void on_ready(void *ctx, int fd, uint32_t events)
{
	(void)fd;
	*(uint32_t *)ctx |= events;
}

int server_open(struct server **out, const char *path, struct loop *l, server_handler fn, void *ctx)
{
	struct server *s;
	int err;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if ((size_t)snprintf(s->path, sizeof(s->path), "%s", path) >= sizeof(s->path)) {
		free(s);
		return -ENAMETOOLONG;
	}
	s->fn = fn;
	s->ctx = ctx;
	s->loop = l;
	err = make_dir(path);
	/* 0600 from the start: no moment at which another user could connect. */
	s->fd = err ? err : unix_listen(path, 0600, SERVER_CLIENTS_MAX);
	err = s->fd < 0 ? s->fd : loop_add(l, s->fd, EPOLLIN, on_ready, &s->events);
	if (err)
		goto err_free;
	*out = s;
	return 0;
err_free:
	if (s->fd >= 0)
		close(s->fd);
	free(s);
	return err;
}

static void client_free(struct server *s, int i)
{
	struct client *c = s->clients[i];

	loop_del(s->loop, c->fd);
	close(c->fd);
	free(c->out);
	free(c);
	s->clients[i] = NULL;
}

/* Queues a frame; a client whose buffer would pass SERVER_OUT_MAX is not reading: dropped. */
static int queue(struct client *c, json_t *doc)
{
	size_t len;
	char *buf, *more;
	int err;

	if (!doc)
		return -ENOMEM;
	err = control_frame_encode(doc, &buf, &len);
	json_decref(doc);
	if (err)
		return err;
	if (c->outlen + len > SERVER_OUT_MAX) {
		free(buf);
		return -ENOBUFS;
	}
	more = realloc(c->out, c->outlen + len);
	if (!more) {
		free(buf);
		return -ENOMEM;
	}
	memcpy(more + c->outlen, buf, len);
	free(buf);
	c->out = more;
	c->outlen += len;
	return 0;
}

static void flush(struct client *c)
{
	ssize_t n;

	while (c->outlen) {
		n = send(c->fd, c->out, c->outlen, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			/* The peer is gone: nothing more can reach it. */
			c->outlen = 0;
			c->closing = true;
			return;
		}
		memmove(c->out, c->out + n, c->outlen - n);
		c->outlen -= n;
	}
}

/* A frame that cannot be read: say why, then close (the stream cannot be resynchronised). */
static void refuse(struct client *c, const char *code, const char *msg)
{
	queue(c, control_reply_error(-1, code, msg));
	c->closing = true;
	c->inlen = 0;
}

void server_set_admit(struct server *s, server_admit admit)
{
	s->admit = admit;
}

static void accept_one(struct server *s)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct client *c;
	char why[256];
	int fd, i;

	fd = accept_shedding(s->fd, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	for (i = 0; i < SERVER_CLIENTS_MAX && s->clients[i]; i++)
		;
	c = i < SERVER_CLIENTS_MAX ? calloc(1, sizeof(*c)) : NULL;
	if (!c) {
		log_warn("control socket %s: no room for another client, refusing it\n", s->path);
		close(fd);
		return;
	}
	c->fd = fd;
	c->watched = EPOLLIN;
	if (loop_add(s->loop, fd, c->watched, on_ready, &c->events)) {
		log_warn("control socket %s: cannot watch another client, refusing it\n", s->path);
		close(fd);
		free(c);
		return;
	}
	s->clients[i] = c;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || cred.uid != 0) {
		log_warn("control socket %s: refusing peer pid %d uid %d: not root\n", s->path,
			 (int)cred.pid, (int)cred.uid);
		refuse(c, CONTROL_E_PERM, "agentd answers root only");
		flush(c);
	} else if (s->admit && s->admit(s->ctx, fd, why, sizeof(why))) {
		log_warn("control socket %s: refusing %s\n", s->path, why);
		refuse(c, CONTROL_E_PERM, "agentd does not answer agents or tools");
		flush(c);
	} else {
		c->pid = cred.pid;
		c->uid = cred.uid;
	}
}

static void answer(struct server *s, struct client *c, const char *payload, size_t n)
{
	struct control_request *req = malloc(sizeof(*req));
	struct control_error err = { "", "" };
	json_t *reply;

	if (!req) {
		c->closing = true;
		return;
	}
	if (control_request_parse(payload, n, req, &err)) {
		reply = control_reply_error(req->id, err.code, err.message);
	} else {
		req->peer_pid = c->pid;
		req->peer_uid = c->uid;
		reply = s->fn(s->ctx, req);
	}
	if (queue(c, reply))
		c->closing = true;
	free(req);
}

/* Answers every whole frame in the input buffer. */
static void frames(struct server *s, struct client *c)
{
	size_t n, used = 0;
	int r;

	while (!c->closing && (r = control_frame_check(c->in + used, c->inlen - used, &n)) == 1) {
		answer(s, c, c->in + used + CONTROL_HDR, n);
		used += CONTROL_HDR + n;
	}
	if (!c->closing && r < 0) {
		refuse(c, CONTROL_E_FRAME,
		       r == -EMSGSIZE ? "frame longer than 65536 bytes" : "empty frame");
		return;
	}
	memmove(c->in, c->in + used, c->inlen - used);
	c->inlen -= used;
	c->frame_start_ms =
		c->inlen ? (used || !c->frame_start_ms ? now_ms() : c->frame_start_ms) : 0;
}

static void read_client(struct server *s, struct client *c)
{
	ssize_t n;

	while (!c->closing) {
		n = recv(c->fd, c->in + c->inlen, sizeof(c->in) - c->inlen, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			if (c->inlen)
				refuse(c, CONTROL_E_FRAME, "truncated frame: the peer shut down");
			else
				c->closing = true;
			return;
		}
		c->inlen += n;
		frames(s, c);
	}
}

/* Milliseconds until a partial frame's deadline, -1 when none. */
static int timeout_ms(const struct server *s)
{
	long long now = now_ms(), left, best = -1;
	int i;

	for (i = 0; i < SERVER_CLIENTS_MAX; i++) {
		if (!s->clients[i] || !s->clients[i]->frame_start_ms)
			continue;
		left = s->clients[i]->frame_start_ms + SERVER_FRAME_DEADLINE_MS - now;
		if (left < 0)
			left = 0;
		if (best < 0 || left < best)
			best = left;
	}
	return (int)best;
}

/* What the loop watches for: reads until the stream is closing, writes while a reply waits.
 * Returns 0 or -errno (the client cannot be served). */
static int rewatch(struct server *s, struct client *c)
{
	uint32_t want = (c->closing ? 0 : EPOLLIN) | (c->outlen ? EPOLLOUT : 0);
	int err = want == c->watched ? 0 : loop_mod(s->loop, c->fd, want);

	if (!err)
		c->watched = want;
	return err;
}

static void service_client(struct server *s, int i)
{
	struct client *c = s->clients[i];
	uint32_t ev = c->events;

	c->events = 0;
	if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR))
		read_client(s, c);
	if (c->frame_start_ms && now_ms() - c->frame_start_ms >= SERVER_FRAME_DEADLINE_MS)
		refuse(c, CONTROL_E_FRAME, "truncated frame: incomplete after 5 seconds");
	flush(c);
	/* Closed once the reply is out, or when the peer is gone and it cannot be. */
	if ((c->closing && (!c->outlen || (ev & (EPOLLHUP | EPOLLERR)))) || rewatch(s, c))
		client_free(s, i);
}

void server_service(struct server *s)
{
	uint32_t ev = s->events;
	int i, t;

	s->events = 0;
	if (ev & EPOLLIN)
		accept_one(s);
	for (i = 0; i < SERVER_CLIENTS_MAX; i++)
		if (s->clients[i])
			service_client(s, i);
	t = timeout_ms(s);
	if (t >= 0)
		loop_wake_within(s->loop, t);
}

void server_close(struct server *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; i < SERVER_CLIENTS_MAX; i++)
		if (s->clients[i])
			client_free(s, i);
	loop_del(s->loop, s->fd);
	close(s->fd);
	unlink(s->path);
	free(s);
}
