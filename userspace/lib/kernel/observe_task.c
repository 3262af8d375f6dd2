// SPDX-License-Identifier: GPL-2.0
/*
 * One process of an agent as the kernel shows it in /proc now (observe.h): its status lines,
 * namespaces, descriptors and listening sockets.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "agentd/abi.h"
#include "kernel/kdev.h"
#include "kernel/observe.h"
#include "kernel/procfs.h"

#define SOCKETS_MAX 256

static const char *status_line(const char *status, const char *key)
{
	const char *p = strstr(status, key);

	return p ? p + strlen(key) : NULL;
}

static void read_status(int pid, struct observed_task *t)
{
	char path[64], buf[4096];
	const char *p;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (procfs_read(path, buf, sizeof(buf)) < 0)
		return;
	if ((p = status_line(buf, "\nSeccomp:\t")))
		t->seccomp = atoi(p);
	if ((p = status_line(buf, "\nNoNewPrivs:\t")))
		t->no_new_privs = atoi(p);
	if ((p = status_line(buf, "\nCapEff:\t")))
		t->cap_eff = strtoull(p, NULL, 16);
	if ((p = status_line(buf, "\nCapPrm:\t")))
		t->cap_prm = strtoull(p, NULL, 16);
	if ((p = status_line(buf, "\nCapBnd:\t")))
		t->cap_bnd = strtoull(p, NULL, 16);
	if ((p = status_line(buf, "\nUid:\t")))
		sscanf(p, "%u %u %u %u", &t->uid[0], &t->uid[1], &t->uid[2], &t->uid[3]);
	if ((p = status_line(buf, "\nGid:\t")))
		sscanf(p, "%u %u %u %u", &t->gid[0], &t->gid[1], &t->gid[2], &t->gid[3]);
	if ((p = status_line(buf, "Name:\t")))
		sscanf(p, "%16[^\n]", t->comm);
}

static void read_namespaces(int pid, struct observed_task *t)
{
	static const char *const ns[] = { "mnt", "net", "pid", "ipc", "uts", "user", "cgroup" };
	char path[64], mine[64], theirs[64];
	size_t i, len = 0;
	ssize_t a, b;

	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		snprintf(path, sizeof(path), "/proc/self/ns/%s", ns[i]);
		a = readlink(path, mine, sizeof(mine) - 1);
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, ns[i]);
		b = readlink(path, theirs, sizeof(theirs) - 1);
		if (a < 0 || a != b || memcmp(mine, theirs, a))
			continue;
		len += snprintf(t->ns_shared + len, sizeof(t->ns_shared) - len, "%s%s",
				len ? " " : "", ns[i]);
		if (len >= sizeof(t->ns_shared))
			break;
	}
}

/* The flags of descriptor fd ("flags:\t0100002" in fdinfo, octal); -1 unknown. */
static int fd_flags(int pid, int fd)
{
	char path[64], buf[1024];
	const char *p;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	if (procfs_read(path, buf, sizeof(buf)) < 0 || !(p = strstr(buf, "flags:\t")))
		return -1;
	return (int)strtol(p + 7, NULL, 8);
}

/* The rights at the file the descriptor holds: the nearest rule from it up to the root. */
static __u32 rights_at(int pid, int fd, const char *path, observe_rights_fn fn, void *ctx)
{
	char at[PATH_MAX + 64], dir[PATH_MAX];
	__u32 rights = 0;
	struct stat st;
	char *slash;

	snprintf(at, sizeof(at), "/proc/%d/fd/%d", pid, fd);
	if (!stat(at, &st) && fn(ctx, kernel_dev(st.st_dev), st.st_ino, &rights))
		return rights;
	snprintf(dir, sizeof(dir), "%s", path);
	while ((slash = strrchr(dir, '/'))) {
		slash[slash == dir ? 1 : 0] = '\0';
		/* Through its root: the path is in its mount namespace, not necessarily ours. */
		snprintf(at, sizeof(at), "/proc/%d/root%s", pid, dir);
		if (!stat(at, &st) && fn(ctx, kernel_dev(st.st_dev), st.st_ino, &rights))
			return rights;
		if (slash == dir)
			break;
	}
	return 0;
}

static __u32 needs_of(int flags)
{
	if (flags < 0)
		return AGENTD_RIGHT_READ | AGENTD_RIGHT_WRITE; /* unknown: the most it could do */
	if (flags & O_PATH)
		return 0;
	switch (flags & O_ACCMODE) {
	case O_RDONLY:
		return AGENTD_RIGHT_READ;
	case O_WRONLY:
		return AGENTD_RIGHT_WRITE;
	default:
		return AGENTD_RIGHT_READ | AGENTD_RIGHT_WRITE;
	}
}

