// SPDX-License-Identifier: GPL-2.0
/*
 * Host tier: the egress proxy end to end. Each test runs agentd (--allow-partial) in a network
 * and mount namespace of its own: lo up with a public-looking address (TEST-NET-2, not in the
 * structural deny list), a private one and a DNS server's, all on lo, so no packet leaves the
 * namespace; /etc/hosts, /etc/resolv.conf and /etc/nsswitch.conf are the test's, bound over the
 * real ones in the private mount namespace. A server process of the test answers HTTP on the
 * public and the private address and DNS on its own; it counts what reaches it, so a refusal
 * is proven by the proxy's reply and by nothing arriving. Clients run inside the agent, through
 * agentctl run (curl with HTTP_PROXY and HTTPS_PROXY set) or in its cgroup (raw sockets, for
 * the exact errno and reply).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/futex.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kernel/cgroup.h"
#include "harness.h"
#include "policy/netdeny.h"
#include "testlib.h"

#define PUBLIC_ADDR "198.51.100.1" /* TEST-NET-2: not structurally denied */
#define DNS_ADDR "198.51.100.53"
#define PRIVATE_ADDR "10.0.0.1"
#define HTTP_PORT 8080
#define FLOOD_PORT 8081 /* answers with bytes without end */
#define UNLISTED_PORT 8082 /* not in the test policy's proxy ports */

struct counters {
	int public_conns, private_conns, rebind_queries, unlisted_conns;
	char last_head[2048];
};

struct px {
	char dir[256];
	char state[PATH_MAX], control[PATH_MAX], audit[PATH_MAX], pins[PATH_MAX];
	char cgroup[PATH_MAX], policy[PATH_MAX];
	struct proc *agentd, *follow;
	struct counters *seen; /* shared with the server process */
	char proxy[64]; /* http://127.0.0.1:PORT */
	int port;
};

static void own_netns(void)
{
	static const char *const addrs[] = { PUBLIC_ADDR, PRIVATE_ADDR, DNS_ADDR };

	if (unshare(CLONE_NEWNS))
		FAIL("unshare: %s", strerror(errno));
	ASSERT_OK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	test_netns(addrs, 3);
}

/* The test's name service, bound over /etc in this mount namespace only. */
static void own_resolver(struct px *e)
{
	static const char *const files[][2] = {
		{ "hosts", "198.51.100.1 allowed.test a.wild.test denied.test\n"
			   "10.0.0.1 private.test\n" },
		{ "resolv.conf", "nameserver " DNS_ADDR "\noptions attempts:2 timeout:2\n" },
		{ "nsswitch.conf", "hosts: files dns\n" },
	};
	char src[PATH_MAX], dst[64];
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(src, sizeof(src), "%s/%s", e->dir, files[i][0]);
		snprintf(dst, sizeof(dst), "/etc/%s", files[i][0]);
		test_write(src, files[i][1], 0644);
		if (mount(src, dst, NULL, MS_BIND, NULL))
			FAIL("bind %s on %s: %s", src, dst, strerror(errno));
	}
}

static int bound(const char *addr, int port, int type)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0), one = 1;

	ASSERT_OK(fd);
	inet_pton(AF_INET, addr, &sa.sin_addr);
	ASSERT_OK(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		FAIL("bind %s:%d: %s", addr, port, strerror(errno));
	if (type == SOCK_STREAM)
		ASSERT_OK(listen(fd, 64));
	return fd;
}

/* One HTTP exchange: the head is kept for the test, the body names the address. */
static void serve_http(int lfd, struct counters *seen, bool private)
{
	const char *body = private ? "hello-private\n" : "hello-public\n";
	struct pollfd pfd = { .events = POLLIN };
	char head[sizeof(seen->last_head)], reply[256];
	size_t len = 0;
	ssize_t n;
	int fd;

	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	__atomic_add_fetch(private ? &seen->private_conns : &seen->public_conns, 1,
			   __ATOMIC_SEQ_CST);
	/* Whoever waits for the count (wait_seen()): the memory is shared, not private. */
	syscall(SYS_futex, private ? &seen->private_conns : &seen->public_conns, FUTEX_WAKE,
		INT_MAX, NULL, NULL, 0);
	pfd.fd = fd;
	while (len < sizeof(head) - 1 && poll(&pfd, 1, 5000) == 1 &&
	       (n = read(fd, head + len, sizeof(head) - 1 - len)) > 0) {
		len += n;
		head[len] = '\0';
		if (strstr(head, "\r\n\r\n"))
			break;
	}
	head[len] = '\0';
	memcpy(seen->last_head, head, len + 1);
	n = snprintf(reply, sizeof(reply),
		     "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
		     strlen(body), body);
	if (write(fd, reply, n) != n)
		seen->last_head[0] = '\0';
	close(fd);
}

/* DNS for "rebind.test": its first A answer is public, every later one private (a rebinding
 * attack); AAAA queries get no data, other names NXDOMAIN. */
