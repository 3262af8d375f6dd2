/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_ACCEPT_H
#define AGENTD_ACCEPT_H

/*
 * accept4() for level-triggered listeners. Out of descriptors (EMFILE, ENFILE), a connection
 * left pending keeps its listener readable and the loop around it spinning: a descriptor kept in
 * reserve (accept_reserve()) is given up to take the connection and close it at once (its peer
 * reads EOF), then taken back. One accepting thread per process. Returns the new descriptor, or
 * -errno: -EAGAIN when none is pending, -ECONNABORTED when one was shed this way (call again:
 * more may be waiting).
 */
int accept_shedding(int lfd, int flags);
/* Takes the reserve, at start: taken at the first accept, it could come too late. 0 or -errno. */
int accept_reserve(void);

#endif
