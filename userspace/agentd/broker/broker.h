/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tool broker (docs/BROKER.md): one Unix socket per agent; each connection is checked
 * against the agent whose socket it reached (SO_PEERCRED, SO_PEERPIDFD, the peer's cgroup),
 * then handed to an unprivileged, seccomp-confined worker that reads and parses the agent's
 * frames. The worker passes each request back in a strict binary form; the root side checks it
 * again, checks the agent's policy and the tool's schema, runs the tool in a cgroup of its own,
 * redacts, replies on its own copy of the connection and audits. The services hooks
 * (services.h) call these.
 */
#ifndef AGENTD_BROKER_H
#define AGENTD_BROKER_H

#include <jansson.h>
#include <stddef.h>

/* The tools' cgroups sit below this one, under agentd's cgroup (not an agent name: a dot). */
#define BROKER_TOOLS_CGROUP "tools.broker"

struct daemon;
struct agent;

int broker_start(struct daemon *d);
void broker_stop(struct daemon *d);
int broker_agent_up(struct daemon *d, struct agent *a, char *why, size_t whysz);
void broker_agent_down(struct daemon *d, struct agent *a);
void broker_agent_json(struct daemon *d, const struct agent *a, json_t *obj);
void broker_status_json(struct daemon *d, json_t *reply);

#endif
