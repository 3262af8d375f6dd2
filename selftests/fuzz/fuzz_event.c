// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: ring-buffer records as the sink receives them, decoded once, then formatted. */
#include <stddef.h>
#include <stdint.h>
#include "kernel/event.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	union agentd_event ev;
	char line[1024];

	if (event_decode(data, size, &ev) >= 0)
		event_format(&ev, line, sizeof(line));
	return 0;
}
