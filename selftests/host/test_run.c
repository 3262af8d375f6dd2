// SPDX-License-Identifier: GPL-2.0
/*
 * Host tier: what agentctl run gives the agent besides the enforcement layers, checked from inside
 * the agent (a Python probe started by agentctl run through a daemon with --allow-partial): no
 * capability but the policy's, the securebits locked, none of the operator's environment but
 * what is named, a session of its own and a pseudo-terminal of its own (never the operator's),
 * and IPC and UTS namespaces of its own. The capability limit with a granted capability and a
 * uid change is checked on sandbox_caps directly.
 */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#include <linux/capability.h>
#include "kernel/cgroup.h"
#include "harness.h"
#include "kernel/probe.h"
#include "sandbox/sandbox_caps.h"
#include "testlib.h"

struct env {
	char dir[200];
	char state[PATH_MAX];
	char control[PATH_MAX];
	char pins[PATH_MAX];
	char cgroup[PATH_MAX];
	char policy[PATH_MAX];
};

/* The userland to run python3, /proc to read, /dev/tty, and python3 alone to execute. */
static const char policy_json[] =
	"{\"name\": \"rn\",\n"
	" \"files\": [\n"
	"  {\"path\": \"/usr/lib\", \"rights\": [\"read\", \"exec\"]},\n"
	"  {\"path\": \"/lib64\", \"rights\": [\"read\", \"exec\"]},\n"
	"  {\"path\": \"/etc/ld.so.cache\", \"rights\": [\"read\"]},\n"
	"  {\"path\": \"/dev/null\", \"rights\": [\"read\", \"write\"]},\n"
	"  {\"path\": \"/dev/tty\", \"rights\": [\"read\", \"write\"]},\n"
	"  {\"path\": \"/usr/bin\", \"rights\": [\"read\"]},\n"
	"  {\"path\": \"/proc\", \"rights\": [\"read\"]}],\n"
	" \"exec\": {\"allow\": [\"/usr/bin/python3\"]},\n"
	" \"network\": {\"sockets\": [\"inet\", \"unix\"]},\n"
	" \"env\": [\"AGENTD_TEST_PASSED\", \"AGENTD_TEST_UNSET\"]}\n";

static void path_in(char *out, size_t outsz, const char *dir, const char *name)
{
	if ((size_t)snprintf(out, outsz, "%s/%s", dir, name) >= outsz)
		FAIL("path too long: %s/%s", dir, name);
}

static void start_agentd(struct env *e)
{
	const char *ready[] = { "agentd: ready", NULL };
	char *argv[] = { "agentd",  "--control",       e->control, "--state-dir",
			 e->state,  "--pin-dir",       e->pins,	   "--cgroup",
			 e->cgroup, "--allow-partial", NULL };
	struct proc *agentd = proc_start(argv);

	if (!proc_wait_line(agentd, TEST_READY_MS, ready))
		FAIL("agentd did not get ready: \"%s\"", agentd->buf);
}

/* agentd with agent "rn" added; AGENTD_CONTROL names its socket. */
static struct env *setup(void)
{
	static struct env e;
	char root[PATH_MAX - 64], out[4096];
	struct probe p;

	probe_kernel(&p);
	if (probe_bpf_lsm_ok(&p))
		SKIP("BPF LSM works here: the VM tier runs agents with it");
	if (access("/usr/bin/python3", X_OK))
		SKIP("needs /usr/bin/python3");
	ASSERT_EQ(cgroup2_mount(root, sizeof(root)), 0);
	test_tmpdir(e.dir, sizeof(e.dir), "run");
	path_in(e.state, sizeof(e.state), e.dir, "state");
	path_in(e.control, sizeof(e.control), e.dir, "control.sock");
	path_in(e.policy, sizeof(e.policy), e.dir, "policy.json");
	snprintf(e.cgroup, sizeof(e.cgroup), "%s/agentd-run-%d", root, getpid());
	test_pin_dir(e.pins, sizeof(e.pins));
	test_cgroup_tree_at_end(e.cgroup);
	test_write(e.policy, policy_json, 0644);
	setenv("AGENTD_CONTROL", e.control, 1);
	start_agentd(&e);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "add", "rn", "--policy", e.policy, NULL),
		  0);
	return &e;
}

