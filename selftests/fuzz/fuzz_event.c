// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: ring-buffer records as event_format() receives them. */
#include <stddef.h>
#include <stdint.h>
#include "kernel/event.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char line[1024];

	event_format(data, size, line, sizeof(line));
	return 0;
}
