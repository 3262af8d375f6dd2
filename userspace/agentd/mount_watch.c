// SPDX-License-Identifier: GPL-2.0
/*
 * Keeps every agent's mount roots (rights.bpf.h: the hooks that see no mount) in step with
 * agentd's mount table: a change wakes the waiters on /proc/self/mountinfo, and each agent's
 * current generation gets the new table. Between a mount and its refresh, a new file system
 * denies those hooks and a new bind mount narrows nothing yet.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include "daemon.h"
#include "log.h"
#include "mount_watch.h"
#include "kernel/rules.h"

/* One daemon per process. */
static int mountinfo_fd = -1;

void mount_watch_agent(struct daemon *d, const struct agent *a)
{
	int err;

	if (!d->lsm)
		return;
	err = rules_refresh_mounts(d->e, a->st.id);
	if (err)
		log_warn("agent %s: mount roots not refreshed (%s): file systems mounted since its "
			 "policy loaded refuse utimes, xattrs and ACLs until it is reloaded\n",
			 a->st.name, strerror(-err));
}

static void on_change(void *ctx, int fd, uint32_t events)
{
	struct daemon *d = ctx;
	int i, n = 0;

	(void)fd;
	(void)events;
	for (i = 1; i < AGENTD_MAX_AGENTS; i++) {
		if (!d->agents[i])
			continue;
		mount_watch_agent(d, d->agents[i]);
		n++;
	}
	if (!n)
		return;
	/* On stdout with the daemon's other state lines ("agentd: ready"). */
	printf("agentd: mount roots of %d agent%s refreshed\n", n, n == 1 ? "" : "s");
	fflush(stdout);
}

int mount_watch_start(struct daemon *d)
{
	int err;

	if (!d->lsm)
		return 0;
	mountinfo_fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (mountinfo_fd < 0) {
		err = -errno;
		log_warn("opening /proc/self/mountinfo: %s\n", strerror(-err));
		return err;
	}
	/*
	 * Not EPOLLPRI: mountinfo's poll reports a change once and forgets it, and the loop's
	 * epoll fd is itself polled first (loop.h), which would take it. Edge-triggered EPOLLIN
	 * (always ready) fires once per wakeup instead, and only a change wakes this file's
	 * waiters; plus once when added.
	 */
	err = loop_add(d->loop, mountinfo_fd, EPOLLIN | EPOLLET, on_change, d);
	if (err) {
		log_warn("watching /proc/self/mountinfo: %s\n", strerror(-err));
		close(mountinfo_fd);
		mountinfo_fd = -1;
	}
	return err;
}

void mount_watch_stop(struct daemon *d)
{
	if (mountinfo_fd < 0)
		return;
	loop_del(d->loop, mountinfo_fd);
	close(mountinfo_fd);
	mountinfo_fd = -1;
}
