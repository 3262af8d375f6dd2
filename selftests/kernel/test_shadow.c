// SPDX-License-Identifier: GPL-2.0
/*
 * Shadow mode under BPF LSM (docs/SHADOW.md): an agent's own file, exec, socket-family and
 * network rules record would-deny, with the rule and reason enforce mode denies with, and let
 * the operation go on; self-protection, containment and the structural network deny still
 * deny; agentctl agent mode switches to enforce for the very next attempt.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "harness.h"
#include "testlib.h"

#define PUBLIC_ADDR "198.51.100.1" /* TEST-NET-2: the agent's rules decide */
#define METADATA_ADDR "169.254.169.254" /* cloud metadata: structural deny */
#define PORT 4242 /* the policy's connect rule grants port 80 alone */
#define RUN_OK 42
#define WAIT_MS 20000 /* a bound on failure, not a measure */

struct shadow_env {
	struct test_daemon d;
	struct sockaddr_in pub, meta;
	char cg[PATH_MAX];
	char secret[PATH_MAX];
	char ro_sh[PATH_MAX]; /* a shell in a tree the agent may read, not exec */
	char procs[PATH_MAX + 16]; /* the agent's cgroup.procs */
};

static int try_exec(void *path)
{
	char *const argv[] = { "sh", "-c", "exit 42", NULL };

	execv(path, argv);
	return errno;
}

static int try_unix_socket(void *arg)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	(void)arg;
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* Signal 0 to the test process, outside the agent: the permission check alone. */
static int try_signal_outside(void *arg)
{
	(void)arg;
	return kill(getppid(), 0) ? errno : 0;
}

static int try_shmat(void *arg)
{
	void *p = shmat(*(int *)arg, NULL, 0);

	if (p == (void *)-1)
		return errno;
	shmdt(p);
	return 0;
}

static int try_open_write(void *path)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* agentd (-v: a line per decision) and agent "t" in mode, in a network namespace of the test. */
static void shadow_start(struct shadow_env *e, const char *mode)
{
	char policy[4 * PATH_MAX], path[PATH_MAX], ro[PATH_MAX - 8];
	const char *const addrs[] = { PUBLIC_ADDR, METADATA_ADDR };

	test_netns(addrs, sizeof(addrs) / sizeof(addrs[0]));
	test_daemon_init(&e->d, "shadow");
	snprintf(e->secret, sizeof(e->secret), "%s/secret", e->d.dir);
	test_write(e->secret, "s3cr3t\n", 0644);
	snprintf(ro, sizeof(ro), "%s/ro", e->d.dir);
	if (mkdir(ro, 0755))
		FAIL("mkdir %s: %s", ro, strerror(errno));
	snprintf(e->ro_sh, sizeof(e->ro_sh), "%s/sh", ro);
	test_copy("/bin/sh", e->ro_sh, 0755);
	snprintf(policy, sizeof(policy),
		 "{\"name\": \"t\", \"mode\": \"%s\", \"files\": ["
		 "{\"path\": \"/\", \"rights\": [\"read\", \"exec\"]},"
		 "{\"path\": \"%s\", \"rights\": []},"
		 "{\"path\": \"%s\", \"rights\": [\"read\"]}],"
		 "\"network\": {\"sockets\": [\"inet\"], \"connect\": "
		 "[{\"cidr\": \"198.51.100.0/24\", \"ports\": [80]}]}}\n",
		 mode, e->secret, ro);
	snprintf(path, sizeof(path), "%s/policy.json", e->d.dir);
	test_write(path, policy, 0644);
	test_daemon_start(&e->d, "-v", NULL);
	test_daemon_add(&e->d, "t", path, e->cg, sizeof(e->cg));
	snprintf(e->procs, sizeof(e->procs), "%s/cgroup.procs", e->cg);
	test_sin(&e->pub, PUBLIC_ADDR, PORT);
	test_sin(&e->meta, METADATA_ADDR, PORT);
}

/* Waits for agentd's line with every needle; returns its "reason=... rule=N" part. */
static void decision_line(struct shadow_env *e, const char *const needles[], char *rr, size_t rrsz)
{
	const char *line = proc_wait_line(e->d.agentd, WAIT_MS, needles), *r, *end;

	if (!line)
		FAIL("no decision with \"%s\" ... from agentd: \"%s\"", needles[0],
		     e->d.agentd->buf);
	r = strstr(line, " reason=");
	end = r ? strstr(r, " rule=") : NULL;
	end = end ? strchr(end + 1, ' ') : NULL;
	if (!r || !end)
		FAIL("no reason and rule in \"%s\"", line);
	snprintf(rr, rrsz, "%.*s", (int)(end - r), r);
}

