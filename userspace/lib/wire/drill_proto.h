/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the drill program (agentd-drill, userspace/drill/) tells agentd of one boundary it tried:
 * one JSON object per line on its channel (docs/DRILL.md). agentd reads it as untrusted bytes: a
 * drill that ran as the agent may have been made to say anything, so every field is checked here
 * and bounded (selftests/fuzz/fuzz_drill_result.c).
 */
#ifndef AGENTD_DRILL_PROTO_H
#define AGENTD_DRILL_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#define DRILL_LINE_MAX 16384
#define DRILL_OPS_MAX 24
#define DRILL_OP_MAX 192
#define DRILL_ERRNO_MAX 24
#define DRILL_WHY_MAX 256
#define DRILL_PIDS_MAX 8
/* A why that starts so: the boundary could not be tried (its process died, or could not take
 * the agent's layers), which fails the drill rather than passing it untried. */
#define DRILL_WHY_BROKEN "broken: "

struct drill_op {
	char op[DRILL_OP_MAX]; /* what was tried, for people: "open /etc/shadow O_RDONLY" */
	char err[DRILL_ERRNO_MAX]; /* "EACCES", or "" when it succeeded */
	bool escaped; /* a denied operation got past every layer */
};

struct drill_result {
	int boundary; /* enum boundary */
	int pids[DRILL_PIDS_MAX]; /* the processes that tried (their denials name them) */
	size_t n_pids;
	struct drill_op denied[DRILL_OPS_MAX];
	size_t n_denied;
	bool has_allowed;
	struct drill_op allowed; /* escaped unused; err "" when it worked */
	char why[DRILL_WHY_MAX]; /* not drilled: why (no denied operation then) */
};

/* {"boundary", "pids", "denied": [{"op", "errno", "escaped"}], "allowed": {"op", "errno"} or
 * null, "why"}; a new reference, NULL without memory. */
json_t *drill_result_json(const struct drill_result *r);
/* Parses one line of len bytes. Returns 0, or -EINVAL with a message naming the field in err. */
int drill_result_parse(const char *line, size_t len, struct drill_result *r, char *err,
		       size_t errsz);

#endif
