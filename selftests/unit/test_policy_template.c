// SPDX-License-Identifier: GPL-2.0
/*
 * A policy whose variable defaults give paths missing here is valid as a template: the error
 * says which --var to set and is marked needs_var (agentctl policy check passes it; agent add
 * cannot). A path given by --var that is missing is an ordinary error.
 */
#include <stdio.h>
#include <string.h>
#include "harness.h"
#include "policy/policy.h"

static const char tmpl[] = "{\"name\": \"t\", \"vars\": {\"ws\": \"/nonexistent-agentd-ws\"},"
			   " \"files\": [{\"path\": \"${ws}\", \"rights\": [\"read\"]}]}";

static int load(const struct policy_vars *vars, struct policy_errors *errs)
{
	static const struct tools_registry none = { .path = "none" };
	struct policy *p = NULL;
	int err = policy_load_buffer("t.json", tmpl, sizeof(tmpl) - 1, vars, &none, &p, errs);

	policy_free(p);
	return err;
}

TEST(policy_default_path_missing_is_a_template_naming_the_var)
{
	struct policy_errors errs = { 0 };

	ASSERT(load(NULL, &errs) < 0);
	ASSERT_EQ(errs.n, 1);
	ASSERT(errs.v[0].needs_var);
	ASSERT(strstr(errs.v[0].msg, "set --var ws=PATH"));
	ASSERT(strstr(errs.v[0].msg, "/nonexistent-agentd-ws"));
	policy_errors_clear(&errs);
}

TEST(policy_var_given_existing_path_loads_and_missing_one_is_an_error)
{
	struct policy_var tmp = { "ws", "/tmp" }, gone = { "ws", "/nonexistent-given" };
	struct policy_vars ok = { &tmp, 1 }, bad = { &gone, 1 };
	struct policy_errors errs = { 0 };

	ASSERT_EQ(load(&ok, &errs), 0);
	ASSERT_EQ(errs.n, 0);
	ASSERT(load(&bad, &errs) < 0);
	ASSERT_EQ(errs.n, 1);
	ASSERT(!errs.v[0].needs_var);
	ASSERT(strstr(errs.v[0].msg, "expected an existing path"));
	policy_errors_clear(&errs);
}
