// SPDX-License-Identifier: GPL-2.0
/*
 * Shadow mode on a host without BPF LSM (docs/SHADOW.md): the cgroup-BPF network rules record
 * would-deny and let the connection through, the structural deny still denies, the mode is in
 * status and in the records; Landlock and seccomp, which cannot record and allow, are not
 * applied in shadow mode, and status and agentctl run say so.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "harness.h"
#include "kernel/probe.h"
#include "testlib.h"

#define PUBLIC_ADDR "198.51.100.1" /* TEST-NET-2: the agent's rules decide */
#define WAIT_MS 20000 /* a bound on failure, not a measure */

struct host_env {
	struct test_daemon d;
	char cg[PATH_MAX];
	char secret[PATH_MAX];
};

static void host_start(struct host_env *e)
{
	const char *const addrs[] = { PUBLIC_ADDR };
	char policy[2 * PATH_MAX], path[PATH_MAX];
	struct probe p;

	probe_kernel(&p);
	if (probe_bpf_lsm_ok(&p))
		SKIP("BPF LSM works on this kernel: the VM tier tests shadow mode with it");
	test_netns(addrs, sizeof(addrs) / sizeof(addrs[0]));
	test_daemon_init(&e->d, "shadowh");
	snprintf(e->secret, sizeof(e->secret), "%s/secret", e->d.dir);
	test_write(e->secret, "s3cr3t\n", 0644);
	snprintf(policy, sizeof(policy),
		 "{\"name\": \"t\", \"mode\": \"shadow\", \"files\": ["
		 "{\"path\": \"/\", \"rights\": [\"read\", \"exec\"]},"
		 "{\"path\": \"%s\", \"rights\": []}],"
		 "\"network\": {\"sockets\": [\"inet\", \"unix\"]}}\n",
		 e->secret);
	snprintf(path, sizeof(path), "%s/policy.json", e->d.dir);
	test_write(path, policy, 0644);
	test_daemon_start(&e->d, "--allow-partial", "-v", NULL);
	test_daemon_add(&e->d, "t", path, e->cg, sizeof(e->cg));
}

static void wait_line(struct host_env *e, const char *const needles[])
{
	if (!proc_wait_line(e->d.agentd, WAIT_MS, needles))
		FAIL("no line with \"%s\" ... from agentd: \"%s\"", needles[0], e->d.agentd->buf);
}

TEST(shadow_cgroup_network_rules_record_would_deny)
{
	struct sockaddr_in pub, lo;
	char out[16384];
	struct host_env e;
	int l, lol, port = 0, loport;

	host_start(&e);
	l = test_listener_at(PUBLIC_ADDR, &port);
	test_sin(&pub, PUBLIC_ADDR, port);
	ASSERT_EQ(run_in_cgroup(e.cg, test_connect_sin, &pub, NULL), 0);
	ASSERT(test_accepted(l));
	const char *would[] = { "would-deny agent=1 ", "hook=connect4", "reason=no-rule",
				"addr=" PUBLIC_ADDR, NULL };
	wait_line(&e, would);

	/* Loopback is the structural deny list's, not the agent's rules: denied. */
	lol = test_loopback_listener(&loport);
	test_sin(&lo, "127.0.0.1", loport);
	ASSERT_EQ(run_in_cgroup(e.cg, test_connect_sin, &lo, NULL), EPERM);
	const char *structural[] = { "deny agent=1 ", "reason=structural-deny", NULL };
	wait_line(&e, structural);
	close(lol);

	ASSERT_EQ(agentctl_run(out, sizeof(out), "status", NULL), 0);
	if (!strstr(out, "t: id 1, mode shadow") || !strstr(out, "record would-deny and allow"))
		FAIL("status of a shadow agent: %s", out);

	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "mode", "t", "enforce", NULL), 0);
	ASSERT_EQ(run_in_cgroup(e.cg, test_connect_sin, &pub, NULL), EPERM);
	const char *deny[] = { "deny agent=1 ", "hook=connect4", "reason=no-rule",
			       "addr=" PUBLIC_ADDR, NULL };
	wait_line(&e, deny);
	close(l);

	proc_stop(e.d.agentd, SIGTERM);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "audit", "query", "--dir", e.d.audit, "--decision",
			       "would-deny", NULL),
		  0);
	if (!strstr(out, "\"decision\":\"would-deny\"") || !strstr(out, "\"op\":\"connect4\""))
		FAIL("audit query --decision would-deny: %s", out);
}

/* agentctl run NAME -- sh -c CMD: its exit status; in out, what the command printed, then what
 * agentctl said on stderr (its warnings), kept in a file of the test while it runs. */
static int run_agent(struct host_env *e, const char *cmd, char *out, size_t outsz)
{
	char errpath[PATH_MAX];
	int saved, fd, status;
	size_t len;
	ssize_t n;

	snprintf(errpath, sizeof(errpath), "%s/run.err", e->d.dir);
	fd = open(errpath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT_OK(fd);
	saved = dup(STDERR_FILENO);
	ASSERT_OK(saved);
	dup2(fd, STDERR_FILENO);
	status = agentctl_run(out, outsz, "run", "t", "--", "sh", "-c", cmd, NULL);
	dup2(saved, STDERR_FILENO);
	close(saved);
	len = strlen(out);
	n = pread(fd, out + len, outsz - 1 - len, 0);
	out[len + (n > 0 ? n : 0)] = '\0';
	close(fd);
	return status;
}

TEST(shadow_does_not_apply_landlock_or_seccomp_and_says_so)
{
	char out[16384], cmd[PATH_MAX + 64];
	struct host_env e;

	host_start(&e);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "status", NULL), 0);
	if (!strstr(out, "Landlock NOT APPLIED") || !strstr(out, "shadow mode without BPF LSM"))
		FAIL("status does not say Landlock is not applied in shadow mode: %s", out);

	/* A write where the policy grants none, and a netlink socket: Landlock's and seccomp's
	 * rules, not applied. */
	snprintf(cmd, sizeof(cmd),
		 "echo written > %s/out && cat %s/out && ip -o link show lo >/dev/null && "
		 "echo reached",
		 e.d.dir, e.d.dir);
	ASSERT_EQ(run_agent(&e, cmd, out, sizeof(out)), 0);
	if (!strstr(out, "written\nreached") || !strstr(out, "SHADOW mode") ||
	    !strstr(out, "NOT ENFORCED by cgroup-BPF, Landlock ABI") ||
	    !strstr(out, ": files; network.sockets: shadow;"))
		FAIL("agentctl run of a shadow agent: %s", out);

	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "mode", "t", "enforce", NULL), 0);
	snprintf(cmd, sizeof(cmd), "echo again > %s/out", e.d.dir);
	ASSERT(run_agent(&e, cmd, out, sizeof(out)) != 0);
	if (!strstr(out, "Permission denied") || strstr(out, "SHADOW"))
		FAIL("agentctl run in enforce mode: %s", out);
	ASSERT(run_agent(&e, "ip -o link show lo", out, sizeof(out)) != 0);
	if (!strstr(out, "not permitted"))
		FAIL("a netlink socket in enforce mode: %s", out);
}
