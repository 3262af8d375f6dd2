// SPDX-License-Identifier: GPL-2.0
/*
 * Host tier, where BPF LSM is unavailable: the fallback layers for real, through a daemon
 * (--allow-partial) and agentctl run. The file, exec, network and self-protection cases of the
 * enforcement drill that the fallback claims are denied with the errno of the layer that denies
 * them (Landlock EACCES on files, EPERM on ptrace and signals; seccomp and cgroup-BPF EPERM); and the gap agentd reports matches the kernel: every
 * case it claims is denied, every case in the gap is allowed.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kernel/cgroup.h"
#include "harness.h"
#include "sandbox/layers.h"
#include "policy/policy.h"
#include "kernel/probe.h"
#include "testlib.h"

#define LDSO "/lib64/ld-linux-x86-64.so.2"

struct env {
	char dir[200];
	char ws[PATH_MAX];
	char state[PATH_MAX];
	char control[PATH_MAX];
	char pins[PATH_MAX];
	char cgroup[PATH_MAX];
	char policy[PATH_MAX];
	struct proc *agentd;
};

static void start_agentd(struct env *e)
{
	const char *ready[] = { "agentd: ready", NULL };
	char *argv[] = { "agentd",  "--control",       e->control, "--state-dir",
			 e->state,  "--pin-dir",       e->pins,	   "--cgroup",
			 e->cgroup, "--allow-partial", NULL };

	e->agentd = proc_start(argv);
	if (!proc_wait_line(e->agentd, 20000, ready))
		FAIL("agentd did not get ready: \"%s\"", e->agentd->buf);
}

static void path_in(char *out, size_t outsz, const char *dir, const char *name)
{
	if ((size_t)snprintf(out, outsz, "%s/%s", dir, name) >= outsz)
		FAIL("path too long: %s/%s", dir, name);
}

/*
 * A workspace D/ws (read, write, create, ...) with a deny inside it (D/ws/secret), a file outside
 * (D/outside), a read-only file outside (D/readonly) with a second name in the workspace
 * (D/ws/alias), a copy of true in the workspace (readable, not executable), the probe script;
 * the userland to run python3, and only sh, cat and python3 to execute.
 */
static const char policy_fmt[] =
	"{\"name\": \"fb\",\n"
	" \"files\": [\n"
	"  {\"path\": \"/usr/lib\", \"rights\": [\"read\", \"exec\"]},\n"
	"  {\"path\": \"/lib64\", \"rights\": [\"read\", \"exec\"]},\n"
	"  {\"path\": \"/etc/ld.so.cache\", \"rights\": [\"read\"]},\n"
	"  {\"path\": \"/dev/null\", \"rights\": [\"read\", \"write\"]},\n"
	"  {\"path\": \"/usr/bin\", \"rights\": [\"read\"]},\n"
	"  {\"path\": \"%s/ws\", \"rights\": [\"read\", \"write\", \"create\", \"remove\", "
	"\"link\", \"truncate\"]},\n"
	"  {\"path\": \"%s/ws/secret\", \"rights\": []},\n"
	"  {\"path\": \"%s/readonly\", \"rights\": [\"read\"]}],\n"
	" \"exec\": {\"allow\": [\"/bin/sh\", \"/usr/bin/cat\", \"/usr/bin/python3\"]},\n"
	" \"network\": {\"sockets\": [\"inet\", \"unix\"]}}\n";

static struct env *setup(void)
{
	static struct env e;
	char root[PATH_MAX - 64], path[PATH_MAX], src[PATH_MAX + 32], text[4096];
	struct probe p;