static void agentctl_path(char *bin, size_t binsz)
{
	snprintf(bin, binsz, "%s/agentctl", test_bin_dir());
}

/* Reads fd to its end into out (FAILs when out is too small); closes it. */
static void read_all(int fd, char *out, size_t outsz)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t len = 0;
	ssize_t n;

	while (len + 1 < outsz && poll(&pfd, 1, 60000) > 0) {
		n = read(fd, out + len, outsz - 1 - len);
		if (n <= 0)
			break;
		len += n;
	}
	out[len] = '\0';
	close(fd);
	if (len + 1 == outsz)
		FAIL("more than %zu bytes of output: %s", outsz - 1, out);
}

/* agentctl run rn [--user user] -- python3 -c script, standard input /dev/null, output and
 * errors into out; returns its exit status. */
static int run_probe_as(const char *user, const char *script, char *out, size_t outsz)
{
	char bin[PATH_MAX],
		*argv[] = { "agentctl",		"run", "rn",	       "--user", (char *)user, "--",
			    "/usr/bin/python3", "-c",  (char *)script, NULL };
	int pipefd[2], status, fd;
	pid_t pid;

	if (!user) /* no --user */
		memmove(&argv[3], &argv[5], 5 * sizeof(argv[0]));

	agentctl_path(bin, sizeof(bin));
	ASSERT_OK(pipe(pipefd));
	pid = fork();
	ASSERT_OK(pid);
	if (pid == 0) {
		fd = open("/dev/null", O_RDONLY);
		if (fd < 0 || dup2(fd, 0) < 0 || dup2(pipefd[1], 1) < 0 || dup2(pipefd[1], 2) < 0)
			_exit(99);
		close(pipefd[0]);
		execv(bin, argv);
		_exit(98);
	}
	close(pipefd[1]);
	read_all(pipefd[0], out, outsz);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int run_probe(const char *script, char *out, size_t outsz)
{
	return run_probe_as(NULL, script, out, outsz);
}

/* The value the probe printed on its line "key value" (FAILs when there is none). */
static const char *said(const char *out, const char *key, char *buf, size_t bufsz)
{
	size_t k = strlen(key);
	const char *l;

	for (l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, key, k) && l[k] == ' ') {
			snprintf(buf, bufsz, "%.*s", (int)strcspn(l + k + 1, "\r\n"), l + k + 1);
			return buf;
		}
	FAIL("the probe said nothing of %s: %s", key, out);
}

#define EXPECT(out, key, want)                                                                     \
	do {                                                                                       \
		char _b[256];                                                                      \
		const char *_got = said(out, key, _b, sizeof(_b));                                 \
		if (strcmp(_got, want))                                                            \
			FAIL("%s: \"%s\", expected \"%s\"\n%s", key, _got, want, out);             \
	} while (0)

/* Prints each capability set and the securebits (PR_GET_SECUREBITS), then gives its standard
 * output (a pipe of the test's) to another uid, which needs CAP_CHOWN. */
static const char caps_probe[] = "import ctypes, errno, os\n"
				 "for l in open('/proc/self/status'):\n"
				 "    k, _, v = l.partition(':')\n"
				 "    if k.startswith('Cap'): print(k, v.strip())\n"
				 "libc = ctypes.CDLL(None, use_errno=True)\n"
				 "print('securebits', hex(libc.prctl(27, 0, 0, 0, 0)))\n"
				 "try:\n"
				 "    os.chown('/proc/self/fd/1', 1234, 1234); print('chown ok')\n"
				 "except OSError as e: print('chown', errno.errorcode[e.errno])\n";

/* An empty "capabilities": no set holds any, and root's are not given back at exec. */
TEST(run_drops_every_capability)
{
	char out[8192], want[32];

	setup();
	ASSERT_EQ(run_probe(caps_probe, out, sizeof(out)), 0);
	EXPECT(out, "CapInh", "0000000000000000");
	EXPECT(out, "CapPrm", "0000000000000000");
	EXPECT(out, "CapEff", "0000000000000000");
	EXPECT(out, "CapBnd", "0000000000000000");
	EXPECT(out, "CapAmb", "0000000000000000");
	snprintf(want, sizeof(want), "%#x", SANDBOX_SECUREBITS);
	EXPECT(out, "securebits", want);
	EXPECT(out, "chown", "EPERM");
}

