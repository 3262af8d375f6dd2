// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "kernel/procfs.h"

ssize_t procfs_read(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n == 0)
		n = -EIO;
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

const char *procfs_stat_fields(const char *line)
{
	const char *p = strrchr(line, ')');

	return p && p[1] == ' ' ? p + 2 : NULL;
}