static void serve_dns(int fd, struct counters *seen)
{
	unsigned char q[512], r[512 + 16];
	struct sockaddr_storage from;
	socklen_t fl = sizeof(from);
	char name[256] = "";
	size_t off = 12, nl = 0;
	ssize_t n = recvfrom(fd, q, sizeof(q), 0, (struct sockaddr *)&from, &fl);
	int qtype, a;

	if (n < 17)
		return;
	while (off < (size_t)n && q[off] && q[off] < 64 && off + 1 + q[off] < (size_t)n &&
	       nl + q[off] + 1 < sizeof(name)) {
		memcpy(name + nl, q + off + 1, q[off]);
		nl += q[off];
		name[nl++] = '.';
		off += 1 + q[off];
	}
	name[nl ? nl - 1 : 0] = '\0';
	if (off + 5 > (size_t)n)
		return;
	qtype = q[off + 1] << 8 | q[off + 2];
	off += 5;
	memcpy(r, q, off);
	r[2] = 0x84 | (q[2] & 0x01);
	r[3] = 0x80;
	memset(r + 4, 0, 8);
	r[5] = 1;
	if (strcmp(name, "rebind.test")) {
		r[3] |= 3;
	} else if (qtype == 1) {
		static const unsigned char rr[] = { 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4 };

		a = __atomic_add_fetch(&seen->rebind_queries, 1, __ATOMIC_SEQ_CST);
		memcpy(r + off, rr, sizeof(rr));
		inet_pton(AF_INET, a == 1 ? PUBLIC_ADDR : PRIVATE_ADDR, r + off + sizeof(rr));
		off += sizeof(rr) + 4;
		r[7] = 1;
	}
	sendto(fd, r, off, 0, (struct sockaddr *)&from, fl);
}

/* Writes until the peer goes: a process of its own, so that the other servers go on. */
static void serve_flood(int lfd)
{
	static char chunk[65536];
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0 || fork())
		goto out;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	memset(chunk, 'x', sizeof(chunk));
	while (send(fd, chunk, sizeof(chunk), MSG_NOSIGNAL) > 0)
		;
	_exit(0);
out:
	if (fd >= 0)
		close(fd);
}

static void count_conn(int lfd, int *counter)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	__atomic_add_fetch(counter, 1, __ATOMIC_SEQ_CST);
	close(fd);
}

static void stop_server(void *arg)
{
	pid_t pid = (pid_t)(long)arg;

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void start_servers(struct px *e)
{
	struct pollfd fds[5] = {
		{ .fd = bound(PUBLIC_ADDR, HTTP_PORT, SOCK_STREAM), .events = POLLIN },
		{ .fd = bound(PRIVATE_ADDR, HTTP_PORT, SOCK_STREAM), .events = POLLIN },
		{ .fd = bound(DNS_ADDR, 53, SOCK_DGRAM), .events = POLLIN },
		{ .fd = bound(PUBLIC_ADDR, FLOOD_PORT, SOCK_STREAM), .events = POLLIN },
		{ .fd = bound(PUBLIC_ADDR, UNLISTED_PORT, SOCK_STREAM), .events = POLLIN },
	};
	size_t i;
	pid_t pid;

	e->seen = mmap(NULL, sizeof(*e->seen), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);
	ASSERT(e->seen != MAP_FAILED);
	pid = fork();
	ASSERT_OK(pid);
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGCHLD, SIG_IGN);
		for (;;) {
			if (poll(fds, 5, -1) < 0)
				continue;
			if (fds[0].revents)
				serve_http(fds[0].fd, e->seen, false);
			if (fds[1].revents)
				serve_http(fds[1].fd, e->seen, true);
			if (fds[2].revents)
				serve_dns(fds[2].fd, e->seen);
			if (fds[3].revents)
				serve_flood(fds[3].fd);
			if (fds[4].revents)
				count_conn(fds[4].fd, &e->seen->unlisted_conns);
		}
	}
	test_defer(stop_server, (void *)(long)pid);
	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		close(fds[i].fd);
}

static int seen(int *counter)
{
	return __atomic_load_n(counter, __ATOMIC_SEQ_CST);
}

/* Waits (on the counter's futex, woken by the server) until it reaches want; returns it. */
static int wait_seen(int *counter, int want)
{
	const struct timespec ts = { .tv_sec = 10 };
	int v;

	while ((v = seen(counter)) < want)
		if (syscall(SYS_futex, counter, FUTEX_WAIT, v, &ts, NULL, 0) && errno == ETIMEDOUT)
			break;
	return seen(counter);
}

static const char *idle_timeout; /* --proxy-idle-timeout for the test's agentd; NULL: default */

static void start_agentd(struct px *e)
{
	const char *ready[] = { "agentd: ready", NULL };
	char *argv[] = { "agentd",	"--control",	   e->control,	"--state-dir", e->state,
			 "--audit-dir", e->audit,	   "--pin-dir", e->pins,       "--cgroup",
			 e->cgroup,	"--allow-partial", NULL,	NULL,	       NULL };

	if (idle_timeout) {
		argv[12] = "--proxy-idle-timeout";
		argv[13] = (char *)idle_timeout;
	}

	e->agentd = proc_start(argv);
	if (!proc_wait_line(e->agentd, 20000, ready))
		FAIL("agentd did not get ready: \"%s\"", e->agentd->buf);
}

/* ports: the policy's network.proxy.ports, NULL: none (the default, 443 and 80). */
static void write_policy_ports(struct px *e, const char *hosts, const char *ports)
{
	char text[1024];

	snprintf(text, sizeof(text),
		 "{\"name\": \"t\", \"files\": [{\"path\": \"/\", \"rights\": [\"read\", "
		 "\"exec\"]}], \"network\": {\"sockets\": [\"inet\", \"inet6\", \"unix\"], "
		 "\"proxy\": {\"allow_hosts\": [%s]%s%s%s}}}\n",
		 hosts, ports ? ", \"ports\": [" : "", ports ? ports : "", ports ? "]" : "");
	test_write(e->policy, text, 0644);
}

