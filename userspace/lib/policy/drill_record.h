/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The record of an agent's last drill, STATE_DIR/drill/NAME.json (docs/INSPECT.md, "proven"):
 * written by agentd when `agentctl drill` ends, read by `agentctl inspect` and `status`. The
 * reader checks every field: the file sits in agentd's state directory, but what a drill saw
 * came from a process under the agent's policy.
 */
#ifndef AGENTD_DRILL_RECORD_H
#define AGENTD_DRILL_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "boundary.h"

#define DRILL_TIME_MAX 40 /* "2026-12-03T15:00:02.100000000Z" */
#define DRILL_DIGEST_MAX 128
#define DRILL_TEXT_MAX 256 /* op, why: longer ones are refused */

enum drill_verdict {
	DRILL_NONE, /* this boundary is not in the record */
	DRILL_BLOCKED,
	DRILL_ESCAPED,
	DRILL_ALLOW_FAILED,
	DRILL_NOT_DRILLED,
};

struct drill_boundary {
	enum drill_verdict verdict;
	char denied_op[DRILL_TEXT_MAX];
	char denied_errno[32];
	char layer[32];
	char why[DRILL_TEXT_MAX];
};

struct drill_record {
	char agent[64];
	__u32 generation;
	char policy_digest[DRILL_DIGEST_MAX];
	char started[DRILL_TIME_MAX], ended[DRILL_TIME_MAX];
	__s64 ended_sec; /* ended, as seconds since the epoch */
	struct drill_boundary b[BOUNDARY_COUNT]; /* by enum boundary */
};

/*
 * Parses a record's bytes; name is the file's path, for messages. Returns 0, or -EINVAL with
 * err "NAME:LINE:COLUMN: what is wrong" (the line and column of the offending value).
 */
int drill_record_parse(const char *name, const char *buf, size_t len, struct drill_record *r,
		       char *err, size_t errsz);
/* STATE_DIR/drill/AGENT.json read and parsed: 0, -ENOENT (never drilled), or -errno with err
 * said. */
int drill_record_load(const char *state_dir, const char *agent, struct drill_record *r, char *err,
		      size_t errsz);
/* "blocked", "escaped", "allow-failed", "not-drilled"; "never drilled" for DRILL_NONE. */
const char *drill_verdict_name(enum drill_verdict v);

#endif
