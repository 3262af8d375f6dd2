// SPDX-License-Identifier: GPL-2.0
/*
 * Host tier: agentd while its audit log cannot be written. The audit directory is a 1 MiB tmpfs
 * that the test fills with a file of its own (standing in for an agent that fills the disk the
 * log shares) and later frees. Agent t-a's policy says audit.on_failure freeze (the default),
 * t-c's continue: each does what its own policy says, from inside its own cgroup.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include "wire/broker_proto.h"
#include "kernel/cgroup.h"
#include "harness.h"
#include "testlib.h"
#include "wire/unixsock.h"

static const char tools_json[] =
	"{\"tools\": [{\"name\": \"noop\", \"effect\": \"observe\", \"builtin\": \"noop\"}]}\n";

struct env {
	char dir[256];
	char state[PATH_MAX], control[PATH_MAX], audit[PATH_MAX], pins[PATH_MAX];
	char cgroup[PATH_MAX], tools[PATH_MAX], policy_a[PATH_MAX], policy_c[PATH_MAX];
	char cg_a[PATH_MAX + 8], cg_c[PATH_MAX + 8], sock_a[PATH_MAX], sock_c[PATH_MAX];
	char filler[PATH_MAX + 16];
	struct proc *agentd;
};

static struct env the_env;

static void start_agentd(struct env *e)
{
	const char *ready[] = { "agentd: ready", NULL };
	char *argv[] = { "agentd",	"--control",	   e->control,	"--state-dir", e->state,
			 "--audit-dir", e->audit,	   "--pin-dir", e->pins,       "--cgroup",
			 e->cgroup,	"--allow-partial", NULL };

	e->agentd = proc_start(argv);
	if (!proc_wait_line(e->agentd, TEST_READY_MS, ready))
		FAIL("agentd did not get ready: \"%s\"", e->agentd->buf);
}

static struct env *setup(void)
{
	char root[PATH_MAX - 64], out[4096];
	struct env *e = &the_env;

	ASSERT_EQ(cgroup2_mount(root, sizeof(root)), 0);
	test_tmpdir(the_env.dir, sizeof(the_env.dir), "auditfail");
	snprintf(the_env.state, sizeof(the_env.state), "%s/state", the_env.dir);
	snprintf(the_env.control, sizeof(the_env.control), "%s/run/control.sock", the_env.dir);
	snprintf(the_env.audit, sizeof(the_env.audit), "%s/audit", the_env.dir);
	snprintf(the_env.filler, sizeof(the_env.filler), "%s/filler", the_env.audit);
	snprintf(the_env.tools, sizeof(the_env.tools), "%s/tools.json", the_env.dir);
	snprintf(the_env.policy_a, sizeof(the_env.policy_a), "%s/a.json", the_env.dir);
	snprintf(the_env.policy_c, sizeof(the_env.policy_c), "%s/c.json", the_env.dir);
	snprintf(the_env.cgroup, sizeof(the_env.cgroup), "%s/agentd-auditfail-%d", root, getpid());
	snprintf(the_env.cg_a, sizeof(the_env.cg_a), "%s/t-a", the_env.cgroup);
	snprintf(the_env.cg_c, sizeof(the_env.cg_c), "%s/t-c", the_env.cgroup);
	snprintf(the_env.sock_a, sizeof(the_env.sock_a), "%s/run/agents/t-a/tool.sock",
		 the_env.dir);
	snprintf(the_env.sock_c, sizeof(the_env.sock_c), "%s/run/agents/t-c/tool.sock",
		 the_env.dir);
	test_pin_dir(e->pins, sizeof(e->pins));
	test_cgroup_tree_at_end(e->cgroup);
	ASSERT_OK(mkdir(e->audit, 0700));
	test_mount_tmpfs(e->audit);
	test_write(e->tools, tools_json, 0644);
	test_write(e->policy_a, "{\"name\": \"a\", \"tools\": [\"noop\"]}\n", 0644);
	test_write(e->policy_c,
		   "{\"name\": \"c\", \"tools\": [\"noop\"], \"audit\": {\"on_failure\": "
		   "\"continue\"}}\n",
		   0644);
	setenv("AGENTD_CONTROL", e->control, 1);
	start_agentd(e);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "add", "t-a", "--policy", e->policy_a,
			       "--tools", e->tools, NULL),
		  0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "add", "t-c", "--policy", e->policy_c,
			       "--tools", e->tools, NULL),
		  0);
	return e;
}

/* Writes the file until the file system says ENOSPC. */
static void fill(const char *path)
{
	static char block[65536];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ssize_t n;

	ASSERT_OK(fd);
	memset(block, 'x', sizeof(block));
	while ((n = write(fd, block, sizeof(block))) > 0)
		;
	ASSERT_EQ(n, -1);
	ASSERT_EQ(errno, ENOSPC);
	close(fd);
}

