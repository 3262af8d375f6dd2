// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "harness.h"

#define EXIT_SKIP 77
/* A test's deadline, in seconds: -D changes it (the VM tier's guests run under software
 * emulation, where loading agentd's programs alone takes 5 to 12 s). */
#define DEADLINE_S 60
#define MAX_DEFER 32
#define MAX_OPTS 16

static struct test *tests, **tests_tail = &tests;
static int result_fd = -1;
static struct {
	void (*fn)(void *);
	void *arg;
} defers[MAX_DEFER];
static int ndefers;
static const char *opts[MAX_OPTS];
static int nopts;
static char bin_dir[PATH_MAX];
static bool durations;
static unsigned int deadline_s = DEADLINE_S;
static long long started_ms;

void harness_register(struct test *t)
{
	*tests_tail = t;
	tests_tail = &t->next;
}

void test_defer(void (*fn)(void *), void *arg)
{
	if (ndefers == MAX_DEFER)
		FAIL("more than %d deferred cleanups", MAX_DEFER);
	defers[ndefers].fn = fn;
	defers[ndefers].arg = arg;
	ndefers++;
}

static void run_defers(void)
{
	while (ndefers > 0) {
		ndefers--;
		defers[ndefers].fn(defers[ndefers].arg);
	}
}

static __attribute__((noreturn)) void test_end(int status, const char *msg)
{
	if (write(result_fd, msg, strlen(msg)) < 0)
		perror("harness: result pipe");
	run_defers();
	_exit(status);
}

void test_fail(const char *file, int line, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	int n;

	n = snprintf(msg, sizeof(msg), "%s:%d: ", file, line);
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - n, fmt, ap);
	va_end(ap);
	test_end(1, msg);
}

void test_skip(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	test_end(EXIT_SKIP, msg);
}

bool test_option(const char *name)
{
	int i;

	for (i = 0; i < nopts; i++)
		if (!strcmp(opts[i], name))
			return true;
	return false;
}

const char *test_bin_dir(void)
{
	return bin_dir;
}

/* A test past its deadline fails like any other, its cleanups run (a hung test must not leave
 * its cgroups, pins and daemons behind). */
static void on_deadline(int sig)
{
	char msg[64];

	(void)sig;
	snprintf(msg, sizeof(msg), "deadline passed (%u s)", deadline_s);
	test_end(1, msg);
}

static void run_child(const struct test *t, int fd)
{
	result_fd = fd;
	signal(SIGALRM, on_deadline);
	/* A group of its own: whatever the test leaves running is killed with it (run_test). */
	setpgid(0, 0);
	alarm(deadline_s);
	t->fn();
	test_end(0, "");
}

/*
 * The test's message, read until the pipe closes or the test exits (a forked process that
 * outlives it may hold the pipe: the test's exit ends the wait all the same).
 */