static void write_policy(struct px *e, const char *hosts)
{
	write_policy_ports(e, hosts, "8080, 8081");
}

/* The agent's proxy address from agent info, e.g. "http://127.0.0.1:40123". */
static int proxy_of(const char *name, char *url, size_t urlsz)
{
	char out[8192], *p, *q;

	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "info", name, "--json", NULL), 0);
	p = strstr(out, "\"proxy\": \"");
	if (!p)
		FAIL("no proxy in agent info: %s", out);
	p += strlen("\"proxy\": \"");
	q = strchr(p, '"');
	ASSERT(q && (size_t)(q - p) < urlsz && !strncmp(p, "http://127.0.0.1:", 17));
	snprintf(url, urlsz, "%.*s", (int)(q - p), p);
	return atoi(p + 17);
}

static void start_follower(struct px *e)
{
	e->follow = test_audit_follower(e->audit);
}

static const char *const HOSTS =
	"\"allowed.test\", \"*.wild.test\", \"private.test\", \"rebind.test\", \"nowhere.test\"";

/* agentd in namespaces of the test, the servers, agent "t-px" and a follower of the log. */
static struct px *setup(void)
{
	static struct px e;
	const char *added[] = { "agent-add", "t-px", NULL };
	char root[PATH_MAX - 64], out[4096];

	ASSERT_EQ(cgroup2_mount(root, sizeof(root)), 0);
	test_tmpdir(e.dir, sizeof(e.dir), "px");
	snprintf(e.state, sizeof(e.state), "%s/state", e.dir);
	snprintf(e.control, sizeof(e.control), "%s/run/control.sock", e.dir);
	snprintf(e.audit, sizeof(e.audit), "%s/audit", e.dir);
	snprintf(e.policy, sizeof(e.policy), "%s/policy.json", e.dir);
	snprintf(e.cgroup, sizeof(e.cgroup), "%s/agentd-px-%d", root, getpid());
	test_pin_dir(e.pins, sizeof(e.pins));
	test_cgroup_tree_at_end(e.cgroup);
	own_netns();
	own_resolver(&e);
	start_servers(&e);
	write_policy(&e, HOSTS);
	setenv("AGENTD_CONTROL", e.control, 1);
	start_agentd(&e);
	start_follower(&e);
	ASSERT_EQ(
		agentctl_run(out, sizeof(out), "agent", "add", "t-px", "--policy", e.policy, NULL),
		0);
	/* The follower is reading the log once it shows the add. */
	if (!proc_wait_line(e.follow, 10000, added))
		FAIL("no agent-add record followed");
	e.port = proxy_of("t-px", e.proxy, sizeof(e.proxy));
	/* agentctl run sets the agent's own: the operator's are never passed on. */
	setenv("http_proxy", "http://127.0.0.1:9/", 1);
	setenv("HTTP_PROXY", "http://127.0.0.1:9/", 1);
	setenv("HTTPS_PROXY", "http://127.0.0.1:9/", 1);
	return &e;
}

/* curl inside the agent; returns its exit status, its stdout in out. */
static int curl(const char *agent, char *out, size_t outsz, const char *opt, const char *url)
{
	return agentctl_run(out, outsz, "run", agent, "--", "curl", "-sS", "--max-time", "20", opt,
			    url, NULL);
}

/* Waits for the audit record of one proxied connection; returns the line. */
static const char *audit_line(struct px *e, const char *host, const char *decision,
			      const char *more)
{
	char h[300], d[64];
	const char *needles[] = { "\"op\":\"proxy\"", h, d, more, NULL };
	const char *line;

	if (host)
		snprintf(h, sizeof(h), "\"path\":\"%s\"", host);
	else
		snprintf(h, sizeof(h), "\"op\":\"proxy\"");
	snprintf(d, sizeof(d), "\"decision\":\"%s\"", decision);
	line = proc_wait_line(e->follow, 10000, needles);
	if (!line)
		FAIL("no %s audit record for %s (%s): %s", decision, host, more, e->follow->buf);
	return line;
}

static unsigned long long field(const char *line, const char *key)
{
	const char *p = strstr(line, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

TEST(proxy_allowed_host_through_plain_http_and_connect)
{
	struct px *e = setup();
	char out[4096];
	const char *line;

	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "t-px", "--", "curl", "-sS", "-H",
			       "X-Hop: 1", "-H", "Connection: X-Hop", "-H",
			       "Proxy-Authorization: Basic eDp5", "http://Allowed.TEST:8080/a?b=1",
			       NULL),
		  0);
	ASSERT_STREQ(out, "hello-public\n");
	/* Forwarded in origin form, Host from the URI, hop-by-hop headers gone. */
	if (strncmp(e->seen->last_head, "GET /a?b=1 HTTP/1.1\r\nHost: allowed.test:8080\r\n", 46) ||
	    !strstr(e->seen->last_head, "Connection: close\r\n") ||
	    strstr(e->seen->last_head, "X-Hop") || strstr(e->seen->last_head, "Proxy-") ||
	    !strstr(e->seen->last_head, "User-Agent: curl"))
		FAIL("forwarded head: %s", e->seen->last_head);
	line = audit_line(e, "allowed.test", "allow", "\"addr\":\"198.51.100.1\"");
	if (!strstr(line, "\"port\":8080") || field(line, "up=") < 40 || field(line, "down=") < 40)
		FAIL("audit record: %s", line);
	/* CONNECT (what HTTPS takes), to a name under a wildcard. */
	ASSERT_EQ(curl("t-px", out, sizeof(out), "-p", "http://a.wild.test:8080/tunnel"), 0);
	ASSERT_STREQ(out, "hello-public\n");
	if (strncmp(e->seen->last_head, "GET /tunnel HTTP/1.1\r\n", 22))
		FAIL("tunnelled head: %s", e->seen->last_head);
	line = audit_line(e, "a.wild.test", "allow", "status=200");
	if (field(line, "down=") < 40)
		FAIL("audit record: %s", line);
	ASSERT_EQ(seen(&e->seen->public_conns), 2);
}

