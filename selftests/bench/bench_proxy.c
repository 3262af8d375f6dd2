// SPDX-License-Identifier: GPL-2.0
/*
 * The egress proxy's cost, natively: the real agentd (--allow-partial) with one agent, in a
 * network and mount namespace this benchmark creates (lo up, a TEST-NET-2 address on it, its
 * own /etc/hosts), against a server of its own in that namespace. Nothing leaves the namespace.
 * Measured, direct against through the agent's proxy listener (CONNECT):
 *   - connect latency: from socket() to the first byte echoed back through the connection
 *     (direct: connect + 1-byte round trip; proxy: connect + CONNECT + 200 + the same round
 *     trip), N rounds interleaved, p50 and p99;
 *   - throughput: MiB/s of one connection, origin to client (a download of SIZE MiB).
 * The client runs outside the agent's cgroup, so the kernel's cgroup hooks cost neither side.
 * Usage: bench_proxy [ROUNDS] [MIB]   (default 2000 rounds, 512 MiB)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>
#include "kernel/cgroup.h"

#define SERVER_ADDR "198.51.100.1" /* TEST-NET-2: not structurally denied */
#define ECHO_PORT 7
#define BULK_PORT 9
#define CHUNK 65536

static char bin[PATH_MAX], dir[64], pins[PATH_MAX], cg[PATH_MAX];
static pid_t agentd_pid;
static size_t bulk_bytes;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_proxy: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void netns(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
	char hosts[128];
	int fd;

	if (unshare(CLONE_NEWNET | CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		die("unshare");
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr))
		die("lo");
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr))
		die("lo up");
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo:1");
	sin->sin_family = AF_INET;
	inet_pton(AF_INET, SERVER_ADDR, &sin->sin_addr);
	if (ioctl(fd, SIOCSIFADDR, &ifr))
		die(SERVER_ADDR);
	close(fd);
	snprintf(hosts, sizeof(hosts), "%s/hosts", dir);
	fd = open(hosts, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || dprintf(fd, "%s bench.test\n", SERVER_ADDR) < 0 || close(fd) ||
	    mount(hosts, "/etc/hosts", NULL, MS_BIND, NULL))
		die("/etc/hosts");
}

static int listen_at(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	inet_pton(AF_INET, SERVER_ADDR, &sa.sin_addr);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 256))
		die("server listen");
	return fd;
}

/* Echo: answers each byte; bulk: sends bulk_bytes, then closes. A thread per connection. */
static void *serve_one(void *arg)
{
	int fd = (int)(long)arg & 0xffff, bulk = (long)arg >> 16;
	static char zeros[CHUNK];
	char b[64];
	size_t left = bulk_bytes;
	ssize_t n;

	if (bulk) {
		while (left && (n = send(fd, zeros, left < CHUNK ? left : CHUNK, MSG_NOSIGNAL)) > 0)
			left -= n;
	} else {
		while ((n = recv(fd, b, sizeof(b), 0)) > 0)
			if (send(fd, b, n, MSG_NOSIGNAL) != n)
				break;
	}
	close(fd);
	return NULL;
}

static void *server(void *arg)
{
	struct pollfd p[2] = { { .fd = listen_at(ECHO_PORT), .events = POLLIN },
			       { .fd = listen_at(BULK_PORT), .events = POLLIN } };
	pthread_attr_t attr;
	pthread_t t;
	int i, fd;

	(void)arg;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (;;) {
		if (poll(p, 2, -1) < 0)
			continue;
		for (i = 0; i < 2; i++) {
			if (!p[i].revents)
				continue;
			fd = accept4(p[i].fd, NULL, NULL, SOCK_CLOEXEC);
			if (fd >= 0 && fd < 0xffff)
				pthread_create(&t, &attr, serve_one, (void *)(long)(fd | i << 16));
		}
	}
	return NULL;
}

