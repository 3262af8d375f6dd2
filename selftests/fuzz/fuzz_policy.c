// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: policy files as policy_load() reads them (the locator runs on every error). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "policy/policy.h"

static const char tools_json[] =
	"{\"tools\": [{\"name\": \"noop\", \"effect\": \"observe\", \"builtin\": \"noop\"},"
	" {\"name\": \"deploy\", \"effect\": \"actuate\", \"exec\": [\"/bin/true\"]}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct policy_var v[] = { { "workspace", "/tmp" }, { "dropbox", "/tmp" } };
	static const struct policy_vars vars = { v, 2 };
	static struct tools_registry *reg;
	struct policy_errors errs = { 0 };
	struct policy *p;
	char line[2048];
	size_t i;

	if (!reg && tools_load_buffer("tools.json", tools_json, strlen(tools_json), &reg, &errs))
		__builtin_trap();
	/* A directory that does not exist: relative extends find nothing. */
	policy_load_buffer("/nonexistent-fuzz/p.json", (const char *)data, size, &vars, reg, &p,
			   &errs);
	for (i = 0; i < errs.n; i++)
		policy_error_format(&errs.v[i], line, sizeof(line));
	policy_free(p);
	policy_errors_clear(&errs);
	return 0;
}