TEST(proxy_refuses_hosts_not_allowed_and_ip_literals)
{
	struct px *e = setup();
	char out[4096];

	ASSERT_EQ(curl("t-px", out, sizeof(out), "-w%{http_code}", "http://denied.test:8080/"), 0);
	if (!strstr(out, "host-not-allowed") || !strstr(out, "403"))
		FAIL("plain HTTP to a host not allowed: %s", out);
	audit_line(e, "denied.test", "deny", "why=host-not-allowed");
	/* CONNECT refused: curl gives up on the tunnel. */
	ASSERT_EQ(curl("t-px", out, sizeof(out), "-p", "http://wild.test:8080/"), 56);
	audit_line(e, "wild.test", "deny", "why=host-not-allowed");
	ASSERT_EQ(curl("t-px", out, sizeof(out), "-w%{http_code}", "http://198.51.100.1:8080/"), 0);
	if (!strstr(out, "ip-literal") || !strstr(out, "403"))
		FAIL("IP literal: %s", out);
	ASSERT_EQ(seen(&e->seen->public_conns), 0);
}

TEST(proxy_refuses_names_that_resolve_to_private_addresses)
{
	struct px *e = setup();
	char out[4096];
	const char *line;

	ASSERT_EQ(curl("t-px", out, sizeof(out), "-w%{http_code}", "http://private.test:8080/"), 0);
	if (!strstr(out, "denied-address") || !strstr(out, "403"))
		FAIL("private address: %s", out);
	line = audit_line(e, "private.test", "deny", "why=denied-address");
	if (!strstr(line, "\"addr\":\"10.0.0.1\""))
		FAIL("audit record: %s", line);
	/* Allowed, but it resolves to nothing: 502. */
	ASSERT_EQ(curl("t-px", out, sizeof(out), "-w%{http_code}", "http://nowhere.test:8080/"), 0);
	if (!strstr(out, "resolve-failed") || !strstr(out, "502"))
		FAIL("unresolvable: %s", out);
	ASSERT_EQ(seen(&e->seen->private_conns), 0);
}

/* The name answers public first, private after: the proxy asks once and connects to what it
 * checked, so the first request reaches the public address, the next is refused, and nothing
 * ever reaches the private one. */
TEST(proxy_resolves_once_so_rebinding_reaches_nothing_private)
{
	struct px *e = setup();
	char out[4096];

	ASSERT_EQ(curl("t-px", out, sizeof(out), "-p", "http://rebind.test:8080/"), 0);
	ASSERT_STREQ(out, "hello-public\n");
	ASSERT_EQ(seen(&e->seen->rebind_queries), 1);
	audit_line(e, "rebind.test", "allow", "\"addr\":\"198.51.100.1\"");
	ASSERT_EQ(curl("t-px", out, sizeof(out), "-w%{http_code}", "http://rebind.test:8080/"), 0);
	if (!strstr(out, "denied-address") || !strstr(out, "403"))
		FAIL("second resolution: %s", out);
	ASSERT_EQ(seen(&e->seen->rebind_queries), 2);
	audit_line(e, "rebind.test", "deny", "\"addr\":\"10.0.0.1\"");
	ASSERT_EQ(seen(&e->seen->public_conns), 1);
	ASSERT_EQ(seen(&e->seen->private_conns), 0);
}

struct dest {
	const char *addr;
	int port;
};

static int try_connect(void *arg)
{
	const struct dest *d = arg;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(d->port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), err = 0;

	inet_pton(AF_INET, d->addr, &sa.sin_addr);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		err = errno;
	close(fd);
	return err;
}

static void agent_cgroup(const struct px *e, const char *name, char *buf, size_t bufsz)
{
	snprintf(buf, bufsz, "%s/%s", e->cgroup, name);
}

/* In the agent's cgroup: a TCP socket, passed back over the socketpair end *arg. */
static int make_socket(void *arg)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {};
	struct iovec iov = { "s", 1 };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return 1;
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(*(int *)arg, &mh, 0) == 1 ? 0 : 2;
}

/* A TCP socket created by a process of the agent (the kernel records the cgroup a socket is
 * created in), for the test to use from outside. */
static int agent_socket(const struct px *e)
{
	char cg[PATH_MAX + 64], cbuf[CMSG_SPACE(sizeof(int))], c;
	struct iovec iov = { &c, 1 };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	int sv[2], fd;

	snprintf(cg, sizeof(cg), "%s/t-px", e->cgroup);
	ASSERT_OK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv));
	ASSERT_EQ(run_in_cgroup(cg, make_socket, &sv[1], NULL), 0);
	ASSERT_EQ(recvmsg(sv[0], &mh, MSG_CMSG_CLOEXEC), 1);
	ASSERT(CMSG_FIRSTHDR(&mh) && CMSG_FIRSTHDR(&mh)->cmsg_type == SCM_RIGHTS);
	memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&mh)), sizeof(int));
	close(sv[0]);
	close(sv[1]);
	return fd;
}

