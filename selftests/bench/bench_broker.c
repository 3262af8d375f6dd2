// SPDX-License-Identifier: GPL-2.0
/*
 * The tool broker's round trip, natively: a real agentd (--allow-partial) with 16 agents, a
 * client in each agent's cgroup calling over its own socket (agent -> worker -> agentd ->
 * agent, audit record included). Prints p50 and p99 of:
 * - closed loop, one call in flight per client: the builtin noop from 1 agent and from 16 at
 *   once (CALLS calls each way; with 16, queueing on the machine's cores), and an exec of
 *   /bin/true (a fork, a cgroup, an exec, a reap, a rmdir per call);
 * - open loop: 16 agents each sending the noop at a fixed rate whatever is in flight (replies
 *   matched by id), each call timed from the time it was due to be sent, so that a stall counts
 *   for every call it delays (no coordinated omission); CALLS calls per rate.
 * Usage: bench_broker [CALLS] (as root).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "broker_proto.h"
#include "cgroup.h"

#define AGENTS 16
#define EXEC_CALLS 1000
/* Open loop: calls per second of each of the 16 agents. */
static const int open_rates[] = { 250, 500, 750 };

struct bench {
	char bin[PATH_MAX], dir[64], pins[PATH_MAX], cgroup[PATH_MAX], control[PATH_MAX];
	char tools[PATH_MAX], policy[PATH_MAX];
	pid_t agentd;
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int run(char *const argv[], bool quiet)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		if (quiet)
			freopen("/dev/null", "w", stdout);
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int agentctl(struct bench *b, const char *verb, const char *name)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/agentctl", b->bin);
	if (!strcmp(verb, "add")) {
		char *argv[] = { path,	    "agent",   "add",	 (char *)name, "--policy",
				 b->policy, "--tools", b->tools, NULL };
		return run(argv, true);
	}
	char *argv[] = { path, "agent", "rm", (char *)name, NULL };
	return run(argv, true);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static int start(struct bench *b, bool audit_log)
{
	char path[PATH_MAX + 16], root[PATH_MAX - 64], state[128], audit[128], line[256];
	int p[2];
	FILE *f;

	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	if (n < 0)
		return -1;
	path[n] = '\0';
	snprintf(b->bin, sizeof(b->bin), "%s", dirname(dirname(path)));
	static int round_no;

	snprintf(b->dir, sizeof(b->dir), "/tmp/agentd-bench-broker-%d-%d", getpid(), round_no++);
	snprintf(b->pins, sizeof(b->pins), "%s/pins", b->dir);
	snprintf(b->control, sizeof(b->control), "%s/run/control.sock", b->dir);
	snprintf(b->tools, sizeof(b->tools), "%s/tools.json", b->dir);
	snprintf(b->policy, sizeof(b->policy), "%s/policy.json", b->dir);
	snprintf(state, sizeof(state), "%s/state", b->dir);
	snprintf(audit, sizeof(audit), "%s/audit", b->dir);
	if (cgroup2_mount(root, sizeof(root)))
		return -1;
	snprintf(b->cgroup, sizeof(b->cgroup), "%s/%s", root, b->dir + 5);
	if (mkdir(b->dir, 0755) || mkdir(b->pins, 0700) || mount("bpf", b->pins, "bpf", 0, NULL))
		return -1;
	put(b->tools, "{\"tools\": [{\"name\": \"noop\", \"effect\": \"observe\", \"builtin\": "
		      "\"noop\"},\n {\"name\": \"true\", \"effect\": \"observe\", \"exec\": "
		      "[\"/bin/true\"]}]}\n");
	put(b->policy, "{\"name\": \"bench\", \"files\": [{\"path\": \"/\", \"rights\": [\"read\", "
		       "\"exec\"]}], \"tools\": [\"noop\", \"true\"]}\n");
	setenv("AGENTD_CONTROL", b->control, 1);
	snprintf(path, sizeof(path), "%s/agentd", b->bin);
	if (pipe(p))
		return -1;
	b->agentd = fork();
	if (b->agentd == 0) {
		char *argv[] = { path,	    "--control",       b->control,    "--state-dir",
				 state,	    "--pin-dir",       b->pins,	      "--cgroup",
				 b->cgroup, "--allow-partial", "--audit-dir", audit,
				 NULL };

		if (!audit_log)
			argv[10] = NULL;
		dup2(p[1], 1);
		if (!getenv("BENCH_VERBOSE"))
			freopen("/dev/null", "w", stderr);
		execv(path, argv);
		_exit(127);
	}
	close(p[1]);
	f = fdopen(p[0], "r");
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "agentd: ready"))
			return 0;
	return -1;
}

static void stop(struct bench *b)
{
	char cmd[PATH_MAX * 2];

	if (b->agentd > 0) {
		kill(b->agentd, SIGTERM);
		waitpid(b->agentd, NULL, 0);
	}
	umount(b->pins);
	snprintf(cmd, sizeof(cmd),
		 "find %s -depth -type d -exec rmdir {} + 2>/dev/null; chattr -R -a %s "
		 "2>/dev/null; rm -rf %s",
		 b->cgroup, b->dir, b->dir);
	if (system(cmd))
		fprintf(stderr, "bench_broker: cleaning up %s\n", b->dir);
}

