// SPDX-License-Identifier: GPL-2.0
/*
 * Host tier: a broker tool's network. A tool runs outside the agent, for the agent, so it must
 * not be the agent's way around the structural deny list (loopback, private, link-local,
 * metadata): a tool reaches the network only when its registry entry says "network": "public",
 * and then only addresses outside the structural list, and the host's name servers on port 53.
 * The test owns a network namespace: loopback, a public-looking address (TEST-NET-2) and a
 * private one on lo, a listener on each, its own resolv.conf naming a private name server.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "harness.h"
#include "testlib.h"

#define PUBLIC_ADDR "198.51.100.1" /* TEST-NET-2: not structurally denied */
#define PRIVATE_ADDR "10.0.0.1"
#define RESOLVER_ADDR "10.0.0.53"
#define PORT "8181"

static const char tools_json[] =
	"{\"tools\": [\n"
	" {\"name\": \"dial\", \"effect\": \"observe\", \"exec\": [\"/bin/bash\", \"-c\", "
	"\"exec 3<>/dev/$0/$1/$2 && echo connected\", \"{proto}\", \"{host}\", \"{port}\"],\n"
	"  \"args\": {\"proto\": {\"type\": \"string\", \"enum\": [\"tcp\", \"udp\"]},\n"
	"           \"host\": {\"type\": \"string\", \"pattern\": \"^[0-9.]+$\"},\n"
	"           \"port\": {\"type\": \"integer\"}}},\n"
	" {\"name\": \"dial-public\", \"effect\": \"observe\", \"network\": \"public\", "
	"\"exec\": [\"/bin/bash\", \"-c\", "
	"\"exec 3<>/dev/$0/$1/$2 && echo connected\", \"{proto}\", \"{host}\", \"{port}\"],\n"
	"  \"args\": {\"proto\": {\"type\": \"string\", \"enum\": [\"tcp\", \"udp\"]},\n"
	"           \"host\": {\"type\": \"string\", \"pattern\": \"^[0-9.]+$\"},\n"
	"           \"port\": {\"type\": \"integer\"}}}\n"
	"]}\n";

/* This test's network and mount namespaces: lo up with the test's addresses, its resolv.conf. */
static void own_net(const char *dir)
{
	static const char *const addrs[] = { PUBLIC_ADDR, PRIVATE_ADDR, RESOLVER_ADDR };
	char resolv[PATH_MAX];

	if (unshare(CLONE_NEWNS))
		FAIL("unshare: %s", strerror(errno));
	ASSERT_OK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	test_netns(addrs, 3);
	snprintf(resolv, sizeof(resolv), "%s/resolv.conf", dir);
	test_write(resolv, "# the test's\nnameserver " RESOLVER_ADDR "\nnameserver ::1\n", 0644);
	if (mount(resolv, "/etc/resolv.conf", NULL, MS_BIND, NULL))
		FAIL("bind %s on /etc/resolv.conf: %s", resolv, strerror(errno));
}

static int listener(const char *addr, int type, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0), one = 1;

	ASSERT_OK(fd);
	inet_pton(AF_INET, addr, &sa.sin_addr);
	ASSERT_OK(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		FAIL("bind %s:%d: %s", addr, port, strerror(errno));
	if (type == SOCK_STREAM)
		ASSERT_OK(listen(fd, 16));
	return fd;
}

struct tn {
	struct test_daemon d;
	struct proc *follow;
	char tools[PATH_MAX], policy[PATH_MAX], sock_env[PATH_MAX + 32], agent_tool[PATH_MAX];
};

/* The tool's reply for one dial from inside the agent; its exit status. */
static int dial(struct tn *t, const char *tool, const char *proto, const char *host,
		const char *port, char *out, size_t outsz)
{
	char a1[32], a2[64], a3[32];

	snprintf(a1, sizeof(a1), "proto=%s", proto);
	snprintf(a2, sizeof(a2), "host=%s", host);
	snprintf(a3, sizeof(a3), "port:=%s", port);
	return agentctl_run(out, outsz, "run", "t-net", "--", "env", t->sock_env, t->agent_tool,
			    "--json", tool, a1, a2, a3, NULL);
}

static void expect_dial(struct tn *t, const char *tool, const char *proto, const char *host,
			const char *port, bool connects)
{
	char out[8192];

	dial(t, tool, proto, host, port, out, sizeof(out));
	if (connects != !!strstr(out, "\"stdout\":\"connected\\n\""))
		FAIL("%s %s %s:%s: expected %s, got\n%s", tool, proto, host, port,
		     connects ? "connected" : "refused", out);
	if (!connects && !strstr(out, "Operation not permitted"))
		FAIL("%s %s %s:%s: refused, but not by EPERM:\n%s", tool, proto, host, port, out);
}