TEST(proxy_bypass_and_another_agents_listener_refused_by_the_kernel)
{
	struct px *e = setup();
	char out[4096], cg[PATH_MAX + 64], cg2[PATH_MAX + 64], url2[64];
	struct dest direct = { PUBLIC_ADDR, HTTP_PORT }, own = { "127.0.0.1", e->port }, other;

	agent_cgroup(e, "t-px", cg, sizeof(cg));
	ASSERT_EQ(run_in_cgroup(cg, try_connect, &direct, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(cg, try_connect, &(struct dest){ PRIVATE_ADDR, HTTP_PORT }, NULL),
		  EPERM);
	ASSERT_EQ(seen(&e->seen->public_conns), 0);
	ASSERT_EQ(run_in_cgroup(cg, try_connect, &own, NULL), 0);
	/* A second agent reaches its own listener, not the first one's. */
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "add", "t-px2", "--policy", e->policy,
			       NULL),
		  0);
	other = (struct dest){ "127.0.0.1", proxy_of("t-px2", url2, sizeof(url2)) };
	ASSERT(other.port != own.port);
	agent_cgroup(e, "t-px2", cg2, sizeof(cg2));
	ASSERT_EQ(run_in_cgroup(cg2, try_connect, &own, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(cg2, try_connect, &other, NULL), 0);
	ASSERT_EQ(run_in_cgroup(cg, try_connect, &other, NULL), EPERM);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "rm", "t-px2", NULL), 0);
	ASSERT_EQ(run_in_cgroup(cg, try_connect, &own, NULL), 0);
}

struct exchange {
	int port;
	const char *request;
	size_t len;
};

/* Sends a request to the proxy and returns the status of the reply (0: none). */
static int ask(void *arg)
{
	const struct exchange *x = arg;
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(x->port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char buf[512] = "";
	ssize_t n;

	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    send(fd, x->request, x->len, MSG_NOSIGNAL) != (ssize_t)x->len)
		return 1;
	if (poll(&pfd, 1, 20000) != 1 || (n = recv(fd, buf, sizeof(buf) - 1, 0)) <= 0)
		return 2;
	close(fd);
	if (strncmp(buf, "HTTP/1.1 ", 9))
		return 3;
	return atoi(buf + 9) / 100 * 10 + atoi(buf + 9) % 10; /* 400 -> 40, 403 -> 43 */
}

TEST(proxy_malformed_requests_get_400_and_the_daemon_goes_on)
{
	static const struct {
		const char *req;
		size_t len;
		int want;
	} cases[] = {
		{ "GET /x HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 0, 40 },
		{ "CONNECT allowed.test HTTP/1.1\r\n\r\n", 0, 40 },
		{ "CONNECT allowed.test:99999 HTTP/1.1\r\n\r\n", 0, 40 },
		{ "GET http://allowed.test:8080/ HTTP/1.1\r\nHost: allowed.test\r\n"
		  "Host: private.test\r\n\r\n",
		  0, 40 },
		{ "GET http://user@allowed.test:8080/ HTTP/1.1\r\n\r\n", 0, 40 },
		{ "GET http://allowed.test:8080/ HTTP/1.1\nHost: allowed.test\n\n", 0, 40 },
		{ "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11, 40 },
		{ "CONNECT [::1]:443 HTTP/1.1\r\n\r\n", 0, 43 },
		{ "CONNECT 127.0.0.1:8080 HTTP/1.1\r\n\r\n", 0, 43 },
	};
	struct px *e = setup();
	char cg[PATH_MAX + 64], out[8192];
	struct exchange x = { .port = e->port };
	size_t i;

	agent_cgroup(e, "t-px", cg, sizeof(cg));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		x.request = cases[i].req;
		x.len = cases[i].len ? cases[i].len : strlen(cases[i].req);
		if (run_in_cgroup(cg, ask, &x, NULL) != cases[i].want)
			FAIL("case %zu: expected %d0x: %s", i, cases[i].want / 10, cases[i].req);
	}
	audit_line(e, NULL, "deny", "why=bad-port");
	ASSERT_EQ(seen(&e->seen->public_conns), 0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "status", NULL), 0);
	ASSERT_EQ(curl("t-px", out, sizeof(out), "-p", "http://allowed.test:8080/"), 0);
	ASSERT_STREQ(out, "hello-public\n");
}

TEST(proxy_allowlist_follows_reload)
{
	struct px *e = setup();
	char out[4096];

	ASSERT_EQ(curl("t-px", out, sizeof(out), "-p", "http://allowed.test:8080/"), 0);
	write_policy(e, "\"*.wild.test\"");
	ASSERT_EQ(agentctl_run(out, sizeof(out), "policy", "reload", "t-px", NULL), 0);
	ASSERT_EQ(curl("t-px", out, sizeof(out), "-w%{http_code}", "http://allowed.test:8080/"), 0);
	if (!strstr(out, "host-not-allowed"))
		FAIL("after reload: %s", out);
	ASSERT_EQ(curl("t-px", out, sizeof(out), "-p", "http://a.wild.test:8080/"), 0);
	ASSERT_STREQ(out, "hello-public\n");
	ASSERT_EQ(seen(&e->seen->public_conns), 2);
}

