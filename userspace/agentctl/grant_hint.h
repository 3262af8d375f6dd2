/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTCTL_GRANT_HINT_H
#define AGENTCTL_GRANT_HINT_H

#include <stddef.h>
#include <jansson.h>

/* The agentctl grant command that would let the denied operation of audit record rec through,
 * into out: 1, or 0 when no grant can (not a deny, or one of structural deny, self-protection
 * or another reason a grant never lifts). */
int grant_hint(json_t *rec, char *out, size_t sz);

#endif
