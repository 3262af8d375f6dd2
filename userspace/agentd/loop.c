// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>
#include "loop.h"

#define LOOP_BATCH 64

struct watch {
	int fd;
	loop_fn fn;
	void *ctx;
	struct watch *next;
};

struct loop {
	int epfd;
	int timeout_ms; /* -1: none asked */
	struct watch *watches;
	struct watch *dead; /* removed, freed after the pass that may still name them */
};

int loop_new(struct loop **out)
{
	struct loop *l = calloc(1, sizeof(*l));

	*out = NULL;
	if (!l)
		return -ENOMEM;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0) {
		free(l);
		return -errno;
	}
	l->timeout_ms = -1;
	*out = l;
	return 0;
}

static struct watch *find(struct loop *l, int fd, struct watch ***prev)
{
	struct watch **pp, *w;

	for (pp = &l->watches; (w = *pp); pp = &w->next)
		if (w->fd == fd)
			break;
	if (prev)
		*prev = pp;
	return w;
}

int loop_add(struct loop *l, int fd, uint32_t events, loop_fn fn, void *ctx)
{
	struct epoll_event ev = { .events = events };
	struct watch *w;

	if (find(l, fd, NULL))
		return -EEXIST;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	*w = (struct watch){ fd, fn, ctx, l->watches };
	ev.data.ptr = w;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		free(w);
		return -errno;
	}
	l->watches = w;
	return 0;
}

int loop_mod(struct loop *l, int fd, uint32_t events)
{
	struct watch *w = find(l, fd, NULL);
	struct epoll_event ev = { .events = events, .data.ptr = w };

	if (!w)
		return -ENOENT;
	return epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) ? -errno : 0;
}

void loop_del(struct loop *l, int fd)
{
	struct watch **prev, *w = find(l, fd, &prev);

	if (!w)
		return;
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
	*prev = w->next;
	/* The events of this pass may still name w: it is freed after them. */
	w->fn = NULL;
	w->next = l->dead;
	l->dead = w;
}

static void free_list(struct watch *w)
{
	struct watch *next;

	for (; w; w = next) {
		next = w->next;
		free(w);
	}
}

int loop_dispatch(struct loop *l, int timeout_ms)
{
	struct epoll_event ev[LOOP_BATCH];
	int n, i;

	n = epoll_wait(l->epfd, ev, LOOP_BATCH, timeout_ms);
	if (n < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		struct watch *w = ev[i].data.ptr;

		/* An earlier callback of this pass may have removed it (fn cleared). */
		if (w->fn)
			w->fn(w->ctx, w->fd, ev[i].events);
	}
	free_list(l->dead);
	l->dead = NULL;
	return 0;
}

void loop_wake_within(struct loop *l, int ms)
{
	if (ms < 0)
		ms = 0;
	if (l->timeout_ms < 0 || ms < l->timeout_ms)
		l->timeout_ms = ms;
}

int loop_take_timeout(struct loop *l)
{
	int t = l->timeout_ms;

	l->timeout_ms = -1;
	return t;
}

void loop_free(struct loop *l)
{
	if (!l)
		return;
	free_list(l->watches);
	free_list(l->dead);
	close(l->epfd);
	free(l);
}
