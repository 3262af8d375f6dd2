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

int proxy_start(struct daemon *d);
void proxy_stop(struct daemon *d);
int proxy_agent_up(struct daemon *d, struct agent *a, char *why, size_t whysz);
void proxy_agent_reloaded(struct daemon *d, struct agent *a);
void proxy_agent_down(struct daemon *d, struct agent *a);
void proxy_agent_json(struct daemon *d, const struct agent *a, json_t *obj);
void proxy_status_json(struct daemon *d, json_t *reply);

#endif
