/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What agents do while the audit log cannot be written (policy audit.on_failure, docs/AUDIT.md):
 * freeze (the default) stops every cgroup of the agent and refuses its tool calls until the log
 * takes writes again; continue lets it run, its records counted in a loss record, not held.
 */
#ifndef AGENTD_AUDIT_HOLD_H
#define AGENTD_AUDIT_HOLD_H

#include <stdbool.h>
#include <linux/types.h>

struct agent;
struct daemon;

/* The writer's opts.hold (ctx: the daemon): whether agent's records are held while it fails. */
bool audit_hold_records(void *ctx, __u32 agent);
/*
 * Freezes the agents that must stop while the log fails, thaws them (with a record of how long)
 * once it takes writes again; with refreeze, writes cgroup.freeze again for the frozen ones (a
 * cgroup attached meanwhile). Called every pass of the daemon's loop.
 */
void audit_hold_update(struct daemon *d, bool refreeze);
/* At stop: thaws what audit_hold_update() froze (agents run on without agentd, as at any stop). */
void audit_hold_release(struct daemon *d);
/* At re-adoption: an agent an agentd before this one froze (its marker in the state directory)
 * is frozen for this one too, until audit_hold_update() thaws it. */
void audit_hold_adopt(struct daemon *d, struct agent *a);
/* At removal: the agent's marker goes. */
void audit_hold_forget(struct daemon *d, struct agent *a);
/* Whether the agent is frozen for the audit log: its tool calls are refused (broker.c). */
bool audit_blocked(const struct agent *a);

#endif
