// SPDX-License-Identifier: GPL-2.0
/*
 * agentctl policy generate end to end: a scripted agent (files, exec, one allowed host) runs
 * under a narrow policy; the policy generated from its deny records, reloaded, lets the same
 * session run with no deny, and the attacks stay denied. In enforce mode each deny stops its
 * step, so a step's next need shows only once the first is granted: rounds of run, generate,
 * reload, at most MAX_ROUNDS (shadow mode records them all in one).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "harness.h"
#include "testlib.h"

#define HOST4 "192.0.2.1" /* TEST-NET-1: the allowed host, not structural */
#define METADATA4 "169.254.169.254"
#define MAX_ROUNDS 5
#define ARRIVAL_MS 20000 /* a deadline for what must arrive, not a measure of speed */

struct session {
	char dir[PATH_MAX];
	int port; /* HOST4's listener */
	int marker; /* port of the round's closing connect to METADATA4 */
};

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

/* 0 or the errno of a TCP connect. */
static int connect_to(const char *addr, int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), err = 0;

	inet_pton(AF_INET, addr, &sin.sin_addr);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof(sin)))
		err = errno;
	if (fd >= 0)
		close(fd);
	return err;
}

static int read_file(const char *dir, const char *name)
{
	char path[PATH_MAX + 32], buf[64];
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, buf, sizeof(buf)) < 0)
		err = errno;
	if (fd >= 0)
		close(fd);
	return err;
}

/* 0, or the exec's errno (127 + it: the child exits with it). */
static int run_program(const char *path)
{
	char *argv[] = { "true", NULL }; /* busybox runs the applet argv[0] names */
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		execv(path, argv);
		_exit(100 + (errno & 0x7f));
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The agent's work: each step tried whatever the others did; a bit per failed step. */
static int session(void *arg)
{
	struct session *s = arg;
	char path[PATH_MAX + 32];
	int fails = 0, fd;

	fails |= read_file(s->dir, "data/a") ? 1 : 0;
	fails |= read_file(s->dir, "data/b") ? 1 : 0;
	fails |= read_file(s->dir, "data/c") ? 1 : 0;
	snprintf(path, sizeof(path), "%s/out/result", s->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, "ok\n", 3) != 3)
		fails |= 2;
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s/bin/tool", s->dir);
	fails |= run_program(path) ? 4 : 0;
	fails |= connect_to(HOST4, s->port) ? 8 : 0;
	/* The round's end: a deny never granted, whose record closes the round in the stream. */
	connect_to(METADATA4, s->marker);
	return fails;
}

static int attack_shadow(void *arg)
{
	(void)arg;
	return read_file("/etc", "shadow");
}

static int attack_metadata(void *arg)
{
	(void)arg;
	return connect_to(METADATA4, 80);
}

