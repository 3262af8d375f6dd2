/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shadow mode and the fallback layers (docs/SHADOW.md): Landlock and seccomp cannot record a
 * deny and let the operation go on, so in shadow mode agentd does not apply the agent's rules
 * through them, and says so in the gap, never enforcing more or less than it shows.
 */
#ifndef AGENTD_SANDBOX_SHADOW_H
#define AGENTD_SANDBOX_SHADOW_H

#include "sandbox/layers.h"
#include "sandbox/sandbox_seccomp.h"

/* What shadow mode changes in the enforcer of a part, appended to layers_enforcer()'s buf. */
void shadow_enforcer(const struct layers *l, enum layer_part part, char *buf, size_t bufsz);
#define SHADOW_GAP_MAX 3

struct shadow_gap_item {
	const char *rule, *why;
};

/* The gap of files and exec in shadow mode without BPF LSM (in place of Landlock's), and of
 * the socket families seccomp alone holds, for layers.c to add: how many are in v. */
size_t shadow_gap_items(const struct policy *p, const struct layers *l,
			struct shadow_gap_item v[SHADOW_GAP_MAX]);
/* seccomp's filter in shadow mode: the agent's socket-family and type rules are not applied
 * (its fixed list, self-protection, stays, and so do ICMP sockets, as BPF holds them). */
void shadow_seccomp(struct sandbox_seccomp *s);

#endif