static const char env_probe[] = "import os\n"
				"for kv in open('/proc/self/environ', 'rb').read().split(b'\\0'):\n"
				"    if kv: print('env', kv.decode())\n";

/* Whether out has the line "env NAME=..." (with value, when not NULL). */
static bool has_env(const char *out, const char *name, const char *value)
{
	char line[512];

	snprintf(line, sizeof(line), "env %s=%s", name, value ? value : "");
	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, line, strlen(line)) &&
		    (!value || l[strlen(line)] == '\n' || !l[strlen(line)]))
			return true;
	return false;
}

/* The documented variables, the policy's "env" names, nothing else of the operator's. */
TEST(run_environment_is_minimal)
{
	static const char *const allowed[] = { "PATH",
					       "HOME",
					       "TMPDIR",
					       "USER",
					       "LANG",
					       "TERM",
					       "HTTP_PROXY",
					       "HTTPS_PROXY",
					       "http_proxy",
					       "https_proxy",
					       "NO_PROXY",
					       "no_proxy",
					       "AGENTD_TOOL_SOCKET",
					       "AGENTD_TEST_PASSED",
					       NULL };
	char out[16384];
	const char *l;
	size_t i, n = 0;

	setup();
	setenv("AGENTD_TEST_SECRET", "ghp_notarealtokenbutsecret", 1);
	setenv("SSH_AUTH_SOCK", "/tmp/agentd-test-ssh-agent", 1);
	setenv("AGENTD_TEST_PASSED", "passed on", 1);
	unsetenv("AGENTD_TEST_UNSET");
	setenv("LANG", "C.UTF-8", 1);
	setenv("PATH", "/operator/bin:/usr/bin:/bin", 1);
	setenv("HTTPS_PROXY", "http://operator-proxy.invalid:3128", 1);
	ASSERT_EQ(run_probe(env_probe, out, sizeof(out)), 0);
	for (l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, "env ", 4))
			continue;
		n++;
		for (i = 0; allowed[i]; i++)
			if (!strncmp(l + 4, allowed[i], strlen(allowed[i])) &&
			    l[4 + strlen(allowed[i])] == '=')
				break;
		if (!allowed[i])
			FAIL("the agent got %.*s", (int)strcspn(l, "\n"), l);
	}
	ASSERT(n > 0);
	ASSERT(!strstr(out, "ghp_notarealtokenbutsecret"));
	ASSERT(!strstr(out, "operator-proxy"));
	ASSERT(has_env(out, "AGENTD_TEST_PASSED", "passed on"));
	ASSERT(!has_env(out, "AGENTD_TEST_UNSET", NULL));
	ASSERT(has_env(out, "PATH",
		       "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"));
	ASSERT(has_env(out, "HOME", "/tmp/home"));
	ASSERT(has_env(out, "TMPDIR", "/tmp"));
	ASSERT(has_env(out, "USER", "root"));
	ASSERT(has_env(out, "LANG", "C.UTF-8"));
	/* USER is the user's the agent runs as; HOME its private one still. */
	ASSERT_EQ(run_probe_as("nobody", env_probe, out, sizeof(out)), 0);
	ASSERT(has_env(out, "USER", "nobody"));
	ASSERT(has_env(out, "HOME", "/tmp/home"));
	ASSERT(!strstr(out, "ghp_notarealtokenbutsecret"));
}

static const char session_probe[] =
	"import errno, os\n"
	"print('leader', os.getsid(0) == os.getpid())\n"
	"try:\n"
	"    os.open('/dev/tty', os.O_RDWR); print('devtty ok')\n"
	"except OSError as e: print('devtty', errno.errorcode[e.errno])\n";

/* Without a terminal: a session of its own all the same, and no controlling terminal. */
TEST(run_starts_a_session_of_its_own)
{
	char out[4096];

	setup();
	ASSERT_EQ(run_probe(session_probe, out, sizeof(out)), 0);
	EXPECT(out, "leader", "True");
	EXPECT(out, "devtty", "ENXIO");
}

