// SPDX-License-Identifier: GPL-2.0
/*
 * The host's name servers, as /etc/resolv.conf names them, for the tool runs that may reach the
 * network ("network": "public"): a resolver is often on loopback (systemd-resolved's
 * 127.0.0.53) or a private address, which the structural list denies, and a public tool must
 * still resolve names. Read again before each public run, so that a changed resolv.conf (DHCP,
 * VPN) holds from the next run on. Only port 53 of each, TCP and UDP (net.bpf.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "broker/broker_int.h"
#include "kernel/enforcer.h"
#include "paths.h"

/* "nameserver ADDR" lines (a "%zone" suffix dropped), at most RESOLVERS_MAX; others ignored,
 * as the resolver ignores them. Returns how many, as 16-byte (IPv4-mapped) addresses. */
size_t resolvers_parse(const char *text, __u8 (*out)[16], size_t max)
{
	char line[512], addr[INET6_ADDRSTRLEN + 1];
	const char *p = text, *nl;
	struct in_addr a4;
	size_t n = 0, len;

	while (*p && n < max) {
		nl = strchr(p, '\n');
		len = nl ? (size_t)(nl - p) : strlen(p);
		if (len < sizeof(line)) {
			memcpy(line, p, len);
			line[len] = '\0';
			if (sscanf(line, " nameserver %46[0-9A-Fa-f:.]", addr) == 1) {
				if (inet_pton(AF_INET, addr, &a4) == 1) {
					memset(out[n], 0, 10);
					out[n][10] = out[n][11] = 0xff;
					memcpy(out[n] + 12, &a4, 4);
					n++;
				} else if (inet_pton(AF_INET6, addr, out[n]) == 1) {
					n++;
				}
			}
		}
		p = nl ? nl + 1 : p + len;
	}
	return n;
}

int resolvers_sync(struct enforcer *e)
{
	__u8 addrs[RESOLVERS_MAX][16];
	char text[8192];
	size_t len = 0;
	FILE *f = fopen(PATH_RESOLV_CONF, "re");

	/* No resolv.conf: no name server (the C library's default, loopback, is not opened). */
	if (f) {
		len = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
	}
	text[len] = '\0';
	return enforcer_set_resolvers(e, (const __u8(*)[16])addrs,
				      resolvers_parse(text, addrs, RESOLVERS_MAX));
}
