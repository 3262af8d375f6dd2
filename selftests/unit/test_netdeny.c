// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include "harness.h"
#include "policy/netdeny.h"

/* Longest-prefix match over the default list, as the kernel's LPM trie does it. */
static int denied(const char *ip)
{
	struct agentd_addr_key list[128], k = {};
	int n = netdeny_default(list, 128), i;
	__u8 v4[4];
	unsigned int b;

	ASSERT(n > 0);
	if (inet_pton(AF_INET, ip, v4) == 1) {
		k.addr[10] = k.addr[11] = 0xff;
		memcpy(k.addr + 12, v4, 4);
	} else {
		ASSERT(inet_pton(AF_INET6, ip, k.addr) == 1);
	}
	for (i = 0; i < n; i++) {
		for (b = 0; b < list[i].prefixlen; b++)
			if ((k.addr[b / 8] ^ list[i].addr[b / 8]) & (0x80 >> (b % 8)))
				break;
		if (b == list[i].prefixlen)
			return 1;
	}
	return 0;
}

TEST(structural_list_covers_every_form)
{
	static const char *const deny[] = {
		"127.0.0.1",
		"10.1.2.3",
		"172.31.255.255",
		"192.168.0.1",
		"100.64.0.1",
		"169.254.169.254",
		"100.100.100.200",
		"192.0.0.192",
		"0.0.0.0",
		"224.0.0.251",
		"255.255.255.255",
		"::",
		"::1",
		"fd00:ec2::254",
		"fe80::1",
		"ff02::1",
		"::ffff:127.0.0.1",
		"::ffff:169.254.169.254",
		"64:ff9b::a00:1",
		"64:ff9b::7f00:1",
		"64:ff9b::a9fe:a9fe",
		"2002:a00:1::1",
		"2002:7f00:1::",
		"2002:a9fe:a9fe::1",
		"::127.0.0.1",
		"2001:0:4136:e378:8000:63bf:3fff:fdd2",
		"64:ff9b:1::1",
	};
	static const char *const allow[] = {
		"8.8.8.8",	   "1.1.1.1",	      "172.32.0.1",	"192.169.0.1",
		"100.128.0.1",	   "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808",
		"2002:808:808::1", "11.0.0.1",
	};
	size_t i;

	for (i = 0; i < sizeof(deny) / sizeof(deny[0]); i++)
		if (!denied(deny[i]))
			FAIL("%s is not structurally denied", deny[i]);
	for (i = 0; i < sizeof(allow) / sizeof(allow[0]); i++)
		if (denied(allow[i]))
			FAIL("%s is structurally denied", allow[i]);
}

TEST(cidr_parsing)
{
	struct agentd_addr_key k;

	ASSERT_EQ(netdeny_parse_cidr("10.0.0.0/8", &k), 0);
	ASSERT_EQ(k.prefixlen, 104);
	ASSERT_EQ(k.addr[10], 0xff);
	ASSERT_EQ(k.addr[12], 10);
	ASSERT_EQ(netdeny_parse_cidr("::/0", &k), 0);
	ASSERT_EQ(k.prefixlen, 0);
	ASSERT_EQ(netdeny_parse_cidr("fe80::/10", &k), 0);
	ASSERT_EQ(k.prefixlen, 10);
	ASSERT_EQ(netdeny_parse_cidr("10.0.0.1/8", &k), -EINVAL); /* host bits set */
	ASSERT_EQ(netdeny_parse_cidr("10.0.0.0/33", &k), -EINVAL);
	ASSERT_EQ(netdeny_parse_cidr("10.0.0.0/-1", &k), -EINVAL);
	ASSERT_EQ(netdeny_parse_cidr("10.0.0.0", &k), -EINVAL);
	ASSERT_EQ(netdeny_parse_cidr("10.0.0.0/", &k), -EINVAL);
	ASSERT_EQ(netdeny_parse_cidr("10.0.0.0/8x", &k), -EINVAL);
	ASSERT_EQ(netdeny_parse_cidr("::/129", &k), -EINVAL);
	ASSERT_EQ(netdeny_parse_cidr("example.com/8", &k), -EINVAL);
}
