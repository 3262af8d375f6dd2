// SPDX-License-Identifier: GPL-2.0
/* Socket families and types (BPF LSM socket_create): EPERM unless the policy grants both. */
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/capability.h>
#include "ops.h"

struct sock_case {
	int family, type, protocol;
};

static int try_socket(void *arg)
{
	const struct sock_case *c = arg;
	int fd = socket(c->family, c->type | SOCK_CLOEXEC, c->protocol);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* Denied with the family but not the type, and with the type but not the family; allowed with
 * both; allowed outside the agent. */
static void check_socket(int family, int type, int protocol)
{
	struct sock_case c = { family, type, protocol };
	const struct file_rule files[] = { { "/", RX } };
	/* CAP_NET_RAW: raw and packet sockets need it too (the grant decides, not the capability). */
	struct ruleset rs = { .files = files, .nfiles = 1, .capabilities = 1ULL << CAP_NET_RAW };
	struct test_agent ag;

	rs.sock_families = 1ULL << family;
	rs.sock_types = ~(1U << type);
	test_agent_start(&ag, &rs, true);
	ASSERT_EQ(test_agent_run(&ag, try_socket, &c), EPERM);
	rs.sock_families = ~(1ULL << family);
	rs.sock_types = 1U << type;
	test_agent_apply(&ag, &rs);
	ASSERT_EQ(test_agent_run(&ag, try_socket, &c), EPERM);
	rs.sock_families = 1ULL << family;
	test_agent_apply(&ag, &rs);
	ASSERT_EQ(test_agent_run(&ag, try_socket, &c), 0);
	ASSERT_EQ(run_in_cgroup(NULL, try_socket, &c, NULL), 0);
}

TEST(socket_packet_needs_family_and_type)
{
	check_socket(AF_PACKET, SOCK_RAW, 0);
}

TEST(socket_netlink_needs_family_and_type)
{
	check_socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
}

TEST(socket_inet_raw_needs_family_and_type)
{
	check_socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
}

TEST(socket_unix_stream_needs_family_and_type)
{
	check_socket(AF_UNIX, SOCK_STREAM, 0);
}

TEST(socket_inet_stream_needs_family_and_type)
{
	check_socket(AF_INET, SOCK_STREAM, 0);
}

TEST(socket_inet6_dgram_needs_family_and_type)
{
	check_socket(AF_INET6, SOCK_DGRAM, 0);
}
