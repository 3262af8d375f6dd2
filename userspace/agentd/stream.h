/* SPDX-License-Identifier: GPL-2.0 */
/* The daemon's live audit stream: subscribers on a Unix socket get committed records (stream.c). */
#ifndef AGENTD_STREAM_H
#define AGENTD_STREAM_H

#include <stddef.h>

struct daemon;
struct audit_key;

/* Listens on --stream (default: audit.sock beside the control socket), in the daemon's loop.
 * Before the audit writer opens, so that its first records reach subscribers. Returns 0 or
 * -errno (logged). */
int stream_open(struct daemon *d);
/* The audit writer's committed callback (ctx: the daemon). */
void stream_committed(void *ctx, const char *lines, size_t len, const struct audit_key *keys,
		      size_t n);
/* Every pass of the loop: subscribers dropped for falling behind become a loss record. */
void stream_tick(struct daemon *d);
const char *stream_path(const struct daemon *d);
/* After the audit writer is closed (its last records are published). Accepts no stream. */
void stream_close(struct daemon *d);

#endif