static int attack_exec(void *arg)
{
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/bin/other", ((struct session *)arg)->dir);
	return run_program(path);
}

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Deny records of agent t in the log (committed up to the round's marker). */
static size_t denies(const struct test_daemon *d)
{
	static char out[1 << 20];

	ASSERT_EQ(agentctl_run(out, sizeof(out), "audit", "query", "--dir", d->audit, "--agent",
			       "t", "--decision", "deny", NULL),
		  0);
	return count_lines(out);
}

static int knock(void *arg)
{
	return connect_to(METADATA4, *(int *)arg);
}

/* One denial at a time until follow prints one: records made before it subscribed pass it by. */
static void subscribed(struct proc *follow, const char *cg)
{
	const char *needles[] = { "\"addr\":\"" METADATA4 "\"", "\"port\":39999}", NULL };
	int i, port = 39999;

	for (i = 0; i < 100; i++) {
		ASSERT_EQ(run_in_cgroup(cg, knock, &port, NULL), EPERM);
		if (proc_wait_line(follow, 200, needles))
			return;
	}
	FAIL("agentctl audit follow printed no record: %s", follow->buf);
}

/* Runs the session, then waits until its closing record is in the log. */
static int run_round(const struct test_daemon *d, struct proc *follow, const char *cg,
		     struct session *s)
{
	char port[32];
	const char *needles[] = { "\"addr\":\"" METADATA4 "\"", port, NULL };
	int fails;

	s->marker++;
	snprintf(port, sizeof(port), "\"port\":%d}", s->marker);
	fails = run_in_cgroup(cg, session, s, NULL);
	if (!proc_wait_line(follow, ARRIVAL_MS, needles))
		FAIL("the round's closing deny never reached the stream: %s", follow->buf);
	(void)d;
	return fails;
}

/* The first round's log on stderr, "fixture: " before each line: how
 * selftests/audit/generate-session.log is made (docs/POLICY.md, "Writing a policy"). */
static void dump_log(const struct test_daemon *d)
{
	static char out[1 << 20];
	char *line, *save;

	ASSERT_EQ(agentctl_run(out, sizeof(out), "audit", "query", "--dir", d->audit, NULL), 0);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		fprintf(stderr, "fixture: %s\n", line);
}

static void print_policy(const char *path)
{
	char line[4096];
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		fprintf(stderr, "generated: %s", line);
	if (f)
		fclose(f);
}

/* The guest has no /etc: the attack's target is made for the test. */
static void remove_etc(void *arg)
{
	(void)arg;
	rmdir("/etc");
}

static void setup(struct session *s, struct test_daemon *d, char *policy, size_t policysz)
{
	char path[PATH_MAX + 32];
	const char *names[] = { "data/a", "data/b", "data/c" };
	size_t i;

	test_daemon_init(d, "gen");
	snprintf(s->dir, sizeof(s->dir), "%s/w", d->dir);
	for (i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s%s", s->dir,
			 (const char *[]){ "", "/data", "/out", "/bin" }[i]);
		if (mkdir(path, 0755))
			FAIL("mkdir %s: %s", path, strerror(errno));
	}
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", s->dir, names[i]);
		test_write(path, "data\n", 0644);
	}
	snprintf(path, sizeof(path), "%s/bin/tool", s->dir);
	test_copy("/bin/busybox", path, 0755);
	snprintf(path, sizeof(path), "%s/bin/other", s->dir);
	test_copy("/bin/busybox", path, 0755);
	if (!mkdir("/etc", 0755))
		test_defer(remove_etc, NULL);
	if (access("/etc/shadow", F_OK)) {
		test_write("/etc/shadow", "root:*:1::::::\n", 0600);
		test_unlink_at_end("/etc/shadow");
	}
	snprintf(policy, policysz, "%s/policy.json", d->dir);
	test_write(policy, "{\"name\": \"t\", \"network\": {\"sockets\": [\"inet\"]}}\n", 0644);
}

/* Generates from the whole log (the agent's current policy asked of agentd), writes it over the
 * policy file, reloads. */
static void generate_and_reload(const struct test_daemon *d, const char *policy)
{
	static char out[1 << 20];
	int status;

	status = agentctl_run(out, sizeof(out), "policy", "generate", "t", "--dir", d->audit, NULL);
	if (status)
		FAIL("policy generate exited %d: %s", status, out);
	test_write(policy, out, 0644);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "policy", "check", "--var", "tmp=/tmp", "--var",
			       "home=/tmp", policy, NULL),
		  0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "policy", "reload", "t", NULL), 0);
}

TEST(generate_from_a_session_runs_it_with_no_deny_and_keeps_the_attacks_denied)
{
	char policy[PATH_MAX], cg[PATH_MAX + 8];
	struct test_daemon d;
	struct session s = { .marker = 40000 };
	struct proc *follow;
	size_t before, round;
	int fails;

	own_netns();
	setup(&s, &d, policy, sizeof(policy));
	s.port = listen_on(HOST4);
	test_daemon_start(&d, NULL);
	test_daemon_add(&d, "t", policy, cg, sizeof(cg));
	char *argv[] = { "agentctl", "audit", "follow", "--agent", "t", "--kind", "net", NULL };
	follow = proc_start(argv);
	subscribed(follow, cg);

	fails = run_round(&d, follow, cg, &s);
	dump_log(&d);
	if (fails != 15)
		FAIL("the narrow policy let steps through (failed steps 0x%x, want 0xf)", fails);
	for (round = 0; fails && round < MAX_ROUNDS; round++) {
		generate_and_reload(&d, policy);
		fails = run_round(&d, follow, cg, &s);
	}
	if (fails)
		FAIL("after %zu rounds the session still fails (steps 0x%x)", round, fails);
	/* docs/POLICY.md's example is this output */
	fprintf(stderr, "generated in %zu rounds:\n", round);
	print_policy(policy);
	before = denies(&d);
	ASSERT_EQ(run_round(&d, follow, cg, &s), 0);
	/* One deny: the round's marker, never granted. */
	ASSERT_EQ(denies(&d) - before, 1);

	ASSERT_EQ(run_in_cgroup(cg, attack_shadow, NULL, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(cg, attack_metadata, NULL, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(cg, attack_exec, &s, NULL), 100 + EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, attack_exec, &s, NULL), 0);
}