	probe_kernel(&p);
	if (probe_bpf_lsm_ok(&p))
		SKIP("BPF LSM works here: the fallback is not used (the VM tier tests it)");
	if (!probe_landlock_ok(&p))
		SKIP("no Landlock on this kernel");
	if (access("/usr/bin/python3", X_OK) || access(LDSO, X_OK))
		SKIP("needs /usr/bin/python3 and " LDSO);
	ASSERT_EQ(cgroup2_mount(root, sizeof(root)), 0);
	test_tmpdir(e.dir, sizeof(e.dir), "fallback");
	path_in(e.ws, sizeof(e.ws), e.dir, "ws");
	path_in(e.state, sizeof(e.state), e.dir, "state");
	path_in(e.control, sizeof(e.control), e.dir, "control.sock");
	path_in(e.policy, sizeof(e.policy), e.dir, "policy.json");
	snprintf(e.cgroup, sizeof(e.cgroup), "%s/agentd-fallback-%d", root, getpid());
	test_pin_dir(e.pins, sizeof(e.pins));
	test_cgroup_tree_at_end(e.cgroup);
	ASSERT_OK(mkdir(e.ws, 0755));
	path_in(path, sizeof(path), e.ws, "secret");
	ASSERT_OK(mkdir(path, 0755));
	path_in(path, sizeof(path), e.ws, "secret/key");
	test_write(path, "key\n", 0600);
	path_in(path, sizeof(path), e.ws, "notes");
	test_write(path, "notes\n", 0644);
	path_in(path, sizeof(path), e.dir, "outside");
	test_write(path, "outside\n", 0644);
	path_in(path, sizeof(path), e.dir, "readonly");
	test_write(path, "readonly\n", 0644);
	path_in(src, sizeof(src), e.ws, "alias");
	ASSERT_OK(link(path, src));
	path_in(path, sizeof(path), e.ws, "true");
	test_copy("/usr/bin/true", path, 0755);
	snprintf(src, sizeof(src), "%s/../selftests/host/fallback_probe.py", test_bin_dir());
	path_in(path, sizeof(path), e.ws, "probe.py");
	test_copy(src, path, 0644);
	snprintf(text, sizeof(text), policy_fmt, e.dir, e.dir, e.dir);
	test_write(e.policy, text, 0644);
	setenv("AGENTD_CONTROL", e.control, 1);
	start_agentd(&e);
	return &e;
}

static void kill_outsider(void *arg)
{
	pid_t pid = (pid_t)(long)arg;

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* A task outside every agent, waiting to be killed when the test ends. */
static pid_t start_outsider(void)
{
	pid_t pid = fork();

	ASSERT_OK(pid);
	if (pid == 0) {
		for (;;)
			pause();
	}
	test_defer(kill_outsider, (void *)(long)pid);
	return pid;
}

/* What the probe said of one try ("ok", "EACCES", ...), from its output. */
static const char *outcome(const char *out, const char *name, char *buf, size_t bufsz)
{
	char key[64];
	const char *l;

	snprintf(key, sizeof(key), "%s ", name);
	for (l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, key, strlen(key))) {
			snprintf(buf, bufsz, "%.*s", (int)strcspn(l + strlen(key), "\n"),
				 l + strlen(key));
			return buf;
		}
	FAIL("the probe said nothing of %s: %s", name, out);
}

#define EXPECT(out, name, want)                                                                    \
	do {                                                                                       \
		char _b[64];                                                                       \
		const char *_got = outcome(out, name, _b, sizeof(_b));                             \
		if (strcmp(_got, want))                                                            \
			FAIL("%s: %s, expected %s", name, _got, want);                             \
	} while (0)

/* Runs the probe in agent "fb" with the tries given (NULL-terminated); returns its output. */
static void probe(struct env *e, char *out, size_t outsz, const char *const *tries)
{
	char *argv[32] = { "run", "fb", "--", "/usr/bin/python3", NULL }, script[PATH_MAX];
	int n = 4, status;

	path_in(script, sizeof(script), e->ws, "probe.py");
	argv[n++] = script;
	while (*tries && n < 31)
		argv[n++] = (char *)*tries++;
	argv[n] = NULL;
	status = agentctl_run(out, outsz, argv[0], argv[1], argv[2], argv[3], argv[4], argv[5],
			      argv[6], argv[7], argv[8], argv[9], argv[10], argv[11], argv[12],
			      argv[13], argv[14], argv[15], argv[16], argv[17], argv[18], argv[19],
			      NULL);
	if (status)
		FAIL("agentctl run: exit %d: %s", status, out);
}

/* The drill's file, exec and network cases the fallback claims: allowed and denied, errno
 * checked. */
