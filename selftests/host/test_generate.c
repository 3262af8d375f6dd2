// SPDX-License-Identifier: GPL-2.0
/*
 * agentctl policy generate on the host: from the deny records this host makes (cgroup-BPF's
 * network rules) in a live run, and from a recorded VM session (selftests/audit/
 * generate-session.log, file and exec records the host cannot make without BPF LSM).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "harness.h"
#include "testlib.h"

#define HOST4 "192.0.2.1" /* TEST-NET-1: not structural */
#define METADATA4 "169.254.169.254"

/* This test's network namespace: lo up, with HOST4 and METADATA4 on it (the test route). */
static void own_netns(void)
{
	const char *v4[] = { HOST4, METADATA4 };
	struct ifreq ifr = { .ifr_name = "lo" };
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
	size_t i;
	int fd;

	if (unshare(CLONE_NEWNET))
		FAIL("unshare(CLONE_NEWNET): %s", strerror(errno));
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ASSERT_OK(fd);
	ASSERT_OK(ioctl(fd, SIOCGIFFLAGS, &ifr));
	ifr.ifr_flags |= IFF_UP;
	ASSERT_OK(ioctl(fd, SIOCSIFFLAGS, &ifr));
	for (i = 0; i < 2; i++) {
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo:%zu", i + 1);
		sin->sin_family = AF_INET;
		inet_pton(AF_INET, v4[i], &sin->sin_addr);
		if (ioctl(fd, SIOCSIFADDR, &ifr))
			FAIL("adding %s to lo: %s", v4[i], strerror(errno));
	}
	close(fd);
}

static int listen_on(const char *addr)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	inet_pton(AF_INET, addr, &sin.sin_addr);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) || listen(fd, 64) ||
	    getsockname(fd, (struct sockaddr *)&sin, &len))
		FAIL("listener on %s: %s", addr, strerror(errno));
	return ntohs(sin.sin_port);
}

struct target {
	const char *addr;
	int port;
};

static int connect_to(void *arg)
{
	const struct target *t = arg;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(t->port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), err = 0;

	inet_pton(AF_INET, t->addr, &sin.sin_addr);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof(sin)))
		err = errno;
	if (fd >= 0)
		close(fd);
	return err;
}

/* A live run: the agent's connects to the host and to the metadata address are denied; the
 * policy generated from the log (agentd stopped: every record committed) grants the host alone,
 * and after a reload the host is reached and the metadata address is still denied. */
TEST(generate_from_a_live_run_grants_the_denied_host_and_not_the_metadata_address)
{
	char policy[PATH_MAX], cg[PATH_MAX + 8], want[128];
	static char out[1 << 16];
	struct test_daemon d;
	struct target host = { HOST4, 0 }, meta = { METADATA4, 80 };

	own_netns();
	test_daemon_init(&d, "gen");
	snprintf(policy, sizeof(policy), "%s/policy.json", d.dir);
	test_write(policy, "{\"name\": \"t\", \"network\": {\"sockets\": [\"inet\"]}}\n", 0644);
	host.port = listen_on(HOST4);
	test_daemon_start(&d, "--allow-partial", NULL);
	test_daemon_add(&d, "t", policy, cg, sizeof(cg));
	ASSERT_EQ(run_in_cgroup(cg, connect_to, &host, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(cg, connect_to, &meta, NULL), EPERM);
	ASSERT_EQ(proc_stop(d.agentd, SIGTERM), 0);

	ASSERT_EQ(agentctl_run(out, sizeof(out), "policy", "generate", "t", "--dir", d.audit,
			       "--policy", policy, NULL),
		  0);
	snprintf(want, sizeof(want), "\"cidr\": \"%s/32\"", HOST4);
	if (!strstr(out, want) || strstr(out, METADATA4))
		FAIL("the generated policy does not grant %s alone: %s", HOST4, out);
	test_write(policy, out, 0644);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "policy", "check", policy, NULL), 0);

	test_daemon_start(&d, "--allow-partial", NULL);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "policy", "reload", "t", NULL), 0);
	ASSERT_EQ(run_in_cgroup(cg, connect_to, &host, NULL), 0);
	ASSERT_EQ(run_in_cgroup(cg, connect_to, &meta, NULL), EPERM);
}

static char fixture[PATH_MAX];

/* The recorded session and a copy of the narrow policy it ran under. */
static void fixture_paths(char *policy, size_t policysz)
{
	char dir[PATH_MAX - 32];

	snprintf(fixture, sizeof(fixture), "%s/../selftests/audit/generate-session.log",
		 test_bin_dir());
	test_tmpdir(dir, sizeof(dir), "genfix");
	snprintf(policy, policysz, "%s/policy.json", dir);
	test_write(policy, "{\"name\": \"t\", \"network\": {\"sockets\": [\"inet\"]}}\n", 0644);
}

/* The first round of the VM session (selftests/kernel/test_generate.c): three reads of data/
 * fold into data, the new name in out/ grants create on out, the program's open, the host's
 * connect; the metadata address (structural) is not granted; the same log gives the same bytes,
 * and the output is a policy. */
TEST(generate_from_a_recorded_session_grants_what_was_denied)
{
	static char out[1 << 16], again[1 << 16], diff[1 << 16];
	char policy[PATH_MAX], saved[PATH_MAX + 8];

	fixture_paths(policy, sizeof(policy));
	ASSERT_EQ(agentctl_run(out, sizeof(out), "policy", "generate", "t", "--from", fixture,
			       "--policy", policy, NULL),
		  0);
	ASSERT_EQ(agentctl_run(again, sizeof(again), "policy", "generate", "t", "--from", fixture,
			       "--policy", policy, NULL),
		  0);
	ASSERT_STREQ(out, again);
	ASSERT_EQ(agentctl_run(diff, sizeof(diff), "policy", "generate", "t", "--from", fixture,
			       "--policy", policy, "--diff", NULL),
		  0);
	if (!strstr(diff, "/w/data: read\n") || !strstr(diff, "/w/out: create\n") ||
	    !strstr(diff, "/w/bin/tool: read\n") ||
	    !strstr(diff, "+ connect 192.0.2.1/32 any port"))
		FAIL("the diff does not grant the session's denies: %s", diff);
	if (strstr(out, "/w/data/") || strstr(out, "/w/out/") || strstr(out, METADATA4))
		FAIL("unfolded paths or a structural destination granted: %s", out);
	/* The session's paths are the guest's: absent here, so optional. */
	if (!strstr(out, "\"optional\": true"))
		FAIL("absent paths not written optional: %s", out);
	snprintf(saved, sizeof(saved), "%s.gen", policy);
	test_write(saved, out, 0644);
	ASSERT_EQ(agentctl_run(again, sizeof(again), "policy", "check", saved, NULL), 0);
}

/* A log whose chain is broken gives no policy: a forged record would be a forged grant. */
TEST(generate_refuses_a_log_that_does_not_verify)
{
	static char out[1 << 16], text[1 << 16];
	char policy[PATH_MAX], forged[PATH_MAX + 8], *p;
	FILE *f;
	size_t n;

	fixture_paths(policy, sizeof(policy));
	f = fopen(fixture, "r");
	ASSERT(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	p = strstr(text, "\"port\":");
	ASSERT(p);
	p[7] = p[7] == '1' ? '2' : '1';
	snprintf(forged, sizeof(forged), "%s.log", policy);
	test_write(forged, text, 0644);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "policy", "generate", "t", "--from", forged,
			       "--policy", policy, NULL),
		  1);
	ASSERT_STREQ(out, "");
}
