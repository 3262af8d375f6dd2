/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The egress proxy (docs/EGRESS.md): one loopback listener per agent, the only loopback
 * endpoint of agentd's that the kernel lets the agent reach. The root daemon owns the
 * listeners, their stable ports and the kernel endpoints; an unprivileged worker process
 * (agentd-worker proxy, userspace/workers/proxy.c) reads the agents' bytes, checks,
 * resolves once, connects and relays, and reports one record per connection, which the daemon
 * writes to the audit log.
 */
#ifndef AGENTD_PROXY_H
#define AGENTD_PROXY_H

#include <jansson.h>
#include <stddef.h>
#include <linux/types.h>
#include "wire/proxy_proto.h"

struct daemon;
struct agent;

/* Refusal reasons are the worker's words: the first PROXY_REASONS_MAX distinct ones are counted
 * apart, later ones as "other" (the worker is less trusted than the daemon: bounded). */
#define PROXY_REASONS_MAX 64

/* An agent's proxied connections since its proxy came up (docs/METRICS.md). */
struct proxy_stats {
	__u64 relayed, refused; /* connections */
	__u64 bytes_up, bytes_down; /* agent to origin, origin to agent */
	__u64 refusals[PROXY_REASONS_MAX + 1]; /* by reason, proxy_reason(i) */
};

/* NULL when the agent has no proxy. */
const struct proxy_stats *proxy_agent_stats(const struct agent *a);
/* Reason i's name; NULL for none (yet). */
const char *proxy_reason(unsigned i);

int proxy_start(struct daemon *d);
void proxy_stop(struct daemon *d);
int proxy_agent_up(struct daemon *d, struct agent *a, char *why, size_t whysz);
void proxy_agent_reloaded(struct daemon *d, struct agent *a);
void proxy_agent_down(struct daemon *d, struct agent *a);
void proxy_agent_json(struct daemon *d, const struct agent *a, json_t *obj);
void proxy_status_json(struct daemon *d, json_t *reply);

#endif