static int connect_agent(struct bench *b, int i)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/run/agents/b%d/tool.sock", b->dir, i);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* In agent i's cgroup: n calls of tool, one at a time; latencies (µs) into lat. */
static int client(struct bench *b, int i, const char *tool, int n, float *lat)
{
	char req[128], buf[4096];
	size_t len, plen;
	int fd = connect_agent(b, i), k, r, c;
	ssize_t got;
	double t0;

	if (fd < 0)
		return 2;
	len = snprintf(req + 4, sizeof(req) - 4, "{\"id\": 1, \"tool\": \"%s\"}", tool);
	req[0] = req[1] = 0, req[2] = (char)(len >> 8), req[3] = (char)len;
	for (k = 0; k < n; k++) {
		t0 = now_us();
		if (send(fd, req, len + 4, MSG_NOSIGNAL) != (ssize_t)(len + 4))
			return 3;
		for (r = 0; (c = broker_frame_check(buf, r, sizeof(buf) - 4, &plen)) == 0; r += got)
			if ((got = recv(fd, buf + r, sizeof(buf) - r, 0)) <= 0)
				return 4;
		if (c < 0 || !memmem(buf, r, "\"ok\":true", 9))
			return 5;
		lat[k] = (float)(now_us() - t0);
	}
	close(fd);
	return 0;
}

/* The id of a noop's ok reply (canonical JSON: {"exit":0,"id":N,"ok":true,...}); -1 if none. */
static long reply_id(const char *p, size_t n)
{
	const char *id = memmem(p, n, "\"id\":", 5);

	if (!id || !memmem(p, n, "\"ok\":true", 9))
		return -1;
	return strtol(id + 5, NULL, 10);
}

/*
 * Open loop, in agent i's cgroup: call k is due at start + (k + i / AGENTS) / rate seconds and
 * is sent then (or as soon as the client can, if it is behind), whatever is in flight; its
 * latency runs from when it was due to its whole reply.
 */
static int open_client(struct bench *b, int i, int n, int rate, double start, float *lat)
{
	static char buf[1 << 16];
	char req[128];
	double *due = calloc(n, sizeof(*due)), t;
	struct pollfd pfd = { .events = POLLIN };
	size_t len = 0, plen;
	int sent = 0, done = 0, c;
	struct timespec ts;
	ssize_t got;
	long id, wait;

	pfd.fd = connect_agent(b, i);
	if (pfd.fd < 0 || !due)
		return 2;
	for (c = 0; c < n; c++)
		due[c] = start + (c + (double)i / AGENTS) * 1e6 / rate;
	while (done < n) {
		t = now_us();
		while (sent < n && due[sent] <= t) {
			size_t l = snprintf(req + 4, sizeof(req) - 4,
					    "{\"id\": %d, \"tool\": \"noop\"}", sent);

			req[0] = req[1] = 0, req[2] = (char)(l >> 8), req[3] = (char)l;
			if (send(pfd.fd, req, l + 4, MSG_NOSIGNAL) != (ssize_t)(l + 4))
				return 3;
			sent++;
		}
		/* Sleep until the next call is due or a reply comes (no spinning: 16 clients
		 * share the cores with agentd). */
		wait = sent < n ? (long)((due[sent] - now_us()) * 1000) : 1000000000L;
		ts = (struct timespec){ wait / 1000000000L, wait % 1000000000L };
		if (ppoll(&pfd, 1, wait > 0 ? &ts : &(struct timespec){ 0 }, NULL) < 0)
			return 4;
		if (!(pfd.revents & POLLIN))
			continue;
		got = recv(pfd.fd, buf + len, sizeof(buf) - len, MSG_DONTWAIT);
		if (got <= 0)
			return 4;
		len += got;
		t = now_us();
		while ((c = broker_frame_check(buf, len, sizeof(buf) - 4, &plen)) == 1) {
			id = reply_id(buf + 4, plen);
			if (id < 0 || id >= sent)
				return 5;
			lat[done++] = (float)(t - due[id]);
			memmove(buf, buf + 4 + plen, len - 4 - plen);
			len -= 4 + plen;
		}
		if (c < 0)
			return 5;
	}
	close(pfd.fd);
	free(due);
	return 0;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return x < y ? -1 : x > y;
}

