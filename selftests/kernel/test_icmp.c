// SPDX-License-Identifier: GPL-2.0
/*
 * Inet sockets no cgroup program sees (BPF LSM: socket_create, socket_connect, socket_sendmsg,
 * socket_setsockopt; bpf/inet.bpf.h): ICMP echo ("ping") sockets only with the policy's "icmp",
 * their destinations and raw sockets' checked against the structural list and the rules like
 * UDP's; protocols no hook follows refused; IP options that reroute refused. Every test runs in
 * a network namespace of its own, the test's addresses on its lo, so that nothing leaves it.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/capability.h>
#include "policy/netdeny.h"
#include "ops.h"

#define METADATA4 "169.254.169.254"
#define PRIVATE4 "10.0.0.1"
#define ULA6 "fd00::1"
#define PUBLIC4 "192.0.2.1" /* TEST-NET-1: not in the structural deny list */
#define OTHER4 "198.51.100.1" /* TEST-NET-2: likewise */
#define PUBLIC6 "2001:db8::1" /* documentation: likewise (2001::/32 is Teredo alone) */
#define NOBODY 65534
#define ARRIVAL_MS 5000 /* a deadline for what must arrive, not a measure of speed */
#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

static void write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		FAIL("writing %s: %s", path, strerror(errno));
	close(fd);
}

/* A network namespace for this test: lo up with the test's addresses, echo sockets open to every
 * group (as systemd sets ping_group_range). */
static void own_netns(void)
{
	const char *v4[] = { METADATA4, PRIVATE4, PUBLIC4, OTHER4 };
	const char *v6[] = { ULA6, PUBLIC6 };
	struct ifreq ifr = { .ifr_name = "lo" };
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
	struct in6_ifreq {
		struct in6_addr addr;
		__u32 prefixlen;
		int ifindex;
	} r6 = { .prefixlen = 128 };
	size_t i;
	int fd, fd6;

	if (unshare(CLONE_NEWNET))
		FAIL("unshare(CLONE_NEWNET): %s", strerror(errno));
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	fd6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ASSERT_OK(fd);
	ASSERT_OK(fd6);
	ASSERT_OK(ioctl(fd, SIOCGIFFLAGS, &ifr));
	ifr.ifr_flags |= IFF_UP;
	ASSERT_OK(ioctl(fd, SIOCSIFFLAGS, &ifr));
	for (i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo:%zu", i + 1);
		sin->sin_family = AF_INET;
		inet_pton(AF_INET, v4[i], &sin->sin_addr);
		if (ioctl(fd, SIOCSIFADDR, &ifr))
			FAIL("adding %s to lo: %s", v4[i], strerror(errno));
	}
	r6.ifindex = (int)if_nametoindex("lo");
	for (i = 0; i < sizeof(v6) / sizeof(v6[0]); i++) {
		inet_pton(AF_INET6, v6[i], &r6.addr);
		if (ioctl(fd6, SIOCSIFADDR, &r6))
			FAIL("adding %s to lo: %s", v6[i], strerror(errno));
	}
	close(fd);
	close(fd6);
	write_file("/proc/sys/net/ipv4/ping_group_range", "0 2147483647");
}

struct echo {
	const char *addr;
	int type; /* SOCK_DGRAM: an echo socket; SOCK_RAW */
	int connect; /* connect(), then send(); else sendto() */
	uid_t uid; /* 0: stay root */
	int reply; /* wait for the echo reply */
};

static socklen_t sockaddr_of(const char *addr, struct sockaddr_storage *ss)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		return sizeof(*sin);
	}
	if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		return sizeof(*sin6);
	}
	FAIL("bad address %s", addr);
}

static int drop_to(uid_t uid)
{
	if (!uid)
		return 0;
	if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
		return errno;
	return 0;
}

/* The internet checksum, for raw IPv4 ICMP (echo sockets and IPv6 fill theirs in). */
static __u16 checksum(const __u8 *p, size_t n)
{
	__u32 sum = 0;
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += p[i] << 8 | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((__u16)~sum);
}

static int wait_reply(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char buf[256];

	if (poll(&pfd, 1, ARRIVAL_MS) <= 0 || recv(fd, buf, sizeof(buf), 0) <= 0)
		return ETIMEDOUT;
	return 0;
}