TEST(shadow_agent_rules_record_would_deny_and_proceed)
{
	char rr_open[128], rr_exec[128], rr_sock[128], rr_conn[128], rr[128], out[16384];
	struct shadow_env e;
	int pub, meta, shm, port = PORT;

	shadow_start(&e, "shadow");
	pub = test_listener_at(PUBLIC_ADDR, &port);
	meta = test_listener_at(METADATA_ADDR, &port);

	/* The agent's own rules: each goes on, and says which rule would have denied it. */
	ASSERT_EQ(run_in_cgroup(e.cg, try_open, e.secret, NULL), 0);
	const char *open_ln[] = { "would-deny agent=1 ", "hook=file_open", "/secret\"", NULL };
	decision_line(&e, open_ln, rr_open, sizeof(rr_open));
	ASSERT_EQ(run_in_cgroup(e.cg, try_exec, e.ro_sh, NULL), RUN_OK);
	const char *exec_ln[] = { "would-deny agent=1 ", "/ro/sh\"", "need=0x4", NULL };
	decision_line(&e, exec_ln, rr_exec, sizeof(rr_exec));
	ASSERT_EQ(run_in_cgroup(e.cg, try_unix_socket, NULL, NULL), 0);
	const char *sock_ln[] = { "would-deny agent=1 ", "hook=sock_create", "family=1", NULL };
	decision_line(&e, sock_ln, rr_sock, sizeof(rr_sock));
	ASSERT_EQ(run_in_cgroup(e.cg, test_connect_sin, &e.pub, NULL), 0);
	ASSERT(test_accepted(pub));
	const char *conn_ln[] = { "would-deny agent=1 ", "hook=connect4", "addr=" PUBLIC_ADDR,
				  NULL };
	decision_line(&e, conn_ln, rr_conn, sizeof(rr_conn));
	if (!strstr(rr_conn, " reason=rule rule=") || !strcmp(strstr(rr_conn, " rule="), " rule=0"))
		FAIL("the connect's would-deny names no rule: %s", rr_conn);

	/* Containment, self-protection and the structural deny are not the agent's rules. */
	ASSERT_EQ(run_in_cgroup(e.cg, try_signal_outside, NULL, NULL), EPERM);
	const char *kill_ln[] = { "deny agent=1 ", "hook=task_kill", "target-outside-agent", NULL };
	decision_line(&e, kill_ln, rr, sizeof(rr));
	shm = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	ASSERT_OK(shm);
	ASSERT(run_in_cgroup(e.cg, try_shmat, &shm, NULL) != 0);
	shmctl(shm, IPC_RMID, NULL);
	const char *ipc_ln[] = { "deny agent=1 ", "not-own-ipc", NULL };
	decision_line(&e, ipc_ln, rr, sizeof(rr));
	ASSERT_EQ(run_in_cgroup(e.cg, try_open_write, e.procs, NULL), EPERM);
	const char *self_ln[] = { "deny agent=1 ", "hook=cgroup_write", "self-protection", NULL };
	decision_line(&e, self_ln, rr, sizeof(rr));
	ASSERT_EQ(run_in_cgroup(e.cg, test_connect_sin, &e.meta, NULL), EPERM);
	const char *meta_ln[] = { "deny agent=1 ", "hook=connect4", "structural-deny", NULL };
	decision_line(&e, meta_ln, rr, sizeof(rr));
	close(meta);

	/* Enforce from the next attempt on, with the very rules and reasons shadow recorded. */
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "mode", "t", "enforce", NULL), 0);
	ASSERT_EQ(run_in_cgroup(e.cg, try_open, e.secret, NULL), EPERM);
	const char *open_d[] = { "deny agent=1 ", "hook=file_open", "/secret\"", rr_open, NULL };
	decision_line(&e, open_d, rr, sizeof(rr));
	ASSERT_EQ(run_in_cgroup(e.cg, try_exec, e.ro_sh, NULL), EPERM);
	const char *exec_d[] = { "deny agent=1 ", "/ro/sh\"", "need=0x4", rr_exec, NULL };
	decision_line(&e, exec_d, rr, sizeof(rr));
	ASSERT_EQ(run_in_cgroup(e.cg, try_unix_socket, NULL, NULL), EPERM);
	const char *sock_d[] = { "deny agent=1 ", "hook=sock_create", "family=1", rr_sock, NULL };
	decision_line(&e, sock_d, rr, sizeof(rr));
	ASSERT_EQ(run_in_cgroup(e.cg, test_connect_sin, &e.pub, NULL), EPERM);
	const char *conn_d[] = { "deny agent=1 ", "hook=connect4", "addr=" PUBLIC_ADDR, rr_conn,
				 NULL };
	decision_line(&e, conn_d, rr, sizeof(rr));
	close(pub);

	/* The audit log has the would-deny records, the mode switch among them. */
	ASSERT_EQ(agentctl_run(out, sizeof(out), "status", NULL), 0);
	if (!strstr(out, "t: id 1, mode enforce"))
		FAIL("status after agent mode enforce: %s", out);
	proc_stop(e.d.agentd, SIGTERM);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "audit", "query", "--dir", e.d.audit, "--decision",
			       "would-deny", NULL),
		  0);
	if (!strstr(out, "\"decision\":\"would-deny\"") || !strstr(out, "/secret\"") ||
	    strstr(out, "\"decision\":\"deny\""))
		FAIL("audit query --decision would-deny: %s", out);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "audit", "query", "--dir", e.d.audit, "--kind",
			       "policy", NULL),
		  0);
	if (!strstr(out, "\"op\":\"agent-mode\"") || !strstr(out, "mode=enforce"))
		FAIL("no agent-mode record: %s", out);
}

/* A policy in enforce mode switched to shadow live: the next attempt goes on. */
TEST(shadow_switched_on_live_lets_the_next_attempt_through)
{
	char out[8192], rr[128];
	struct shadow_env e;

	shadow_start(&e, "enforce");
	ASSERT_EQ(run_in_cgroup(e.cg, try_open, e.secret, NULL), EPERM);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "mode", "t", "shadow", NULL), 0);
	ASSERT_EQ(run_in_cgroup(e.cg, try_open, e.secret, NULL), 0);
	const char *open_ln[] = { "would-deny agent=1 ", "hook=file_open", "/secret\"", NULL };
	decision_line(&e, open_ln, rr, sizeof(rr));
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "info", "t", NULL), 0);
	if (!strstr(out, " shadow "))
		FAIL("agent info does not say shadow: %s", out);
}
