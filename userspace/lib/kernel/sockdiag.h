/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_SOCKDIAG_H
#define AGENTD_SOCKDIAG_H

#include <linux/types.h>

/*
 * The cgroup v2 id of the socket at the other end of fd, a TCP connection accepted on this host
 * (loopback): the cgroup the peer's socket was created in, as the kernel recorded it (the same
 * one its cgroup-BPF programs run for), found by the connection's addresses through sock_diag
 * (INET_DIAG_CGROUP_ID, Linux 5.9 and later). Nothing the peer sends, nor a pid that may be
 * reused, decides it. Returns 0, or -errno: -ENOENT when the peer's socket is gone (closed, or
 * not on this host), -EOPNOTSUPP when the kernel does not give the id.
 */
int sockdiag_peer_cgroup(int fd, __u64 *cgid);

#endif
