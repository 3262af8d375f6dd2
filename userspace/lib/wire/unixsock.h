/* SPDX-License-Identifier: GPL-2.0 */
/* Unix stream sockets by path: the one way agentd's programs connect and listen. */
#ifndef AGENTD_UNIXSOCK_H
#define AGENTD_UNIXSOCK_H

#include <sys/types.h>

/* A connected socket (close-on-exec), or -errno (-ENAMETOOLONG for a path sun_path cannot
 * hold). */
int unix_connect(const char *path);
/*
 * A listening socket (non-blocking, close-on-exec) at path, created with mode (umask'd while it
 * binds, so there is no moment at which it has more); a socket file left by a daemon that died
 * is replaced. Returns the fd or -errno.
 */
int unix_listen(const char *path, mode_t mode, int backlog);

/*
 * sendmsg() of len bytes with fd (when fd >= 0) as SCM_RIGHTS; flags as send()'s. Returns the
 * bytes sent (the fd goes with the first byte) or -errno.
 */
ssize_t unix_send_fd(int sock, const void *buf, size_t len, int fd, int flags);

#endif
