// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: tools registries as tools_load() reads them. */
#include <stddef.h>
#include <stdint.h>
#include "policy/tools.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy_errors errs = { 0 };
	struct tools_registry *reg;

	tools_load_buffer("tools.json", (const char *)data, size, &reg, &errs);
	tools_free(reg);
	policy_errors_clear(&errs);
	return 0;
}
