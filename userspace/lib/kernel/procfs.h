/* SPDX-License-Identifier: GPL-2.0 */
/* Small /proc files, read whole. */
#ifndef AGENTD_PROCFS_H
#define AGENTD_PROCFS_H

#include <stddef.h>
#include <sys/types.h>

/* Reads the file at path (at most size - 1 bytes, one read: /proc files of one page or less)
 * into buf, NUL-terminated. Returns the length, or -errno (-EIO when it is empty). */
ssize_t procfs_read(const char *path, char *buf, size_t size);

/* In a /proc/.../stat line, the fields after "pid (comm) " (comm may hold anything, ')'
 * included): field 3 (the state) first; NULL when the line has no ')'. */
const char *procfs_stat_fields(const char *line);

#endif