TEST(fallback_enforces_files_exec_network)
{
	struct env *e = setup();
	char t[15][PATH_MAX + 64], out[8192];
	const char *tries[16];
	int lfd, port, i = 0;
	pid_t outsider = start_outsider();

	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "add", "fb", "--policy", e->policy, NULL),
		  0);
	lfd = test_loopback_listener(&port);
	snprintf(t[i++], sizeof(t[0]), "read-ws:read:%s/notes", e->ws);
	snprintf(t[i++], sizeof(t[0]), "read-outside:read:%s/outside", e->dir);
	snprintf(t[i++], sizeof(t[0]), "write-ws:write:%s/new", e->ws);
	snprintf(t[i++], sizeof(t[0]), "write-outside:write:%s/new", e->dir);
	snprintf(t[i++], sizeof(t[0]), "write-readonly:write:%s/readonly", e->dir);
	snprintf(t[i++], sizeof(t[0]), "exec-allowed:exec:/usr/bin/cat:/dev/null");
	snprintf(t[i++], sizeof(t[0]), "exec-outside:exec:/usr/bin/true");
	snprintf(t[i++], sizeof(t[0]), "exec-ws:exec:%s/true", e->ws);
	snprintf(t[i++], sizeof(t[0]), "bpf:bpf");
	snprintf(t[i++], sizeof(t[0]), "userns:userns");
	snprintf(t[i++], sizeof(t[0]), "netlink:netlink");
	snprintf(t[i++], sizeof(t[0]), "connect-loopback:connect:%d", port);
	snprintf(t[i++], sizeof(t[0]), "ptrace-outside:ptrace:%d", (int)outsider);
	snprintf(t[i++], sizeof(t[0]), "signal-outside:signal:%d", (int)outsider);
	for (int k = 0; k < i; k++)
		tries[k] = t[k];
	tries[i] = NULL;
	probe(e, out, sizeof(out), tries);
	EXPECT(out, "read-ws", "ok");
	EXPECT(out, "read-outside", "EACCES"); /* Landlock */
	EXPECT(out, "write-ws", "ok");
	EXPECT(out, "write-outside", "EACCES");
	EXPECT(out, "write-readonly", "EACCES");
	EXPECT(out, "exec-allowed", "ok");
	EXPECT(out, "exec-outside", "EACCES");
	EXPECT(out, "exec-ws", "EACCES"); /* a copy of an allowed binary is not allowed */
	EXPECT(out, "bpf", "EPERM"); /* seccomp */
	EXPECT(out, "userns", "EPERM");
	EXPECT(out, "netlink", "EPERM"); /* a family the policy does not grant */
	EXPECT(out, "connect-loopback", "EPERM"); /* cgroup-BPF, structural deny */
	/* Landlock: a task outside its domain (signals from ABI 6 on; this test needs it). */
	EXPECT(out, "ptrace-outside", "EPERM");
	EXPECT(out, "signal-outside", probe_landlock_abi() >= 6 ? "EPERM" : "ok");
	close(lfd);
}

/*
 * The gap agentd computes for this agent, item by item, against the kernel: what it names is
 * allowed inside the agent. Two items are not tried here: "self: module autoload" would load a
 * module into this host's kernel, and "agentctl attach" is about processes not started by run.
 */