/* The proxy worker's pid, from agentctl status. */
static int worker_pid(void)
{
	char out[8192], *p;

	ASSERT_EQ(agentctl_run(out, sizeof(out), "status", "--json", NULL), 0);
	p = strstr(out, "\"proxy\": {");
	if (!p || !strstr(p, "\"running\": true") || !strstr(p, "\"pid\": "))
		FAIL("status: %s", out);
	return atoi(strstr(p, "\"pid\": ") + 7);
}

/* kill -9 of agentd, and its worker gone too (it dies with agentd: PR_SET_PDEATHSIG). */
static void kill_agentd(struct px *e)
{
	struct pollfd pfd = { .fd = syscall(SYS_pidfd_open, worker_pid(), 0), .events = POLLIN };

	ASSERT_OK(pfd.fd);
	proc_stop(e->agentd, SIGKILL);
	if (poll(&pfd, 1, 10000) != 1)
		FAIL("the proxy worker outlived agentd");
	close(pfd.fd);
}

/* kill -9 of agentd: the agent's HTTP_PROXY stays valid once agentd is back. */
TEST(proxy_port_survives_a_restart)
{
	struct px *e = setup();
	char out[16384], url[64]; /* status --json holds each agent's gap, several KiB */

	kill_agentd(e);
	start_agentd(e);
	ASSERT_EQ(proxy_of("t-px", url, sizeof(url)), e->port);
	ASSERT_EQ(curl("t-px", out, sizeof(out), "-p", "http://allowed.test:8080/"), 0);
	ASSERT_STREQ(out, "hello-public\n");
	ASSERT_EQ(agentctl_run(out, sizeof(out), "status", "--json", NULL), 0);
	if (!strstr(out, "\"running\": true") || !strstr(out, "\"uid\": 2147352575"))
		FAIL("status: %s", out);
}

/* kill -9, and the recorded port is taken meanwhile: a new port, and the kernel no longer lets
 * the agent reach the old one, whoever holds it now. */
