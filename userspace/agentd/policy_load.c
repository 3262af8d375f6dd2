// SPDX-License-Identifier: GPL-2.0
/* An agent's policy, loaded with its tools registry and compiled into the kernel's rules. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "agentd.h"
#include "policy/compile.h"
#include "policy/tools.h"

int policy_rules_load(const char *policy, const char *tools, const struct policy_vars *vars,
		      struct policy **p, struct tools_registry **regp, struct compiled *c,
		      struct policy_errors *errs, char *why, size_t whysz)
{
	struct tools_registry *reg = NULL;
	int err;

	memset(c, 0, sizeof(*c));
	*p = NULL;
	if (regp)
		*regp = NULL;
	why[0] = '\0';
	if (tools && tools[0]) {
		err = tools_load(tools, &reg, errs);
		if (err)
			goto out;
	}
	err = policy_load(policy, vars, reg, p, errs);
	if (err)
		goto out;
	err = policy_compile(*p, c);
	if (err)
		snprintf(why, whysz, "%s: %s", policy, c->error);
out:
	if (errs->n)
		policy_error_format(&errs->v[0], why, whysz);
	else if (err && !why[0])
		snprintf(why, whysz, "%s: %s", policy, strerror(-err));
	/* The policy's tools point into the registry: kept with it when the caller asks. */
	if (regp && !err) {
		*regp = reg;
		return 0;
	}
	if (err) {
		policy_free(*p);
		*p = NULL;
	}
	tools_free(reg);
	return err;
}