/* agents clients at once, calls in all; prints p50, p99, calls/s. */
static int measure(struct bench *b, const char *label, const char *tool, int agents, int calls)
{
	int per = calls / agents, i, status, bad = 0;
	float *lat = mmap(NULL, sizeof(float) * per * agents, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char cg[PATH_MAX + 16];
	pid_t pids[AGENTS];
	double t0 = now_us(), t;

	if (lat == MAP_FAILED)
		return -1;
	for (i = 0; i < agents; i++) {
		int cgfd;

		snprintf(cg, sizeof(cg), "%s/b%d", b->cgroup, i);
		cgfd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		pids[i] = cgfd < 0 ? -1 : cgroup_fork_into(cgfd);
		if (pids[i] == 0)
			_exit(client(b, i, tool, per, lat + (size_t)i * per));
		if (cgfd >= 0)
			close(cgfd);
	}
	for (i = 0; i < agents; i++)
		if (pids[i] < 0 || waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			bad++;
	t = now_us() - t0;
	if (bad) {
		fprintf(stderr, "bench_broker: %d clients failed\n", bad);
		munmap(lat, sizeof(float) * per * agents);
		return -1;
	}
	qsort(lat, (size_t)per * agents, sizeof(float), cmp_float);
	printf("%-28s %2d agent(s) %7d calls  p50 %7.1f us  p99 %7.1f us  %8.0f calls/s\n", label,
	       agents, per * agents, lat[(size_t)per * agents / 2],
	       lat[(size_t)per * agents * 99 / 100], per * agents / (t / 1e6));
	fflush(stdout);
	munmap(lat, sizeof(float) * per * agents);
	return 0;
}

/* 16 agents at rate calls/s each, calls in all; prints p50, p99, p99.9 and the rate achieved. */
static int measure_open(struct bench *b, bool audit_log, int rate, int calls)
{
	int per = calls / AGENTS, i, status, bad = 0;
	size_t total = (size_t)per * AGENTS;
	float *lat = mmap(NULL, sizeof(float) * total, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char cg[PATH_MAX + 16];
	pid_t pids[AGENTS];
	double start = now_us() + 200000, t; /* every client connected by then */

	if (lat == MAP_FAILED)
		return -1;
	for (i = 0; i < AGENTS; i++) {
		int cgfd;

		snprintf(cg, sizeof(cg), "%s/b%d", b->cgroup, i);
		cgfd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		pids[i] = cgfd < 0 ? -1 : cgroup_fork_into(cgfd);
		if (pids[i] == 0)
			_exit(open_client(b, i, per, rate, start, lat + (size_t)i * per));
		if (cgfd >= 0)
			close(cgfd);
	}
	for (i = 0; i < AGENTS; i++)
		if (pids[i] < 0 || waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			bad++;
	t = now_us() - start;
	if (bad) {
		fprintf(stderr, "bench_broker: %d open-loop clients failed\n", bad);
		munmap(lat, sizeof(float) * total);
		return -1;
	}
	qsort(lat, total, sizeof(float), cmp_float);
	printf("noop, open %2d x %4d/s, %-12s %7zu calls  p50 %7.1f us  p99 %7.1f us  p99.9 %7.1f "
	       "us  %8.0f calls/s (asked %d)\n",
	       AGENTS, rate, audit_log ? "audit log" : "no audit log", total, lat[total / 2],
	       lat[total * 99 / 100], lat[total * 999 / 1000], total / (t / 1e6), AGENTS * rate);
	fflush(stdout);
	munmap(lat, sizeof(float) * total);
	return 0;
}

/*
 * One daemon: 16 agents, the noop from 1 and from 16 (closed loop), /bin/true from 1 (with the
 * log only), the noop in open loop at each rate.
 */
static int one_daemon(int calls, bool audit_log)
{
	struct bench b = { 0 };
	char name[16], label[64];
	int i, err;

	err = start(&b, audit_log);
	if (err)
		fprintf(stderr, "bench_broker: agentd did not start\n");
	for (i = 0; !err && i < AGENTS; i++) {
		snprintf(name, sizeof(name), "b%d", i);
		err = agentctl(&b, "add", name);
	}
	snprintf(label, sizeof(label), "noop, %s", audit_log ? "audit log" : "no audit log");
	if (!err)
		err = measure(&b, label, "noop", 1, calls);
	if (!err)
		err = measure(&b, label, "noop", AGENTS, calls);
	if (!err && audit_log)
		err = measure(&b, "/bin/true, audit log", "true", 1,
			      calls < EXEC_CALLS ? calls : EXEC_CALLS);
	for (i = 0; !err && i < (int)(sizeof(open_rates) / sizeof(open_rates[0])); i++)
		err = measure_open(&b, audit_log, open_rates[i], calls);
	for (i = 0; i < AGENTS; i++) {
		snprintf(name, sizeof(name), "b%d", i);
		agentctl(&b, "rm", name);
	}
	stop(&b);
	return err;
}

int main(int argc, char **argv)
{
	int calls = argc > 1 ? atoi(argv[1]) : 100000;

	if (geteuid()) {
		fprintf(stderr, "bench_broker: needs root (it runs agentd)\n");
		return 2;
	}
	if (calls < AGENTS) {
		fprintf(stderr, "usage: bench_broker [CALLS >= %d]\n", AGENTS);
		return 2;
	}
	return one_daemon(calls, true) || one_daemon(calls, false) ? 1 : 0;
}
