// SPDX-License-Identifier: GPL-2.0
/*
 * Network rules (cgroup-BPF): run in the host tier and the VM tier. Every test runs in a network
 * namespace of its own, with lo up and the test's addresses on it, so that no packet leaves it.
 * Listeners belong to the test (outside the agent); an allowed connect is proven by accepting
 * it, a denied one by EPERM and nothing to accept.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include "harness.h"
#include "policy/netdeny.h"
#include "testlib.h"

#define PRIVATE_ADDR "10.0.0.1"
#define PUBLIC_ADDR "198.51.100.1" /* TEST-NET-2: not in the structural deny list */
#define PORT 4242
#define TCP_UDP (AGENTD_PROTO_TCP | AGENTD_PROTO_UDP)

/* A network namespace for this test: lo up, with PRIVATE_ADDR and PUBLIC_ADDR on it. */
static void own_netns(void)
{
	static const char *const addrs[] = { PRIVATE_ADDR, PUBLIC_ADDR };

	test_netns(addrs, 2);
}

/* An IPv6 address on lo of the test's namespace (lo skips duplicate address detection). */
static void add_addr6(const char *addr)
{
	struct in6_ifreq {
		struct in6_addr addr;
		__u32 prefixlen;
		int ifindex;
	} r = { .prefixlen = 128, .ifindex = (int)if_nametoindex("lo") };
	int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	ASSERT_OK(fd);
	if (inet_pton(AF_INET6, addr, &r.addr) != 1)
		FAIL("bad address %s", addr);
	if (ioctl(fd, SIOCSIFADDR, &r))
		FAIL("adding %s to lo: %s", addr, strerror(errno));
	close(fd);
}

struct dest {
	struct sockaddr_storage ss;
	socklen_t len;
	int type; /* SOCK_STREAM: connect; SOCK_DGRAM: sendto without connect */
};

static void dest(struct dest *d, const char *addr, int port, int type)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&d->ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&d->ss;

	memset(d, 0, sizeof(*d));
	d->type = type;
	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		d->len = sizeof(*sin);
	} else if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		d->len = sizeof(*sin6);
	} else {
		FAIL("bad address %s", addr);
	}
}

