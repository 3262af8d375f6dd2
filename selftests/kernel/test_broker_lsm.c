// SPDX-License-Identifier: GPL-2.0
/*
 * VM tier: the kernel side of the broker's sockets. With BPF LSM, a process of agent A cannot
 * even connect to agent B's broker socket, nor to agentd's control socket
 * (lsm/unix_stream_connect, EPERM, audited), and still reaches its own and is served. And a
 * tool's limits, where cgroup v2 has every controller.
 */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "wire/broker_proto.h"
#include "kernel/cgroup.h"
#include "harness.h"
#include "testlib.h"
#include "wire/unixsock.h"

struct lenv {
	char dir[256];
	char state[PATH_MAX], control[PATH_MAX], audit[PATH_MAX], pins[PATH_MAX];
	char cgroup[PATH_MAX], policy[PATH_MAX], tools[PATH_MAX];
	char sock_a[PATH_MAX], sock_b[PATH_MAX];
	struct proc *agentd;
};

static struct lenv *setup(void)
{
	static struct lenv e;
	const char *ready[] = { "agentd: ready", NULL };
	char root[PATH_MAX - 64], out[4096];

	ASSERT_EQ(cgroup2_mount(root, sizeof(root)), 0);
	test_tmpdir(e.dir, sizeof(e.dir), "brokerlsm");
	snprintf(e.state, sizeof(e.state), "%s/state", e.dir);
	snprintf(e.control, sizeof(e.control), "%s/run/control.sock", e.dir);
	snprintf(e.audit, sizeof(e.audit), "%s/audit", e.dir);
	snprintf(e.policy, sizeof(e.policy), "%s/policy.json", e.dir);
	snprintf(e.tools, sizeof(e.tools), "%s/tools.json", e.dir);
	snprintf(e.sock_a, sizeof(e.sock_a), "%s/run/agents/t-a/tool.sock", e.dir);
	snprintf(e.sock_b, sizeof(e.sock_b), "%s/run/agents/t-b/tool.sock", e.dir);
	snprintf(e.cgroup, sizeof(e.cgroup), "%s/agentd-brokerlsm-%d", root, getpid());
	test_pin_dir(e.pins, sizeof(e.pins));
	test_cgroup_tree_at_end(e.cgroup);
	test_write(e.tools,
		   "{\"tools\": [{\"name\": \"noop\", \"effect\": \"observe\", \"builtin\": "
		   "\"noop\"},\n"
		   " {\"name\": \"capped\", \"effect\": \"observe\", \"exec\": [\"/bin/busybox\", "
		   "\"sh\", \"-c\", \"for i in 1 2 3 4 5 6 7 8; do /bin/busybox sleep 2 & done; "
		   "wait\"], \"limits\": {\"pids\": 4, \"memory\": \"64M\", \"cpu\": 0.5}}]}\n",
		   0644);
	test_write(e.policy,
		   "{\"name\": \"t\", \"files\": [{\"path\": \"/\", \"rights\": [\"read\", "
		   "\"exec\"]}], \"network\": {\"sockets\": [\"inet\", \"unix\"]}, \"tools\": "
		   "[\"noop\", \"capped\"]}\n",
		   0644);
	setenv("AGENTD_CONTROL", e.control, 1);

	char *argv[] = { "agentd", "--control", e.control, "--state-dir", e.state,  "--audit-dir",
			 e.audit,  "--pin-dir", e.pins,	   "--cgroup",	  e.cgroup, NULL };
	e.agentd = proc_start(argv);
	if (!proc_wait_line(e.agentd, TEST_READY_MS, ready))
		FAIL("agentd did not get ready: \"%s\"", e.agentd->buf);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "add", "t-a", "--policy", e.policy,
			       "--tools", e.tools, NULL),
		  0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "add", "t-b", "--policy", e.policy,
			       "--tools", e.tools, NULL),
		  0);
	return &e;
}

/* connect() to path: 0 or the errno; the connected fd in *out. */
static int try_connect(const char *path, int *out)
{
	int fd = unix_connect(path);

	*out = fd < 0 ? -1 : fd;
	return fd < 0 ? -fd : 0;
}

/* A noop call on fd: 0 when answered ok. */
static int noop(int fd)
{
	static const char req[] = "\0\0\0\x0f{\"tool\":\"noop\"}";
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct broker_reply r = { 0 };
	size_t len = 0, n = 0;
	char buf[4096];
	ssize_t got;
	int ok;

	if (send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) != (ssize_t)sizeof(req) - 1)
		return 1;
	while (broker_frame_check(buf, len, sizeof(buf) - 4, &n) != 1) {
		if (poll(&pfd, 1, 10000) <= 0)
			return 2;
		got = recv(fd, buf + len, sizeof(buf) - len, 0);
		if (got <= 0)
			return 3;
		len += got;
	}
	if (broker_reply_parse(buf + 4, n, &r))
		return 4;
	ok = r.ok;
	broker_reply_free(&r);
	return ok ? 0 : 5;
}