static void check_file(int pid, int fd, const char *path, observe_rights_fn fn, void *ctx,
		       struct observed_task *t)
{
	int flags = fd_flags(pid, fd);
	__u32 needs = needs_of(flags), rights;
	struct observed_fd *o;

	if (!needs)
		return;
	rights = rights_at(pid, fd, path, fn, ctx);
	if ((rights & needs) == needs)
		return;
	if (t->noutside < OBSERVE_FDS_MAX) {
		o = &t->outside[t->noutside];
		o->fd = fd;
		o->flags = flags;
		o->needs = needs;
		o->rights = rights;
		snprintf(o->path, sizeof(o->path), "%.255s", path);
	}
	t->noutside++;
}

static void read_fds(int pid, observe_rights_fn fn, void *ctx, struct observed_task *t,
		     unsigned long *sockets, size_t *nsock)
{
	char dirpath[64], link[96], target[PATH_MAX];
	struct dirent *de;
	ssize_t n;
	DIR *d;
	int fd;

	snprintf(dirpath, sizeof(dirpath), "/proc/%d/fd", pid);
	d = opendir(dirpath);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		fd = atoi(de->d_name);
		snprintf(link, sizeof(link), "/proc/%d/fd/%d", pid, fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		t->nfds++;
		if (!strncmp(target, "socket:[", 8)) {
			t->nsockets++;
			if (*nsock < SOCKETS_MAX)
				sockets[(*nsock)++] = strtoul(target + 8, NULL, 10);
		} else if (target[0] == '/') {
			check_file(pid, fd, target, fn, ctx, t);
		}
	}
	if (d)
		closedir(d);
}

/* "0100007F:1F90" (IPv4) or 32 hex digits (IPv6), as /proc/net gives them, for people. */
static void format_addr(const char *hex, char *out, size_t outsz)
{
	unsigned a, port;
	const char *colon = strchr(hex, ':');

	if (!colon)
		return;
	port = strtoul(colon + 1, NULL, 16);
	if (colon - hex == 8 && sscanf(hex, "%8x", &a) == 1)
		snprintf(out, outsz, "%u.%u.%u.%u:%u", a & 255, (a >> 8) & 255, (a >> 16) & 255,
			 a >> 24, port);
	else
		snprintf(out, outsz, "[%.*s]:%u", (int)(colon - hex), hex, port);
}

/* Its sockets that listen (TCP) or are bound and unconnected (UDP), in its network namespace. */
static void read_listening(int pid, const unsigned long *sockets, size_t nsock,
			   struct observed_task *t)
{
	static const struct {
		const char *file, *proto;
		unsigned state;
	} tables[] = { { "tcp", "tcp", 0x0A },
		       { "tcp6", "tcp6", 0x0A },
		       { "udp", "udp", 0x07 },
		       { "udp6", "udp6", 0x07 } };
	char path[64], line[512], local[80], addr[64];
	unsigned long inode;
	unsigned state;
	size_t i, k;
	FILE *f;

	for (i = 0; nsock && i < sizeof(tables) / sizeof(tables[0]); i++) {
		snprintf(path, sizeof(path), "/proc/%d/net/%s", pid, tables[i].file);
		f = fopen(path, "re");
		while (f && fgets(line, sizeof(line), f)) {
			if (sscanf(line, " %*s %79s %*s %x %*s %*s %*s %*s %*s %lu", local, &state,
				   &inode) != 3 ||
			    state != tables[i].state)
				continue;
			for (k = 0; k < nsock && sockets[k] != inode; k++)
				;
			if (k == nsock || t->nlistening >= OBSERVE_LISTEN_MAX)
				continue;
			addr[0] = '\0';
			format_addr(local, addr, sizeof(addr));
			snprintf(t->listening[t->nlistening++], sizeof(t->listening[0]), "%s %.63s",
				 tables[i].proto, addr);
		}
		if (f)
			fclose(f);
	}
}

int observe_task(int pid, observe_rights_fn rights_fn, void *ctx, struct observed_task *t)
{
	unsigned long *sockets = calloc(SOCKETS_MAX, sizeof(*sockets));
	char path[64];
	size_t nsock = 0;

	if (!sockets)
		return -ENOMEM;
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->seccomp = -1;
	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (access(path, F_OK)) {
		free(sockets);
		return -ESRCH;
	}
	read_status(pid, t);
	read_namespaces(pid, t);
	read_fds(pid, rights_fn, ctx, t, sockets, &nsock);
	read_listening(pid, sockets, nsock, t);
	free(sockets);
	return 0;
}
