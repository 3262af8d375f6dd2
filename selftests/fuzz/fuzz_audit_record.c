// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: ring-buffer records as the audit log receives them
 * (audit_record_from_event() then audit_record_format()). Whatever the bytes, an event is refused
 * or becomes one line of valid JSON that fits exactly the length returned; one byte less of
 * buffer is -ENOSPC, never an overrun.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "audit/audit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct audit_stamp st = { .seq = 1, .host = "fuzz", .prev = AUDIT_GENESIS };
	static struct audit_record r;
	static char line[AUDIT_LINE_MAX + 1];
	json_t *doc;
	int n;

	if (audit_record_from_event(&r, data, size, 1700000000000000000LL))
		return 0;
	n = audit_record_format(&r, &st, line, sizeof(line));
	if (n <= 0 || (size_t)n != strlen(line))
		abort();
	/* kernel numbers are 64-bit unsigned: read them as reals, not to overflow json_int_t */
	doc = json_loadb(line, n, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, NULL);
	if (!json_is_object(doc))
		abort();
	json_decref(doc);
	if (audit_record_format(&r, &st, line, n) != -ENOSPC)
		abort();
	return 0;
}
