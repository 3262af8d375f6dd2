// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "wire/unixsock.h"

static int address(const char *path, struct sockaddr_un *sa)
{
	*sa = (struct sockaddr_un){ .sun_family = AF_UNIX };
	if (snprintf(sa->sun_path, sizeof(sa->sun_path), "%s", path) >= (int)sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	return 0;
}

int unix_connect(const char *path)
{
	struct sockaddr_un sa;
	int fd, err = address(path, &sa);

	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int unix_listen(const char *path, mode_t mode, int backlog)
{
	struct sockaddr_un sa;
	mode_t old;
	int fd, err = address(path, &sa);

	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	unlink(path);
	old = umask(~mode & 0777);
	err = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, backlog) ? -errno : 0;
	umask(old);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

ssize_t unix_send_fd(int sock, const void *buf, size_t len, int fd, int flags)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {};
	struct iovec iov = { (void *)buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	ssize_t n;

	if (fd >= 0) {
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	n = sendmsg(sock, &mh, flags);
	return n < 0 ? -errno : n;
}
