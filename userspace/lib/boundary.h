/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The boundaries of an agent, as `agentctl inspect` maps them and `agentctl drill` tries them
 * (docs/INSPECT.md): one list, so that a drill's verdict and an inspection's row name the same
 * thing. Never renumber: the numbers are the order of the rows.
 */
#ifndef AGENTD_BOUNDARY_H
#define AGENTD_BOUNDARY_H

enum boundary {
	BOUNDARY_FILES,
	BOUNDARY_EXEC,
	BOUNDARY_EGRESS, /* network egress: structural classes, then the agent's rules */
	BOUNDARY_LOOPBACK,
	BOUNDARY_SOCKETS, /* families, types, protocols */
	BOUNDARY_UNIX, /* unix sockets outside the agent */
	BOUNDARY_IPC, /* System V IPC, message queues, keys */
	BOUNDARY_SIGNALS, /* signals and ptrace of tasks outside the agent */
	BOUNDARY_CAPABILITIES,
	BOUNDARY_SELF, /* self-protection: agentd's pins, maps, programs, processes */
	BOUNDARY_CGROUP, /* cgroup membership: leaving the agent's cgroup */
	BOUNDARY_LIMITS, /* resource limits the controllers hold */
	BOUNDARY_BROKER, /* the tool broker */
	BOUNDARY_PROXY, /* the egress proxy */
	BOUNDARY_AUDIT,
	BOUNDARY_COUNT,
};

/* "files", "exec", "egress", ...; NULL out of range. */
const char *boundary_name(enum boundary b);
/* The boundary of that name, or -1. */
int boundary_from_name(const char *name);

#endif /* AGENTD_BOUNDARY_H */
