// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: agent state files (state directory) as agentd reads them at start. */
#include <stddef.h>
#include <stdint.h>
#include "state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent_state s;

	agent_state_parse((const char *)data, size, &s);
	return 0;
}