/* Runs build/<prog> with args; returns its exit status; its stdout in out (may be NULL). */
static int run(char *out, size_t outsz, char *const argv[])
{
	char exe[PATH_MAX + 16];
	int fds[2], status;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	snprintf(exe, sizeof(exe), "%s/%s", bin, argv[0]);
	if (pipe2(fds, O_CLOEXEC))
		die("pipe");
	pid = fork();
	if (!pid) {
		dup2(fds[1], 1);
		execv(exe, argv);
		_exit(127);
	}
	close(fds[1]);
	while (out && len + 1 < outsz && (n = read(fds[0], out + len, outsz - 1 - len)) > 0)
		len += n;
	if (out)
		out[len] = '\0';
	close(fds[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int start_agentd(void)
{
	char ctl[128], state[128], audit[128], policy[128], out[8192], *p;
	char *argv[] = { "agentd", "--control", ctl,  "--state-dir", state, "--audit-dir",
			 audit,	   "--pin-dir", pins, "--cgroup",    cg,    "--allow-partial",
			 NULL };
	char *add[] = { "agentctl", "agent", "add", "bench", "--policy", policy, NULL };
	char *info[] = { "agentctl", "agent", "info", "bench", "--json", NULL };
	int fds[2], fd;
	FILE *f;

	snprintf(ctl, sizeof(ctl), "%s/control.sock", dir);
	snprintf(state, sizeof(state), "%s/state", dir);
	snprintf(audit, sizeof(audit), "%s/audit", dir);
	snprintf(policy, sizeof(policy), "%s/policy.json", dir);
	setenv("AGENTD_CONTROL", ctl, 1);
	fd = open(policy, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || dprintf(fd, "{\"name\": \"bench\", \"network\": {\"sockets\": [\"inet\"], "
				  "\"proxy\": {\"allow_hosts\": [\"bench.test\"]}}}\n") < 0)
		die("policy");
	close(fd);
	if (pipe2(fds, O_CLOEXEC))
		die("pipe");
	agentd_pid = fork();
	if (!agentd_pid) {
		char exe[PATH_MAX + 16];

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		snprintf(exe, sizeof(exe), "%s/agentd", bin);
		dup2(fds[1], 1);
		execv(exe, argv);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	while (f && fgets(out, sizeof(out), f) && !strstr(out, "agentd: ready"))
		;
	if (!f || !strstr(out, "agentd: ready"))
		die("agentd did not start");
	if (run(out, sizeof(out), add) || run(out, sizeof(out), info))
		die("agentctl agent add");
	p = strstr(out, "\"proxy\": \"http://127.0.0.1:");
	if (!p)
		die("no proxy in agent info");
	return atoi(p + strlen("\"proxy\": \"http://127.0.0.1:"));
}

static void stop_agentd(void)
{
	char *rm[] = { "agentctl", "agent", "rm", "bench", NULL };
	char *teardown[] = { "agentd", "--teardown", "--pin-dir", pins, NULL };

	run(NULL, 0, rm);
	kill(agentd_pid, SIGTERM);
	waitpid(agentd_pid, NULL, 0);
	run(NULL, 0, teardown);
	rmdir(cg);
}

/* The scratch directory; the audit log is append-only (FS_APPEND_FL) until lifted. */
static void cleanup(void)
{
	char path[PATH_MAX], cmd[PATH_MAX + 16];
	int fd, flags;

	snprintf(path, sizeof(path), "%s/audit/audit.log", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && !ioctl(fd, FS_IOC_GETFLAGS, &flags)) {
		flags &= ~FS_APPEND_FL;
		ioctl(fd, FS_IOC_SETFLAGS, &flags);
	}
	if (fd >= 0)
		close(fd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "bench_proxy: removing %s failed\n", dir);
}

static int dial(const char *addr, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	inet_pton(AF_INET, addr, &sa.sin_addr);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		die("connect");
	return fd;
}

/* Through the proxy: CONNECT bench.test:port, up to the end of the 200 reply. */
static int dial_proxy(int proxy, int port)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	int fd = dial("127.0.0.1", proxy);
	char req[128], buf[256];
	size_t len = 0;
	ssize_t n;

	n = snprintf(req, sizeof(req),
		     "CONNECT bench.test:%d HTTP/1.1\r\nHost: bench.test:%d\r\n\r\n", port, port);
	if (send(fd, req, n, MSG_NOSIGNAL) != n)
		die("send CONNECT");
	/* The reply is exactly this; reading no further keeps the tunnel's bytes for later. */
	while (len < sizeof(ok) - 1 && (n = recv(fd, buf + len, sizeof(ok) - 1 - len, 0)) > 0)
		len += n;
	if (len != sizeof(ok) - 1 || memcmp(buf, ok, len))
		die("CONNECT refused");
	return fd;
}

static double one_connect(int proxy)
{
	double t0 = now_us();
	int fd = proxy ? dial_proxy(proxy, ECHO_PORT) : dial(SERVER_ADDR, ECHO_PORT);
	char c = 'x';

	if (send(fd, &c, 1, MSG_NOSIGNAL) != 1 || recv(fd, &c, 1, 0) != 1)
		die("echo");
	t0 = now_us() - t0;
	close(fd);
	return t0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p)
{
	return v[(int)(p * (n - 1))];
}

static double throughput(int proxy)
{
	int fd = proxy ? dial_proxy(proxy, BULK_PORT) : dial(SERVER_ADDR, BULK_PORT);
	static char buf[CHUNK];
	size_t got = 0;
	double t0 = now_us();
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
		got += n;
	t0 = now_us() - t0;
	close(fd);
	if (got != bulk_bytes)
		die("short download");
	return got / (1024.0 * 1024.0) / (t0 / 1e6);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 2000, mib = argc > 2 ? atoi(argv[2]) : 512, i, port;
	double *lat[2], mbs[2][3];
	char root[PATH_MAX - 64], *slash;
	pthread_t t;

	if (rounds < 10 || mib < 1)
		return 2;
	bulk_bytes = (size_t)mib << 20;
	if (!realpath("/proc/self/exe", bin))
		die("/proc/self/exe");
	for (i = 0; i < 2 && (slash = strrchr(bin, '/')); i++)
		*slash = '\0';
	snprintf(dir, sizeof(dir), "/tmp/agentd-bench-proxy-%d", getpid());
	snprintf(pins, sizeof(pins), "/sys/fs/bpf/agentd-bench-proxy-%d", getpid());
	if (cgroup2_mount(root, sizeof(root)))
		die("cgroup2");
	snprintf(cg, sizeof(cg), "%s/agentd-bench-proxy-%d", root, getpid());
	if (mkdir(dir, 0700))
		die(dir);
	netns();
	pthread_create(&t, NULL, server, NULL);
	port = start_agentd();
	lat[0] = calloc(rounds, sizeof(double));
	lat[1] = calloc(rounds, sizeof(double));
	/* Warm up, then the two conditions interleaved round by round. */
	for (i = 0; i < 50; i++)
		one_connect(i % 2 ? port : 0);
	for (i = 0; i < rounds; i++) {
		if (i % 2) {
			lat[1][i] = one_connect(port);
			lat[0][i] = one_connect(0);
		} else {
			lat[0][i] = one_connect(0);
			lat[1][i] = one_connect(port);
		}
	}
	for (i = 0; i < 3; i++) {
		mbs[0][i] = throughput(0);
		mbs[1][i] = throughput(port);
	}
	stop_agentd();
	cleanup();
	qsort(lat[0], rounds, sizeof(double), cmp);
	qsort(lat[1], rounds, sizeof(double), cmp);
	qsort(mbs[0], 3, sizeof(double), cmp);
	qsort(mbs[1], 3, sizeof(double), cmp);
	printf("connect to first echoed byte, %d rounds each (us): direct p50 %.1f p99 %.1f; "
	       "through the proxy p50 %.1f p99 %.1f; added p50 %.1f p99 %.1f\n",
	       rounds, pct(lat[0], rounds, 0.5), pct(lat[0], rounds, 0.99),
	       pct(lat[1], rounds, 0.5), pct(lat[1], rounds, 0.99),
	       pct(lat[1], rounds, 0.5) - pct(lat[0], rounds, 0.5),
	       pct(lat[1], rounds, 0.99) - pct(lat[0], rounds, 0.99));
	printf("download of %d MiB over one connection, median of 3 (MiB/s): direct %.0f, through "
	       "CONNECT %.0f (%.0f%%)\n",
	       mib, mbs[0][1], mbs[1][1], 100.0 * mbs[1][1] / mbs[0][1]);
	return 0;
}
