// SPDX-License-Identifier: GPL-2.0
/*
 * Whole sessions under the shipped profiles, scripted as an agent works, each followed in the
 * same agent by the attacks its profile must still refuse. Both tiers run them: the host tier
 * (test_host) through agentd with --allow-partial (Landlock, seccomp, cgroup-BPF), the VM tier
 * (test_kernel) under BPF LSM, where the denials are also found in the audit log (Landlock's
 * leave no record). The guest's tools are staged by selftests/vm/stage_sessions.sh.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "harness.h"
#include "sessions/session.h"

/* A coding agent's day: a git repository with a C project and a Python package, built, tested,
 * a virtual environment with a wheel installed offline, committed. set -e: any step failing
 * fails the session, and the last line says which. */
static const char coding_session[] =
	"set -e\n"
	"export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INDEX=1\n"
	"git init -q -b main .\n"
	"git config user.email agent@example.invalid\n"
	"git config user.name agent\n"
	"mkdir -p src hello tests\n"
	"printf 'int add(int a, int b) { return a + b; }\\n' > src/add.c\n"
	"printf '#include <stdio.h>\\nint add(int, int);\\n"
	"int main(void) { return add(2, 2) == 4 ? puts(\"ok\"), 0 : 1; }\\n' > src/test_add.c\n"
	"printf 'all: test_add\\ntest_add: src/add.c src/test_add.c\\n"
	"\\t$(CC) -O2 -o $@ src/add.c src/test_add.c\\ntest: test_add\\n\\t./test_add\\n"
	".PHONY: all test\\n' > Makefile\n"
	"make -s\n"
	"make -s test\n"
	"printf 'def greet(n):\\n    return \"hello \" + n\\n' > hello/__init__.py\n"
	"printf 'from setuptools import setup\\nsetup(name=\"hello\", version=\"0.1\", "
	"packages=[\"hello\"])\\n' > setup.py\n"
	"printf 'import unittest, hello\\nclass T(unittest.TestCase):\\n"
	"    def test_greet(self):\\n        self.assertEqual(hello.greet(\"x\"), \"hello x\")\\n'"
	" > tests/test_hello.py\n"
	"python3 -m pip wheel -q --no-deps --no-build-isolation -w dist .\n"
	"python3 -m venv .venv\n"
	".venv/bin/pip install -q dist/hello-0.1-py3-none-any.whl\n"
	"cd tests && ../.venv/bin/python -m unittest -q test_hello && cd ..\n"
	"printf '.venv/\\nbuild/\\ndist/\\n*.egg-info/\\ntest_add\\n' > .gitignore\n"
	"git add -A\n"
	"git commit -q -m 'add, greet, their tests'\n"
	"echo session $(git rev-list --count HEAD) $(git status --porcelain | wc -l)\n";

/* The attacks, from the same agent after its session: each prints "name ok" or "name ERRNO".
 * argv: the operator's ssh key, another agent's file, a file and a program outside the
 * workspace. The metadata address over UDP: connect() sends nothing, even if it were allowed. */
static const char coding_attacks[] =
	"import errno, os, shutil, socket, subprocess, sys\n"
	"def t(name, f):\n"
	"    try: f(); print(name, 'ok')\n"
	"    except OSError as e: print(name, errno.errorcode[e.errno])\n"
	"t('shadow', lambda: open('/etc/shadow').read())\n"
	"t('ssh', lambda: open(sys.argv[1]).read())\n"
	"t('other_ws', lambda: open(sys.argv[2]).read())\n"
	"t('metadata', lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
	".connect(('169.254.169.254', 80)))\n"
	"t('exec_outside', lambda: subprocess.run([sys.argv[4]]))\n"
	"shutil.copy('/usr/bin/true', '/tmp/true'); os.chmod('/tmp/true', 0o755)\n"
	"t('exec_tmp', lambda: subprocess.run(['/tmp/true']))\n"
	"t('exec_unlisted', lambda: subprocess.run(['/usr/bin/perl', '-e', '1']))\n"
	"t('write_outside', lambda: open(sys.argv[3], 'w'))\n"
	"t('write_etc', lambda: open('/etc/agentd-session', 'w'))\n"
	"t('exec_built', lambda: subprocess.run(['./test_add'], check=True, stdout=-3))\n"
	"t('read_ws', lambda: open('Makefile').read())\n";

