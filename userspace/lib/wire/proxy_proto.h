/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Between agentd and the egress proxy's worker (agentd-worker proxy IDLE-MS), on their
 * SOCK_SEQPACKET pair: orders one way, reports the other, one per datagram. The worker is exec'd
 * with its end as fd PROXY_FD.
 */
#ifndef AGENTD_PROXY_PROTO_H
#define AGENTD_PROXY_PROTO_H

#include <linux/types.h>
#include "wire/http_proxy.h"

#define PROXY_FD 3
/* The worker's uid and gid: no user's, next below the broker workers' (BMSG_WORKER_ID_BASE). */
#define PROXY_WORKER_UID 2147352575U /* 0x7ffdffff */
#define PROXY_MSG_MAX 65536
#define PROXY_PORTS_MAX 32
#define PROXY_CGROUPS_MAX 9 /* the agent's own and its attached ones (STATE_CGROUPS_MAX) */

/* daemon -> worker, over a SOCK_SEQPACKET pair: one message per datagram. */
enum proxy_msg_type {
	PROXY_MSG_UP = 1, /* the listener fd comes with it (SCM_RIGHTS), and the hosts */
	PROXY_MSG_HOSTS, /* the agent's allowlist, ports or cgroups changed (reload, attach) */
	PROXY_MSG_DOWN, /* the listener goes; the agent's connections are cut */
};

#define PROXY_F_NO_POLICY (1U << 0) /* the agent's policy does not load: refuse everything */

struct proxy_msg {
	__u32 type;
	__u32 agent;
	__u32 flags;
	__u16 nports, ncgroups;
	__u16 ports[PROXY_PORTS_MAX]; /* the ports it may reach */
	/* The cgroup v2 ids whose sockets may use the listener: a connection from a socket created
	 * in any other cgroup is refused. */
	__u64 cgroups[PROXY_CGROUPS_MAX];
	__u32 len; /* bytes of hosts: NUL-terminated patterns, one after another */
	__u32 pad;
	char hosts[];
};
_Static_assert(sizeof(struct proxy_msg) == 16 + 2 * PROXY_PORTS_MAX + 8 * PROXY_CGROUPS_MAX + 8,
	       "struct proxy_msg has no hidden padding");

/* worker -> daemon: one per connection, when it ends (or is refused). */
struct proxy_report {
	__u32 agent;
	__u16 port; /* the requested port */
	__u16 status; /* 200: relayed; otherwise the refusal sent */
	__u64 up, down; /* bytes agent -> origin, origin -> agent */
	__u8 has_addr; /* addr is the address resolved (and connected to when status is 200) */
	__u8 pad[7];
	char family[8]; /* "inet", "inet6" */
	char addr[48];
	char host[HTTP_HOST_MAX + 1]; /* "" when the request did not get that far */
	char why[48];
};

#endif
