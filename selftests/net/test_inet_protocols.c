// SPDX-License-Identifier: GPL-2.0
/*
 * The inet protocols an agent may use (cgroup/sock_create, bpf/inet.bpf.h), where there is no BPF
 * LSM too: TCP and UDP; ICMP echo sockets only with the policy's "icmp"; never SCTP, MPTCP or
 * UDP-Lite, which no program of ours follows. Runs in the host tier and the VM tier, in a network
 * namespace of its own (echo sockets open to every group there, as systemd sets it).
 */
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>
#include "harness.h"
#include "testlib.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

struct proto_case {
	int family, type, protocol;
};

static int try_proto(void *arg)
{
	const struct proto_case *c = arg;
	int fd = socket(c->family, c->type | SOCK_CLOEXEC, c->protocol);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static void echo_netns(void)
{
	static const char range[] = "0 2147483647";
	int fd;

	if (unshare(CLONE_NEWNET))
		FAIL("unshare(CLONE_NEWNET): %s", strerror(errno));
	fd = open("/proc/sys/net/ipv4/ping_group_range", O_WRONLY | O_CLOEXEC);
	ASSERT_OK(fd);
	ASSERT_EQ(write(fd, range, sizeof(range) - 1), (ssize_t)sizeof(range) - 1);
	close(fd);
}

static void proto_agent(struct test_agent *ag, __u32 flags)
{
	static const struct file_rule files[] = { { "/", AGENTD_RIGHT_READ | AGENTD_RIGHT_EXEC } };
	const struct ruleset rs = {
		.flags = flags,
		.sock_families = 1ULL << AF_INET | 1ULL << AF_INET6,
		.sock_types = 1U << SOCK_STREAM | 1U << SOCK_DGRAM | 1U << SOCK_SEQPACKET,
		.files = files,
		.nfiles = 1,
	};

	test_agent_start(ag, &rs, false);
}

TEST(net_icmp_echo_socket_only_with_icmp)
{
	struct proto_case v4 = { AF_INET, SOCK_DGRAM, IPPROTO_ICMP };
	struct proto_case v6 = { AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6 };
	struct test_agent ag;

	echo_netns();
	proto_agent(&ag, 0);
	ASSERT_EQ(test_agent_run(&ag, try_proto, &v4), EPERM);
	ASSERT_EQ(test_agent_run(&ag, try_proto, &v6), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, try_proto, &v4, NULL), 0);
	proto_agent(&ag, AGENTD_AGENT_ALLOW_ICMP);
	ASSERT_EQ(test_agent_run(&ag, try_proto, &v4), 0);
	ASSERT_EQ(test_agent_run(&ag, try_proto, &v6), 0);
}

/* Refused where the kernel has the protocol; where it has not (SCTP not loaded), the kernel fails
 * the socket before the cgroup program runs, with the same error as outside the agent. */
TEST(net_protocols_no_hook_follows_refused)
{
	const struct proto_case c[] = {
		{ AF_INET, SOCK_STREAM, IPPROTO_MPTCP },
		{ AF_INET6, SOCK_STREAM, IPPROTO_MPTCP },
		{ AF_INET, SOCK_DGRAM, IPPROTO_UDPLITE },
		{ AF_INET6, SOCK_DGRAM, IPPROTO_UDPLITE },
		{ AF_INET, SOCK_SEQPACKET, IPPROTO_SCTP },
		{ AF_INET6, SOCK_STREAM, IPPROTO_SCTP },
	};
	struct proto_case tcp = { AF_INET6, SOCK_STREAM, 0 }, udp = { AF_INET, SOCK_DGRAM, 0 };
	struct test_agent ag;
	int inside, outside;
	size_t i;

	echo_netns();
	proto_agent(&ag, AGENTD_AGENT_ALLOW_ICMP);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		outside = run_in_cgroup(NULL, try_proto, (void *)&c[i], NULL);
		inside = test_agent_run(&ag, try_proto, (void *)&c[i]);
		ASSERT(outside != EPERM);
		if (inside != EPERM)
			ASSERT_EQ(inside, outside);
		ASSERT(outside || inside == EPERM);
	}
	ASSERT_EQ(test_agent_run(&ag, try_proto, &tcp), 0);
	ASSERT_EQ(test_agent_run(&ag, try_proto, &udp), 0);
}