static const struct lenv *the_env;

/* In agent A: B's socket refused by the kernel, A's served. Returns 0 or a step number. */
static int from_agent_a(void *arg)
{
	int fd, err;

	(void)arg;
	err = try_connect(the_env->sock_b, &fd);
	if (err != EPERM)
		return err ? 10 : 11;
	/* A host daemon's socket: agentd's own control socket. */
	err = try_connect(the_env->control, &fd);
	if (err != EPERM)
		return err ? 13 : 14;
	err = try_connect(the_env->sock_a, &fd);
	if (err)
		return 12;
	err = noop(fd);
	close(fd);
	return err ? 20 + err : 0;
}

TEST(broker_socket_reachable_by_its_agent_only)
{
	static char log[1 << 20];
	char cg_a[PATH_MAX + 8], path[PATH_MAX + 16], out[8192];
	int step, fd;
	size_t n;
	FILE *f;

	the_env = setup();
	ASSERT_EQ(agentctl_run(out, sizeof(out), "status", "--json", NULL), 0);
	if (!strstr(out, "\"kernel_check\": true"))
		FAIL("the broker sockets are not in broker_sockets: %s", out);
	snprintf(cg_a, sizeof(cg_a), "%s/t-a", the_env->cgroup);
	step = run_in_cgroup(cg_a, from_agent_a, NULL, NULL);
	if (step)
		FAIL("from agent A, step %d", step);
	/* Outside every agent, the kernel check does not apply (agentd's peer check does). */
	ASSERT_EQ(try_connect(the_env->sock_b, &fd), 0);
	close(fd);
	proc_stop(the_env->agentd, SIGTERM);
	snprintf(path, sizeof(path), "%s/audit.log", the_env->audit);
	f = fopen(path, "re");
	ASSERT(f);
	n = fread(log, 1, sizeof(log) - 1, f);
	fclose(f);
	log[n] = '\0';
	if (!strstr(log, "\"op\":\"unix_stream_connect\""))
		FAIL("no unix_stream_connect record in the audit log");
	if (!strstr(log, "reason=not-own-broker-socket"))
		FAIL("the refusal's reason is not in the audit log");
	if (!strstr(log, "reason=not-own-socket"))
		FAIL("the control socket's refusal is not in the audit log");
}

/* In agent A: the capped tool's reply. Returns 0 (forks refused past pids.max) or a step. */
static int capped_from_agent_a(void *arg)
{
	static const char req[] = "\0\0\0\x11{\"tool\":\"capped\"}";
	struct broker_reply r = { 0 };
	struct pollfd pfd = { .events = POLLIN };
	size_t len = 0, n = 0;
	char buf[65536];
	ssize_t got;
	int ok;

	(void)arg;
	if (try_connect(the_env->sock_a, &pfd.fd))
		return 1;
	if (send(pfd.fd, req, sizeof(req) - 1, MSG_NOSIGNAL) != (ssize_t)sizeof(req) - 1)
		return 2;
	while (broker_frame_check(buf, len, sizeof(buf) - 4, &n) != 1) {
		if (poll(&pfd, 1, 30000) <= 0)
			return 3;
		got = recv(pfd.fd, buf + len, sizeof(buf) - len, 0);
		if (got <= 0)
			return 4;
		len += got;
	}
	close(pfd.fd);
	if (broker_reply_parse(buf + 4, n, &r))
		return 5;
	/* busybox sh: "can't fork: Resource temporarily unavailable" */
	ok = r.ok && strstr(r.err, "fork");
	broker_reply_free(&r);
	return ok ? 0 : 6;
}

/* Here cgroup v2 has cpu, memory and pids: a tool's limits are set on its cgroup and hold. */
TEST(broker_tool_limits_hold)
{
	char cg_a[PATH_MAX + 8], out[8192];
	int step;

	the_env = setup();
	ASSERT_EQ(agentctl_run(out, sizeof(out), "status", "--json", NULL), 0);
	if (!strstr(out, "\"tool_limits_unavailable\": \"\""))
		FAIL("tool cgroups lack controllers in the guest: %s", out);
	snprintf(cg_a, sizeof(cg_a), "%s/t-a", the_env->cgroup);
	step = run_in_cgroup(cg_a, capped_from_agent_a, NULL, NULL);
	if (step)
		FAIL("the capped tool, step %d", step);
}
