// SPDX-License-Identifier: GPL-2.0
/*
 * Host and VM tiers: time-limited grants (agentctl grant) end to end on a kernel without BPF LSM: connect
 * grants, which cgroup-BPF decides with the expiry on the kernel's boot clock, and tool grants in
 * the broker. A real agentd (--allow-partial) in a network namespace of the test, where a public
 * address (TEST-NET-2) sits on lo: the agent's rules deny it, no structural deny does. Waits are
 * on the kernel clock, until the expiry `agentctl grants` reports.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "harness.h"
#include "testlib.h"
#include "grants_test.h"

#define PUBLIC_ADDR "198.51.100.1" /* TEST-NET-2: not in the structural deny list */
#define NAT64_ADDR "64:ff9b::c633:6401" /* NAT64 of PUBLIC_ADDR: the same, by the rules */
#define PORT 4343

/* lo up in a namespace of the test's own, with PUBLIC_ADDR and NAT64_ADDR on it. */
static void own_netns(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
	struct {
		struct in6_addr addr;
		__u32 prefixlen;
		int ifindex;
	} r6 = { .prefixlen = 128 };
	int fd, fd6;

	ASSERT_OK(unshare(CLONE_NEWNET));
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	fd6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ASSERT_OK(fd);
	ASSERT_OK(fd6);
	ASSERT_OK(ioctl(fd, SIOCGIFFLAGS, &ifr));
	ifr.ifr_flags |= IFF_UP;
	ASSERT_OK(ioctl(fd, SIOCSIFFLAGS, &ifr));
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo:1");
	sin->sin_family = AF_INET;
	inet_pton(AF_INET, PUBLIC_ADDR, &sin->sin_addr);
	ASSERT_OK(ioctl(fd, SIOCSIFADDR, &ifr));
	r6.ifindex = (int)if_nametoindex("lo");
	inet_pton(AF_INET6, NAT64_ADDR, &r6.addr);
	ASSERT_OK(ioctl(fd6, SIOCSIFADDR, &r6));
	close(fd);
	close(fd6);
}

static const char tools_json[] =
	"{\"tools\": [{\"name\": \"noop\", \"effect\": \"observe\", \"builtin\": \"noop\"},"
	" {\"name\": \"deploy\", \"effect\": \"actuate\", \"builtin\": \"noop\"}]}\n";

struct genv *grant_env(const char *files_json)
{
	static struct genv e;
	char out[4096], policy[8192];

	own_netns();
	test_daemon_init(&e.d, "grant");
	snprintf(e.policy, sizeof(e.policy), "%s/policy.json", e.d.dir);
	snprintf(e.tools, sizeof(e.tools), "%s/tools.json", e.d.dir);
	snprintf(policy, sizeof(policy),
		 "{\"name\": \"g\", \"files\": [{\"path\": \"/\", \"rights\": [\"read\", "
		 "\"exec\"]}, {\"path\": \"/dev/null\", \"rights\": [\"read\", \"write\"]}%s],"
		 " \"network\": {\"sockets\": [\"inet\", \"inet6\", \"unix\"]},"
		 " \"tools\": [\"noop\"]}\n",
		 files_json ?: "");
	test_write(e.policy, policy, 0644);
	test_write(e.tools, tools_json, 0644);
	test_daemon_start(&e.d, "--allow-partial", NULL);
	if (agentctl_run(out, sizeof(out), "agent", "add", "g", "--policy", e.policy, "--tools",
			 e.tools, NULL))
		FAIL("agent add g: %s", out);
	snprintf(e.cg, sizeof(e.cg), "%s/g", e.d.cgroup);
	return &e;
}

/* A listener of the test (outside the agent) on addr:PORT. */
static int listener(const char *addr)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(PORT) };
	struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	bool v6 = strchr(addr, ':');
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	ASSERT_OK(fd);
	ASSERT_OK(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
	if (v6)
		inet_pton(AF_INET6, addr, &s6.sin6_addr);
	else
		inet_pton(AF_INET, addr, &s4.sin_addr);
	ASSERT_OK(v6 ? bind(fd, (struct sockaddr *)&s6, sizeof(s6))
		     : bind(fd, (struct sockaddr *)&s4, sizeof(s4)));
	ASSERT_OK(listen(fd, 16));
	return fd;
}

struct target {
	const char *addr;
	int port;
};