/* policies/coding-agent.json carries a coding session (make, cc, git, venv, pip, the project's
 * own tests), and in the same agent the attacks fail: secrets, another workspace, the metadata
 * address, programs outside the workspace and the list, writes outside the workspace. */
TEST(session_coding)
{
	char ws[PATH_MAX], other[PATH_MAX], ssh[PATH_MAX], key[PATH_MAX], secret[PATH_MAX],
		outside[PATH_MAX], prog[PATH_MAX], out[65536];
	char *session[] = { "/bin/sh", "-c", (char *)coding_session, NULL };
	char *attacks[] = {
		"/usr/bin/python3", "-c", (char *)coding_attacks, key, secret, outside, prog, NULL
	};
	struct test_daemon d;
	int status;

	if (access("/usr/bin/make", X_OK) || access("/usr/bin/cc", X_OK) ||
	    access("/usr/bin/perl", X_OK) ||
	    system("/usr/bin/python3 -c 'import venv, ensurepip,"
		   " setuptools, wheel' 2>/dev/null"))
		session_needs(
			"make, cc, perl, and python3 with venv, ensurepip, setuptools, wheel");
	/* A whole session (cc, pip, venv) took 50 s on a loaded 2-core machine, and 10 times
	 * that can pass under software emulation: past the default deadline, so this test's own. */
	alarm(session_lsm() ? 1800 : 300);
	test_daemon_init(&d, "coding");
	session_daemon_start(&d);
	dir_in(ws, sizeof(ws), d.dir, "ws");
	dir_in(other, sizeof(other), d.dir, "other-ws");
	path_in(secret, sizeof(secret), other, "secret");
	test_write(secret, "another agent's\n", 0644);
	dir_in(ssh, sizeof(ssh), d.dir, "operator");
	path_in(ssh, sizeof(ssh), strdupa(ssh), ".ssh");
	ASSERT_OK(mkdir(ssh, 0700));
	path_in(key, sizeof(key), ssh, "id_ed25519");
	test_write(key, "-----BEGIN OPENSSH PRIVATE KEY-----\n", 0600);
	path_in(outside, sizeof(outside), d.dir, "written");
	path_in(prog, sizeof(prog), d.dir, "true");
	test_copy("/usr/bin/true", prog, 0755);
	session_add("coder", "coding-agent.json", ws);
	session_add("other", "coding-agent.json", other);

	status = agent_exec("coder", NULL, ws, session, out, sizeof(out));
	if (status)
		FAIL("the session failed (exit %d):\n%s", status, out);
	expect(out, "session", "1 0");
	/* Its .git/hooks and .git/config exist now: the profile's rules on them take effect at a
	 * reload (rules name objects), which agentctl run asks for before the next run. */
	ASSERT_EQ(agentctl_run(out, sizeof(out), "policy", "reload", "coder", NULL), 0);

	status = agent_exec("coder", NULL, ws, attacks, out, sizeof(out));
	if (status)
		FAIL("the attacks did not run (exit %d):\n%s", status, out);
	expect(out, "read_ws", "ok");
	expect(out, "exec_built", "ok");
	expect(out, "shadow", session_deny());
	expect(out, "ssh", session_deny());
	expect(out, "other_ws", session_deny());
	expect(out, "metadata", "EPERM");
	expect(out, "exec_outside", session_deny());
	expect(out, "exec_tmp", session_deny());
	expect(out, "exec_unlisted", session_deny());
	expect(out, "write_outside", session_deny());
	expect(out, "write_etc", session_deny());
	ASSERT_EQ(access(outside, F_OK) ? errno : 0, ENOENT);
	if (!session_lsm())
		return;
	/* BPF LSM's own records of them (Landlock's denials are not in the log). */
	session_stop(&d);
	session_denied(&d, "coder", "file", "file_open", "shadow");
	session_denied(&d, "coder", "file", "file_open", "id_ed25519");
	session_denied(&d, "coder", "file", "file_open", "secret");
	session_denied(&d, "coder", "net", "connect4", "169.254.169.254");
	session_denied(&d, "coder", "exec", "bprm_check_security", "true");
	session_denied(&d, "coder", "exec", "bprm_check_security", "perl");
	session_denied(&d, "coder", "file", "path_mknod", "written");
	session_denied(&d, "coder", "file", "path_mknod", "agentd-session");
}