/* Waits (at most 10 s: a bound on failure, not a timed assertion) for cgroup.events to say
 * "frozen want". Returns whether it did. */
static bool wait_frozen(const char *cg, int want)
{
	char path[PATH_MAX + 16], buf[256], line[16];
	struct pollfd pfd = { .events = POLLPRI };
	bool ok = false;
	int i;

	snprintf(path, sizeof(path), "%s/cgroup.events", cg);
	snprintf(line, sizeof(line), "frozen %d", want);
	pfd.fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_OK(pfd.fd);
	for (i = 0; i < 100 && !ok; i++) {
		ssize_t n = pread(pfd.fd, buf, sizeof(buf) - 1, 0);

		ASSERT(n > 0);
		buf[n] = '\0';
		ok = strstr(buf, line);
		if (!ok)
			poll(&pfd, 1, 100);
	}
	close(pfd.fd);
	return ok;
}

/* ---- a connection of an agent's, speaking the protocol ---- */

/* One noop call: its reply's code ("ok", an error code), or why there was none. */
static const char *call_noop(int fd, long long id, char *code, size_t codesz, char *msg,
			     size_t msgsz)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct broker_reply r = { 0 };
	char buf[65536], req[64];
	size_t len = 0, n = 0;
	int reqlen = snprintf(req + 4, sizeof(req) - 4, "{\"id\": %lld, \"tool\": \"noop\"}", id);
	ssize_t got;

	req[0] = req[1] = 0;
	req[2] = (char)(reqlen >> 8);
	req[3] = (char)reqlen;
	if (send(fd, req, reqlen + 4, MSG_NOSIGNAL) != reqlen + 4)
		return "send";
	while (broker_frame_check(buf, len, sizeof(buf) - 4, &n) != 1) {
		if (poll(&pfd, 1, 10000) <= 0)
			return "no reply";
		got = recv(fd, buf + len, sizeof(buf) - len, 0);
		if (got <= 0)
			return "EOF";
		len += got;
	}
	if (broker_reply_parse(buf + 4, n, &r))
		return "malformed";
	snprintf(code, codesz, "%s", r.ok ? "ok" : r.error.code);
	if (msg)
		snprintf(msg, msgsz, "%s", r.ok ? "" : r.error.message);
	broker_reply_free(&r);
	return code;
}

/*
 * A process that made its connection from inside agent t-a (the broker takes the caller's
 * identity at accept) and was then moved out of it by the test: requests it sends once t-a is
 * frozen arrive as t-a's, as requests already on their way when a freeze lands do.
 */
struct caller {
	pid_t pid;
	int cmd, res; /* the test's end of two pipes */
};

static void caller_loop(const char *sock, int cmd, int res)
{
	char code[64], msg[256], go;
	long long id = 1;
	int fd = unix_connect(sock);

	if (fd < 0 || strcmp(call_noop(fd, id++, code, sizeof(code), NULL, 0), "ok"))
		_exit(1);
	/* accepted as t-a's: report, then call on each command until one is refused */
	if (write(res, "a", 1) != 1)
		_exit(2);
	while (read(cmd, &go, 1) == 1) {
		const char *c = "";
		int n;

		for (n = 0; n < 100000; n++) {
			c = call_noop(fd, id++, code, sizeof(code), msg, sizeof(msg));
			if (strcmp(c, "ok") || go == '1')
				break;
		}
		dprintf(res, "%s %s\n", c, strcmp(c, "ok") ? msg : "");
	}
	_exit(0);
}

/* The caller's end, before its cgroup is removed (cleanups run last registered first). */
static void kill_caller(void *arg)
{
	pid_t pid = *(pid_t *)arg;

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	free(arg);
}

