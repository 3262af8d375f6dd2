/* SPDX-License-Identifier: GPL-2.0 */
/* The layers in the daemon's replies (layers_status.c). */
#ifndef AGENTD_LAYERS_STATUS_H
#define AGENTD_LAYERS_STATUS_H

#include <jansson.h>

struct daemon;
struct agent;

/* An agent's "enforcement" (layers, enforced_by, gap), "tools" and "policy_digest". */
void layers_status_agent_json(struct daemon *d, const struct agent *a, json_t *obj);
/* The daemon's "layers": which layer enforces each part for agents agentctl run starts. */
json_t *layers_status_parts(struct daemon *d);
/* The fallback's kernel features, added to the reply's "kernel". */
void layers_status_json(struct daemon *d, json_t *reply);

#endif
