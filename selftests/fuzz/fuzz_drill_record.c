// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: the drill record (STATE_DIR/drill/NAME.json) as inspect and status read it.
 * A record parses whole or is refused with a message naming the file, line and column. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "policy/drill_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct drill_record r;
	char err[512];
	size_t i;

	err[0] = '\0';
	if (drill_record_parse("f.json", (const char *)data, size, &r, err, sizeof(err))) {
		if (strncmp(err, "f.json:", 7))
			__builtin_trap();
		return 0;
	}
	if (!r.generation || !r.agent[0] || r.ended[strlen(r.ended) - 1] != 'Z')
		__builtin_trap();
	for (i = 0; i < BOUNDARY_COUNT; i++)
		if (!drill_verdict_name(r.b[i].verdict))
			__builtin_trap();
	return 0;
}
