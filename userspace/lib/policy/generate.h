/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A policy from an agent's audit records (agentctl policy generate, docs/POLICY.md "Writing a
 * policy"): its current policy with what its deny and would-deny records show it needed, paths
 * folded into the narrowest trees that cover them. Never structural destinations, never
 * self-protection, never what a record does not show.
 */
#ifndef AGENTD_POLICY_GENERATE_H
#define AGENTD_POLICY_GENERATE_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "policy/policy.h"

/* Entries of one directory that become the directory (FOLD_MIN files in one directory). */
#define GEN_FOLD_MIN 3

struct gen_opts {
	bool allow_broad; /* folding and grants may reach /, a top-level directory, a home */
	/* Paths in records under a value are written ${name}/...: the policy's own vars and
	 * --var. tmp (/tmp, /var/tmp) and home (/tmp/home) are added: agentctl run's views. */
	const struct policy_vars *vars;
};

/* A record not granted, and why (printed on stderr by agentctl). */
struct gen_skip {
	char *what; /* "file_open /etc/x", "connect4 10.0.0.1:80", ... */
	const char *why;
	size_t count;
};

struct gen;

/* current: the policy document as written (copied; NULL: an empty policy named name). */
struct gen *gen_new(const json_t *current, const char *name, const struct gen_opts *o);
void gen_free(struct gen *g);
/* One audit record. Returns 1 when it is a deny or would-deny that adds a grant, 0 when it is
 * not a denial or adds nothing, -ENOMEM. A denial not granted is kept in the skips. */
int gen_record(struct gen *g, const json_t *rec);
/* The policy (new reference) and, when changes is not NULL, one line per added or widened rule
 * ("+ ..." or "~ ..."). Deterministic: the same records give the same document. */
json_t *gen_policy(struct gen *g, json_t **changes);
const struct gen_skip *gen_skips(const struct gen *g, size_t *n);

/* Whether granting path's tree needs --allow-broad: /, a top-level directory, /root, /home/X,
 * the agent's home /tmp/home; the agent's private /tmp is its own and is not broad. */
bool gen_path_broad(const char *path);

#endif