static size_t read_verdict(int fd, pid_t pid, char *msg, size_t sz)
{
	int pidfd = syscall(SYS_pidfd_open, pid, 0);
	struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = pidfd, .events = POLLIN } };
	size_t len = 0;
	ssize_t n;

	while (len < sz - 1) {
		if (poll(p, pidfd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents) {
			n = read(fd, msg + len, sz - 1 - len);
			if (n <= 0)
				break;
			len += n;
			continue;
		}
		if (p[1].revents) {
			/* Exited: take what it wrote, without waiting for other holders. */
			fcntl(fd, F_SETFL, O_NONBLOCK);
			while (len < sz - 1 && (n = read(fd, msg + len, sz - 1 - len)) > 0)
				len += n;
			break;
		}
	}
	msg[len] = '\0';
	if (pidfd >= 0)
		close(pidfd);
	return len;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* With -d, a line "TIME <prefix><name> <seconds>" before each verdict: where a tier's time goes
 * (the VM tier runs under a deadline of its own, selftests/vm/vm.sh). */
static void print_duration(const struct test *t, const char *prefix)
{
	long long ms = now_ms() - started_ms;

	if (!durations)
		return;
	printf("TIME %s%s %lld.%03lld\n", prefix, t->name, ms / 1000, ms % 1000);
}

/* Runs one test in a child; returns 0 passed, 1 failed, 2 skipped. */
static int run_test(const struct test *t, const char *prefix)
{
	char msg[1024] = "";
	int fds[2], status;
	size_t len;
	pid_t pid;

	started_ms = now_ms();

	/* Close-on-exec: a program the test starts must not hold the verdict pipe open. */
	if (pipe2(fds, O_CLOEXEC)) {
		printf("FAIL %s%s: pipe: %s\n", prefix, t->name, strerror(errno));
		return 1;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("FAIL %s%s: fork: %s\n", prefix, t->name, strerror(errno));
		return 1;
	}
	if (pid == 0) {
		close(fds[0]);
		run_child(t, fds[1]);
	}
	close(fds[1]);
	len = read_verdict(fds[0], pid, msg, sizeof(msg));
	close(fds[0]);
	waitpid(pid, &status, 0);
	/* Processes the test forked and left behind (a hung client, say) go with it. */
	kill(-pid, SIGKILL);
	print_duration(t, prefix);

	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		printf("PASS %s%s\n", prefix, t->name);
		return 0;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_SKIP) {
		printf("SKIP %s%s: %s\n", prefix, t->name, msg);
		return 2;
	}
	if (WIFSIGNALED(status))
		printf("FAIL %s%s: %s%s(killed by signal %d%s)\n", prefix, t->name, msg,
		       len ? " " : "", WTERMSIG(status),
		       WTERMSIG(status) == SIGALRM ? ": deadline passed" : "");
	else
		printf("FAIL %s%s: %s\n", prefix, t->name, len ? msg : "exited without a verdict");
	return 1;
}

static __attribute__((noreturn)) void usage(const char *argv0);

static unsigned int parse_deadline(const char *arg, const char *argv0)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || v == 0 || v > 3600) {
		fprintf(stderr, "%s: -D %s: a deadline is 1 to 3600 seconds\n", argv0, arg);
		usage(argv0);
	}
	return v;
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [-l] [-d] [-D SECONDS] [-p PREFIX] [-o OPTION]... [-t TEST]...\n"
		"  -l  list the tests (those -t names), run none\n"
		"  -d  print each test's duration: TIME <prefix><name> <seconds>\n"
		"  -D  each test's deadline in seconds (default %d)\n",
		argv0, DEADLINE_S);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *prefix = "", *only[MAX_OPTS];
	int nonly = 0, failed = 0, c, i;
	bool list = false;
	const struct test *t;
	char *slash;

	while ((c = getopt(argc, argv, "ldD:p:o:t:")) != -1) {
		if (c == 'l')
			list = true;
		else if (c == 'd')
			durations = true;
		else if (c == 'D')
			deadline_s = parse_deadline(optarg, argv[0]);
		else if (c == 'p')
			prefix = optarg;
		else if (c == 'o' && nopts < MAX_OPTS)
			opts[nopts++] = optarg;
		else if (c == 't' && nonly < MAX_OPTS)
			only[nonly++] = optarg;
		else
			usage(argv[0]);
	}
	if (!realpath("/proc/self/exe", bin_dir) && !realpath(argv[0], bin_dir))
		strcpy(bin_dir, ".");
	/* build/selftests/test_x -> build, where agentd and agentctl are. */
	for (i = 0; i < 2; i++) {
		slash = strrchr(bin_dir, '/');
		if (slash)
			*slash = '\0';
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	for (t = tests; t; t = t->next) {
		bool selected = !nonly;

		for (i = 0; i < nonly; i++)
			selected |= !strcmp(only[i], t->name);
		if (selected && list)
			printf("%s\n", t->name);
		else if (selected)
			failed |= run_test(t, prefix) == 1;
	}
	/* A -t that names no test is a mistake (a renamed test), not an empty success. */
	for (i = 0; i < nonly; i++) {
		for (t = tests; t && strcmp(only[i], t->name); t = t->next)
			;
		if (!t) {
			printf("FAIL %s%s: no such test\n", prefix, only[i]);
			failed = 1;
		}
	}
	return failed;
}
