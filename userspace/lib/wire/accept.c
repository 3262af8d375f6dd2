// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include "wire/accept.h"
#include "log.h"

static int spare = -1;
static unsigned long shed;

/* Any descriptor does; not a duplicate of a listener, which would keep it listening after its
 * owner closed it. epoll_create1() needs no path and is allowed by the proxy's seccomp filter. */
int accept_reserve(void)
{
	if (spare < 0)
		spare = epoll_create1(EPOLL_CLOEXEC);
	return spare < 0 ? -errno : 0;
}

int accept_shedding(int lfd, int flags)
{
	int fd, err, why;

	accept_reserve();
	fd = accept4(lfd, NULL, NULL, flags);
	if (fd >= 0)
		return fd;
	why = errno;
	if ((why != EMFILE && why != ENFILE) || spare < 0)
		return -why;
	close(spare);
	spare = -1;
	fd = accept4(lfd, NULL, NULL, flags);
	err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	accept_reserve();
	if (err)
		return -err;
	/* The first, then every 1000th: a flood must not flood the log too. */
	if (shed++ % 1000 == 0)
		log_warn("out of descriptors (%s): a connection was closed at once (%lu so far)\n",
			 why == EMFILE ? "this process's limit" : "the system's", shed);
	return -ECONNABORTED;
}