TEST(fallback_gap_matches_the_kernel)
{
	static const char *const expected[] = {
		"D/ws/secret",		 "files: other names",
		"files: setattr",	 "exec: executable mappings",
		"exec.allow_memfd",	 "self: module autoload",
		"self: ptrace_traceme",	 "self: inotify",
		"self: tasks by pid",	 "agentctl attach",
		"network.sockets: unix", NULL
	};
	struct env *e = setup();
	struct policy_errors errs = { 0 };
	char t[9][PATH_MAX + 64], out[8192], want[PATH_MAX];
	const char *tries[10];
	pid_t outsider = start_outsider();
	struct policy *p = NULL;
	struct layers l;
	struct gap g;
	size_t k;

	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "add", "fb", "--policy", e->policy, NULL),
		  0);
	ASSERT_EQ(policy_load(e->policy, NULL, NULL, &p, &errs), 0);
	layers_for_run(false, probe_landlock_abi(), probe_seccomp() == 0, NULL, &l);
	ASSERT_EQ(layers_gap(p, &l, &g), 0);
	for (k = 0; expected[k]; k++) {
		if (k >= g.n)
			FAIL("gap item %zu missing: %s", k, expected[k]);
		if (!strncmp(expected[k], "D/", 2))
			path_in(want, sizeof(want), e->dir, expected[k] + 2);
		else
			snprintf(want, sizeof(want), "%s", expected[k]);
		ASSERT_STREQ(g.v[k].rule, want);
	}
	ASSERT_EQ(g.n, k);
	gap_free(&g);
	policy_free(p);

	snprintf(t[0], sizeof(t[0]), "deny-inside-allow:read:%s/secret/key", e->ws);
	snprintf(t[1], sizeof(t[1]), "setattr:chmod:%s/outside", e->dir);
	snprintf(t[2], sizeof(t[2]), "mapping:ldso:" LDSO ":%s/true", e->ws);
	snprintf(t[3], sizeof(t[3]), "memfd:memfd:%s/true", e->ws);
	snprintf(t[4], sizeof(t[4]), "other-name:write:%s/alias", e->ws);
	snprintf(t[5], sizeof(t[5]), "traceme:traceme");
	snprintf(t[6], sizeof(t[6]), "host-unix:unix:%s", e->control); /* agentd's own socket */
	snprintf(t[7], sizeof(t[7]), "inotify:inotify:%s", e->dir); /* no rule grants D */
	snprintf(t[8], sizeof(t[8]), "prlimit-outside:prlimit:%d", (int)outsider);
	for (k = 0; k < 9; k++)
		tries[k] = t[k];
	tries[9] = NULL;
	probe(e, out, sizeof(out), tries);
	EXPECT(out, "deny-inside-allow", "ok");
	EXPECT(out, "setattr", "ok");
	EXPECT(out, "mapping", "ok");
	EXPECT(out, "memfd", "ok");
	EXPECT(out, "other-name", "ok"); /* D/readonly's own rule grants read only */
	EXPECT(out, "traceme", "ok");
	EXPECT(out, "host-unix", "ok");
	EXPECT(out, "inotify", "ok");
	EXPECT(out, "prlimit-outside", "ok");
}

/* The same gap through the CLI: policy check --layers names it, run --require full refuses. */
TEST(fallback_require_full_refuses_here)
{
	struct env *e = setup();
	char out[8192], want[PATH_MAX + 64];

	ASSERT_EQ(agentctl_run(out, sizeof(out), "policy", "check", "--layers",
			       "landlock,seccomp,cgroup", e->policy, NULL),
		  0);
	snprintf(want, sizeof(want), "  %s/ws/secret: deny inside the allowed tree %s/ws", e->dir,
		 e->dir);
	if (!strstr(out, "11 rules NOT ENFORCED by cgroup-BPF, Landlock ABI") || !strstr(out, want))
		FAIL("policy check --layers: %s", out);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "add", "fb", "--policy", e->policy, NULL),
		  0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "fb", "--require", "full", "--", "/bin/sh",
			       "-c", "echo started", NULL),
		  125);
	if (strstr(out, "started"))
		FAIL("started under --require full: %s", out);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "fb", "--", "/bin/sh", "-c", "echo started",
			       NULL),
		  0);
	ASSERT(strstr(out, "started"));
	ASSERT_EQ(agentctl_run(out, sizeof(out), "status", NULL), 0);
	if (!strstr(out, "NOT ENFORCED ") || !strstr(out, "files    Landlock ABI"))
		FAIL("status: %s", out);
}

/* The policy file changed after agentd loaded it: run refuses until it is reloaded. */
TEST(fallback_run_refuses_a_policy_changed_since_loaded)
{
	struct env *e = setup();
	char out[8192], text[4096];

	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "add", "fb", "--policy", e->policy, NULL),
		  0);
	snprintf(text, sizeof(text), policy_fmt, e->dir, e->dir, e->dir);
	strcpy(strstr(text, "\"/usr/bin/python3\""), "\"/usr/bin/python3\", \"/usr/bin/true\"]},\n"
						     " \"network\": {\"sockets\": [\"inet\", "
						     "\"unix\"]}}\n");
	test_write(e->policy, text, 0644);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "fb", "--", "/usr/bin/true", NULL), 3);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "policy", "reload", "fb", NULL), 0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "fb", "--", "/usr/bin/true", NULL), 0);
}

