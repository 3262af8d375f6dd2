/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one loader of an agent's policy, used by agentd, agentctl run and agentctl policy check:
 * the tools registry, the policy with the caller's vars, and the digest that ties what agentctl
 * run builds to what agentd loaded.
 */
#ifndef AGENTD_POLICY_LOAD_H
#define AGENTD_POLICY_LOAD_H

#include "policy/policy.h"

struct policy_source {
	const char *path; /* the policy file */
	const char *tools; /* its tools registry; NULL or "": none */
	const struct policy_vars *vars; /* may be NULL */
	/* Without a registry: NULL leaves the tools named unchecked; a name makes each of them
	 * an error that cites it (policy check's "(no tools.json found)"). */
	const char *no_tools;
	/* When not NULL: the policy loaded must have this digest (policy_digest()). */
	const char *digest;
};

/*
 * Loads src. Errors of every file go to errs with their file:line:column. Returns 0, -EINVAL
 * (invalid: see errs; also for a NULL path), -ESTALE (valid, but its digest is not
 * src->digest: nothing in errs), -ENOMEM or -errno reading a file (reported). With regp, the
 * registry is handed over (NULL without one) and the policy's tools point into it; without,
 * they name no definition.
 */
int policy_load_full(const struct policy_source *src, struct policy **out,
		     struct tools_registry **regp, struct policy_errors *errs);

#define POLICY_DIGEST_HEX 65
/*
 * SHA-256 of what agentctl run builds from a policy (file rules and the objects they name, exec
 * list and switches, socket
 * families, io_uring, capabilities, env names): the daemon reports it for the policy it loaded,
 * and agentctl run refuses to start when the policy it loads now differs. Returns 0 or -errno.
 */
int policy_digest(const struct policy *p, char hex[POLICY_DIGEST_HEX]);

#endif
