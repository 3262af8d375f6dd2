// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: one result line from agentd-drill as agentd reads it (wire/drill_proto.h).
 * What is accepted is bounded as the daemon relies on (a boundary that exists, at most
 * DRILL_OPS_MAX operations, NUL-terminated strings, a why exactly when nothing was tried), and
 * encodes back to a line that parses to the same result.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "boundary.h"
#include "wire/drill_proto.h"

static void round_trip(const struct drill_result *r)
{
	struct drill_result again;
	json_t *j = drill_result_json(r);
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL, err[256];

	if (s && drill_result_parse(s, strlen(s), &again, err, sizeof(err)))
		abort();
	if (s && (again.boundary != r->boundary || again.n_denied != r->n_denied ||
		  again.n_pids != r->n_pids || strcmp(again.why, r->why)))
		abort();
	free(s);
	json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct drill_result r;
	char err[256];
	size_t i;

	if (drill_result_parse((const char *)data, size, &r, err, sizeof(err))) {
		if (!memchr(err, '\0', sizeof(err)))
			abort();
		return 0;
	}
	if (!boundary_name(r.boundary) || r.n_denied > DRILL_OPS_MAX || r.n_pids > DRILL_PIDS_MAX ||
	    !r.n_denied != !!r.why[0])
		abort();
	for (i = 0; i < r.n_denied; i++)
		if (!memchr(r.denied[i].op, '\0', DRILL_OP_MAX) ||
		    !memchr(r.denied[i].err, '\0', DRILL_ERRNO_MAX))
			abort();
	round_trip(&r);
	return 0;
}
