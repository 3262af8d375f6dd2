// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: ring-buffer records as the audit log receives them (event_decode(), then
 * audit_record_from_event() named with the agent's name, then audit_record_format()). Whatever
 * the bytes, an event is refused or becomes one line of valid JSON that fits exactly the length
 * returned; one byte less of buffer is -ENOSPC, never an overrun. The name is taken from the
 * event's comm (any bytes); the key a stream subscriber's filter reads from the record in memory
 * must be the key query reads from its line.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "audit/audit.h"
#include "kernel/event.h"

static void same_key(const struct audit_record *r, const char *line, size_t n)
{
	struct audit_key mem, parsed;
	json_t *doc = audit_json_loadb(line, n, JSON_REJECT_DUPLICATES);

	audit_key_of(r, r->time_ns, &mem);
	if (audit_key_from_json(doc, &parsed) || mem.has_agent != parsed.has_agent ||
	    mem.agent != parsed.agent || mem.kind != parsed.kind ||
	    mem.decision != parsed.decision || strcmp(mem.agent_name, parsed.agent_name) ||
	    (parsed.has_time && mem.time_ns != parsed.time_ns))
		abort();
	json_decref(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct audit_stamp st = { .seq = 1, .host = "fuzz", .prev = AUDIT_GENESIS };
	static struct audit_record r;
	static char line[AUDIT_LINE_MAX + 1];
	union agentd_event ev;
	json_t *doc;
	int n;

	if (event_decode(data, size, &ev) < 0 ||
	    audit_record_from_event(&r, &ev, 1700000000000000000LL))
		return 0;
	memcpy(r.agent_name, ev.file.task.comm, sizeof(ev.file.task.comm));
	n = audit_record_format(&r, &st, line, sizeof(line));
	if (n <= 0 || (size_t)n != strlen(line))
		abort();
	/* kernel numbers are 64-bit unsigned: read them as reals, not to overflow json_int_t */
	doc = json_loadb(line, n, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, NULL);
	if (!json_is_object(doc))
		abort();
	json_decref(doc);
	same_key(&r, line, n);
	if (audit_record_format(&r, &st, line, n) != -ENOSPC)
		abort();
	return 0;
}
