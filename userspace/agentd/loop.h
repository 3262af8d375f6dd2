/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The daemon's one event loop: every part (control socket and its clients, ring buffer, broker,
 * proxy, metrics, audit streams, mount watcher, spawned workers) registers its fds with a
 * callback, and asks for its timers with loop_wake_within(); one epoll set, waited on by the
 * daemon alone (daemon.c serve()): no subsystem owns the loop.
 */
#ifndef AGENTD_LOOP_H
#define AGENTD_LOOP_H

#include <stdint.h>

struct loop;

/* Called with the epoll events (EPOLLIN, EPOLLOUT, EPOLLHUP, ...) that fd is ready for. */
typedef void (*loop_fn)(void *ctx, int fd, uint32_t events);

int loop_new(struct loop **out);
/* Watches fd for events (EPOLLIN, EPOLLOUT, ...). Returns 0 or -errno. */
int loop_add(struct loop *l, int fd, uint32_t events, loop_fn fn, void *ctx);
/* Changes the events watched for fd. */
int loop_mod(struct loop *l, int fd, uint32_t events);
/* Stops watching fd (before it is closed); unknown fds are ignored. */
void loop_del(struct loop *l, int fd);
/* Waits up to timeout_ms (-1: no limit) for a watched fd, then calls the callbacks of the fds
 * ready. Returns 0 or -errno (-EINTR: a signal came first). */
int loop_dispatch(struct loop *l, int timeout_ms);
/* Asks for the next pass within ms milliseconds (timers of the subsystems). */
void loop_wake_within(struct loop *l, int ms);
/* The poll timeout the subsystems asked for, -1 when none; resets the request. */
int loop_take_timeout(struct loop *l);
/* Accepts NULL. */
void loop_free(struct loop *l);

#endif
