/* SPDX-License-Identifier: GPL-2.0 */
/* What the host tier's and the VM tier's agent sessions share: agentctl run as a user runs it,
 * its output read as "key value" lines, agentd started for the tier the kernel offers. */
#ifndef AGENTD_SELFTESTS_SESSION_H
#define AGENTD_SELFTESTS_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include "testlib.h"

/* dir/name into out; FAILs when it does not fit. */
void path_in(char *out, size_t outsz, const char *dir, const char *name);
/* path_in(), and the directory made, mode 0755 (agents do not run as its owner in every test). */
void dir_in(char *out, size_t outsz, const char *dir, const char *name);
/* agentctl run NAME [--user user] [--cwd cwd] -- argv..., standard input /dev/null, output and
 * errors into out; returns its exit status. */
int agent_exec(const char *name, const char *user, const char *cwd, char *const cmd[], char *out,
	       size_t outsz);
/* The line "key value" the agent printed: FAILs when it printed none, or another value. */
void expect(const char *out, const char *key, const char *want);

/* Whether BPF LSM works here: the VM tier; else the host tier, agentd with --allow-partial. */
bool session_lsm(void);
/* A tool the session needs is missing: a SKIP on the host tier, a FAIL in the VM tier, whose
 * initramfs has it (selftests/vm/stage_sessions.sh). */
__attribute__((noreturn)) void session_needs(const char *what);
/* agentd on d's paths (test_daemon_init()) for the tier: --allow-partial without BPF LSM. */
void session_daemon_start(struct test_daemon *d);
/* The errno a file or exec rule denies with: EPERM under BPF LSM, EACCES under Landlock. */
const char *session_deny(void);
/* agent add name with policies/profile, the shipped tools registry and workspace=ws. */
void session_add(const char *name, const char *profile, const char *ws);
/* Stops agentd (every record is committed then) and FAILs unless its audit log holds, for agent
 * name, a deny of kind and op whose line also holds needle. */
void session_stop(struct test_daemon *d);
void session_denied(const struct test_daemon *d, const char *name, const char *kind, const char *op,
		    const char *needle);

#endif
