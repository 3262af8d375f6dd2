/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The egress proxy (docs/EGRESS.md): one loopback listener per agent, the only loopback
 * endpoint of agentd's that the kernel lets the agent reach. The root daemon owns the
 * listeners, their stable ports and the kernel endpoints; an unprivileged worker process
 * (proxy_worker.c) reads the agents' bytes, checks, resolves once, connects and relays, and
 * reports one record per connection, which the daemon writes to the audit log.
 */
#ifndef AGENTD_PROXY_H
#define AGENTD_PROXY_H

#include <jansson.h>
#include <stddef.h>
#include <linux/types.h>
#include "http_proxy.h"

struct daemon;
struct agent;

#define PROXY_WORKER_UID 65534 /* nobody */
#define PROXY_MSG_MAX 65536

/* daemon -> worker, over a SOCK_SEQPACKET pair: one message per datagram. */
enum proxy_msg_type {
	PROXY_MSG_UP = 1, /* the listener fd comes with it (SCM_RIGHTS), and the hosts */
	PROXY_MSG_HOSTS, /* the agent's allowlist was replaced (reload) */
	PROXY_MSG_DOWN, /* the listener goes; the agent's connections are cut */
};

#define PROXY_F_NO_POLICY (1U << 0) /* the agent's policy does not load: refuse everything */

struct proxy_msg {
	__u32 type;
	__u32 agent;
	__u32 flags;
	__u32 len; /* bytes of hosts: NUL-terminated patterns, one after another */
	char hosts[];
};

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

int proxy_start(struct daemon *d);
void proxy_stop(struct daemon *d);
int proxy_agent_up(struct daemon *d, struct agent *a, char *why, size_t whysz);
void proxy_agent_reloaded(struct daemon *d, struct agent *a);
void proxy_agent_down(struct daemon *d, struct agent *a);
void proxy_agent_json(struct daemon *d, const struct agent *a, json_t *obj);
void proxy_status_json(struct daemon *d, json_t *reply);

/* The worker (proxy_worker.c): serves over fd until the daemon closes it. A relayed connection
 * with no byte either way for idle_ms is closed (why=idle-timeout in its report). */
__attribute__((noreturn)) void proxy_worker_main(int fd, int idle_ms);

#endif