/* A listener (stream) or a bound socket (datagram) of the test, outside the agent. */
static int listener(const char *addr, int port, int type)
{
	struct dest d;
	int fd, one = 1;

	dest(&d, addr, port, type);
	fd = socket(d.ss.ss_family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	ASSERT_OK(fd);
	ASSERT_OK(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
	if (bind(fd, (struct sockaddr *)&d.ss, d.len))
		FAIL("bind %s:%d: %s", addr, port, strerror(errno));
	if (type == SOCK_STREAM)
		ASSERT_OK(listen(fd, 16));
	return fd;
}

/* Whether the listener got something: a connection to accept, or a datagram. */
/*
 * Whether the listener got the datagram or the connection, waiting up to wait_ms for it: loopback
 * delivers through the softirq, which may run after the sender's call has returned (on a busy
 * one-vCPU guest, in ksoftirqd), so what was sent may arrive a little later. 0: no wait.
 */
#define ARRIVAL_MS 5000 /* a deadline for what must arrive, not a measure of speed */

static bool received(int fd, int type, int wait_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char buf[8];
	int c;

	if (poll(&pfd, 1, wait_ms) <= 0)
		return false;

	if (type == SOCK_DGRAM)
		return recv(fd, buf, sizeof(buf), 0) > 0;
	c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return false;
	close(c);
	return true;
}

static int reach(void *arg)
{
	const struct dest *d = arg;
	int fd = socket(d->ss.ss_family, d->type | SOCK_CLOEXEC, 0), r;

	if (fd < 0)
		return 100 + errno;
	if (d->type == SOCK_STREAM)
		r = connect(fd, (const struct sockaddr *)&d->ss, d->len);
	else
		r = sendto(fd, "x", 1, 0, (const struct sockaddr *)&d->ss, d->len);
	r = r < 0 ? errno : 0;
	close(fd);
	return r;
}

static void net_agent(struct test_agent *ag, const struct net_rule *net, size_t nnet, __u32 flags)
{
	static const struct file_rule files[] = { { "/", AGENTD_RIGHT_READ | AGENTD_RIGHT_EXEC } };
	const struct ruleset rs = {
		.flags = flags,
		.sock_families = 1ULL << AF_INET | 1ULL << AF_INET6,
		.sock_types = 1U << SOCK_STREAM | 1U << SOCK_DGRAM,
		.files = files,
		.nfiles = 1,
		.net = net,
		.nnet = nnet,
	};

	test_agent_start(ag, &rs, false);
}

static void rule(struct net_rule *r, const char *cidr, __u32 protocols)
{
	memset(r, 0, sizeof(*r));
	if (netdeny_parse_cidr(cidr, &r->cidr))
		FAIL("bad CIDR %s", cidr);
	r->protocols = protocols;
}

/* The agent is denied (EPERM, nothing received) where the test itself gets through. */
static void denied_to_agent(const struct test_agent *ag, const char *listen_addr,
			    const char *to_addr, int type)
{
	int l = listener(listen_addr, PORT, type);
	struct dest d;

	dest(&d, to_addr, PORT, type);
	ASSERT_EQ(test_agent_run(ag, reach, &d), EPERM);
	ASSERT(!received(l, type, 0)); /* nothing was sent: EPERM */
	ASSERT_EQ(run_in_cgroup(NULL, reach, &d, NULL), 0);
	ASSERT(received(l, type, ARRIVAL_MS));
	close(l);
}

static void allow_everything(struct net_rule r[2])
{
	rule(&r[0], "0.0.0.0/0", TCP_UDP);
	rule(&r[1], "::/0", TCP_UDP);
}

TEST(net_loopback_denied_whatever_the_rules)
{
	struct test_agent ag;
	struct net_rule r[2];

	own_netns();
	allow_everything(r);
	net_agent(&ag, r, 2, 0);
	denied_to_agent(&ag, "127.0.0.1", "127.0.0.1", SOCK_STREAM);
	denied_to_agent(&ag, "127.0.0.1", "127.0.0.1", SOCK_DGRAM);
	denied_to_agent(&ag, "::", "::1", SOCK_STREAM);
	denied_to_agent(&ag, "::", "::ffff:127.0.0.1", SOCK_STREAM);
}

TEST(net_private_denied_whatever_the_rules)
{
	struct test_agent ag;
	struct net_rule r[2];

	own_netns();
	allow_everything(r);
	net_agent(&ag, r, 2, 0);
	denied_to_agent(&ag, PRIVATE_ADDR, PRIVATE_ADDR, SOCK_STREAM);
	denied_to_agent(&ag, "::", "::ffff:" PRIVATE_ADDR, SOCK_STREAM);
	denied_to_agent(&ag, PRIVATE_ADDR, PRIVATE_ADDR, SOCK_DGRAM);
	denied_to_agent(&ag, "::", "::ffff:" PRIVATE_ADDR, SOCK_DGRAM);
}

static void allowed_to_agent(const struct test_agent *ag, const char *addr, int type)
{
	int l = listener(addr, PORT, type);
	struct dest d;

	dest(&d, addr, PORT, type);
	ASSERT_EQ(test_agent_run(ag, reach, &d), 0);
	ASSERT(received(l, type, ARRIVAL_MS));
	close(l);
}

TEST(net_public_address_needs_a_rule)
{
	struct test_agent ag;
	struct net_rule r;

	own_netns();
	net_agent(&ag, NULL, 0, 0);
	denied_to_agent(&ag, PUBLIC_ADDR, PUBLIC_ADDR, SOCK_STREAM);
	rule(&r, "198.51.100.0/24", AGENTD_PROTO_TCP);
	net_agent(&ag, &r, 1, 0);
	allowed_to_agent(&ag, PUBLIC_ADDR, SOCK_STREAM);
	/* The same rule reached through an IPv4-mapped address on an IPv6 socket. */
	{
		int l = listener(PUBLIC_ADDR, PORT, SOCK_STREAM);
		struct dest d;

		dest(&d, "::ffff:" PUBLIC_ADDR, PORT, SOCK_STREAM);
		ASSERT_EQ(test_agent_run(&ag, reach, &d), 0);
		ASSERT(received(l, SOCK_STREAM, ARRIVAL_MS));
		close(l);
	}
	/* TCP only: a datagram is denied. */
	denied_to_agent(&ag, PUBLIC_ADDR, PUBLIC_ADDR, SOCK_DGRAM);
}

TEST(net_rule_ports_and_protocols)
{
	struct test_agent ag;
	struct net_rule r;

	own_netns();
	rule(&r, PUBLIC_ADDR "/32", AGENTD_PROTO_UDP);
	r.nranges = 2;
	r.port_lo[0] = 1000;
	r.port_hi[0] = 2000;
	r.port_lo[1] = PORT;
	r.port_hi[1] = PORT;
	net_agent(&ag, &r, 1, 0);
	allowed_to_agent(&ag, PUBLIC_ADDR, SOCK_DGRAM);
	denied_to_agent(&ag, PUBLIC_ADDR, PUBLIC_ADDR, SOCK_STREAM);
	r.port_lo[1] = PORT + 1;
	r.port_hi[1] = PORT + 10;
	test_agent_apply(&ag, &(struct ruleset){
				      .sock_families = 1ULL << AF_INET | 1ULL << AF_INET6,
				      .sock_types = 1U << SOCK_STREAM | 1U << SOCK_DGRAM,
				      .net = &r,
				      .nnet = 1,
			      });
	denied_to_agent(&ag, PUBLIC_ADDR, PUBLIC_ADDR, SOCK_DGRAM);
}

static int try_bind(void *arg)
{
	struct dest *d = arg;
	int fd = socket(d->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

	if (fd < 0)
		return 100 + errno;
	r = bind(fd, (struct sockaddr *)&d->ss, d->len) ? errno : 0;
	close(fd);
	return r;
}

TEST(net_bind_needs_allow_bind)
{
	struct test_agent ag;
	struct dest d4, d6;

	own_netns();
	dest(&d4, "127.0.0.1", PORT, SOCK_STREAM);
	dest(&d6, "::1", PORT, SOCK_STREAM);
	net_agent(&ag, NULL, 0, 0);
	ASSERT_EQ(test_agent_run(&ag, try_bind, &d4), EPERM);
	ASSERT_EQ(test_agent_run(&ag, try_bind, &d6), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, try_bind, &d4, NULL), 0);
	net_agent(&ag, NULL, 0, AGENTD_AGENT_ALLOW_BIND);
	ASSERT_EQ(test_agent_run(&ag, try_bind, &d4), 0);
	ASSERT_EQ(test_agent_run(&ag, try_bind, &d6), 0);
}

/* The agent listens on loopback and connects to its own listener. */
/* Reaches the agent's own socket l at to: 0 when it got there, else the errno (200: sent, not
 * received); closes l. */
static int reach_own(int l, const char *to, int type)
{
	struct dest d;
	int r;

	dest(&d, to, PORT, type);
	r = reach(&d);
	if (!r && !received(l, type, ARRIVAL_MS))
		r = 200;
	close(l);
	return r;
}

static int own_listener(void *addr)
{
	return reach_own(listener(addr, PORT, SOCK_STREAM), addr, SOCK_STREAM);
}

/* The same with a datagram socket the agent bound, and sendto() without connect. */
static int own_bound_dgram(void *addr)
{
	return reach_own(listener(addr, PORT, SOCK_DGRAM), addr, SOCK_DGRAM);
}

TEST(net_own_loopback_listener_reachable_until_closed)
{
	struct test_agent ag;

	own_netns();
	net_agent(&ag, NULL, 0, AGENTD_AGENT_ALLOW_BIND);
	ASSERT_EQ(test_agent_run(&ag, own_listener, "127.0.0.1"), 0);
	ASSERT_EQ(test_agent_run(&ag, own_listener, "::1"), 0);
	ASSERT_EQ(test_agent_run(&ag, own_bound_dgram, "127.0.0.1"), 0);
	ASSERT_EQ(test_agent_run(&ag, own_bound_dgram, "::1"), 0);
	/* Closed: the test's own listener on the same port is loopback like any other. */
	denied_to_agent(&ag, "127.0.0.1", "127.0.0.1", SOCK_STREAM);
	denied_to_agent(&ag, "::1", "::1", SOCK_STREAM);
	denied_to_agent(&ag, "127.0.0.1", "127.0.0.1", SOCK_DGRAM);
}

/* A listener of the agent's on [::] (v6only as asked), and a connect to it at an address. */
struct pair {
	const char *to;
	int v6only;
};

static int own_any6_listener(void *arg)
{
	const struct pair *p = arg;
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons(PORT) };
	int l = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1;

	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    setsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &p->v6only, sizeof(p->v6only)) ||
	    bind(l, (struct sockaddr *)&sin6, sizeof(sin6)) || listen(l, 16))
		return 100 + errno;
	return reach_own(l, p->to, SOCK_STREAM);
}

