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
 * - the floor: the same clients, sockets and cgroups against servers that do no work, so that the
 *   broker's figures can be judged against what the machine allows: an echo server (1 hop, the
 *   least any broker can do) and a relay through a middle process per agent (agent -> middle ->
 *   back end -> agent, as agent -> worker -> agentd -> agent: the least a privilege-separated
 *   design of 3 processes per call can do).
 * - mcp: the noop through agent-tool mcp (an MCP client's tools/call on its stdin, the reply on
 *   its stdout) against the same call over the socket directly, from 1 agent, in one daemon.
 * Usage: bench_broker [CALLS [floor|broker|mcp]] (as root).
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
#include <sys/epoll.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "wire/broker_proto.h"
#include "kernel/cgroup.h"

#define AGENTS 16
#define EXEC_CALLS 1000
#define FLOOR_BUF 65536
/* Open loop: calls per second of each of the 16 agents. */
static const int open_rates[] = { 250, 500, 750 };

struct bench {
	char bin[PATH_MAX], dir[64], pins[PATH_MAX], cgroup[PATH_MAX], control[PATH_MAX];
	char tools[PATH_MAX], policy[PATH_MAX];
	pid_t agentd, floor[AGENTS + 1];
	int n_floor;
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

/* A fresh directory for one round, and the paths in it. */
static int dirs(struct bench *b)
{
	char path[PATH_MAX + 16], root[PATH_MAX - 64];
	static int round_no;
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	if (n < 0)
		return -1;
	path[n] = '\0';
	snprintf(b->bin, sizeof(b->bin), "%s", dirname(dirname(path)));
	snprintf(b->dir, sizeof(b->dir), "/tmp/agentd-bench-broker-%d-%d", getpid(), round_no++);
	snprintf(b->pins, sizeof(b->pins), "%s/pins", b->dir);
	snprintf(b->control, sizeof(b->control), "%s/run/control.sock", b->dir);
	snprintf(b->tools, sizeof(b->tools), "%s/tools.json", b->dir);
	snprintf(b->policy, sizeof(b->policy), "%s/policy.json", b->dir);
	if (cgroup2_mount(root, sizeof(root)))
		return -1;
	snprintf(b->cgroup, sizeof(b->cgroup), "%s/%s", root, b->dir + 5);
	return mkdir(b->dir, 0755);
}

static int start(struct bench *b, bool audit_log)
{
	char path[PATH_MAX + 16], state[128], audit[128], line[256];
	int p[2];
	FILE *f;

	if (dirs(b))
		return -1;
	snprintf(state, sizeof(state), "%s/state", b->dir);
	snprintf(audit, sizeof(audit), "%s/audit", b->dir);
	if (mkdir(b->pins, 0700) || mount("bpf", b->pins, "bpf", 0, NULL))
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
	while (b->n_floor > 0) {
		pid_t pid = b->floor[--b->n_floor];

		if (pid > 0 && !kill(pid, SIGKILL))
			waitpid(pid, NULL, 0);
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

/* In agent i's cgroup: agent-tool mcp on pipes, initialized, then n tools/call of the noop, one
 * at a time; latencies (µs) into lat. */
static int mcp_client(struct bench *b, int i, int n, float *lat)
{
	char prog[PATH_MAX + 16], sock[PATH_MAX + 64], line[4096];
	int in[2], out[2], k;
	FILE *w, *r;
	double t0;
	pid_t pid;

	snprintf(prog, sizeof(prog), "%s/agent-tool", b->bin);
	snprintf(sock, sizeof(sock), "%s/run/agents/b%d/tool.sock", b->dir, i);
	if (pipe(in) || pipe(out))
		return 2;
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]); /* its stdin ends when the bench closes it */
		setenv("AGENTD_TOOL_SOCKET", sock, 1);
		execl(prog, "agent-tool", "mcp", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	w = fdopen(in[1], "w");
	r = fdopen(out[0], "r");
	if (pid < 0 || !w || !r)
		return 2;
	fputs("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
	      "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":"
	      "{\"name\":\"bench\",\"version\":\"0\"}}}\n",
	      w);
	if (fflush(w) || !fgets(line, sizeof(line), r) || !strstr(line, "\"result\""))
		return 3;
	for (k = 0; k < n; k++) {
		t0 = now_us();
		fprintf(w,
			"{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":"
			"{\"name\":\"noop\",\"arguments\":{}}}\n",
			k + 1);
		if (fflush(w) || !fgets(line, sizeof(line), r) ||
		    !strstr(line, "\"isError\":false"))
			return 4;
		lat[k] = (float)(now_us() - t0);
	}
	fclose(w);
	fclose(r);
	return waitpid(pid, &k, 0) == pid && WIFEXITED(k) && !WEXITSTATUS(k) ? 0 : 5;
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

/* What the processes of a round used, user and system CPU time in µs. */
struct cpu {
	double clients, server, helpers;
};

/* A live process's CPU time (µs); 0 when it is gone. */
static double cpu_us(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut, st;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	/* After the comm: state, 5 ints, 5 counters, then utime and stime in clock ticks. */
	if (!p ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return 0;
	return (ut + st) * 1e6 / sysconf(_SC_CLK_TCK);
}

/* The clients (children reaped so far), agentd or the floor's server, the workers or middles. */
static void cpu_sample(const struct bench *b, struct cpu *c)
{
	char path[64], buf[4096], *p, *end;
	struct rusage ru;
	FILE *f;
	int i;

	getrusage(RUSAGE_CHILDREN, &ru);
	c->clients = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + ru.ru_utime.tv_usec +
		     ru.ru_stime.tv_usec;
	c->server = cpu_us(b->agentd > 0 ? b->agentd : b->floor[0]);
	c->helpers = 0;
	for (i = 1; b->agentd <= 0 && i < b->n_floor; i++)
		c->helpers += cpu_us(b->floor[i]);
	if (b->agentd <= 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", b->agentd, b->agentd);
	f = fopen(path, "r");
	p = f && fgets(buf, sizeof(buf), f) ? buf : NULL;
	for (; p && *p > ' '; p = end + 1)
		c->helpers += cpu_us((pid_t)strtol(p, &end, 10));
	if (f)
		fclose(f);
}

static void cpu_print(const struct bench *b, const struct cpu *t0, int calls)
{
	struct cpu t1;

	cpu_sample(b, &t1);
	printf("%-28s   CPU per call: clients %5.1f us, %s %5.1f us", "",
	       (t1.clients - t0->clients) / calls, b->agentd > 0 ? "agentd" : "server",
	       (t1.server - t0->server) / calls);
	if (b->agentd > 0 || b->n_floor > 1)
		printf(", %s %5.1f us", b->agentd > 0 ? "workers" : "middles",
		       (t1.helpers - t0->helpers) / calls);
	printf("\n");
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return x < y ? -1 : x > y;
}

/* agents clients at once, calls in all (tool "mcp": the noop through agent-tool mcp); prints
 * p50, p99, calls/s. */
static int measure(struct bench *b, const char *label, const char *tool, int agents, int calls)
{
	int per = calls / agents, i, status, bad = 0;
	float *lat = mmap(NULL, sizeof(float) * per * agents, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char cg[PATH_MAX + 16];
	pid_t pids[AGENTS];
	double t0 = now_us(), t;
	struct cpu cpu;

	if (lat == MAP_FAILED)
		return -1;
	cpu_sample(b, &cpu);
	for (i = 0; i < agents; i++) {
		int cgfd;

		snprintf(cg, sizeof(cg), "%s/b%d", b->cgroup, i);
		cgfd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		pids[i] = cgfd < 0 ? -1 : cgroup_fork_into(cgfd);
		if (pids[i] == 0 && !strcmp(tool, "mcp"))
			_exit(mcp_client(b, i, per, lat + (size_t)i * per));
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
	cpu_print(b, &cpu, per * agents);
	fflush(stdout);
	munmap(lat, sizeof(float) * per * agents);
	return 0;
}

/* 16 agents at rate calls/s each, calls in all; prints p50, p99, p99.9 and the rate achieved. */
static int measure_open(struct bench *b, const char *label, int rate, int calls)
{
	int per = calls / AGENTS, i, status, bad = 0;
	size_t total = (size_t)per * AGENTS;
	float *lat = mmap(NULL, sizeof(float) * total, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char cg[PATH_MAX + 16];
	pid_t pids[AGENTS];
	double start = now_us() + 200000, t; /* every client connected by then */
	struct cpu cpu;

	if (lat == MAP_FAILED)
		return -1;
	cpu_sample(b, &cpu);
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
	printf("%-28s open %2d x %3d/s %7zu calls  p50 %7.1f us  p99 %7.1f us  p99.9 %7.1f us  "
	       "%8.0f calls/s (asked %d)\n",
	       label, AGENTS, rate, total, lat[total / 2], lat[total * 99 / 100],
	       lat[total * 999 / 1000], total / (t / 1e6), AGENTS * rate);
	cpu_print(b, &cpu, total);
	fflush(stdout);
	munmap(lat, sizeof(float) * total);
	return 0;
}

/* The noop from 1 agent and from 16 (closed loop), then from 16 in open loop at each rate. */
static int rows(struct bench *b, const char *label, int calls)
{
	int err = measure(b, label, "noop", 1, calls), i;

	if (!err)
		err = measure(b, label, "noop", AGENTS, calls);
	for (i = 0; !err && i < (int)(sizeof(open_rates) / sizeof(open_rates[0])); i++)
		err = measure_open(b, label, open_rates[i], calls);
	return err;
}

/* One daemon: 16 agents, the noop's rows, /bin/true from 1 (with the log only). */
static int one_daemon(int calls, bool audit_log)
{
	struct bench b = { 0 };
	char name[16];
	int i, err;

	err = start(&b, audit_log);
	if (err)
		fprintf(stderr, "bench_broker: agentd did not start\n");
	for (i = 0; !err && i < AGENTS; i++) {
		snprintf(name, sizeof(name), "b%d", i);
		err = agentctl(&b, "add", name);
	}
	if (!err)
		err = rows(&b, audit_log ? "noop, audit log" : "noop, no audit log", calls);
	if (!err && audit_log)
		err = measure(&b, "/bin/true, audit log", "true", 1,
			      calls < EXEC_CALLS ? calls : EXEC_CALLS);
	for (i = 0; i < AGENTS; i++) {
		snprintf(name, sizeof(name), "b%d", i);
		agentctl(&b, "rm", name);
	}
	stop(&b);
	return err;
}

/* ---- the floor: servers that do no work ---- */

/* One agent's connection at a floor server and the bytes of it not answered yet. */
struct floor_conn {
	int fd;
	size_t len;
	char buf[FLOOR_BUF];
};

/* Answers each whole frame in c->buf with the bytes agentd answers the noop with. */
static int floor_answer(struct floor_conn *c)
{
	char frame[160];
	size_t off = 0, plen;
	const char *id;
	int r, n;

	while ((r = broker_frame_check(c->buf + off, c->len - off, FLOOR_BUF - 4, &plen)) == 1) {
		id = memmem(c->buf + off + 4, plen, "\"id\":", 5);
		n = snprintf(frame + 4, sizeof(frame) - 4,
			     "{\"exit\":0,\"id\":%ld,\"ok\":true,\"redacted\":0,\"stderr\":\"\","
			     "\"stdout\":\"\",\"truncated\":false}",
			     id ? strtol(id + 5, NULL, 10) : -1);
		frame[0] = frame[1] = 0, frame[2] = (char)(n >> 8), frame[3] = (char)n;
		if (send(c->fd, frame, n + 4, MSG_NOSIGNAL) != n + 4)
			return -1;
		off += 4 + plen;
	}
	memmove(c->buf, c->buf + off, c->len - off);
	c->len -= off;
	return r;
}

/* 1 hop: one process answers every agent's connection (epoll, every ready fd per wakeup). */
static void floor_echo(const int *lfd)
{
	static struct floor_conn c[AGENTS];
	struct epoll_event ev[2 * AGENTS];
	int ep = epoll_create1(EPOLL_CLOEXEC), n, k, i;
	ssize_t got;

	for (i = 0; i < AGENTS; i++) {
		ev[0] = (struct epoll_event){ .events = EPOLLIN, .data.u32 = AGENTS + i };
		c[i].fd = -1;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, lfd[i], &ev[0]))
			_exit(1);
	}
	while ((n = epoll_wait(ep, ev, 2 * AGENTS, -1)) > 0)
		for (k = 0; k < n; k++) {
			i = ev[k].data.u32 % AGENTS;
			if (ev[k].data.u32 >= AGENTS) {
				if (c[i].fd >= 0)
					close(c[i].fd);
				c[i].fd = accept4(lfd[i], NULL, NULL, SOCK_CLOEXEC);
				c[i].len = 0;
				ev[k] = (struct epoll_event){ .events = EPOLLIN, .data.u32 = i };
				if (c[i].fd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, c[i].fd, &ev[k]))
					_exit(1);
				continue;
			}
			got = recv(c[i].fd, c[i].buf + c[i].len, FLOOR_BUF - c[i].len, 0);
			if (got <= 0) {
				close(c[i].fd);
				c[i].fd = -1;
				continue;
			}
			c[i].len += got;
			if (floor_answer(&c[i]) < 0)
				_exit(1);
		}
	_exit(1);
}

/* 3 processes: agent i's middle accepts, hands the connection over, then forwards its bytes. */
static void floor_middle(int lfd, int chan)
{
	char buf[FLOOR_BUF], cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = "c", .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	ssize_t n;
	int fd;

	*cm = (struct cmsghdr){ .cmsg_len = CMSG_LEN(sizeof(int)),
				.cmsg_level = SOL_SOCKET,
				.cmsg_type = SCM_RIGHTS };
	while ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
		if (sendmsg(chan, &mh, MSG_NOSIGNAL) != 1)
			break;
		while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
			if (send(chan, buf, n, MSG_NOSIGNAL) != n)
				_exit(1);
		close(fd);
	}
	_exit(1);
}

/* 3 processes: the back end answers on its copy of each connection what the middles forward. */
static void floor_back(int (*chan)[2])
{
	static struct floor_conn c[AGENTS];
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct epoll_event ev[AGENTS];
	int ep = epoll_create1(EPOLL_CLOEXEC), n, k, i;
	struct cmsghdr *cm;
	struct msghdr mh;
	struct iovec iov;
	ssize_t got;

	for (i = 0; i < AGENTS; i++) {
		ev[0] = (struct epoll_event){ .events = EPOLLIN, .data.u32 = i };
		c[i].fd = -1;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, chan[i][0], &ev[0]))
			_exit(1);
	}
	while ((n = epoll_wait(ep, ev, AGENTS, -1)) > 0)
		for (k = 0; k < n; k++) {
			i = ev[k].data.u32;
			iov = (struct iovec){ c[i].buf + c[i].len, FLOOR_BUF - c[i].len };
			mh = (struct msghdr){ .msg_iov = &iov,
					      .msg_iovlen = 1,
					      .msg_control = cbuf,
					      .msg_controllen = sizeof(cbuf) };
			got = recvmsg(chan[i][0], &mh, MSG_CMSG_CLOEXEC);
			if (got <= 0)
				_exit(1);
			cm = CMSG_FIRSTHDR(&mh);
			if (cm && cm->cmsg_type == SCM_RIGHTS) { /* a new connection of agent i */
				if (c[i].fd >= 0)
					close(c[i].fd);
				memcpy(&c[i].fd, CMSG_DATA(cm), sizeof(int));
				c[i].len = 0;
				continue;
			}
			c[i].len += got;
			if (floor_answer(&c[i]) < 0)
				_exit(1);
		}
	_exit(1);
}

/* Forks a floor server, killed by stop(): the pid (0 in the child), or -1. */
static pid_t floor_fork(struct bench *b)
{
	pid_t pid = fork();

	if (pid > 0)
		b->floor[b->n_floor++] = pid;
	return pid;
}

/* Runs the floor's servers where agentd would listen, and makes the agents' cgroups. */
static int floor_start(struct bench *b, bool relay)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int lfd[AGENTS], chan[AGENTS][2], i, err = 0;
	char path[PATH_MAX + 16];

	if (dirs(b) || mkdir(b->cgroup, 0755))
		return -1;
	snprintf(path, sizeof(path), "%s/run", b->dir);
	if (mkdir(path, 0755) || (strcat(path, "/agents"), mkdir(path, 0755)))
		return -1;
	for (i = 0; i < AGENTS; i++) {
		snprintf(path, sizeof(path), "%s/b%d", b->cgroup, i);
		err = err ?: mkdir(path, 0755);
		snprintf(path, sizeof(path), "%s/run/agents/b%d", b->dir, i);
		err = err ?: mkdir(path, 0755);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/tool.sock", path);
		lfd[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (lfd[i] < 0 || bind(lfd[i], (struct sockaddr *)&sa, sizeof(sa)) ||
		    listen(lfd[i], 16))
			err = -1;
		chan[i][0] = chan[i][1] = -1;
		if (relay && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan[i]))
			err = -1;
	}
	if (!err && (err = floor_fork(b)) == 0)
		relay ? floor_back(chan) : floor_echo(lfd);
	for (i = 0; err > 0 && relay && i < AGENTS; i++)
		if ((err = floor_fork(b)) == 0)
			floor_middle(lfd[i], chan[i][1]);
	for (i = 0; i < AGENTS; i++) {
		close(lfd[i]);
		close(chan[i][0]);
		close(chan[i][1]);
	}
	return err < 0 ? -1 : 0;
}

/* The same rows as agentd's noop rows, against the floor's servers. */
static int floor_round(int calls, bool relay)
{
	struct bench b = { 0 };
	int err = floor_start(&b, relay);

	if (err)
		fprintf(stderr, "bench_broker: the floor's servers did not start\n");
	if (!err)
		err = rows(&b, relay ? "floor: relay, 3 procs" : "floor: echo, 1 hop", calls);
	stop(&b);
	return err;
}

/* The noop through agent-tool mcp and directly, from one agent of one daemon. */
static int mcp_round(int calls)
{
	struct bench b = { 0 };
	int err = start(&b, true);

	if (err)
		fprintf(stderr, "bench_broker: agentd did not start\n");
	err = err ?: agentctl(&b, "add", "b0");
	err = err ?: measure(&b, "noop, socket, audit log", "noop", 1, calls);
	err = err ?: measure(&b, "noop, agent-tool mcp, audit", "mcp", 1, calls);
	agentctl(&b, "rm", "b0");
	stop(&b);
	return err;
}

int main(int argc, char **argv)
{
	int calls = argc > 1 ? atoi(argv[1]) : 100000, err = 0;

	if (geteuid()) {
		fprintf(stderr, "bench_broker: needs root (it runs agentd)\n");
		return 2;
	}
	if (calls < AGENTS) {
		fprintf(stderr, "usage: bench_broker [CALLS >= %d]\n", AGENTS);
		return 2;
	}
	if (argc > 2 && strcmp(argv[2], "floor") && strcmp(argv[2], "broker") &&
	    strcmp(argv[2], "mcp")) {
		fprintf(stderr, "usage: bench_broker [CALLS [floor|broker|mcp]]\n");
		return 2;
	}
	if (argc > 2 && !strcmp(argv[2], "mcp"))
		return mcp_round(calls) ? 1 : 0;
	if (argc < 3 || !strcmp(argv[2], "floor"))
		err = floor_round(calls, false) || floor_round(calls, true);
	if (!err && (argc < 3 || !strcmp(argv[2], "broker")))
		err = one_daemon(calls, true) || one_daemon(calls, false);
	return err ? 1 : 0;
}