TEST(proxy_port_taken_during_a_restart_is_closed_to_the_agent)
{
	struct px *e = setup();
	struct dest old = { "127.0.0.1", e->port };
	char out[4096], url[64], cg[PATH_MAX + 64];
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(e->port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int squatter, one = 1;

	agent_cgroup(e, "t-px", cg, sizeof(cg));
	kill_agentd(e);
	squatter = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_OK(squatter);
	ASSERT_OK(setsockopt(squatter, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
	ASSERT_OK(bind(squatter, (struct sockaddr *)&sa, sizeof(sa)));
	ASSERT_OK(listen(squatter, 8));
	/* While agentd is down, its pinned endpoint still names the port. */
	ASSERT_EQ(run_in_cgroup(cg, try_connect, &old, NULL), 0);
	start_agentd(e);
	ASSERT(proxy_of("t-px", url, sizeof(url)) != e->port);
	ASSERT_EQ(run_in_cgroup(cg, try_connect, &old, NULL), EPERM);
	setenv("http_proxy", url, 1);
	ASSERT_EQ(curl("t-px", out, sizeof(out), "-w%{http_code}", "http://denied.test:8080/"), 0);
	if (!strstr(out, "403"))
		FAIL("through the new port: %s", out);
	close(squatter);
}

static unsigned long long status_field(const char *status, const char *key, int base)
{
	const char *p = strstr(status, key);

	if (!p)
		FAIL("no %s in /proc/PID/status", key);
	return strtoull(p + strlen(key), NULL, base);
}

/* The process that reads agents' bytes holds no privilege. */
TEST(proxy_worker_runs_unprivileged_and_confined)
{
	char path[64], status[4096];
	struct px *e = setup();
	ssize_t n;
	int fd;

	(void)e;
	snprintf(path, sizeof(path), "/proc/%d/status", worker_pid());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_OK(fd);
	n = read(fd, status, sizeof(status) - 1);
	ASSERT(n > 0);
	status[n] = '\0';
	close(fd);
	ASSERT_EQ(status_field(status, "\nUid:\t", 10), 2147352575U);
	ASSERT_EQ(status_field(status, "\nGid:\t", 10), 2147352575U);
	ASSERT_EQ(status_field(status, "\nCapEff:\t", 16), 0);
	ASSERT_EQ(status_field(status, "\nCapPrm:\t", 16), 0);
	ASSERT_EQ(status_field(status, "\nNoNewPrivs:\t", 10), 1);
	ASSERT_EQ(status_field(status, "\nSeccomp:\t", 10), 2);
}

/* Removing an agent closes its door at once: its listener, and the tunnels it has open. */
TEST(proxy_agent_removal_cuts_its_tunnels)
{
	static const char req[] = "CONNECT allowed.test:8080 HTTP/1.1\r\n\r\n";
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct px *e = setup();
	struct pollfd pfd = { .events = POLLIN };
	char buf[256], out[4096];
	size_t len = 0;
	ssize_t n;

	/* A tunnel the server keeps waiting on, over a socket of the agent's. */
	sa.sin_port = htons(e->port);
	pfd.fd = agent_socket(e);
	ASSERT_OK(pfd.fd);
	ASSERT_OK(connect(pfd.fd, (struct sockaddr *)&sa, sizeof(sa)));
	ASSERT_EQ(send(pfd.fd, req, sizeof(req) - 1, MSG_NOSIGNAL), (long)sizeof(req) - 1);
	while (len < sizeof(ok) - 1 && poll(&pfd, 1, 10000) == 1 &&
	       (n = recv(pfd.fd, buf + len, sizeof(ok) - 1 - len, 0)) > 0)
		len += n;
	ASSERT_EQ(len, sizeof(ok) - 1);
	/* The proxy's connect completes before the server's accept(): wait for the count. */
	ASSERT_EQ(wait_seen(&e->seen->public_conns, 1), 1);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "rm", "t-px", NULL), 0);
	/* Cut: the end of the stream, not the server's answer (it waits 5 s for a request). */
	ASSERT_EQ(poll(&pfd, 1, 20000), 1);
	ASSERT_EQ(recv(pfd.fd, buf, sizeof(buf), 0), 0);
	close(pfd.fd);
	audit_line(e, "allowed.test", "allow", "down=0");
}

/* A tunnel silent both ways for the idle timeout is closed, and its record says why. */
TEST(proxy_closes_an_idle_tunnel)
{
	static const char req[] = "CONNECT allowed.test:8080 HTTP/1.1\r\n\r\n";
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct pollfd pfd = { .events = POLLIN };
	char buf[256];
	size_t len = 0;
	struct px *e;
	ssize_t n = -1;

	idle_timeout = "1";
	e = setup();
	sa.sin_port = htons(e->port);
	pfd.fd = agent_socket(e);
	ASSERT_OK(pfd.fd);
	ASSERT_OK(connect(pfd.fd, (struct sockaddr *)&sa, sizeof(sa)));
	ASSERT_EQ(send(pfd.fd, req, sizeof(req) - 1, MSG_NOSIGNAL), (long)sizeof(req) - 1);
	while (len < sizeof(ok) - 1 && poll(&pfd, 1, 10000) == 1 &&
	       (n = recv(pfd.fd, buf + len, sizeof(ok) - 1 - len, 0)) > 0)
		len += n;
	ASSERT_EQ(len, sizeof(ok) - 1);
	ASSERT_EQ(wait_seen(&e->seen->public_conns, 1), 1);
	/* Nothing sent either way (the server waits for a request): the proxy ends it. */
	while (poll(&pfd, 1, 20000) == 1 && (n = recv(pfd.fd, buf, sizeof(buf), 0)) > 0)
		;
	ASSERT_EQ(n, 0);
	close(pfd.fd);
	audit_line(e, "allowed.test", "allow", "why=idle-timeout");
}

/* agentd with one bad --proxy-idle-timeout: its exit status, its stderr in out. */
static int agentd_bad_option(const char *value, char *out, size_t outsz)
{
	char path[PATH_MAX];
	size_t len = 0;
	int p[2], status;
	ssize_t n;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/agentd", test_bin_dir());
	ASSERT_OK(pipe2(p, O_CLOEXEC));
	pid = fork();
	ASSERT_OK(pid);
	if (pid == 0) {
		dup2(p[1], STDERR_FILENO);
		execl(path, "agentd", "--proxy-idle-timeout", value, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while (len < outsz - 1 && (n = read(p[0], out + len, outsz - 1 - len)) > 0)
		len += n;
	out[len] = '\0';
	close(p[0]);
	ASSERT_OK(waitpid(pid, &status, 0));
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Bad values of the option are refused, naming it, before anything starts. */
TEST(proxy_idle_timeout_option_is_checked)
{
	static const char *const bad[] = { "0", "86401", "-1", "1s", "", NULL };
	char out[4096];
	size_t i;

	for (i = 0; bad[i]; i++) {
		ASSERT_EQ(agentd_bad_option(bad[i], out, sizeof(out)), 2);
		if (!strstr(out, "--proxy-idle-timeout") || !strstr(out, "1 to 86400"))
			FAIL("agentd --proxy-idle-timeout \"%s\": %s", bad[i], out);
	}
}

/* agentctl run gives the agent its proxy (and nothing on loopback goes through it). */
TEST(proxy_run_sets_the_agents_proxy_variables)
{
	struct px *e = setup();
	char out[4096], want[512];

	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "t-px", "--", "/bin/sh", "-c",
			       "echo $HTTP_PROXY $HTTPS_PROXY $http_proxy $https_proxy $NO_PROXY",
			       NULL),
		  0);
	snprintf(want, sizeof(want), "%s %s %s %s localhost,127.0.0.1,::1\n", e->proxy, e->proxy,
		 e->proxy, e->proxy);
	ASSERT_STREQ(out, want);
}

/* Sends a request on fd, connected to the agent's proxy; returns the status of the reply. */
static int request_on(int fd, const struct px *e, const char *req)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(e->port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char buf[256] = "";

	ASSERT_OK(connect(fd, (struct sockaddr *)&sa, sizeof(sa)));
	ASSERT_EQ(send(fd, req, strlen(req), MSG_NOSIGNAL), (long)strlen(req));
	/* The head arrives whole in practice: the proxy sends it with one send(). */
	if (poll(&pfd, 1, 20000) != 1 || recv(fd, buf, 12, 0) != 12 || strncmp(buf, "HTTP/1.1 ", 9))
		FAIL("no reply head to %s: \"%s\"", req, buf);
	return atoi(buf + 9);
}

/* Only the agent's processes may use its listener: a process outside every agent (root here)
 * is refused and the refusal recorded, though the kernel lets it reach the port. */
TEST(proxy_serves_only_sockets_of_the_agents_cgroups)
{
	static const char req[] = "CONNECT allowed.test:8080 HTTP/1.1\r\n\r\n";
	struct px *e = setup();
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ASSERT_OK(fd);
	ASSERT_EQ(request_on(fd, e, req), 403);
	close(fd);
	audit_line(e, NULL, "deny", "why=not-the-agents-cgroup");
	ASSERT_EQ(seen(&e->seen->public_conns), 0);
	fd = agent_socket(e);
	ASSERT_EQ(request_on(fd, e, req), 200);
	ASSERT_EQ(wait_seen(&e->seen->public_conns, 1), 1);
	close(fd);
}

/* CONNECT and plain HTTP reach only the ports the policy names; without any, 443 and 80. */
TEST(proxy_reaches_only_the_policys_ports)
{
	struct px *e = setup();
	char out[4096];
	int fd;

	fd = agent_socket(e);
	ASSERT_EQ(request_on(fd, e, "CONNECT allowed.test:8082 HTTP/1.1\r\n\r\n"), 403);
	close(fd);
	audit_line(e, "allowed.test", "deny", "why=port-not-allowed");
	fd = agent_socket(e);
	ASSERT_EQ(request_on(fd, e, "GET http://allowed.test:8082/ HTTP/1.1\r\n\r\n"), 403);
	close(fd);
	audit_line(e, "allowed.test", "deny", "why=port-not-allowed");
	fd = agent_socket(e);
	ASSERT_EQ(request_on(fd, e, "CONNECT allowed.test:8080 HTTP/1.1\r\n\r\n"), 200);
	close(fd);
	audit_line(e, "allowed.test", "allow", "\"port\":8080");
	/* The proxy refused before connecting: nothing reached the unlisted port. */
	ASSERT_EQ(seen(&e->seen->unlisted_conns), 0);
	write_policy_ports(e, HOSTS, NULL);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "policy", "reload", "t-px", NULL), 0);
	fd = agent_socket(e);
	ASSERT_EQ(request_on(fd, e, "CONNECT allowed.test:8080 HTTP/1.1\r\n\r\n"), 403);
	close(fd);
	audit_line(e, "allowed.test", "deny", "why=port-not-allowed");
	ASSERT_EQ(seen(&e->seen->public_conns), 1);
}

