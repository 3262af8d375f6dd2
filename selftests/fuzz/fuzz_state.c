// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: agent state files (state directory) as agentd reads them at start; what
 * parses must survive a write and a read unchanged (agentd rewrites the files it reads). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct agent_state s, again;
	json_t *doc;
	char *text;
	size_t i;

	if (agent_state_parse((const char *)data, size, &s))
		return 0;
	doc = agent_state_json(&s);
	text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	if (!text || agent_state_parse(text, strlen(text), &again))
		__builtin_trap();
	free(text);
	if (again.id != s.id || again.generation != s.generation || again.nvars != s.nvars ||
	    again.ncgroups != s.ncgroups || strcmp(again.name, s.name))
		__builtin_trap();
	for (i = 0; i < s.ncgroups; i++)
		if (strcmp(again.cgroups[i], s.cgroups[i]))
			__builtin_trap();
	return 0;
}
