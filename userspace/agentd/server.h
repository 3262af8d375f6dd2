/* SPDX-License-Identifier: GPL-2.0 */
/* The control socket: root peers only, non-blocking clients with bounded buffers. */
#ifndef AGENTD_SERVER_H
#define AGENTD_SERVER_H

#include "wire/control.h"
#include "loop.h"

#define SERVER_CLIENTS_MAX 64
#define SERVER_OUT_MAX (1 << 20)
#define SERVER_FRAME_DEADLINE_MS 5000

/* Answers one valid request; returns a new reply (NULL: out of memory). */
typedef json_t *(*server_handler)(void *ctx, const struct control_request *req);

/* Whether to refuse the peer of a new connection: 1 with why, or 0. */
typedef int (*server_admit)(void *ctx, int fd, char *why, size_t whysz);

struct server;

/* Listens on path (mode 0600; its directory is created 0700); a stale socket is replaced. The
 * listener and every client are watched by l, which records their events for server_service(). */
int server_open(struct server **out, const char *path, struct loop *l, server_handler fn,
		void *ctx);
/* Every later connection, from a root peer, is refused when admit says so (with its reason). */
void server_set_admit(struct server *s, server_admit admit);
/* Accepts, reads, answers, writes, expires: with the events the loop's pass recorded, after the
 * other watches' callbacks, so that a stream subscriber that came before a request that makes
 * records is listening when they are published. The next partial frame's deadline is asked of
 * the loop (loop_wake_within()). */
void server_service(struct server *s);
/* Closes every client and the listener, unlinks the socket; accepts NULL. */
void server_close(struct server *s);

#endif
