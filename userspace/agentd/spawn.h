/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How agentd starts every worker (the broker's, the proxy's): fork, then exec of the worker's
 * binary, so that the worker is a fresh image holding nothing of agentd's (no mapping of a BPF
 * map, no descriptor, no environment). The child gets its channel to agentd as fd SPAWN_CHAN_FD,
 * /dev/null as stdin, and a pipe as stdout and stderr whose read end agentd's loop reads and logs
 * line by line under the worker's name. Dropping privileges is the worker's first act: it knows
 * what it needs (its uid, its seccomp filter).
 */
#ifndef AGENTD_SPAWN_H
#define AGENTD_SPAWN_H

#include <sys/types.h>
#include "loop.h"

#define SPAWN_CHAN_FD 3

/*
 * Starts path with argv (argv[0] first, NULL-terminated) and an empty environment. type is the
 * channel's socket type (SOCK_STREAM, SOCK_SEQPACKET); agentd's end, close-on-exec, is *chan.
 * name prefixes the worker's log lines. Returns 0 or -errno.
 */
int spawn_worker(struct loop *l, const char *name, const char *path, char *const argv[], int type,
		 pid_t *pid, int *chan);

/* The worker binary name beside agentd's own (as installed, and in build/). Returns 0 or -errno
 * (not there, or not executable). */
int spawn_path(const char *name, char *out, size_t outsz);

#endif