/* A reporting agent's day: a report written to the drop folder, submitted with report.submit;
 * then an actuating tool, egress (a loopback service of the test's, the metadata address over
 * UDP, which sends nothing) and a write outside the drop folder, all refused. argv: the drop
 * folder, a file outside it, the directory of agent-tool, the test's loopback port. */
static const char report_session[] =
	"date > \"$1/report.txt\" && echo 'all quiet' >> \"$1/report.txt\" && echo wrote ok\n"
	"\"$3/agent-tool\" report.submit title=weekly text='all quiet' severity=info\n"
	"echo submit $?\n"
	"\"$3/agent-tool\" deploy.trigger environment=production revision=abcdef1\n"
	"echo actuate $?\n"
	"python3 - \"$2\" \"$4\" <<'EOF'\n"
	"import errno, socket, sys\n"
	"def t(name, f):\n"
	"    try: f(); print(name, 'ok')\n"
	"    except OSError as e: print(name, errno.errorcode[e.errno])\n"
	"t('loopback', lambda: socket.create_connection(('127.0.0.1', int(sys.argv[2]))))\n"
	"t('metadata', lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
	".connect(('169.254.169.254', 80)))\n"
	"t('write_outside', lambda: open(sys.argv[1], 'w'))\n"
	"EOF\n";

/* policies/report-agent.json (report-only) carries a report session; the rest is refused. */
TEST(session_report)
{
	char drop[PATH_MAX], outside[PATH_MAX], var[2][PATH_MAX + 16], policy[PATH_MAX],
		tools[PATH_MAX], port_s[16], out[16384];
	char *session[] = { "/bin/sh", "-c",	(char *)report_session, "sh",
			    drop,      outside, (char *)test_bin_dir(), port_s,
			    NULL };
	struct test_daemon d;
	int lfd, port, status;

	test_daemon_init(&d, "report");
	session_daemon_start(&d);
	dir_in(drop, sizeof(drop), d.dir, "dropbox");
	path_in(outside, sizeof(outside), d.dir, "written");
	lfd = test_loopback_listener(&port); /* listening: only the rule can refuse */
	snprintf(port_s, sizeof(port_s), "%d", port);
	snprintf(policy, sizeof(policy), "%s/../policies/report-agent.json", test_bin_dir());
	snprintf(tools, sizeof(tools), "%s/../policies/tools.json", test_bin_dir());
	snprintf(var[0], sizeof(var[0]), "dropbox=%s", drop);
	snprintf(var[1], sizeof(var[1]), "tools_bin=%s", test_bin_dir());
	if (agentctl_run(out, sizeof(out), "agent", "add", "reporter", "--policy", policy,
			 "--tools", tools, "--var", var[0], "--var", var[1], NULL))
		FAIL("agent add reporter: %s", out);

	status = agent_exec("reporter", NULL, NULL, session, out, sizeof(out));
	close(lfd);
	if (status)
		FAIL("the session failed (exit %d):\n%s", status, out);
	expect(out, "wrote", "ok");
	expect(out, "submit", "0");
	expect(out, "actuate", "125");
	expect(out, "loopback", "EPERM");
	expect(out, "metadata", "EPERM");
	expect(out, "write_outside", session_deny());
	ASSERT_EQ(access(outside, F_OK) ? errno : 0, ENOENT);
	if (!session_lsm())
		return;
	/* The inet socket is refused by seccomp, before any BPF program sees it. */
	session_stop(&d);
	session_denied(&d, "reporter", "file", "path_mknod", "written");
}

/* A public-looking address (TEST-NET-2) on lo of the test's own network namespace: nothing sent
 * to it leaves the namespace. */
#define WEB_ADDR "198.51.100.1"

/* The test's network and mount namespaces (agentd, the proxy and the agent inherit them): lo up
 * with WEB_ADDR, and /etc/hosts naming an allowed and a refused host there. */
static void own_network(const char *dir)
{
	static const char *const files[][2] = {
		{ "hosts", WEB_ADDR " en.wikipedia.org example.com\n" },
		{ "nsswitch.conf", "hosts: files\n" },
	};
	struct ifreq ifr = { .ifr_name = "lo" };
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
	char src[PATH_MAX], dst[64];
	size_t i;
	int fd;

	ASSERT_OK(unshare(CLONE_NEWNET | CLONE_NEWNS));
	ASSERT_OK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ASSERT_OK(fd);
	ASSERT_OK(ioctl(fd, SIOCGIFFLAGS, &ifr));
	ifr.ifr_flags |= IFF_UP;
	ASSERT_OK(ioctl(fd, SIOCSIFFLAGS, &ifr));
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo:1");
	sin->sin_family = AF_INET;
	inet_pton(AF_INET, WEB_ADDR, &sin->sin_addr);
	ASSERT_OK(ioctl(fd, SIOCSIFADDR, &ifr));
	close(fd);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		path_in(src, sizeof(src), dir, files[i][0]);
		snprintf(dst, sizeof(dst), "/etc/%s", files[i][0]);
		test_write(src, files[i][1], 0644);
		if (mount(src, dst, NULL, MS_BIND, NULL))
			FAIL("bind %s on %s: %s", src, dst, strerror(errno));
	}
}

