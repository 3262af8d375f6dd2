// SPDX-License-Identifier: GPL-2.0
/*
 * Host tier: agentd as a systemd service (Type=notify), without systemd: the test is the
 * notification socket. READY=1 comes once the control socket answers, WATCHDOG=1 at half the
 * watchdog interval from the daemon's loop, RELOADING=1 then READY=1 around a SIGHUP reload,
 * STOPPING=1 at SIGTERM.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "kernel/cgroup.h"
#include "harness.h"
#include "testlib.h"
#include "wire/unixsock.h"

struct svc {
	char dir[256];
	char control[PATH_MAX];
	int notify;
	struct proc *agentd;
};

static void close_fd(void *fd)
{
	close((int)(long)fd);
}

/* The next datagram on the notification socket, waiting up to ms; "" when none came. */
static const char *next_state(struct svc *s, int ms, char *buf, size_t bufsz)
{
	struct pollfd p = { .fd = s->notify, .events = POLLIN };
	ssize_t n;

	buf[0] = '\0';
	if (poll(&p, 1, ms) != 1)
		return buf;
	n = recv(s->notify, buf, bufsz - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* Waits for a datagram containing want, skipping others (watchdog pings). */
static bool wait_state(struct svc *s, const char *want, int ms)
{
	char buf[512];
	int i;

	for (i = 0; i < 64; i++)
		if (strstr(next_state(s, ms, buf, sizeof(buf)), want))
			return true;
		else if (!buf[0])
			return false;
	return false;
}

static int control_answers(const char *path)
{
	int fd = unix_connect(path);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

static struct svc *start(const char *watchdog_usec)
{
	static struct svc s;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char root[PATH_MAX - 64], state[PATH_MAX], audit[PATH_MAX], pins[PATH_MAX],
		cgroup[PATH_MAX];

	ASSERT_EQ(cgroup2_mount(root, sizeof(root)), 0);
	test_tmpdir(s.dir, sizeof(s.dir), "svc");
	snprintf(state, sizeof(state), "%s/state", s.dir);
	snprintf(audit, sizeof(audit), "%s/audit", s.dir);
	snprintf(s.control, sizeof(s.control), "%s/control.sock", s.dir);
	snprintf(cgroup, sizeof(cgroup), "%s/agentd-test-%d", root, getpid());
	if (snprintf(a.sun_path, sizeof(a.sun_path), "%s/notify.sock", s.dir) >=
	    (int)sizeof(a.sun_path))
		FAIL("%s: too long for a socket address", s.dir);
	test_pin_dir(pins, sizeof(pins));
	test_cgroup_tree_at_end(cgroup);
	s.notify = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ASSERT(s.notify >= 0);
	test_defer(close_fd, (void *)(long)s.notify);
	ASSERT_OK(bind(s.notify, (struct sockaddr *)&a, sizeof(a)));
	setenv("NOTIFY_SOCKET", a.sun_path, 1);
	if (watchdog_usec)
		setenv("WATCHDOG_USEC", watchdog_usec, 1);
	char *argv[] = { "agentd", "--control", s.control, "--state-dir", state,  "--audit-dir",
			 audit,	   "--pin-dir", pins,	   "--cgroup",	  cgroup, "--allow-partial",
			 NULL };
	s.agentd = proc_start(argv);
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	return &s;
}

TEST(service_ready_after_the_control_socket_listens)
{
	struct svc *s = start(NULL);

	if (!wait_state(s, "READY=1", TEST_READY_MS))
		FAIL("agentd sent no READY=1: \"%s\"", s->agentd->buf);
	ASSERT_EQ(control_answers(s->control), 0);
}

TEST(service_reload_and_stop_are_notified)
{
	struct svc *s = start(NULL);

	if (!wait_state(s, "READY=1", TEST_READY_MS))
		FAIL("agentd sent no READY=1: \"%s\"", s->agentd->buf);
	ASSERT_OK(kill(s->agentd->pid, SIGHUP));
	if (!wait_state(s, "RELOADING=1", 10000))
		FAIL("no RELOADING=1 after SIGHUP");
	if (!wait_state(s, "READY=1", 10000))
		FAIL("no READY=1 after the reload");
	ASSERT_OK(kill(s->agentd->pid, SIGTERM));
	if (!wait_state(s, "STOPPING=1", 10000))
		FAIL("no STOPPING=1 at SIGTERM");
}

/* A 400 ms interval: pings every 200 ms, so five come well within the bound below (a bound on
 * failure, not a timed assertion: a stalled loop sends none). */
TEST(service_watchdog_pinged_from_the_loop)
{
	struct svc *s = start("400000");
	int i;

	if (!wait_state(s, "READY=1", TEST_READY_MS))
		FAIL("agentd sent no READY=1: \"%s\"", s->agentd->buf);
	for (i = 0; i < 5; i++)
		if (!wait_state(s, "WATCHDOG=1", 10000))
			FAIL("watchdog ping %d did not come", i + 1);
	/* A stopped loop pings no more. */
	ASSERT_OK(kill(s->agentd->pid, SIGSTOP));
	while (next_state(s, 100, (char[512]){ 0 }, 512)[0])
		;
	if (wait_state(s, "WATCHDOG=1", 1000))
		FAIL("a stopped agentd still pinged the watchdog");
	ASSERT_OK(kill(s->agentd->pid, SIGCONT));
}