static void setup(struct tn *t)
{
	char out[4096];

	test_daemon_init(&t->d, "toolnet");
	own_net(t->d.dir);
	ASSERT_OK(chmod(t->d.dir, 0711));
	test_bin_for_all("agent-tool", t->agent_tool, sizeof(t->agent_tool));
	snprintf(t->tools, sizeof(t->tools), "%s/tools.json", t->d.dir);
	snprintf(t->policy, sizeof(t->policy), "%s/policy.json", t->d.dir);
	snprintf(t->sock_env, sizeof(t->sock_env), "AGENTD_TOOL_SOCKET=%s/agents/t-net/tool.sock",
		 t->d.dir);
	test_write(t->tools, tools_json, 0644);
	/* The agent itself may connect to the public address on PORT: a tool gets no more. */
	test_write(t->policy,
		   "{\"name\": \"t-net\", \"files\": [{\"path\": \"/\", \"rights\": [\"read\", "
		   "\"exec\"]}, {\"path\": \"/dev/null\", \"rights\": [\"read\", \"write\"]}],"
		   " \"network\": {\"sockets\": [\"inet\", \"inet6\", \"unix\"]},"
		   " \"tools\": [\"dial\", \"dial-public\"]}\n",
		   0644);
	test_daemon_start(&t->d, "--allow-partial", NULL);
	if (agentctl_run(out, sizeof(out), "agent", "add", "t-net", "--policy", t->policy,
			 "--tools", t->tools, NULL))
		FAIL("agent add: %s", out);
	t->follow = test_audit_follower(t->d.audit);
}

/* The deny's record: the caller's, with the tool's process and the reason. */
static void expect_record(struct tn *t, const char *addr, const char *reason)
{
	char a[64], r[64];
	const char *needles[] = { "\"agent_name\":\"t-net\"", "\"comm\":\"bash\"", a, r, NULL };

	snprintf(a, sizeof(a), "\"addr\":\"%s\"", addr);
	snprintf(r, sizeof(r), "reason=%s", reason);
	if (!proc_wait_line(t->follow, 10000, needles))
		FAIL("no deny record of %s for %s: %s", addr, reason, t->follow->buf);
}

/* A tool without "network" reaches nothing; the listeners are there (the test reaches each). */
TEST(tool_without_network_reaches_nothing)
{
	struct tn t;

	setup(&t);
	listener(PUBLIC_ADDR, SOCK_STREAM, 8181);
	listener(PRIVATE_ADDR, SOCK_STREAM, 8181);
	listener("127.0.0.1", SOCK_STREAM, 8181);
	expect_dial(&t, "dial", "tcp", PUBLIC_ADDR, PORT, false);
	expect_dial(&t, "dial", "tcp", PRIVATE_ADDR, PORT, false);
	expect_dial(&t, "dial", "tcp", "127.0.0.1", PORT, false);
	expect_dial(&t, "dial", "udp", RESOLVER_ADDR, "53", false);
	expect_record(&t, "127.0.0.1", "tool-network");
}

/* "network": "public": outside the structural list, and the name servers on port 53; never
 * loopback, private or link-local addresses (the agent's way to them through a tool). */
TEST(public_tool_reaches_no_structural_address)
{
	struct tn t;

	setup(&t);
	listener(PUBLIC_ADDR, SOCK_STREAM, 8181);
	listener(PRIVATE_ADDR, SOCK_STREAM, 8181);
	listener("127.0.0.1", SOCK_STREAM, 8181);
	listener(RESOLVER_ADDR, SOCK_STREAM, 53);
	listener(RESOLVER_ADDR, SOCK_DGRAM, 53);
	expect_dial(&t, "dial-public", "tcp", PUBLIC_ADDR, PORT, true);
	expect_dial(&t, "dial-public", "tcp", PRIVATE_ADDR, PORT, false);
	expect_dial(&t, "dial-public", "tcp", "127.0.0.1", PORT, false);
	expect_dial(&t, "dial-public", "tcp", "169.254.169.254", "80", false);
	/* The name server from resolv.conf: port 53 only, TCP and UDP. */
	expect_dial(&t, "dial-public", "tcp", RESOLVER_ADDR, "53", true);
	expect_dial(&t, "dial-public", "udp", RESOLVER_ADDR, "53", true);
	expect_dial(&t, "dial-public", "udp", RESOLVER_ADDR, "54", false);
	expect_record(&t, PRIVATE_ADDR, "structural-deny");
}
