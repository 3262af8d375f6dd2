/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Time-limited grants (agentctl grant, docs/POLICY.md "Grants"): the list agentd keeps in
 * <state_dir>/grants.json, the kernel's entries of path, exec and connect grants
 * (kernel/grants.h), tool grants for the broker. Every grant, revoke and end is an audit record.
 */
#ifndef AGENTD_GRANTS_H
#define AGENTD_GRANTS_H

#include <jansson.h>
#include <linux/types.h>
#include "wire/control.h"

struct daemon;
struct agent;

/* Reads the state file and ends what ended while agentd was not running. Returns 0 or -errno
 * (a state file that does not parse is set aside, said, and no grant is kept). */
int grants_start(struct daemon *d);
/* grant.add, grant.ls, grant.rm. */
json_t *grants_handle(struct daemon *d, const struct control_request *req);
/* Ends the grants that are over (their time passed, a once grant used); called every second. */
void grants_tick(struct daemon *d);
/* Revokes every grant of agent a (agent rm). */
void grants_agent_removed(struct daemon *d, const struct agent *a);
/* Whether a grant lets agent a call tool now, which its policy does not grant: the grant's id,
 * counted as a use (and recorded), or 0. again: the call was let through by this grant when it
 * came and was held for approval: the grant must still be in force (not expired, not revoked),
 * and the use is not counted again. */
__u32 grants_tool_use(struct daemon *d, const struct agent *a, const char *tool, bool again);

#endif