static void stop_server(void *arg)
{
	pid_t pid = (pid_t)(long)arg;

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* An HTTP server on WEB_ADDR:80 answering "research-page" to every request; *hits (shared
 * memory) counts the requests that reached it. */
static int *start_web(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(80) };
	static const char reply[] = "HTTP/1.1 200 OK\r\nContent-Length: 14\r\n"
				    "Connection: close\r\n\r\nresearch-page\n";
	int *hits =
		mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), fd;
	char head[4096];
	pid_t pid;

	ASSERT(hits != MAP_FAILED);
	ASSERT_OK(lfd);
	inet_pton(AF_INET, WEB_ADDR, &sa.sin_addr);
	ASSERT_OK(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)));
	ASSERT_OK(listen(lfd, 16));
	pid = fork();
	ASSERT_OK(pid);
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;) {
			fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			if (fd < 0)
				continue;
			__atomic_add_fetch(hits, 1, __ATOMIC_SEQ_CST);
			/* The request head, then the page (the client waits for it). */
			if (read(fd, head, sizeof(head)) > 0 &&
			    write(fd, reply, sizeof(reply) - 1) < 0)
				__atomic_add_fetch(hits, 1000, __ATOMIC_SEQ_CST);
			close(fd);
		}
	}
	test_defer(stop_server, (void *)(long)pid);
	close(lfd);
	return hits;
}

/* A research agent's day: a page fetched through its proxy (HTTP_PROXY, set by agentctl run)
 * from an allowed host, notes written to its workspace; a host not on the list refused by the
 * proxy (403), a direct connection to the same server refused by the kernel (EPERM). */
static const char research_session[] =
	"mkdir -p notes\n"
	"curl -sS --max-time 30 -o notes/page.txt http://en.wikipedia.org/wiki/Linux\n"
	"echo fetched $(cat notes/page.txt)\n"
	"echo refused $(curl -sS --max-time 30 -o /dev/null -w '%{http_code}' "
	"http://example.com/)\n"
	"printf '# Linux\\nsee page.txt\\n' > notes/summary.md && echo notes ok\n"
	"python3 - <<'EOF'\n"
	"import errno, socket\n"
	"try: socket.create_connection(('" WEB_ADDR "', 80)); print('direct ok')\n"
	"except OSError as e: print('direct', errno.errorcode[e.errno])\n"
	"EOF\n";

/* policies/research-agent.json carries a research session, in a network namespace of the
 * test's: only the allowed host's request reaches the server. */
TEST(session_research)
{
	char ws[PATH_MAX], notes[PATH_MAX], out[16384];
	char *session[] = { "/bin/sh", "-c", (char *)research_session, NULL };
	struct test_daemon d;
	int *hits, status;

	if (access("/usr/bin/curl", X_OK))
		session_needs("curl");
	test_daemon_init(&d, "research");
	own_network(d.dir);
	hits = start_web();
	session_daemon_start(&d);
	dir_in(ws, sizeof(ws), d.dir, "ws");
	session_add("researcher", "research-agent.json", ws);

	status = agent_exec("researcher", NULL, ws, session, out, sizeof(out));
	if (status)
		FAIL("the session failed (exit %d):\n%s", status, out);
	expect(out, "fetched", "research-page");
	expect(out, "refused", "403");
	expect(out, "notes", "ok");
	expect(out, "direct", "EPERM");
	path_in(notes, sizeof(notes), ws, "notes/summary.md");
	ASSERT_OK(access(notes, F_OK));
	ASSERT_EQ(__atomic_load_n(hits, __ATOMIC_SEQ_CST), 1);
	if (!session_lsm())
		return;
	session_stop(&d);
	session_denied(&d, "researcher", "net", "connect4", WEB_ADDR);
}