/*
 * A path of the policy renamed over after agentd loaded it: agentd's rules hold the object it
 * found, so run refuses rather than give the new object Landlock's rule, until a reload makes
 * the new object the policy's.
 */
TEST(fallback_run_refuses_a_path_renamed_over_since_loaded)
{
	struct env *e = setup();
	char out[8192], outside[PATH_MAX], readonly[PATH_MAX];

	path_in(outside, sizeof(outside), e->dir, "outside");
	path_in(readonly, sizeof(readonly), e->dir, "readonly");
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "add", "fb", "--policy", e->policy, NULL),
		  0);
	ASSERT_OK(rename(outside, readonly));
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "fb", "--", "/usr/bin/cat", readonly, NULL),
		  3);
	ASSERT(!strstr(out, "outside"));
	ASSERT_EQ(agentctl_run(out, sizeof(out), "policy", "reload", "fb", NULL), 0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "fb", "--", "/usr/bin/cat", readonly, NULL),
		  0);
	ASSERT(strstr(out, "outside"));
}

/* Runs agentctl with fd (opened by the child from path with flags) as descriptor target_fd
 * and standard error into out; returns its exit status. */
static int agentctl_with_fd(char *out, size_t outsz, const char *path, int flags, int target_fd,
			    char *const argv[])
{
	char bin[PATH_MAX];
	int pipefd[2], status, fd;
	ssize_t n, len = 0;
	pid_t pid;

	snprintf(bin, sizeof(bin), "%s/agentctl", test_bin_dir());
	ASSERT_OK(pipe(pipefd));
	pid = fork();
	ASSERT_OK(pid);
	if (pid == 0) {
		fd = open(path, flags);
		/* Standard error first: the pipe may sit at target_fd. */
		if (fd < 0 || dup2(pipefd[1], 2) < 0 || dup2(fd, target_fd) < 0)
			_exit(99);
		execv(bin, argv);
		_exit(98);
	}
	close(pipefd[1]);
	while (len + 1 < (ssize_t)outsz && (n = read(pipefd[0], out + len, outsz - 1 - len)) > 0)
		len += n;
	out[len] = '\0';
	close(pipefd[0]);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/*
 * A cgroup file opened for writing before the task is an agent is not checked again when it is
 * written: agentctl run refuses one on descriptors 0-2, and passes no other descriptor on.
 */
TEST(run_refuses_cgroup_stdio)
{
	char *argv[] = { "agentctl", "run", "fb", "--", "/bin/sh", "-c", "exit 0", NULL };
	struct env *e = setup();
	char other[PATH_MAX], procs[PATH_MAX + 16], out[8192];

	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "add", "fb", "--policy", e->policy, NULL),
		  0);
	test_cgroup(other, sizeof(other));
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", other);
	ASSERT_EQ(agentctl_with_fd(out, sizeof(out), procs, O_WRONLY, 1, argv), 3);
	if (!strstr(out, "descriptor 1 is a cgroup file open for writing") || !strstr(out, procs))
		FAIL("agentctl run: %s", out);
	ASSERT_EQ(agentctl_with_fd(out, sizeof(out), procs, O_RDWR, 0, argv), 3);
	/* Read-only, it is harmless: the run goes ahead. */
	ASSERT_EQ(agentctl_with_fd(out, sizeof(out), procs, O_RDONLY, 0, argv), 0);
}

TEST(run_closes_inherited_descriptors)
{
	char *argv[] = { "agentctl",
			 "run",
			 "fb",
			 "--",
			 "/bin/sh",
			 "-c",
			 "test -e /proc/self/fd/7 && echo fd7-open >&2; exit 0",
			 NULL };
	struct env *e = setup();
	char out[8192];

	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "add", "fb", "--policy", e->policy, NULL),
		  0);
	ASSERT_EQ(agentctl_with_fd(out, sizeof(out), "/dev/null", O_RDONLY, 7, argv), 0);
	if (strstr(out, "fd7-open"))
		FAIL("descriptor 7 reached the agent: %s", out);
}
