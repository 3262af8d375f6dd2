// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy/netdeny.h"

static const char *const deny_v4[] = {
	"0.0.0.0/8", /* "this network"; 0.0.0.0 reaches local listeners */
	"10.0.0.0/8", /* private */
	"100.64.0.0/10", /* shared address space (carrier NAT; Alibaba metadata 100.100.100.200) */
	"127.0.0.0/8", /* loopback */
	"169.254.0.0/16", /* link-local: AWS/GCP/Azure metadata 169.254.169.254, ECS 169.254.170.2 */
	"172.16.0.0/12", /* private */
	"192.0.0.0/24", /* IETF assignments (Oracle metadata 192.0.0.192) */
	"192.168.0.0/16", /* private */
	"198.18.0.0/15", /* benchmarking */
	"224.0.0.0/4", /* multicast */
	"240.0.0.0/4", /* reserved, and broadcast 255.255.255.255 */
};

static const char *const deny_v6[] = {
	"::/96", /* unspecified, loopback, IPv4-compatible (deprecated) */
	"64:ff9b:1::/48", /* local-use NAT64 */
	"2001::/32", /* Teredo: embeds an obfuscated IPv4 address */
	"fc00::/7", /* unique local, AWS metadata fd00:ec2::254 */
	"fe80::/10", /* link-local */
	"fec0::/10", /* site-local (deprecated) */
	"ff00::/8", /* multicast */
};

int netdeny_parse_cidr(const char *cidr, struct agentd_addr_key *key)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash, *end;
	unsigned int i, bits;
	__u8 v4[4];
	long n;

	if (strlen(cidr) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, cidr);
	slash = strchr(buf, '/');
	if (!slash)
		return -EINVAL;
	*slash = '\0';
	errno = 0;
	n = strtol(slash + 1, &end, 10);
	if (errno || *end || end == slash + 1)
		return -EINVAL;
	memset(key, 0, sizeof(*key));
	if (inet_pton(AF_INET, buf, v4) == 1) {
		if (n < 0 || n > 32)
			return -EINVAL;
		key->addr[10] = key->addr[11] = 0xff;
		memcpy(key->addr + 12, v4, 4);
		bits = 96 + n;
	} else if (inet_pton(AF_INET6, buf, key->addr) == 1) {
		if (n < 0 || n > 128)
			return -EINVAL;
		bits = n;
	} else {
		return -EINVAL;
	}
	for (i = bits; i < 128; i++)
		if (key->addr[i / 8] & (0x80 >> (i % 8)))
			return -EINVAL;
	key->prefixlen = bits;
	return 0;
}

static int add(struct agentd_addr_key *out, size_t max, size_t *n, const struct agentd_addr_key *k)
{
	if (*n == max)
		return -ENOSPC;
	out[(*n)++] = *k;
	return 0;
}

/* The IPv4 range k (IPv4-mapped) embedded at byte offset at of prefix base/base_bits. */
static void embed_v4(struct agentd_addr_key *out, const struct agentd_addr_key *k, const __u8 *base,
		     unsigned int base_bits, unsigned int at)
{
	memset(out, 0, sizeof(*out));
	memcpy(out->addr, base, base_bits / 8);
	memcpy(out->addr + at, k->addr + 12, 4);
	out->prefixlen = at * 8 + (k->prefixlen - 96);
}

int netdeny_default(struct agentd_addr_key *out, size_t max)
{
	static const __u8 nat64[12] = { 0x00, 0x64, 0xff, 0x9b };
	static const __u8 six_to_four[2] = { 0x20, 0x02 };
	struct agentd_addr_key k, e;
	size_t n = 0, i;
	int err;

	for (i = 0; i < sizeof(deny_v4) / sizeof(deny_v4[0]); i++) {
		if (netdeny_parse_cidr(deny_v4[i], &k))
			return -EINVAL;
		embed_v4(&e, &k, nat64, 96, 12);
		err = add(out, max, &n, &k);
		err = err ?: add(out, max, &n, &e);
		embed_v4(&e, &k, six_to_four, 16, 2);
		err = err ?: add(out, max, &n, &e);
		if (err)
			return err;
	}
	for (i = 0; i < sizeof(deny_v6) / sizeof(deny_v6[0]); i++) {
		if (netdeny_parse_cidr(deny_v6[i], &k))
			return -EINVAL;
		err = add(out, max, &n, &k);
		if (err)
			return err;
	}
	return n;
}

static struct agentd_addr_key deny_list[128];
static int deny_n;
static pthread_once_t deny_once = PTHREAD_ONCE_INIT;

static void deny_init(void)
{
	deny_n = netdeny_default(deny_list, sizeof(deny_list) / sizeof(deny_list[0]));
}

static bool prefix_match(const struct agentd_addr_key *k, const __u8 addr[16])
{
	unsigned int b = k->prefixlen / 8, r = k->prefixlen % 8;

	if (memcmp(k->addr, addr, b))
		return false;
	return !r || !((k->addr[b] ^ addr[b]) & (0xff00 >> r));
}

bool netdeny_addr_denied(const __u8 addr[16])
{
	int i;

	pthread_once(&deny_once, deny_init);
	/* Fail closed: a list that did not build denies everything. */
	if (deny_n <= 0)
		return true;
	for (i = 0; i < deny_n; i++)
		if (prefix_match(&deny_list[i], addr))
			return true;
	return false;
}

bool netdeny_sockaddr_denied(const struct sockaddr *sa)
{
	__u8 addr[16] = {};

	if (sa->sa_family == AF_INET) {
		addr[10] = addr[11] = 0xff;
		memcpy(addr + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		memcpy(addr, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	} else {
		return true;
	}
	return netdeny_addr_denied(addr);
}
