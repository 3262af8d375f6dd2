// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "boundary.h"

static const char *const names[BOUNDARY_COUNT] = {
	[BOUNDARY_FILES] = "files",
	[BOUNDARY_EXEC] = "exec",
	[BOUNDARY_EGRESS] = "egress",
	[BOUNDARY_LOOPBACK] = "loopback",
	[BOUNDARY_SOCKETS] = "sockets",
	[BOUNDARY_UNIX] = "unix",
	[BOUNDARY_IPC] = "ipc",
	[BOUNDARY_SIGNALS] = "signals",
	[BOUNDARY_CAPABILITIES] = "capabilities",
	[BOUNDARY_SELF] = "self",
	[BOUNDARY_CGROUP] = "cgroup",
	[BOUNDARY_LIMITS] = "limits",
	[BOUNDARY_BROKER] = "broker",
	[BOUNDARY_PROXY] = "proxy",
	[BOUNDARY_AUDIT] = "audit",
};

const char *boundary_name(enum boundary b)
{
	if ((unsigned int)b >= BOUNDARY_COUNT)
		return NULL;
	return names[b];
}

int boundary_from_name(const char *name)
{
	for (int i = 0; i < BOUNDARY_COUNT; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}