/* A dual-stack listener on [::] takes IPv4 connections too: the agent reaches its own from an
 * AF_INET socket at 127.0.0.1, as from AF_INET6 ones at ::1 and ::ffff:127.0.0.1. */
TEST(net_own_dual_stack_listener_reachable_over_ipv4)
{
	struct test_agent ag;

	own_netns();
	net_agent(&ag, NULL, 0, AGENTD_AGENT_ALLOW_BIND);
	ASSERT_EQ(test_agent_run(&ag, own_any6_listener, &(struct pair){ "127.0.0.1", 0 }), 0);
	ASSERT_EQ(test_agent_run(&ag, own_any6_listener, &(struct pair){ "::1", 0 }), 0);
	ASSERT_EQ(test_agent_run(&ag, own_any6_listener, &(struct pair){ "::ffff:127.0.0.1", 0 }),
		  0);
	/* v6only: nothing of the agent's takes 127.0.0.1, so loopback is denied there. */
	ASSERT_EQ(test_agent_run(&ag, own_any6_listener, &(struct pair){ "127.0.0.1", 1 }), EPERM);
}

struct holder {
	int ready[2]; /* the holder writes its pid once its socket is bound */
	int family;
	bool listen; /* and listening */
};

/* Binds (SO_REUSEADDR; listening if asked) the any address of family at PORT in a grandchild
 * that holds it until killed, and reports the grandchild's pid. */