/* connect() to the target: 0 or the errno (a run_in_cgroup() body). */
static int try_connect(void *arg)
{
	const struct target *t = arg;
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(t->port) };
	struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons(t->port) };
	bool v6 = strchr(t->addr, ':');
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

	if (fd < 0)
		return errno;
	if (v6)
		inet_pton(AF_INET6, t->addr, &s6.sin6_addr);
	else
		inet_pton(AF_INET, t->addr, &s4.sin_addr);
	r = v6 ? connect(fd, (struct sockaddr *)&s6, sizeof(s6))
	       : connect(fd, (struct sockaddr *)&s4, sizeof(s4));
	r = r ? errno : 0;
	close(fd);
	return r;
}

/* connect() from inside the agent to addr:port: 0 or the errno. */
static int agent_connect_port(const struct genv *e, const char *addr, int port)
{
	struct target t = { addr, port };

	return run_in_cgroup(e->cg, try_connect, &t, NULL);
}

static int agent_connect(const struct genv *e, const char *addr)
{
	return agent_connect_port(e, addr, PORT);
}

long long grant_id(int status, const char *out)
{
	long long id;

	if (status || sscanf(out, "grant %lld:", &id) != 1)
		FAIL("agentctl grant: exit %d: %s", status, out);
	return id;
}

/* The grants of g as agentctl grants --json lists them (a new reference). */
static json_t *grants_of_g(void)
{
	char out[16384];
	json_error_t jerr;
	json_t *doc;

	ASSERT_EQ(agentctl_run(out, sizeof(out), "grants", "g", "--json", NULL), 0);
	doc = json_loads(out, 0, &jerr);
	if (!doc)
		FAIL("agentctl grants --json: %s: %s", jerr.text, out);
	return doc;
}

long long expiry_of(long long id)
{
	json_t *doc = grants_of_g(), *g;
	long long at = -1;
	size_t i;

	json_array_foreach(json_object_get(doc, "grants"), i,
			   g) if (json_integer_value(json_object_get(g, "id")) == id) at =
		json_integer_value(json_object_get(g, "expires_boot_ns"));
	json_decref(doc);
	if (at <= 0)
		FAIL("grant %lld: no expiry in agentctl grants", id);
	return at;
}

void wait_boot_clock(long long at)
{
	struct timespec ts = { .tv_sec = at / 1000000000LL, .tv_nsec = at % 1000000000LL };

	while (clock_nanosleep(CLOCK_BOOTTIME, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

size_t grant_count(void)
{
	json_t *doc = grants_of_g();
	size_t n = json_array_size(json_object_get(doc, "grants"));

	json_decref(doc);
	return n;
}

void expect_audit(const struct genv *e, const char *kind, const char *const needles[])
{
	static char out[1 << 20];
	const char *p, *nl;
	size_t i;

	ASSERT_EQ(agentctl_run(out, sizeof(out), "audit", "query", "--dir", e->d.audit, "--kind",
			       kind, "--json", NULL),
		  0);
	for (p = out; (nl = strchr(p, '\n')); p = nl + 1) {
		for (i = 0; needles[i] && memmem(p, nl - p, needles[i], strlen(needles[i])); i++)
			;
		if (!needles[i])
			return;
	}
	FAIL("no %s record with \"%s\"... in:\n%s", kind, needles[0], out);
}

TEST(grant_connect_allows_until_it_expires)
{
	struct genv *e = grant_env(NULL);
	int l = listener(PUBLIC_ADDR);
	char out[4096];
	long long id;

	ASSERT_EQ(agent_connect(e, PUBLIC_ADDR), EPERM);
	/* Long enough for the steps before the expiry on a loaded machine. */
	id = GRANT("--connect", PUBLIC_ADDR "/32:4343", "--for", "15s");
	ASSERT_EQ(agent_connect(e, PUBLIC_ADDR), 0);
	ASSERT_EQ(agent_connect(e, PUBLIC_ADDR), 0);
	/* Another port is no part of it: denied, where allowed would be refused (no listener). */
	ASSERT_EQ(agent_connect_port(e, PUBLIC_ADDR, PORT + 1), EPERM);
	wait_boot_clock(expiry_of(id));
	ASSERT_EQ(agent_connect(e, PUBLIC_ADDR), EPERM);
	/* Asking for the list notices the end: the grant is gone, and the record says why. */
	ASSERT_EQ(grant_count(), 0);
	expect_audit(e, "net",
		     (const char *const[]){ "\"decision\":\"allow\"", "reason=grant",
					    "\"port\":4343", NULL });
	expect_audit(e, "policy", (const char *const[]){ "grant-add", "kind=connect", NULL });
	expect_audit(e, "policy", (const char *const[]){ "grant-end", "why=time", NULL });
	close(l);
}

TEST(grant_connect_ipv6_and_once_lets_exactly_one_through)
{
	struct genv *e = grant_env(NULL);
	int l = listener(NAT64_ADDR);
	char out[4096];

	ASSERT_EQ(agent_connect(e, NAT64_ADDR), EPERM);
	GRANT("--connect", "[64:ff9b::c633:6400/120]:4343", "--once");
	ASSERT_EQ(agent_connect(e, NAT64_ADDR), 0);
	ASSERT_EQ(agent_connect(e, NAT64_ADDR), EPERM);
	ASSERT_EQ(grant_count(), 0);
	expect_audit(e, "policy", (const char *const[]){ "grant-end", "why=used", NULL });
	close(l);
}

TEST(grant_revoke_ends_it_now)
{
	struct genv *e = grant_env(NULL);
	int l = listener(PUBLIC_ADDR);
	char out[4096], id[32];

	snprintf(id, sizeof(id), "%lld", GRANT("--connect", PUBLIC_ADDR ":4343", "--for", "1h"));
	ASSERT_EQ(agent_connect(e, PUBLIC_ADDR), 0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "revoke", id, NULL), 0);
	ASSERT_EQ(agent_connect(e, PUBLIC_ADDR), EPERM);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "revoke", id, NULL), 1);
	expect_audit(e, "policy", (const char *const[]){ "grant-revoke", NULL });
	close(l);
}

