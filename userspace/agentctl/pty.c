// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's pseudo-terminal (pty.h). The slave is opened here, by agentctl, before the agent
 * exists: the agent's file rules need not name /dev/pts. The child makes it its controlling
 * terminal in its new session, so /dev/tty in the agent is its own terminal.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "pty.h"

/* For the fatal-signal handler: the terminal to give back its modes. */
static volatile sig_atomic_t raw_fd = -1;
static struct termios raw_saved;
static volatile sig_atomic_t got_chld, got_winch;

/* The signals that would end agentctl with the terminal raw (SIGINT, SIGTERM, SIGHUP, SIGQUIT
 * are forwarded to the agent by run.c and end nothing here; SIGKILL cannot be caught). */
static const int fatal[] = { SIGALRM, SIGUSR1, SIGUSR2, SIGPIPE, SIGABRT,   SIGSEGV, SIGBUS,
			     SIGFPE,  SIGILL,  SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF };

static void restore_and_die(int sig)
{
	if (raw_fd >= 0)
		tcsetattr(raw_fd, TCSADRAIN, &raw_saved);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_signal(int sig)
{
	if (sig == SIGCHLD)
		got_chld = 1;
	else
		got_winch = 1;
}

int pty_open(struct pty *t)
{
	struct winsize ws;
	struct termios tio;
	char name[64];
	int fd, tty = -1;

	memset(t, 0, sizeof(*t));
	t->master = t->slave = t->in = t->out = -1;
	for (fd = 2; fd >= 0; fd--)
		if (isatty(fd)) {
			t->ttys |= 1U << fd;
			tty = fd;
		}
	if (!t->ttys)
		return 0;
	t->in = (t->ttys & 1) ? 0 : -1;
	t->out = (t->ttys & 2) ? 1 : (t->ttys & 4) ? 2 : 0;
	t->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (t->master < 0 || grantpt(t->master) || unlockpt(t->master) ||
	    ptsname_r(t->master, name, sizeof(name)))
		return -errno;
	t->slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (t->slave < 0)
		return -errno;
	/* The operator's modes (erase, interrupt characters) and size, as the agent's start. */
	if (!tcgetattr(tty, &tio))
		tcsetattr(t->slave, TCSANOW, &tio);
	if (!ioctl(tty, TIOCGWINSZ, &ws))
		ioctl(t->slave, TIOCSWINSZ, &ws);
	return 0;
}

int pty_child(const struct pty *t)
{
	int fd;

	if (t->slave < 0)
		return 0;
	if (ioctl(t->slave, TIOCSCTTY, 0))
		return -errno;
	for (fd = 0; fd <= 2; fd++)
		if ((t->ttys & (1U << fd)) && dup2(t->slave, fd) < 0)
			return -errno;
	return 0;
}

void pty_block(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGWINCH);
	sigprocmask(SIG_BLOCK, &set, old);
}

static void raw_on(struct pty *t)
{
	struct sigaction sa = { .sa_handler = restore_and_die };
	struct termios tio;
	size_t i;

	if (t->in < 0 || tcgetattr(t->in, &t->saved))
		return;
	raw_saved = t->saved;
	raw_fd = t->in;
	for (i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		sigaction(fatal[i], &sa, NULL);
	tio = t->saved;
	cfmakeraw(&tio);
	t->raw = !tcsetattr(t->in, TCSADRAIN, &tio);
}

static void raw_off(struct pty *t)
{
	if (t->raw)
		tcsetattr(raw_fd, TCSADRAIN, &t->saved);
	t->raw = false;
	raw_fd = -1;
}

static void copy_winsize(const struct pty *t)
{
	struct winsize ws;

	if (!ioctl(t->in >= 0 ? t->in : t->out, TIOCGWINSZ, &ws))
		ioctl(t->master, TIOCSWINSZ, &ws);
}

/* All of buf to the operator's terminal; what it refuses (gone, read-only) is dropped. */
static void put_out(const struct pty *t, const char *buf, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(t->out, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		buf += w;
		n -= w;
	}
}

/* What the agent wrote, relayed; false at the end (EIO: no slave open any more). */
static bool from_agent(const struct pty *t)
{
	char buf[4096];
	ssize_t n = read(t->master, buf, sizeof(buf));

	if (n > 0)
		put_out(t, buf, n);
	return n > 0 || (n < 0 && (errno == EINTR || errno == EAGAIN));
}

/* One read of what is left, relayed; false when nothing is. */
static bool drain(const struct pty *t)
{
	char buf[4096];
	ssize_t n = read(t->master, buf, sizeof(buf));

	if (n > 0)
		put_out(t, buf, n);
	return n > 0 || (n < 0 && errno == EINTR);
}

/* State of one relay: input read from the operator and not yet taken by the pty. */
struct relay {
	char buf[4096];
	size_t len, off;
	bool master_open;
};

static void to_agent(struct pty *t, struct relay *r, short in_ev, short master_ev)
{
	ssize_t n;

	if (in_ev & (POLLIN | POLLHUP | POLLERR)) {
		n = read(t->in, r->buf, sizeof(r->buf));
		if (n > 0) {
			r->len = n;
			r->off = 0;
		} else if (n == 0 || errno != EINTR) {
			t->in = -1; /* the operator's terminal is gone: relay output only */
		}
	}
	if ((master_ev & POLLOUT) && r->off < r->len) {
		n = write(t->master, r->buf + r->off, r->len - r->off);
		if (n > 0)
			r->off += n;
	}
	if (r->off == r->len)
		r->len = r->off = 0;
}

static int relay_wait(struct pty *t, struct relay *r, const sigset_t *waitmask)
{
	struct pollfd p[2] = { { .fd = -1 }, { .fd = -1 } };

	if (t->in >= 0 && !r->len && r->master_open)
		p[0] = (struct pollfd){ .fd = t->in, .events = POLLIN };
	if (r->master_open)
		p[1] = (struct pollfd){ .fd = t->master,
					.events = POLLIN | (r->len ? POLLOUT : 0) };
	if (ppoll(p, 2, NULL, waitmask) < 0)
		return errno == EINTR ? 0 : -errno;
	if (p[1].revents & (POLLIN | POLLHUP | POLLERR))
		r->master_open = from_agent(t);
	if (r->master_open)
		to_agent(t, r, p[0].revents, p[1].revents);
	return 0;
}

int pty_relay(struct pty *t, bool (*exited)(void *), void *arg)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct relay r = { .master_open = true };
	sigset_t waitmask;
	int err = 0;

	sigprocmask(SIG_BLOCK, NULL, &waitmask);
	sigdelset(&waitmask, SIGCHLD);
	sigdelset(&waitmask, SIGWINCH);
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGWINCH, &sa, NULL);
	fcntl(t->master, F_SETFL, fcntl(t->master, F_GETFL) | O_NONBLOCK);
	/* A terminal that stays cooked still relays, line by line: not worth refusing the run. */
	raw_on(t);
	for (;;) {
		if (got_winch) {
			got_winch = 0;
			copy_winsize(t);
		}
		if (got_chld) {
			got_chld = 0;
			if (exited(arg))
				break;
		}
		if (err)
			break;
		err = relay_wait(t, &r, &waitmask);
	}
	/* What the agent wrote before it ended (a read waits for the pty's queue to be flushed). */
	while (r.master_open && drain(t))
		;
	raw_off(t);
	return err;
}

void pty_close(struct pty *t)
{
	if (t->master >= 0)
		close(t->master);
	if (t->slave >= 0)
		close(t->slave);
	t->master = t->slave = -1;
}