static void caller_start(struct env *e, struct caller *c, const char *outside)
{
	int cmd[2], res[2], cgfd;
	char path[PATH_MAX + 16], buf[32], a;
	pid_t *pid;

	ASSERT_OK(pipe2(cmd, O_CLOEXEC));
	ASSERT_OK(pipe2(res, O_CLOEXEC));
	cgfd = open(e->cg_a, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_OK(cgfd);
	c->pid = cgroup_fork_into(cgfd);
	ASSERT(c->pid >= 0);
	if (!c->pid) {
		close(cmd[1]);
		close(res[0]);
		caller_loop(e->sock_a, cmd[0], res[1]);
	}
	close(cgfd);
	close(cmd[0]);
	close(res[1]);
	pid = malloc(sizeof(*pid));
	ASSERT(pid);
	*pid = c->pid;
	test_defer(kill_caller, pid);
	c->cmd = cmd[1];
	c->res = res[0];
	ASSERT_EQ(read(c->res, &a, 1), 1);
	snprintf(path, sizeof(path), "%s/cgroup.procs", outside);
	snprintf(buf, sizeof(buf), "%d", (int)c->pid);
	test_write(path, buf, 0644);
}

/* Sends a command ('1': one call; 'u': calls until one is refused); the last reply's line. */
static void caller_do(struct caller *c, char cmd, char *out, size_t outsz)
{
	ssize_t n;

	ASSERT_EQ(write(c->cmd, &cmd, 1), 1);
	n = read(c->res, out, outsz - 1);
	ASSERT(n > 0);
	out[n] = '\0';
}

static int sleeper(void *arg)
{
	(void)arg;
	pause();
	return 0;
}

/* A process that lives in the cgroup until the test ends (its cgroup tree is killed then). */
static void park_in(const char *cg)
{
	int fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	pid_t pid;

	ASSERT_OK(fd);
	pid = cgroup_fork_into(fd);
	ASSERT(pid >= 0);
	if (!pid)
		_exit(sleeper(NULL));
	close(fd);
}

/* A noop call from a fresh process in cg: its reply's code. */
static int call_from(void *sock)
{
	char code[64];
	int fd = unix_connect(sock);

	return fd >= 0 && !strcmp(call_noop(fd, 1, code, sizeof(code), NULL, 0), "ok") ? 0 : 1;
}

/* The value of key in the first line holding every needle (NULL-terminated), or -1. */
static long long field_of(const char *log, const char *const needles[], const char *key)
{
	const char *p = log, *nl, *k;
	char line[4096];
	size_t i;

	for (; (nl = strchr(p, '\n')); p = nl + 1) {
		snprintf(line, sizeof(line), "%.*s", (int)(nl - p), p);
		for (i = 0; needles[i] && strstr(line, needles[i]); i++)
			;
		if (!needles[i] && (k = strstr(line, key)))
			return atoll(k + strlen(key));
	}
	return -1;
}

TEST(audit_log_full_freezes_freeze_agents_and_counts_loss_for_continue_agents)
{
	static char log[1 << 20];
	struct env *e = setup();
	struct caller c;
	char out[4096], path[sizeof(the_env.audit) + 16], outside[PATH_MAX];
	long long id_c, frozen_ms;
	size_t n;
	FILE *f;

	test_cgroup(outside, sizeof(outside));
	park_in(e->cg_a);
	park_in(e->cg_c);
	caller_start(e, &c, outside);

	/* The disk the log is on fills up: t-a's next records cannot be written, and t-a stops. */
	fill(e->filler);
	caller_do(&c, 'u', out, sizeof(out));
	if (strncmp(out, "busy the audit log cannot be written", 36))
		FAIL("t-a's calls went on while its records could not be written: \"%s\"", out);
	if (!wait_frozen(e->cg_a, 1))
		FAIL("t-a's cgroup was not frozen while the audit log could not be written");
	/* t-c (continue) runs on, and its calls work, unrecorded but counted */
	ASSERT(wait_frozen(e->cg_c, 0));
	ASSERT_EQ(run_in_cgroup(e->cg_c, call_from, e->sock_c, NULL), 0);
	caller_do(&c, '1', out, sizeof(out));
	if (strncmp(out, "busy", 4))
		FAIL("a call of frozen t-a was not refused: \"%s\"", out);

	/* Space returns: the writer's next retry succeeds, t-a is thawed and calls again. */
	ASSERT_OK(unlink(e->filler));
	if (!wait_frozen(e->cg_a, 0))
		FAIL("t-a stayed frozen after the audit log could be written again");
	caller_do(&c, '1', out, sizeof(out));
	if (strncmp(out, "ok", 2))
		FAIL("a call of thawed t-a failed: \"%s\"", out);

	proc_stop(e->agentd, SIGTERM);
	snprintf(path, sizeof(path), "%s/audit.log", the_env.audit);
	f = fopen(path, "re");
	ASSERT(f);
	n = fread(log, 1, sizeof(log) - 1, f);
	fclose(f);
	log[n] = '\0';
	{
		const char *freeze[] = { "\"op\":\"agent-freeze\"", "\"agent_name\":\"t-a\"",
					 "error=ENOSPC", NULL };
		const char *thaw[] = { "\"op\":\"agent-thaw\"", "\"agent_name\":\"t-a\"",
				       "reason=audit-log-writable", NULL };
		const char *add_c[] = { "\"op\":\"agent-add\"", "\"agent_name\":\"t-c\"", NULL };
		const char *resumed[] = { "\"op\":\"log-resumed\"", "error=ENOSPC", NULL };
		const char *refused[] = { "\"op\":\"tool-refused\"", "\"agent_name\":\"t-a\"",
					  "the audit log cannot be written", NULL };
		char loss[64];
		const char *lost[] = { "\"kind\":\"loss\"",
				       "\"op\":\"not-written\"",
				       loss,
				       "\"source\":\"log\"",
				       "from=",
				       "until=",
				       NULL };

		if (field_of(log, freeze, "\"seq\":") < 0)
			FAIL("no agent-freeze record for t-a");
		frozen_ms = field_of(log, thaw, "frozen_ms=");
		if (frozen_ms < 0)
			FAIL("no agent-thaw record saying how long t-a was frozen");
		ASSERT(field_of(log, resumed, "ms=") >= 0);
		ASSERT(field_of(log, refused, "\"seq\":") >= 0);
		id_c = field_of(log, add_c, "\"agent\":");
		ASSERT(id_c > 0);
		/* the loss record names the agent, as every record about one does */
		snprintf(loss, sizeof(loss),
			 "\"agent\":%lld,\"agent_name\":\"t-c\",\"count\":", id_c);
		if (field_of(log, lost, "\"count\":") < 1)
			FAIL("no loss record counting t-c's records while the log was full");
	}
	ASSERT_EQ(agentctl_run(out, sizeof(out), "audit", "verify", "--dir", e->audit, NULL), 0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "audit", "query", "--dir", e->audit, "--kind",
			       "loss", NULL),
		  0);
	ASSERT(strstr(out, "\"op\":\"not-written\""));
}

