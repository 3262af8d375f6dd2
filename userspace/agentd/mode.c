// SPDX-License-Identifier: GPL-2.0
/* Shadow mode per agent (mode.h). */
#include <string.h>
#include "agentd/abi.h"
#include "mode.h"

bool mode_shadow(const struct agent *a, const struct policy *p)
{
	if (a->st.mode[0])
		return !strcmp(a->st.mode, "shadow");
	if (!p)
		p = a->policy;
	return p && p->mode == POLICY_MODE_SHADOW;
}

const char *mode_name(const struct agent *a)
{
	return mode_shadow(a, NULL) ? "shadow" : "enforce";
}

void mode_json(const struct daemon *d, const struct agent *a, json_t *obj)
{
	bool shadow = mode_shadow(a, NULL);

	json_object_set_new(obj, "mode", json_string(shadow ? "shadow" : "enforce"));
	json_object_set_new(obj, "shadow_structural",
			    json_boolean(shadow && d->o->shadow_structural));
}

void mode_flags(const struct daemon *d, const struct agent *a, const struct policy *p,
		struct ruleset *rs)
{
	rs->flags &= ~(AGENTD_AGENT_SHADOW | AGENTD_AGENT_SHADOW_STRUCTURAL);
	if (!mode_shadow(a, p))
		return;
	rs->flags |= AGENTD_AGENT_SHADOW;
	if (d->o->shadow_structural)
		rs->flags |= AGENTD_AGENT_SHADOW_STRUCTURAL;
}
