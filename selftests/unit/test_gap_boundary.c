// SPDX-License-Identifier: GPL-2.0
/* Every gap item the layers can report names the boundary the drill finds it escaped at. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "boundary.h"
#include "harness.h"
#include "policy/policy.h"
#include "sandbox/gap_boundary.h"
#include "sandbox/layers.h"
#include "testlib.h"

/* A policy that leaves something in every gap item: a deny and an exec rule in a writable tree,
 * create without link, unix sockets, io_uring, log_allows. */
static const char policy_fmt[] =
	"{\"name\": \"g\", \"files\": ["
	"{\"path\": \"%s\", \"rights\": [\"read\", \"write\", \"create\", \"exec\"]},"
	"{\"path\": \"%s/secret\", \"rights\": []}],"
	" \"exec\": {\"allow\": [\"%s\"]}, \"io_uring\": true,"
	" \"network\": {\"sockets\": [\"inet\", \"unix\"]}, \"audit\": {\"log_allows\": true}}";

static const struct {
	const char *rule;
	int boundary;
} want[] = {
	{ "files: setattr", BOUNDARY_FILES },
	{ "files: other names", BOUNDARY_FILES },
	{ "files: truncate", BOUNDARY_FILES },
	{ "self: module autoload", BOUNDARY_SELF },
	{ "self: inotify", BOUNDARY_SELF },
	{ "self: syscalls", BOUNDARY_SELF },
	{ "self: cgroup files", BOUNDARY_CGROUP },
	{ "exec: executable mappings", BOUNDARY_EXEC },
	{ "exec.allow_memfd", BOUNDARY_EXEC },
	{ "self: ptrace_traceme", BOUNDARY_SELF },
	{ "self: tasks by pid", BOUNDARY_SELF },
	{ "self: signals", BOUNDARY_SIGNALS },
	{ "self: ptrace", BOUNDARY_SIGNALS },
	{ "network.sockets: unix", BOUNDARY_UNIX },
	{ "io_uring", BOUNDARY_SOCKETS },
	{ "network.sockets", BOUNDARY_SOCKETS },
	{ "audit.log_allows", BOUNDARY_AUDIT },
	{ "network", BOUNDARY_EGRESS },
	{ "files", BOUNDARY_FILES },
	{ "exec.allow", BOUNDARY_EXEC },
};

static int expected(const struct gap_item *it)
{
	size_t i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strcmp(it->rule, want[i].rule))
			return want[i].boundary;
	if (!strcmp(it->rule, "agentctl attach"))
		return -1;
	if (it->rule[0] != '/')
		FAIL("gap item %s has no boundary in this test: add it here and to gap_boundary.c",
		     it->rule);
	/* Paths: an exec rule in a writable tree is an exec item, a deny or a narrower rule a
	 * files one. */
	return !strncmp(it->why, "exec from", 9) ? BOUNDARY_EXEC : BOUNDARY_FILES;
}

TEST(gap_items_name_their_boundary)
{
	static const char *const sets[] = { "cgroup,landlock:5,seccomp",
					    "cgroup,landlock:6,seccomp",
					    "cgroup,seccomp",
					    "landlock:3",
					    "cgroup",
					    NULL };
	char dir[128], sub[160], json[1024];
	struct policy_errors errs = { 0 };
	struct policy *p = NULL;
	struct layers l;
	struct gap g;
	size_t i, k;

	test_tmpdir(dir, sizeof(dir), "gapb");
	snprintf(sub, sizeof(sub), "%s/secret", dir);
	ASSERT_OK(mkdir(sub, 0755));
	snprintf(json, sizeof(json), policy_fmt, dir, dir, dir);
	ASSERT_OK(policy_load_buffer("g.json", json, strlen(json), NULL, NULL, &p, &errs));
	for (k = 0; sets[k]; k++) {
		ASSERT_OK(layers_parse(sets[k], 6, &l));
		ASSERT_OK(layers_gap(p, &l, &g));
		ASSERT(g.n > 0);
		for (i = 0; i < g.n; i++)
			if (gap_item_boundary(&g.v[i]) != expected(&g.v[i]))
				FAIL("%s: %s maps to %d", sets[k], g.v[i].rule,
				     gap_item_boundary(&g.v[i]));
		gap_free(&g);
	}
	policy_free(p);
}