/* An agent agentd froze for the audit log stays frozen while agentd is dead (kill -9), and the
 * agentd started next thaws it once the log takes writes again, as the one that froze it would
 * have: the freeze is recorded in the state directory, not only in the dead daemon's memory. */
TEST(audit_freeze_outlives_a_killed_agentd_and_its_successor_thaws)
{
	struct env *e = setup();
	char out[4096], outside[PATH_MAX];
	struct caller c;

	test_cgroup(outside, sizeof(outside));
	park_in(e->cg_a);
	caller_start(e, &c, outside);
	fill(e->filler);
	/* t-a's calls until their records cannot be written. */
	caller_do(&c, 'u', out, sizeof(out));
	if (!wait_frozen(e->cg_a, 1))
		FAIL("t-a's cgroup was not frozen while the audit log could not be written");
	proc_stop(e->agentd, SIGKILL);
	ASSERT(wait_frozen(e->cg_a, 1));
	ASSERT_OK(unlink(e->filler));
	start_agentd(e);
	if (!wait_frozen(e->cg_a, 0))
		FAIL("t-a stayed frozen after a new agentd found the audit log writable");
	ASSERT_EQ(run_in_cgroup(e->cg_a, call_from, e->sock_a, NULL), 0);
	/* The thaw is recorded, by the agentd that did it. */
	proc_stop(e->agentd, SIGTERM);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "audit", "query", "--dir", e->audit, "--agent",
			       "t-a", "--kind", "lifecycle", NULL),
		  0);
	if (!strstr(out, "\"op\":\"agent-thaw\"") || !strstr(out, "reason=audit-log-writable"))
		FAIL("no agent-thaw record of t-a's after the restart:\n%s", out);
}
