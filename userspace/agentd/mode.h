/* SPDX-License-Identifier: GPL-2.0 */
/* Shadow mode per agent (docs/SHADOW.md): which mode is in force, and its kernel flags. */
#ifndef AGENTD_MODE_H
#define AGENTD_MODE_H

#include <stdbool.h>
#include "daemon.h"
#include "kernel/rules.h"

/* Whether agent a is in shadow mode under policy p (NULL: its last applied): its agentctl
 * agent mode when one was given, else the policy's "mode". */
bool mode_shadow(const struct agent *a, const struct policy *p);
/* "shadow" or "enforce". */
const char *mode_name(const struct agent *a);
/* "mode": "shadow" or "enforce", and "shadow_structural" (bool) into obj. */
void mode_json(const struct daemon *d, const struct agent *a, json_t *obj);
/* The mode's flags on rs, the rules about to be applied for a under p. */
void mode_flags(const struct daemon *d, const struct agent *a, const struct policy *p,
		struct ruleset *rs);

#endif