/* An echo request to e->addr: 0, the errno of the call that failed, or 1000 + the errno of
 * socket(). */
static int try_echo(void *arg)
{
	const struct echo *e = arg;
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(e->addr, &ss);
	int v6 = ss.ss_family == AF_INET6, fd, r;
	__u8 req[8] = { v6 ? 128 : 8, 0, 0, 0, 0x12, 0x34, 0, 1 }; /* echo request, id, seq */

	r = drop_to(e->uid);
	if (r)
		return 2000 + r;
	fd = socket(ss.ss_family, e->type | SOCK_CLOEXEC, v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP);
	if (fd < 0)
		return 1000 + errno;
	if (e->type == SOCK_RAW && !v6)
		memcpy(req + 2, &(__u16){ checksum(req, sizeof(req)) }, 2);
	if (e->connect)
		r = connect(fd, (struct sockaddr *)&ss, len) ?: send(fd, req, sizeof(req), 0);
	else
		r = sendto(fd, req, sizeof(req), 0, (struct sockaddr *)&ss, len);
	r = r < 0 ? errno : e->reply ? wait_reply(fd) : 0;
	close(fd);
	return r;
}

/* socket(family, type, protocol): 0 or its errno. */
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

static void rule(struct net_rule *r, const char *cidr, __u32 protocols)
{
	memset(r, 0, sizeof(*r));
	if (netdeny_parse_cidr(cidr, &r->cidr))
		FAIL("bad CIDR %s", cidr);
	r->protocols = protocols;
}

static void inet_agent(struct test_agent *ag, __u32 flags, __u32 extra_types,
		       const struct net_rule *net, size_t nnet)
{
	static const struct file_rule files[] = { { "/", RX } };
	const struct ruleset rs = {
		.flags = flags,
		.sock_families = 1ULL << AF_INET | 1ULL << AF_INET6,
		.sock_types =
			1U << SOCK_STREAM | 1U << SOCK_DGRAM | 1U << SOCK_SEQPACKET | extra_types,
		.files = files,
		.nfiles = 1,
		.net = net,
		.nnet = nnet,
		/* raw sockets, and the drop to uid 65534 the unprivileged cases make */
		.capabilities = 1ULL << CAP_NET_RAW | 1ULL << CAP_SETUID | 1ULL << CAP_SETGID,
	};

	test_agent_start(ag, &rs, true);
}

static void allow_everything(struct net_rule r[2])
{
	rule(&r[0], "0.0.0.0/0", AGENTD_PROTO_TCP | AGENTD_PROTO_UDP);
	rule(&r[1], "::/0", AGENTD_PROTO_TCP | AGENTD_PROTO_UDP);
}

TEST(icmp_echo_socket_needs_icmp_grant)
{
	struct sock_case v4 = { AF_INET, SOCK_DGRAM, IPPROTO_ICMP };
	struct sock_case v6 = { AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6 };
	struct sock_case udp = { AF_INET, SOCK_DGRAM, 0 };
	struct test_agent ag;

	own_netns();
	inet_agent(&ag, 0, 0, NULL, 0);
	ASSERT_EQ(test_agent_run(&ag, try_socket, &v4), EPERM);
	ASSERT_EQ(test_agent_run(&ag, try_socket, &v6), EPERM);
	ASSERT_EQ(test_agent_run(&ag, try_socket, &udp), 0);
	ASSERT_EQ(run_in_cgroup(NULL, try_socket, &v4, NULL), 0);
	inet_agent(&ag, AGENTD_AGENT_ALLOW_ICMP, 0, NULL, 0);
	ASSERT_EQ(test_agent_run(&ag, try_socket, &v4), 0);
	ASSERT_EQ(test_agent_run(&ag, try_socket, &v6), 0);
}

/* Denied to the agent, root or not, by sendto() and by connect(), whatever its rules allow; the
 * test itself reaches the address. */
static void echo_denied(const struct test_agent *ag, const char *addr)
{
	struct echo e = { .addr = addr, .type = SOCK_DGRAM };

	ASSERT_EQ(test_agent_run(ag, try_echo, &e), EPERM);
	e.uid = NOBODY;
	ASSERT_EQ(test_agent_run(ag, try_echo, &e), EPERM);
	e.connect = 1;
	ASSERT_EQ(test_agent_run(ag, try_echo, &e), EPERM);
	e.uid = 0;
	ASSERT_EQ(test_agent_run(ag, try_echo, &e), EPERM);
	e.reply = 1;
	e.connect = 0;
	ASSERT_EQ(run_in_cgroup(NULL, try_echo, &e, NULL), 0);
}

