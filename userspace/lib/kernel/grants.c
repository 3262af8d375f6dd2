// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "kernel/enforcer.h"
#include "kernel/grants.h"
#include "kernel/kdev.h"
#include "policy/netdeny.h"

int grant_key_file(struct grant_key *k, __u32 agent_id, const char *path, char *why, size_t whysz)
{
	struct stat st;

	if (path[0] != '/') {
		snprintf(why, whysz, "%s: not an absolute path", path);
		return -EINVAL;
	}
	if (stat(path, &st)) {
		snprintf(why, whysz, "%s: %s", path, strerror(errno));
		return -errno;
	}
	memset(k, 0, sizeof(*k));
	k->file.agent_id = agent_id;
	k->file.dev = kernel_dev(st.st_dev);
	k->file.ino = st.st_ino;
	return 0;
}

/* Splits "CIDR:PORT" or "[CIDR]:PORT" into cidr (with a host's prefix when it has none) and
 * *port. */
static int split_target(const char *target, char *cidr, size_t cidrsz, __u16 *port)
{
	const char *colon, *start = target, *end;
	char *stop;
	long n;

	if (target[0] == '[') {
		start = target + 1;
		end = strchr(start, ']');
		if (!end || end[1] != ':')
			return -EINVAL;
		colon = end + 1;
	} else {
		colon = strrchr(target, ':');
		end = colon;
	}
	if (!colon || end == start || (size_t)(end - start) + 5 > cidrsz)
		return -EINVAL;
	errno = 0;
	n = strtol(colon + 1, &stop, 10);
	if (errno || *stop || stop == colon + 1 || n < 1 || n > 65535)
		return -EINVAL;
	*port = (__u16)n;
	snprintf(cidr, cidrsz, "%.*s", (int)(end - start), start);
	if (!strchr(cidr, '/'))
		strcat(cidr, strchr(cidr, ':') ? "/128" : "/32");
	return 0;
}

int grant_key_net(struct grant_key *k, __u32 agent_id, const char *target, char *why, size_t whysz)
{
	struct agentd_addr_key a;
	char cidr[64];
	__u16 port;

	if (split_target(target, cidr, sizeof(cidr), &port) || netdeny_parse_cidr(cidr, &a)) {
		snprintf(why, whysz,
			 "%s: want CIDR:PORT (198.51.100.0/24:443, [2001:db8::/32]:443), host bits "
			 "zero, port 1 to 65535",
			 target);
		return -EINVAL;
	}
	if (netdeny_addr_denied(a.addr)) {
		snprintf(why, whysz,
			 "%s: in the structural deny list, which no grant opens (host "
			 "configuration)",
			 target);
		return -EINVAL;
	}
	memset(k, 0, sizeof(*k));
	k->is_net = true;
	k->net.prefixlen = 64 + a.prefixlen;
	k->net.agent_id = agent_id;
	k->net.port = port;
	memcpy(k->net.addr, a.addr, sizeof(a.addr));
	return 0;
}

static int map_fd(struct enforcer *e, const struct grant_key *k)
{
	return enforcer_map_fd(e, k->is_net ? "net_grants" : "file_grants");
}

static const void *key_of(const struct grant_key *k)
{
	return k->is_net ? (const void *)&k->net : (const void *)&k->file;
}

int grant_map_add(struct enforcer *e, const struct grant_key *k, const struct agentd_grant *g)
{
	int fd = map_fd(e, k);

	if (fd < 0)
		return fd;
	if (bpf_map_update_elem(fd, key_of(k), g, BPF_NOEXIST))
		return errno == E2BIG ? -ENOSPC : -errno;
	return 0;
}

int grant_map_get(struct enforcer *e, const struct grant_key *k, struct agentd_grant *g)
{
	int fd = map_fd(e, k);

	if (fd < 0)
		return fd;
	return bpf_map_lookup_elem(fd, key_of(k), g) ? -errno : 0;
}

int grant_map_del(struct enforcer *e, const struct grant_key *k)
{
	int fd = map_fd(e, k);

	if (fd < 0)
		return fd;
	return bpf_map_delete_elem(fd, key_of(k)) ? -errno : 0;
}

__u64 grant_boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}