static int hold_port(void *arg)
{
	struct holder *h = arg;
	struct sockaddr_storage ss = { .ss_family = (sa_family_t)h->family };
	int one = 1, fd;
	pid_t pid = fork();

	if (pid)
		return pid < 0 ? 100 + errno : 0;
	if (h->family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_port = htons(PORT);
	else
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(PORT);
	fd = socket(h->family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&ss,
		 h->family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6)) ||
	    (h->listen && listen(fd, 16)))
		_exit(1);
	pid = getpid();
	if (write(h->ready[1], &pid, sizeof(pid)) != sizeof(pid))
		_exit(1);
	pause();
	_exit(0);
}

/*
 * A port the agent bound without listening does not make a listener of the host's on it the
 * agent's: with SO_REUSEADDR on both, the host binds 127.0.0.1 at the agent's port (the kernel
 * lets a listener share a port with a socket that does not listen), and that listener is the
 * host's. Nor does an agent's v6only listener on [::] reach a host listener on 127.0.0.1.
 */
TEST(net_host_listener_on_a_port_the_agent_holds_stays_denied)
{
	static const int families[] = { AF_INET, AF_INET6 };
	struct test_agent ag;
	struct holder h;
	size_t i;
	pid_t pid;

	own_netns();
	net_agent(&ag, NULL, 0, AGENTD_AGENT_ALLOW_BIND);
	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		h.family = families[i];
		h.listen = false;
		ASSERT_OK(pipe2(h.ready, O_CLOEXEC));
		ASSERT_EQ(test_agent_run(&ag, hold_port, &h), 0);
		ASSERT_EQ(read(h.ready[0], &pid, sizeof(pid)), (ssize_t)sizeof(pid));
		close(h.ready[0]);
		close(h.ready[1]);
		denied_to_agent(&ag, "127.0.0.1", "127.0.0.1", SOCK_STREAM);
		denied_to_agent(&ag, "127.0.0.1", "::ffff:127.0.0.1", SOCK_STREAM);
		kill(pid, SIGKILL);
	}
	{
		int l = listener("127.0.0.1", PORT, SOCK_STREAM);

		/* The agent's v6only listener on [::]:PORT does not take 127.0.0.1. */
		ASSERT_EQ(test_agent_run(&ag, own_any6_listener, &(struct pair){ "127.0.0.1", 1 }),
			  EPERM);
		ASSERT(!received(l, SOCK_STREAM, 0));
		close(l);
	}
}