static void echo_allowed(const struct test_agent *ag, const char *addr)
{
	struct echo e = { .addr = addr, .type = SOCK_DGRAM, .reply = 1 };

	ASSERT_EQ(test_agent_run(ag, try_echo, &e), 0);
	e.uid = NOBODY;
	e.connect = 1;
	ASSERT_EQ(test_agent_run(ag, try_echo, &e), 0);
}

TEST(icmp_echo_structural_denied)
{
	struct test_agent ag;
	struct net_rule r[2];

	own_netns();
	allow_everything(r);
	inet_agent(&ag, AGENTD_AGENT_ALLOW_ICMP, 0, r, 2);
	echo_denied(&ag, METADATA4);
	echo_denied(&ag, PRIVATE4);
	echo_denied(&ag, ULA6);
	echo_denied(&ag, "127.0.0.1");
	echo_denied(&ag, "::1");
	echo_allowed(&ag, PUBLIC4);
	echo_allowed(&ag, PUBLIC6);
}

/* Checked like UDP: the most specific rule covering the address must grant udp, and on every
 * port (an echo has none). */
TEST(icmp_echo_needs_a_udp_rule_on_every_port)
{
	struct net_rule r[3];
	struct test_agent ag;

	own_netns();
	rule(&r[0], "192.0.2.0/24", AGENTD_PROTO_UDP);
	rule(&r[1], "198.51.100.0/24", AGENTD_PROTO_UDP);
	r[1].nranges = 1;
	r[1].port_lo[0] = r[1].port_hi[0] = 53;
	rule(&r[2], "2001:db8::/32", AGENTD_PROTO_TCP);
	inet_agent(&ag, AGENTD_AGENT_ALLOW_ICMP, 0, r, 3);
	echo_allowed(&ag, PUBLIC4);
	echo_denied(&ag, OTHER4);
	echo_denied(&ag, PUBLIC6);
	inet_agent(&ag, AGENTD_AGENT_ALLOW_ICMP, 0, r, 1);
	echo_allowed(&ag, PUBLIC4);
	echo_denied(&ag, OTHER4); /* no rule */
}

static int raw_hdrincl(void *arg)
{
	int fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP), one = 1, r;

	(void)arg;
	if (fd < 0)
		return 1000 + errno;
	r = setsockopt(fd, IPPROTO_IP, IP_HDRINCL, &one, sizeof(one)) ? errno : 0;
	close(fd);
	return r;
}

TEST(raw_socket_destinations_checked)
{
	struct sock_case raw = { AF_INET, SOCK_RAW, IPPROTO_RAW };
	struct echo e = { .type = SOCK_RAW };
	struct test_agent ag;
	struct net_rule r[2];

	own_netns();
	allow_everything(r);
	inet_agent(&ag, 0, 1U << SOCK_RAW, r, 2);
	e.addr = PRIVATE4;
	ASSERT_EQ(test_agent_run(&ag, try_echo, &e), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, try_echo, &e, NULL), 0);
	e.addr = ULA6;
	ASSERT_EQ(test_agent_run(&ag, try_echo, &e), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, try_echo, &e, NULL), 0);
	e.connect = 1;
	ASSERT_EQ(test_agent_run(&ag, try_echo, &e), EPERM);
	e.addr = PUBLIC6;
	ASSERT_EQ(test_agent_run(&ag, try_echo, &e), 0);
	e.connect = 0;
	e.addr = PUBLIC4;
	ASSERT_EQ(test_agent_run(&ag, try_echo, &e), 0);
	/* A header the sender writes would carry any destination. */
	ASSERT_EQ(test_agent_run(&ag, try_socket, &raw), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, try_socket, &raw, NULL), 0);
	ASSERT_EQ(test_agent_run(&ag, raw_hdrincl, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, raw_hdrincl, NULL, NULL), 0);
}

/* SCTP, MPTCP, UDP-Lite: no cgroup program of ours sees their connect() or sendmsg(). The test
 * itself is not refused (SCTP may not be loaded: EPROTONOSUPPORT, never EPERM). */