/* The operator's side of a terminal: agentctl runs with the slave as its controlling terminal
 * and descriptors 0-2, as under a shell; the test types at and reads from the master. */
struct term {
	int master, slave;
	char name[64];
	pid_t pid;
	int pidfd; /* agentctl's: readable when it has ended */
	char buf[16384];
	size_t len;
};

static void kill_agentctl(void *arg)
{
	struct term *t = arg;

	if (t->pid > 0) {
		kill(t->pid, SIGKILL);
		waitpid(t->pid, NULL, 0);
	}
	close(t->master);
	close(t->slave);
	close(t->pidfd);
}

/* With stdin_null, standard input is /dev/null and only 1 and 2 are the terminal. */
static void term_start_in(struct term *t, const char *script, bool stdin_null)
{
	char bin[PATH_MAX], *argv[] = { "agentctl",	    "run", "rn",	   "--",
					"/usr/bin/python3", "-c",  (char *)script, NULL };
	struct winsize ws = { .ws_row = 24, .ws_col = 80 };

	memset(t, 0, sizeof(*t));
	agentctl_path(bin, sizeof(bin));
	t->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	ASSERT_OK(t->master);
	ASSERT_OK(grantpt(t->master));
	ASSERT_OK(unlockpt(t->master));
	ASSERT_OK(ptsname_r(t->master, t->name, sizeof(t->name)));
	t->slave = open(t->name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	ASSERT_OK(t->slave);
	ASSERT_OK(ioctl(t->master, TIOCSWINSZ, &ws));
	t->pid = fork();
	ASSERT_OK(t->pid);
	if (t->pid == 0) {
		int in = stdin_null ? open("/dev/null", O_RDONLY) : t->slave;

		if (setsid() < 0 || ioctl(t->slave, TIOCSCTTY, 0) || in < 0 || dup2(in, 0) < 0 ||
		    dup2(t->slave, 1) < 0 || dup2(t->slave, 2) < 0)
			_exit(99);
		execv(bin, argv);
		_exit(98);
	}
	t->pidfd = syscall(SYS_pidfd_open, t->pid, 0);
	test_defer(kill_agentctl, t);
	ASSERT_OK(t->pidfd);
}

static void term_start(struct term *t, const char *script)
{
	term_start_in(t, script, false);
}

/* Reads what the operator sees until it holds needle; FAILs when agentctl ended without it
 * (the test holds the slave, so the master never reads an end of its own). */
static void term_wait(struct term *t, const char *needle)
{
	struct pollfd pfd[2] = { { .fd = t->master, .events = POLLIN },
				 { .fd = t->pidfd, .events = POLLIN } };
	ssize_t n;

	while (!strstr(t->buf, needle)) {
		if (t->len + 1 >= sizeof(t->buf) || poll(pfd, 2, 60000) <= 0)
			FAIL("no \"%s\" from the agent: %s", needle, t->buf);
		if (!(pfd[0].revents & POLLIN))
			FAIL("agentctl ended before \"%s\": %s", needle, t->buf);
		n = read(t->master, t->buf + t->len, sizeof(t->buf) - 1 - t->len);
		if (n <= 0)
			FAIL("end of output before \"%s\": %s", needle, t->buf);
		t->len += n;
		t->buf[t->len] = '\0';
	}
}

/* agentctl's exit status. */
static int term_end(struct term *t)
{
	int status;

	ASSERT_EQ(waitpid(t->pid, &status, 0), t->pid);
	t->pid = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static const char tty_probe[] =
	"import errno, fcntl, os, signal, struct, sys, termios\n"
	"print('tty', os.ttyname(0))\n"
	"print('leader', os.getsid(0) == os.getpid())\n"
	"fd = os.open('/dev/tty', os.O_RDWR)\n"
	"TIOCGSID = 0x5429\n"
	"sid = lambda f: struct.unpack('i', fcntl.ioctl(f, TIOCGSID, bytes(4)))[0]\n"
	"print('devtty-is-mine', sid(fd) == sid(0) == os.getsid(0))\n"
	"try:\n"
	"    fcntl.ioctl(0, termios.TIOCSTI, b'#'); print('tiocsti ok')\n"
	"except OSError as e: print('tiocsti', errno.errorcode[e.errno])\n"
	"print('size', *struct.unpack('HHHH', fcntl.ioctl(0, termios.TIOCGWINSZ, bytes(8)))[:2])\n"
	"signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGWINCH])\n"
	"print('typed?', flush=True)\n"
	"print('got', sys.stdin.readline().strip(), flush=True)\n"
	"signal.sigwait([signal.SIGWINCH])\n"
	"print('resized', *struct.unpack('HHHH', fcntl.ioctl(0, termios.TIOCGWINSZ, "
	"bytes(8)))[:2], flush=True)\n";

/*
 * Under a terminal: the agent's is a pseudo-terminal of its own (its controlling one, in its own
 * session), TIOCSTI is refused, typing reaches it and its output comes back, a resize follows,
 * and the operator's terminal has its modes back at the end, with nothing typed into it.
 */
TEST(run_gives_a_terminal_of_its_own)
{
	struct winsize ws = { .ws_row = 40, .ws_col = 100 };
	struct termios before, after;
	struct term t;
	char buf[64], line[128];
	ssize_t n;

	setup();
	term_start(&t, tty_probe);
	ASSERT_OK(tcgetattr(t.slave, &before));
	term_wait(&t, "typed?");
	if (!strstr(t.buf, "tty /dev/pts/"))
		FAIL("the agent has no terminal: %s", t.buf);
	snprintf(line, sizeof(line), "tty %s\r", t.name);
	if (strstr(t.buf, line))
		FAIL("the agent has the operator's terminal %s: %s", t.name, t.buf);
	EXPECT(t.buf, "leader", "True");
	EXPECT(t.buf, "devtty-is-mine", "True");
	EXPECT(t.buf, "tiocsti", "EPERM");
	EXPECT(t.buf, "size", "24 80");
	ASSERT_EQ(write(t.master, "hello agent\n", 12), 12);
	term_wait(&t, "got hello agent");
	ASSERT_OK(ioctl(t.master, TIOCSWINSZ, &ws));
	term_wait(&t, "resized 40 100");
	ASSERT_EQ(term_end(&t), 0);
	ASSERT_OK(tcgetattr(t.slave, &after));
	ASSERT_EQ(after.c_lflag, before.c_lflag);
	ASSERT_EQ(after.c_iflag, before.c_iflag);
	ASSERT_EQ(after.c_oflag, before.c_oflag);
	/* Nothing waits in the operator's input (the shell would read it next). */
	ASSERT_OK(fcntl(t.slave, F_SETFL, O_NONBLOCK));
	n = read(t.slave, buf, sizeof(buf));
	if (n > 0)
		FAIL("%zd bytes were typed into the operator's terminal: %.*s", n, (int)n, buf);
	ASSERT_EQ(errno, EAGAIN);
}

static const char wait_probe[] = "import sys\n"
				 "print('waiting', flush=True)\n"
				 "sys.stdin.readline()\n";

/* agentctl killed by a signal it does not forward gives the terminal its modes back. */
TEST(run_restores_the_terminal_when_killed)
{
	struct termios before, during, after;
	struct term t;

	setup();
	term_start(&t, wait_probe);
	ASSERT_OK(tcgetattr(t.slave, &before));
	ASSERT(before.c_lflag & ICANON);
	term_wait(&t, "waiting");
	ASSERT_OK(tcgetattr(t.slave, &during));
	ASSERT_EQ(during.c_lflag & (ICANON | ECHO | ISIG), 0); /* raw while relaying */
	ASSERT_OK(kill(t.pid, SIGUSR1));
	ASSERT_EQ(term_end(&t), 128 + SIGUSR1);
	ASSERT_OK(tcgetattr(t.slave, &after));
	ASSERT_EQ(after.c_lflag, before.c_lflag);
	ASSERT_EQ(after.c_iflag, before.c_iflag);
	ASSERT_EQ(after.c_oflag, before.c_oflag);
}

static void remove_shm(void *arg)
{
	shmctl((int)(long)arg, IPC_RMID, NULL);
}

/* The agent's IPC and UTS namespaces: a host segment is out of its reach, its own works. */
TEST(run_gives_ipc_and_uts_of_its_own)
{
	char script[2048], out[4096], ns[64];
	key_t key = 0x4a470000 | (getpid() & 0xffff);
	int id;
	ssize_t n;

	setup();
	id = shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0666);
	ASSERT_OK(id);
	test_defer(remove_shm, (void *)(long)id);
	snprintf(script, sizeof(script),
		 "import ctypes, errno, os\n"
		 "libc = ctypes.CDLL(None, use_errno=True)\n"
		 "def res(r): return 'ok' if r != -1 else errno.errorcode[ctypes.get_errno()]\n"
		 "print('host-by-key', res(libc.shmget(%d, 0, 0)))\n"
		 "libc.shmat.restype = ctypes.c_void_p\n"
		 "a = libc.shmat(%d, None, 0)\n"
		 "print('host-by-id', 'ok' if a != ctypes.c_void_p(-1).value else "
		 "errno.errorcode[ctypes.get_errno()])\n"
		 "own = libc.shmget(0, 4096, 0o1600)\n"
		 "print('own', res(own))\n"
		 "a = libc.shmat(own, None, 0)\n"
		 "print('own-attach', 'ok' if a != ctypes.c_void_p(-1).value else 'failed')\n"
		 "libc.shmctl(own, 0, None)\n"
		 "print('ipc', os.readlink('/proc/self/ns/ipc'))\n"
		 "print('uts', os.readlink('/proc/self/ns/uts'))\n"
		 "print('sethostname', res(libc.sethostname(b'agent', 5)))\n",
		 (int)key, id);
	ASSERT_EQ(run_probe(script, out, sizeof(out)), 0);
	EXPECT(out, "host-by-key", "ENOENT");
	EXPECT(out, "host-by-id", "EINVAL");
	EXPECT(out, "own", "ok");
	EXPECT(out, "own-attach", "ok");
	n = readlink("/proc/self/ns/ipc", ns, sizeof(ns) - 1);
	ASSERT(n > 0);
	ns[n] = '\0';
	if (!strcmp(said(out, "ipc", script, sizeof(script)), ns))
		FAIL("the agent is in the host's IPC namespace %s", ns);
	n = readlink("/proc/self/ns/uts", ns, sizeof(ns) - 1);
	ASSERT(n > 0);
	ns[n] = '\0';
	if (!strcmp(said(out, "uts", script, sizeof(script)), ns))
		FAIL("the agent is in the host's UTS namespace %s", ns);
	EXPECT(out, "sethostname", "EPERM"); /* no CAP_SYS_ADMIN, and its own name if it had */
}

/* Prints the child's capability sets after exec, one "CapXxx value" per line, into out. */
static const char *caps_after(__u64 keep, uid_t uid, const char *extra, char *out, size_t outsz)
{
	char script[2048];
	int pipefd[2], status;
	pid_t pid;

	snprintf(script, sizeof(script),
		 "import errno, os, socket\n"
		 "for l in open('/proc/self/status'):\n"
		 "    k, _, v = l.partition(':')\n"
		 "    if k.startswith('Cap'): print(k, v.strip())\n"
		 "%s",
		 extra);
	ASSERT_OK(pipe(pipefd));
	pid = fork();
	ASSERT_OK(pid);
	if (pid == 0) {
		if (dup2(pipefd[1], 1) < 0 || sandbox_caps_begin(keep) ||
		    (uid && (setgid(uid) || setuid(uid))) || sandbox_caps_finish(keep) ||
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
			_exit(99);
		execl("/usr/bin/python3", "python3", "-c", script, NULL);
		_exit(98);
	}
	close(pipefd[1]);
	read_all(pipefd[0], out, outsz);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		FAIL("the child failed (%d): %s", status, out);
	return out;
}

static const char bind_low[] = "try:\n"
			       "    socket.socket().bind(('127.0.0.1', 1)); print('bind-low ok')\n"
			       "except OSError as e: print('bind-low', errno.errorcode[e.errno])\n"
			       "try:\n"
			       "    os.chown('/proc/self/fd/1', 1234, 1234); print('chown ok')\n"
			       "except OSError as e: print('chown', errno.errorcode[e.errno])\n";

/* A granted capability, as root and after a change to another uid: exactly it, in every set. */
TEST(caps_limit_keeps_exactly_the_granted)
{
	char out[4096], want[32];
	uid_t uids[] = { 0, 65534 };
	size_t i;

	if (geteuid())
		SKIP("needs root");
	snprintf(want, sizeof(want), "%016llx", 1ULL << CAP_NET_BIND_SERVICE);
	for (i = 0; i < 2; i++) {
		caps_after(1ULL << CAP_NET_BIND_SERVICE, uids[i], bind_low, out, sizeof(out));
		EXPECT(out, "CapInh", want);
		EXPECT(out, "CapPrm", want);
		EXPECT(out, "CapEff", want);
		EXPECT(out, "CapBnd", want);
		EXPECT(out, "CapAmb", want);
		EXPECT(out, "bind-low", "ok");
		EXPECT(out, "chown", "EPERM");
	}
	caps_after(0, 65534, bind_low, out, sizeof(out));
	EXPECT(out, "CapPrm", "0000000000000000");
	EXPECT(out, "bind-low", "EACCES");
}

/* Waits until the cgroup at path holds no task; FAILs when one stays (bounded wait). */
static void wait_cgroup_empty(const char *path)
{
	char events[PATH_MAX + 32], buf[256];
	struct pollfd pfd = { .events = POLLPRI };
	ssize_t n;

	snprintf(events, sizeof(events), "%s/cgroup.events", path);
	pfd.fd = open(events, O_RDONLY | O_CLOEXEC);
	ASSERT_OK(pfd.fd);
	for (;;) {
		n = pread(pfd.fd, buf, sizeof(buf) - 1, 0);
		ASSERT(n > 0);
		buf[n] = '\0';
		if (strstr(buf, "populated 0"))
			break;
		if (poll(&pfd, 1, 30000) <= 0)
			FAIL("a task stayed in %s after agentctl passed SIGTERM on", path);
	}
	close(pfd.fd);
}

/* A signal agentctl passes on reaches the agent's process group (the first process leads a
 * session of its own, out of reach of the operator's terminal), its children too. */
TEST(run_passes_signals_to_the_agents_group)
{
	const char *started[] = { "child", NULL };
	char *argv[] = { "agentctl",
			 "run",
			 "rn",
			 "--",
			 "/usr/bin/python3",
			 "-c",
			 "import os, time\n"
			 "pid = os.fork()\n"
			 "if pid == 0: time.sleep(1000); os._exit(0)\n"
			 "print('child', pid, flush=True)\n"
			 "os.waitpid(pid, 0)\n",
			 NULL };
	char path[PATH_MAX];
	struct env *e = setup();
	struct proc *p = proc_start(argv);
	int status;

	if (!proc_wait_line(p, TEST_READY_MS, started))
		FAIL("the agent did not start: %s", p->buf);
	status = proc_stop(p, SIGTERM);
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
	path_in(path, sizeof(path), e->cgroup, "rn");
	wait_cgroup_empty(path);
}

static const char out_tty_probe[] = "import os\n"
				    "print('stdin-tty', os.isatty(0))\n"
				    "print('out', os.ttyname(1))\n"
				    "print('err', os.ttyname(2))\n"
				    "print('end', flush=True)\n";

/* Only the output is a terminal: the agent still never holds the operator's (through it, it
 * could read what the operator types and change the terminal's modes). */
TEST(run_gives_no_terminal_of_the_operators_on_output)
{
	char name[80];
	struct term t;

	setup();
	term_start_in(&t, out_tty_probe, true);
	term_wait(&t, "end");
	ASSERT_EQ(term_end(&t), 0);
	EXPECT(t.buf, "stdin-tty", "False");
	snprintf(name, sizeof(name), "out %s\r", t.name);
	if (strstr(t.buf, name))
		FAIL("the agent's output is the operator's terminal %s: %s", t.name, t.buf);
	snprintf(name, sizeof(name), "err %s\r", t.name);
	if (strstr(t.buf, name))
		FAIL("the agent's errors go to the operator's terminal %s: %s", t.name, t.buf);
}