/*
 * A listener is the agent's while the cgroup it was bound in is: once that cgroup is no
 * agent's (the agent removed, or the cgroup detached), a socket that outlived it is no one's,
 * even to an agent that has the same id (agentd reuses ids).
 */
TEST(net_listener_of_a_cgroup_no_longer_the_agents_is_denied)
{
	struct holder h = { .family = AF_INET, .listen = true };
	char other[PATH_MAX];
	struct test_agent ag;
	struct dest d;
	int cgfd;
	pid_t pid;

	own_netns();
	net_agent(&ag, NULL, 0, AGENTD_AGENT_ALLOW_BIND);
	ASSERT_OK(pipe2(h.ready, O_CLOEXEC));
	ASSERT_EQ(test_agent_run(&ag, hold_port, &h), 0);
	ASSERT_EQ(read(h.ready[0], &pid, sizeof(pid)), (ssize_t)sizeof(pid));
	close(h.ready[0]);
	close(h.ready[1]);
	/* A second cgroup of the same agent, as an attached one (or the next agent with its id). */
	test_cgroup(other, sizeof(other));
	ASSERT_EQ(enforcer_add_cgroup(ag.e, other, ag.id), 0);
	cgfd = open(other, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_OK(cgfd);
	ASSERT_EQ(enforcer_attach_cgroup(ag.e, cgfd), 0);
	dest(&d, "127.0.0.1", PORT, SOCK_STREAM);
	/* Both cgroups are the agent's: its own listener, from its other cgroup. */
	ASSERT_EQ(run_in_cgroup(other, reach, &d, NULL), 0);
	/* The listener's cgroup is no agent's any more: the socket that outlived it is no one's. */
	ASSERT_EQ(enforcer_remove_cgroup(ag.e, ag.cgroup), 0);
	ASSERT_EQ(run_in_cgroup(other, reach, &d, NULL), EPERM);
	kill(pid, SIGKILL);
	ASSERT_EQ(enforcer_detach_cgroup(ag.e, cgfd), 0);
	ASSERT_EQ(enforcer_remove_cgroup(ag.e, other), 0);
	close(cgfd);
}

/*
 * The structural deny list holds in its NAT64 (64:ff9b::/96) and 6to4 (2002::/16) forms: the
 * same private, loopback and metadata addresses, written as IPv6 ones the test can reach on lo.
 */
TEST(net_nat64_and_6to4_forms_denied_whatever_the_rules)
{
	static const char *const forms[] = {
		"64:ff9b::a00:1", /* NAT64 of 10.0.0.1 */
		"64:ff9b::7f00:1", /* NAT64 of 127.0.0.1 */
		"64:ff9b::a9fe:a9fe", /* NAT64 of 169.254.169.254, cloud metadata */
		"2002:a00:1::1", /* 6to4 of 10.0.0.1 */
		"2002:a9fe:a9fe::1", /* 6to4 of 169.254.169.254 */
	};
	struct test_agent ag;
	struct net_rule r[2];
	size_t i;

	own_netns();
	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++)
		add_addr6(forms[i]);
	allow_everything(r);
	net_agent(&ag, r, 2, 0);
	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		denied_to_agent(&ag, forms[i], forms[i], SOCK_STREAM);
		denied_to_agent(&ag, forms[i], forms[i], SOCK_DGRAM);
	}
}

/* Only the embedded denied ranges are denied: NAT64 of a public address follows the rules. */
TEST(net_nat64_of_public_address_follows_the_rules)
{
	const char *addr = "64:ff9b::c633:6401"; /* NAT64 of 198.51.100.1 */
	struct test_agent ag;
	struct net_rule r[2];

	own_netns();
	add_addr6(addr);
	net_agent(&ag, NULL, 0, 0);
	denied_to_agent(&ag, addr, addr, SOCK_STREAM);
	allow_everything(r);
	net_agent(&ag, r, 2, 0);
	allowed_to_agent(&ag, addr, SOCK_STREAM);
	allowed_to_agent(&ag, addr, SOCK_DGRAM);
}