/* An agent that stops reading holds a send of the proxy's: that wait counts as silence, and the
 * tunnel is cut at the idle timeout like a silent one. */
TEST(proxy_cuts_a_tunnel_whose_agent_stops_reading)
{
	int fd, small = 4096;
	struct px *e;

	idle_timeout = "1";
	e = setup();
	fd = agent_socket(e);
	ASSERT_OK(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)));
	ASSERT_EQ(request_on(fd, e, "CONNECT allowed.test:8081 HTTP/1.1\r\n\r\n"), 200);
	/* The server sends without end; the agent reads no more. */
	audit_line(e, "allowed.test", "allow", "why=send-timeout");
	close(fd);
}

/* Whether the audit log holds a line with every needle. */
static bool audit_file_has(const struct px *e, const char *const needles[])
{
	char path[PATH_MAX + 16], line[8192];
	bool found = false;
	size_t i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/audit.log", e->audit);
	f = fopen(path, "re");
	ASSERT(f);
	while (!found && fgets(line, sizeof(line), f)) {
		for (i = 0; needles[i] && strstr(line, needles[i]); i++)
			;
		found = !needles[i];
	}
	fclose(f);
	return found;
}

/* A restarted agentd serves the agent from the policy in force (pinned with its rules), not from
 * the file as it is now; the difference is recorded, and a reload applies the file. */
TEST(proxy_restart_keeps_the_pinned_policy_until_reload)
{
	struct px *e = setup();
	const char *drift[] = { "\"op\":\"policy-drift\"", "\"agent_name\":\"t-px\"",
				"changed: ", "policy.json", NULL };
	char out[4096];

	kill_agentd(e);
	/* The file now names denied.test and no longer allowed.test. */
	write_policy(e, "\"denied.test\"");
	start_agentd(e);
	ASSERT_EQ(curl("t-px", out, sizeof(out), "-p", "http://allowed.test:8080/"), 0);
	ASSERT_STREQ(out, "hello-public\n");
	ASSERT_EQ(curl("t-px", out, sizeof(out), "-w%{http_code}", "http://denied.test:8080/"), 0);
	if (!strstr(out, "host-not-allowed"))
		FAIL("denied.test after the restart: %s", out);
	if (!audit_file_has(e, drift))
		FAIL("no policy-drift record naming the changed policy file");
	ASSERT_EQ(agentctl_run(out, sizeof(out), "policy", "reload", "t-px", NULL), 0);
	ASSERT_EQ(curl("t-px", out, sizeof(out), "-w%{http_code}", "http://allowed.test:8080/"), 0);
	if (!strstr(out, "host-not-allowed"))
		FAIL("allowed.test after the reload: %s", out);
	ASSERT_EQ(curl("t-px", out, sizeof(out), "-p", "http://denied.test:8080/"), 0);
	ASSERT_STREQ(out, "hello-public\n");
	ASSERT_EQ(seen(&e->seen->public_conns), 2);
}
