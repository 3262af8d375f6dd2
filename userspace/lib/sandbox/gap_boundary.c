// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "boundary.h"
#include "sandbox/gap_boundary.h"

static const struct {
	const char *rule;
	int boundary;
} named[] = {
	{ "files", BOUNDARY_FILES },
	{ "files: other names", BOUNDARY_FILES },
	{ "files: setattr", BOUNDARY_FILES },
	{ "files: truncate", BOUNDARY_FILES },
	{ "exec.allow", BOUNDARY_EXEC },
	{ "exec: executable mappings", BOUNDARY_EXEC },
	{ "exec.allow_memfd", BOUNDARY_EXEC },
	{ "self: cgroup files", BOUNDARY_CGROUP },
	{ "self: module autoload", BOUNDARY_SELF },
	{ "self: syscalls", BOUNDARY_SELF },
	{ "self: ptrace", BOUNDARY_SIGNALS },
	{ "self: ptrace_traceme", BOUNDARY_SELF },
	{ "self: inotify", BOUNDARY_SELF },
	{ "self: tasks by pid", BOUNDARY_SELF },
	{ "self: signals", BOUNDARY_SIGNALS },
	{ "agentctl attach", -1 },
	{ "network.sockets", BOUNDARY_SOCKETS },
	{ "io_uring", BOUNDARY_SOCKETS },
	{ "network.sockets: unix", BOUNDARY_UNIX },
	{ "audit.log_allows", BOUNDARY_AUDIT },
	{ "network", BOUNDARY_EGRESS },
};

int gap_item_boundary(const struct gap_item *it)
{
	size_t i;

	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (!strcmp(it->rule, named[i].rule))
			return named[i].boundary;
	/* A path: an exec rule in a writable tree, or a file rule Landlock cannot narrow. */
	return strncmp(it->why, "exec from", 9) ? BOUNDARY_FILES : BOUNDARY_EXEC;
}

unsigned int gap_boundaries(const struct gap *g)
{
	unsigned int set = 0;
	size_t i;
	int b;

	for (i = 0; i < g->n; i++) {
		b = gap_item_boundary(&g->v[i]);
		if (b >= 0)
			set |= 1U << b;
		/* Without cgroup-BPF, loopback is as open as the rest of the network. */
		if (!strcmp(g->v[i].rule, "network"))
			set |= 1U << BOUNDARY_LOOPBACK;
	}
	return set;
}
