// SPDX-License-Identifier: GPL-2.0
/*
 * Who may talk to agentd's own sockets (the control socket, the audit stream): never a process
 * of an agent, nor a tool the broker runs. Where BPF LSM runs, the kernel already refuses an
 * agent's connect() to them (unix_stream_connect: not the agent's own socket); this check holds
 * on every kernel, and whatever uid the agent runs as (the sockets' 0600 mode stops only
 * non-root agents). The peer is named by the connection (SO_PEERCRED pinned by SO_PEERPIDFD,
 * then its cgroup), never by what it sends.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "broker/broker.h"
#include "kernel/cgroup.h"
#include "daemon.h"

int daemon_peer_refused(const struct daemon *d, int fd, char *why, size_t whysz)
{
	char rel[PATH_MAX], mnt[PATH_MAX], real[PATH_MAX], path[2 * PATH_MAX + 16];
	char tools[PATH_MAX + sizeof(BROKER_TOOLS_CGROUP) + 1];
	const struct agent *a;
	pid_t pid;
	size_t i, k;
	int err;

	err = cgroup_of_peer(fd, &pid, NULL, rel, sizeof(rel));
	if (!err)
		err = cgroup2_mount(mnt, sizeof(mnt));
	if (err) {
		snprintf(why, whysz, "the peer (pid %d): its cgroup cannot be read: %s", (int)pid,
			 strerror(-err));
		return 1; /* fail closed: an unknown peer may be an agent's */
	}
	snprintf(path, sizeof(path), "%s%s", realpath(mnt, real) ? real : mnt,
		 strcmp(rel, "/") ? rel : "");
	for (i = 1; i < AGENTD_MAX_AGENTS; i++) {
		a = d->agents[i];
		if (!a)
			continue;
		for (k = 0; k < a->st.ncgroups; k++)
			if (cgroup_path_below(path, a->st.cgroups[k]))
				break;
		if (cgroup_path_below(path, a->cgroup) || k < a->st.ncgroups) {
			snprintf(why, whysz, "the peer (pid %d), a process of agent %s", (int)pid,
				 a->st.name);
			return 1;
		}
	}
	snprintf(tools, sizeof(tools), "%s/%s", d->cgroup, BROKER_TOOLS_CGROUP);
	if (cgroup_path_below(path, tools)) {
		snprintf(why, whysz, "the peer (pid %d), a tool the broker runs", (int)pid);
		return 1;
	}
	return 0;
}
