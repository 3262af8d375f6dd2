// SPDX-License-Identifier: GPL-2.0
/* An agent's policy, loaded with its tools registry and compiled into the kernel's rules. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "agentd.h"
#include "policy/compile.h"
#include "policy/load.h"

int policy_rules_load(const char *policy, const char *tools, const struct policy_vars *vars,
		      struct policy **p, struct tools_registry **regp, struct compiled *c,
		      struct policy_errors *errs, char *why, size_t whysz)
{
	struct policy_source src = { .path = policy, .tools = tools, .vars = vars };
	struct tools_registry *reg = NULL;
	int err;

	memset(c, 0, sizeof(*c));
	why[0] = '\0';
	err = policy_load_full(&src, p, regp ? &reg : NULL, errs);
	if (!err) {
		err = policy_compile(*p, c);
		if (err)
			snprintf(why, whysz, "%s: %s", policy, c->error);
	}
	if (errs->n)
		policy_error_format(&errs->v[0], why, whysz);
	else if (err && !why[0])
		snprintf(why, whysz, "%s: %s", policy, strerror(-err));
	if (err) {
		policy_free(*p);
		*p = NULL;
		tools_free(reg);
		reg = NULL;
	}
	if (regp)
		*regp = reg;
	return err;
}