/* The kernel keeps the grant, and its expiry, with agentd dead; a restarted agentd knows it. */
TEST(grant_survives_agentd_restart_and_expires_with_agentd_dead)
{
	struct genv *e = grant_env(NULL);
	int l = listener(PUBLIC_ADDR);
	char out[4096];
	long long id, at;

	/* Long enough to outlive a restart of agentd on a loaded machine (a guest under load took
	 * over 3 s to start again, and found the grant already over). */
	id = GRANT("--connect", PUBLIC_ADDR ":4343", "--for", "40s");
	at = expiry_of(id);
	proc_stop(e->d.agentd, SIGKILL);
	test_daemon_start(&e->d, "--allow-partial", NULL);
	ASSERT_EQ(expiry_of(id), at);
	ASSERT_EQ(agent_connect(e, PUBLIC_ADDR), 0);
	proc_stop(e->d.agentd, SIGKILL);
	ASSERT_EQ(agent_connect(e, PUBLIC_ADDR), 0);
	wait_boot_clock(at);
	ASSERT_EQ(agent_connect(e, PUBLIC_ADDR), EPERM);
	/* Noticed at the next start. */
	test_daemon_start(&e->d, "--allow-partial", NULL);
	ASSERT_EQ(grant_count(), 0);
	expect_audit(e, "policy", (const char *const[]){ "grant-end", "why=time", NULL });
	close(l);
}

/* A grant never opens what structural deny closes. */
TEST(grant_refuses_structural_destinations)
{
	char out[4096];

	grant_env(NULL);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "grant", "g", "--connect", "127.0.0.1:22", "--for",
			       "1m", NULL),
		  1);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "grant", "g", "--connect", "10.0.0.0/8:22",
			       "--for", "1m", NULL),
		  1);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "grant", "g", "--connect", PUBLIC_ADDR, "--for",
			       "1m", NULL),
		  1);
	ASSERT_EQ(grant_count(), 0);
}

static int call_tool(struct genv *e, char *out, size_t outsz, const char *tool)
{
	return agentctl_run(out, outsz, "run", "g", "--", "env", e->sock_env, e->agent_tool,
			    "--json", tool, NULL);
}

TEST(grant_tool_once_in_the_broker)
{
	struct genv *e = grant_env(NULL);
	char out[8192];

	test_bin_for_all("agent-tool", e->agent_tool, sizeof(e->agent_tool));
	snprintf(e->sock_env, sizeof(e->sock_env), "AGENTD_TOOL_SOCKET=%s/agents/g/tool.sock",
		 e->d.dir);
	ASSERT_EQ(call_tool(e, out, sizeof(out), "noop"), 0);
	ASSERT_EQ(call_tool(e, out, sizeof(out), "deploy"), 125);
	if (!strstr(out, "\"code\":\"denied\""))
		FAIL("deploy without a grant: %s", out);
	GRANT("--tool", "deploy", "--once");
	ASSERT_EQ(call_tool(e, out, sizeof(out), "deploy"), 0);
	ASSERT_EQ(call_tool(e, out, sizeof(out), "deploy"), 125);
	/* Not in the registry: refused at grant time. */
	ASSERT_EQ(agentctl_run(out, sizeof(out), "grant", "g", "--tool", "nope", "--once", NULL),
		  1);
	ASSERT_EQ(grant_count(), 0);
	expect_audit(e, "policy", (const char *const[]){ "grant-use", "kind=tool", NULL });
}
