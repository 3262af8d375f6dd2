/* SPDX-License-Identifier: GPL-2.0 */
/* Time-limited grants under test (test_grants.c here, selftests/kernel/test_grants.c). */
#ifndef AGENTD_GRANTS_TEST_H
#define AGENTD_GRANTS_TEST_H

#include <limits.h>
#include <stddef.h>
#include "testlib.h"

struct genv {
	struct test_daemon d;
	char policy[PATH_MAX];
	char tools[PATH_MAX];
	char cg[PATH_MAX + 8];
	char agent_tool[PATH_MAX];
	char sock_env[PATH_MAX + 32];
};

/* agentd (--allow-partial) in a network namespace of the test's own, lo up with a public address
 * (TEST-NET-2, and its NAT64 form) on it; agent "g" (cgroup e->cg): "/" read and exec, /dev/null,
 * then files_json (",{...}" rules, or NULL), inet sockets, no network rule, the tool noop of a
 * registry that also has deploy. */
struct genv *grant_env(const char *files_json);
/* agentctl grant g ARGS...: the new grant's id (FAILs when refused). */
#define GRANT(...) grant_id(agentctl_run(out, sizeof(out), "grant", "g", __VA_ARGS__, NULL), out)
long long grant_id(int status, const char *out);
/* The expiry of grant id on the boot clock, as agentctl grants reports it. */
long long expiry_of(long long id);
/* Sleeps until CLOCK_BOOTTIME reaches at (ns): the clock the kernel checks grants against. */
void wait_boot_clock(long long at);
/* How many grants agent g has (agentctl grants g, which ends what is over first). */
size_t grant_count(void);
/* The audit log holds a record of kind with every needle (agentctl audit query). */
void expect_audit(const struct genv *e, const char *kind, const char *const needles[]);

#endif