TEST(inet_protocols_no_hook_follows_refused)
{
	const struct sock_case c[] = {
		{ AF_INET, SOCK_STREAM, IPPROTO_MPTCP },
		{ AF_INET6, SOCK_STREAM, IPPROTO_MPTCP },
		{ AF_INET, SOCK_DGRAM, IPPROTO_UDPLITE },
		{ AF_INET6, SOCK_DGRAM, IPPROTO_UDPLITE },
		{ AF_INET, SOCK_SEQPACKET, IPPROTO_SCTP },
		{ AF_INET, SOCK_STREAM, IPPROTO_SCTP },
	};
	struct sock_case tcp = { AF_INET6, SOCK_STREAM, IPPROTO_TCP };
	struct test_agent ag;
	size_t i;

	own_netns();
	inet_agent(&ag, AGENTD_AGENT_ALLOW_ICMP, 0, NULL, 0);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		ASSERT_EQ(test_agent_run(&ag, try_socket, (void *)&c[i]), EPERM);
		ASSERT(run_in_cgroup(NULL, try_socket, (void *)&c[i], NULL) != EPERM);
	}
	ASSERT_EQ(test_agent_run(&ag, try_socket, &tcp), 0);
}

/* A loose source route through PRIVATE4: the packet's first hop, where no hook looked. */
static const __u8 lsrr[8] = { IPOPT_LSRR, 7, 4, 10, 0, 0, 1, IPOPT_END };

static int set_source_route(void *arg)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r;

	(void)arg;
	if (fd < 0)
		return 1000 + errno;
	r = setsockopt(fd, IPPROTO_IP, IP_OPTIONS, lsrr, sizeof(lsrr)) ? errno : 0;
	close(fd);
	return r;
}

static int send_source_route(void *arg)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(lsrr))];
	} ctl = { 0 };
	struct sockaddr_storage ss;
	struct iovec iov = { .iov_base = "x", .iov_len = 1 };
	struct msghdr m = { .msg_name = &ss, .msg_iov = &iov, .msg_iovlen = 1 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r;

	(void)arg;
	if (fd < 0)
		return 1000 + errno;
	m.msg_namelen = sockaddr_of(PUBLIC4, &ss);
	((struct sockaddr_in *)&ss)->sin_port = htons(4242);
	m.msg_control = ctl.buf;
	m.msg_controllen = sizeof(ctl.buf);
	ctl.h.cmsg_level = IPPROTO_IP;
	ctl.h.cmsg_type = IP_RETOPTS;
	ctl.h.cmsg_len = CMSG_LEN(sizeof(lsrr));
	memcpy(CMSG_DATA(&ctl.h), lsrr, sizeof(lsrr));
	r = sendmsg(fd, &m, 0) < 0 ? errno : 0;
	close(fd);
	return r;
}

TEST(ip_source_route_refused)
{
	struct test_agent ag;
	struct net_rule r[2];

	own_netns();
	allow_everything(r);
	inet_agent(&ag, 0, 0, r, 2);
	ASSERT_EQ(test_agent_run(&ag, set_source_route, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, set_source_route, NULL, NULL), 0);
	ASSERT_EQ(test_agent_run(&ag, send_source_route, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, send_source_route, NULL, NULL), 0);
}

static int bind_echo(void *arg)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_ICMP), r;

	(void)arg;
	if (fd < 0)
		return 1000 + errno;
	inet_pton(AF_INET, PUBLIC4, &sin.sin_addr);
	r = bind(fd, (struct sockaddr *)&sin, sizeof(sin)) ? errno : 0;
	close(fd);
	return r;
}

/* An echo socket's bind() runs no cgroup program (ping_bind): the policy's "bind" still decides. */
TEST(icmp_echo_bind_needs_bind_grant)
{
	struct test_agent ag;

	own_netns();
	inet_agent(&ag, AGENTD_AGENT_ALLOW_ICMP, 0, NULL, 0);
	ASSERT_EQ(test_agent_run(&ag, bind_echo, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, bind_echo, NULL, NULL), 0);
	inet_agent(&ag, AGENTD_AGENT_ALLOW_ICMP | AGENTD_AGENT_ALLOW_BIND, 0, NULL, 0);
	ASSERT_EQ(test_agent_run(&ag, bind_echo, NULL), 0);
}
