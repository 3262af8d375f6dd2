/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The daemon's per-agent services beside the kernel rules (the tool broker, the egress proxy,
 * the audit stream): each is told when an agent comes, when its policy changes and when it
 * goes, and adds what it knows to the status. agents.c calls these; each service adds one call
 * per hook here, and its fds to the daemon's loop (loop.h).
 */
#ifndef AGENTD_SERVICES_H
#define AGENTD_SERVICES_H

#include <jansson.h>
#include <stddef.h>

struct daemon;
struct agent;

/* After the programs are loaded, before the agents are adopted. Returns 0 or -errno (logged). */
int services_start(struct daemon *d);
/* At stop, after services_agent_down() of every agent. */
void services_stop(struct daemon *d);
/* An agent added or re-adopted; a->policy is its policy (NULL when an adopted agent's policy no
 * longer loads: its pinned rules still hold). Failing refuses an add (why says why). */
int services_agent_up(struct daemon *d, struct agent *a, char *why, size_t whysz);
/* a->policy was replaced by a reload. */
void services_agent_reloaded(struct daemon *d, struct agent *a);
/* Before the agent is forgotten (removed, or the daemon stopping). */
void services_agent_down(struct daemon *d, struct agent *a);
/* What the services know of a, added to its status object. */
void services_agent_json(struct daemon *d, const struct agent *a, json_t *obj);
/* What the services know of the daemon, added to the status reply. */
void services_status_json(struct daemon *d, json_t *reply);

#endif
