// SPDX-License-Identifier: GPL-2.0
/*
 * Host tier: agentd's daemon mode and agentctl, end to end, on a kernel without BPF LSM
 * (--allow-partial): the control socket, the agents' lifecycle, agentctl run, and the network
 * rules, which cgroup-BPF enforces here too. Everything is made under temporary names and
 * removed on every exit path.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/fs.h>
#include <bpf/bpf.h>
#include "kernel/cgroup.h"
#include "wire/control.h"
#include "kernel/enforcer.h"
#include "harness.h"
#include "kernel/probe.h"
#include "testlib.h"
#include "wire/unixsock.h"

struct env {
	char dir[256];
	char state[PATH_MAX];
	char control[PATH_MAX];
	char audit[PATH_MAX];
	char pins[PATH_MAX];
	char cgroup[PATH_MAX];
	char policy[PATH_MAX];
	struct proc *agentd;
};

static void start_agentd(struct env *e, bool partial)
{
	const char *ready[] = { "agentd: ready", NULL };

	char *argv[] = { "agentd", "--control",	  e->control, "--state-dir",
			 e->state, "--audit-dir", e->audit,   "--pin-dir",
			 e->pins,  "--cgroup",	  e->cgroup,  partial ? "--allow-partial" : NULL,
			 NULL };
	e->agentd = proc_start(argv);
	if (!proc_wait_line(e->agentd, 20000, ready))
		FAIL("agentd did not get ready: \"%s\"", e->agentd->buf);
}

static struct env *setup(void)
{
	static struct env e;
	char root[PATH_MAX - 64];
	FILE *f;

	ASSERT_EQ(cgroup2_mount(root, sizeof(root)), 0);
	test_tmpdir(e.dir, sizeof(e.dir), "ctl");
	snprintf(e.state, sizeof(e.state), "%s/state", e.dir);
	snprintf(e.control, sizeof(e.control), "%s/run/control.sock", e.dir);
	snprintf(e.audit, sizeof(e.audit), "%s/audit", e.dir);
	snprintf(e.policy, sizeof(e.policy), "%s/policy.json", e.dir);
	snprintf(e.cgroup, sizeof(e.cgroup), "%s/agentd-test-%d", root, getpid());
	test_pin_dir(e.pins, sizeof(e.pins));
	test_cgroup_tree_at_end(e.cgroup);
	f = fopen(e.policy, "w");
	ASSERT(f);
	fputs("{\"name\": \"t\", \"files\": [{\"path\": \"/\", \"rights\": [\"read\", \"exec\"]}],"
	      " \"network\": {\"sockets\": [\"inet\", \"unix\"]}}\n",
	      f);
	fclose(f);
	setenv("AGENTD_CONTROL", e.control, 1);
	return &e;
}

/* Runs agentctl with the arguments (NULL-terminated); returns its exit status (or 128+signal)
 * and its whole stdout in out. */
static int add_agent(struct env *e, const char *name)
{
	char out[4096];

	return agentctl_run(out, sizeof(out), "agent", "add", name, "--policy", e->policy, NULL);
}

static void send_frame(int fd, const char *json)
{
	size_t n = strlen(json);
	char hdr[4] = { (char)(n >> 24), (char)(n >> 16), (char)(n >> 8), (char)n };

	ASSERT_EQ(send(fd, hdr, 4, MSG_NOSIGNAL), 4);
	ASSERT_EQ(send(fd, json, n, MSG_NOSIGNAL), (long)n);
}

/* Reads one reply frame within 10 s: its error code, or "ok"; "EOF" when the daemon closed. */
static const char *read_reply(int fd, char *code, size_t codesz)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char buf[CONTROL_HDR + 4096];
	struct control_error err;
	size_t len = 0, n = 0;
	json_t *body;
	ssize_t r;

	while (control_frame_check(buf, len, &n) != 1) {
		if (poll(&pfd, 1, 10000) <= 0)
			FAIL("no reply within 10 s");
		r = recv(fd, buf + len, sizeof(buf) - len, 0);
		if (r <= 0) {
			snprintf(code, codesz, "EOF");
			return code;
		}
		len += r;
	}
	if (control_reply_parse(buf + CONTROL_HDR, n, 1, &body, &err) == 1) {
		json_decref(body);
		snprintf(code, codesz, "ok");
	} else {
		snprintf(code, codesz, "%s", err.code);
	}
	return code;
}

static void expect_status_ok(const char *control)
{
	char code[64];
	int fd = unix_connect(control);

	ASSERT_OK(fd);
	send_frame(fd, "{\"id\": 1, \"cmd\": \"status\"}");
	ASSERT_STREQ(read_reply(fd, code, sizeof(code)), "ok");
	close(fd);
}

TEST(daemon_refuses_to_start_without_bpf_lsm)
{
	struct probe p;
	struct env *e;
	int status;

	probe_kernel(&p);
	if (probe_bpf_lsm_ok(&p))
		SKIP("BPF LSM works on this kernel");
	e = setup();
	char *argv[] = { "agentd",    "--control", e->control, "--state-dir", e->state,
			 "--pin-dir", e->pins,	   "--cgroup", e->cgroup,     NULL };
	e->agentd = proc_start(argv);
	status = proc_stop(e->agentd, 0);
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 3);
	ASSERT_EQ(access(e->control, F_OK), -1);
}

static int connect_as_nobody(void *path)
{
	char code[64];
	int fd;

	if (setgid(65534) || setuid(65534))
		return 100;
	fd = unix_connect(path);
	if (fd < 0)
		return -fd == EACCES ? 1 : 101;
	/* The refusal may come before the request is sent: the send may fail, the read not. */
	if (send(fd, "\0\0\0\x1a{\"id\": 1, \"cmd\": \"status\"}", 30, MSG_NOSIGNAL) < 0 &&
	    errno != EPIPE)
		return 104;
	read_reply(fd, code, sizeof(code));
	close(fd);
	return !strcmp(code, CONTROL_E_PERM) ? 2 : !strcmp(code, "ok") ? 102 : 103;
}

TEST(control_socket_refuses_non_root)
{
	struct env *e = setup();
	char run[PATH_MAX];
	struct stat st;

	start_agentd(e, true);
	ASSERT_OK(stat(e->control, &st));
	ASSERT_EQ(st.st_mode & 0777, 0600);
	/* The file mode stops it first; SO_PEERCRED stops it when the mode would not. */
	ASSERT_EQ(run_in_cgroup(NULL, connect_as_nobody, e->control, NULL), 1);
	ASSERT_OK(chmod(e->control, 0666));
	ASSERT_OK(chmod(e->dir, 0755));
	snprintf(run, sizeof(run), "%s/run", e->dir);
	ASSERT_OK(chmod(run, 0755));
	ASSERT_EQ(run_in_cgroup(NULL, connect_as_nobody, e->control, NULL), 2);
	expect_status_ok(e->control);
}

TEST(control_bad_frames_get_errors_and_the_daemon_goes_on)
{
	struct env *e = setup();
	char code[64];
	int fd;

	start_agentd(e, true);
	fd = unix_connect(e->control);
	ASSERT_OK(fd);
	send_frame(fd, "{nope");
	ASSERT_STREQ(read_reply(fd, code, sizeof(code)), CONTROL_E_JSON);
	send_frame(fd, "{\"id\": 1, \"cmd\": \"agent.rm\", \"name\": \"../x\"}");
	ASSERT_STREQ(read_reply(fd, code, sizeof(code)), CONTROL_E_REQUEST);
	send_frame(fd, "{\"id\": 1, \"cmd\": \"agent.zap\"}");
	ASSERT_STREQ(read_reply(fd, code, sizeof(code)), CONTROL_E_COMMAND);
	/* The same connection still serves. */
	send_frame(fd, "{\"id\": 1, \"cmd\": \"status\"}");
	ASSERT_STREQ(read_reply(fd, code, sizeof(code)), "ok");
	/* Oversized: an error, then the stream is closed. */
	ASSERT_EQ(send(fd, "\x00\x01\x00\x01{}", 6, MSG_NOSIGNAL), 6);
	ASSERT_STREQ(read_reply(fd, code, sizeof(code)), CONTROL_E_FRAME);
	ASSERT_STREQ(read_reply(fd, code, sizeof(code)), "EOF");
	close(fd);
	/* Empty frame. */
	fd = unix_connect(e->control);
	ASSERT_EQ(send(fd, "\x00\x00\x00\x00", 4, MSG_NOSIGNAL), 4);
	ASSERT_STREQ(read_reply(fd, code, sizeof(code)), CONTROL_E_FRAME);
	close(fd);
	/* Truncated: the peer shuts down mid-frame. */
	fd = unix_connect(e->control);
	ASSERT_EQ(send(fd, "\x00\x00\x00\x64{\"id\": 1", 12, MSG_NOSIGNAL), 12);
	ASSERT_OK(shutdown(fd, SHUT_WR));
	ASSERT_STREQ(read_reply(fd, code, sizeof(code)), CONTROL_E_FRAME);
	close(fd);
	/* A client that stalls mid-frame stalls nobody else. */
	fd = unix_connect(e->control);
	ASSERT_EQ(send(fd, "\x00\x00\x00\x64{", 5, MSG_NOSIGNAL), 5);
	expect_status_ok(e->control);
	close(fd);
	expect_status_ok(e->control);
}

TEST(agent_add_ls_rm)
{
	struct env *e = setup();
	char out[8192], path[PATH_MAX + 64];

	start_agentd(e, true);
	ASSERT_EQ(add_agent(e, "t-one"), 0);
	ASSERT_EQ(add_agent(e, "t-one"), 1);
	ASSERT_EQ(add_agent(e, "t-two"), 0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "ls", NULL), 0);
	if (!strstr(out, "t-one") || !strstr(out, "t-two"))
		FAIL("agent ls: %s", out);
	snprintf(path, sizeof(path), "%s/t-one", e->cgroup);
	ASSERT_OK(access(path, F_OK));
	snprintf(path, sizeof(path), "%s/agents/t-one.json", e->state);
	ASSERT_OK(access(path, F_OK));

	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "rm", "t-one", NULL), 0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "rm", "t-one", NULL), 1);
	ASSERT_EQ(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/t-one", e->cgroup);
	ASSERT_EQ(access(path, F_OK), -1);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "ls", "--json", NULL), 0);
	if (strstr(out, "t-one") || !strstr(out, "t-two"))
		FAIL("agent ls after rm: %s", out);
	/* A name of digits alone would read as an id in audit filters (--agent): refused. */
	ASSERT(add_agent(e, "123") != 0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "info", "123", NULL), 1);
	/* Bad input is a usage error before any request. */
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "add", "Bad_Name", "--policy", e->policy,
			       NULL),
		  2);
}

TEST(agent_add_refuses_a_broken_policy_with_its_place)
{
	struct env *e = setup();
	char out[8192], bad[PATH_MAX + 16];
	FILE *f;

	start_agentd(e, true);
	snprintf(bad, sizeof(bad), "%s/bad.json", e->dir);
	f = fopen(bad, "w");
	ASSERT(f);
	fputs("{\"name\": \"t\",\n \"files\": 3}\n", f);
	fclose(f);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "add", "t-bad", "--policy", bad, "--json",
			       NULL),
		  1);
	if (!strstr(out, "bad-policy") || !strstr(out, "bad.json:2:"))
		FAIL("no file:line in the refusal: %s", out);
	/* A reload that does not compile changes nothing. */
	ASSERT_EQ(add_agent(e, "t-ok"), 0);
	f = fopen(e->policy, "w");
	ASSERT(f);
	fputs("{\"name\": ", f);
	fclose(f);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "policy", "reload", "t-ok", NULL), 1);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "info", "t-ok", NULL), 0);
	if (!strstr(out, "      1 "))
		FAIL("generation changed by a failed reload: %s", out);
}

static int check_own_cgroup(const char *out, const char *cgroup)
{
	char root[PATH_MAX], want[PATH_MAX + 8];

	ASSERT_EQ(cgroup2_mount(root, sizeof(root)), 0);
	snprintf(want, sizeof(want), "0::%s\n", cgroup + strlen(root));
	return strstr(out, want) != NULL;
}

TEST(run_starts_inside_and_passes_status_and_signals)
{
	struct env *e = setup();
	char out[8192], cg[PATH_MAX + 64];
	const char *up[] = { "started", NULL };
	struct proc *p;
	int status;

	start_agentd(e, true);
	ASSERT_EQ(add_agent(e, "t-run"), 0);
	snprintf(cg, sizeof(cg), "%s/t-run", e->cgroup);
	/* The child's first look at itself already finds the agent's cgroup. */
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "t-run", "--", "cat", "/proc/self/cgroup",
			       NULL),
		  0);
	if (!check_own_cgroup(out, cg))
		FAIL("not in %s: %s", cg, out);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "t-run", "--", "sh", "-c", "exit 7", NULL),
		  7);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "t-run", "--", "sh", "-c", "kill -TERM $$",
			       NULL),
		  128 + SIGTERM);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "t-run", "--user", "nobody", "--cwd", "/",
			       "--", "sh", "-c", "id -u; pwd", NULL),
		  0);
	if (!strstr(out, "65534\n/\n"))
		FAIL("--user/--cwd: %s", out);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "t-nope", "--", "true", NULL), 1);

	/* A signal to agentctl reaches the child, whose death agentctl reports. */
	char *argv[] = {
		"agentctl", "run", "t-run", "--", "sh", "-c", "echo started; exec sleep 60", NULL
	};
	p = proc_start(argv);
	if (!proc_wait_line(p, 10000, up))
		FAIL("the child did not start");
	status = proc_stop(p, SIGINT);
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 128 + SIGINT);
}

TEST(status_says_what_is_not_enforced)
{
	struct env *e = setup();
	char out[8192];
	struct probe p;

	probe_kernel(&p);
	if (probe_bpf_lsm_ok(&p))
		SKIP("BPF LSM works on this kernel: everything is enforced");
	start_agentd(e, true);
	ASSERT_EQ(add_agent(e, "t-st"), 0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "status", NULL), 0);
	/* Files and exec fall to Landlock where it exists (docs/LAYERS.md), with a gap. */
	if (!strstr(out, p.landlock_abi > 0 ? "files    Landlock ABI" : "files    NOT ENFORCED") ||
	    !strstr(out, "network  cgroup-BPF") || !strstr(out, "t-st: id 1") ||
	    !strstr(out, "NOT ENFORCED"))
		FAIL("status: %s", out);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "status", "--json", NULL), 0);
	if (!strstr(out, "\"gap\": [") || !strstr(out, "\"partial\": true"))
		FAIL("status --json: %s", out);
}

/* cgroup-BPF enforces on this host: loopback is structurally denied to an agent. */
TEST(network_rules_hold_for_agentctl_run)
{
	struct env *e = setup();
	char out[8192], script[128];
	int lfd, port;

	start_agentd(e, true);
	ASSERT_EQ(add_agent(e, "t-net"), 0);
	lfd = test_loopback_listener(&port);
	snprintf(script, sizeof(script),
		 "exec 2>&1; exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", port);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "t-net", "--", "bash", "-c", script, NULL),
		  1);
	if (!strstr(out, "Operation not permitted"))
		FAIL("inside the agent: %s", out);
	ASSERT_EQ(run_in_cgroup(NULL, test_loopback_connect, &port, NULL), 0);
	close(lfd);
}

/* kill -9 of agentd: the agent keeps its rules; a restarted agentd re-adopts it. */
TEST(restart_readopts_agents)
{
	struct env *e = setup();
	char out[8192];

	start_agentd(e, true);
	ASSERT_EQ(add_agent(e, "t-keep"), 0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "policy", "reload", NULL), 0);
	proc_stop(e->agentd, SIGKILL);
	start_agentd(e, true);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "ls", NULL), 0);
	if (!strstr(out, "t-keep") || !strstr(out, "      2 "))
		FAIL("agent ls after restart: %s", out);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "t-keep", "--", "true", NULL), 0);
	/* SIGTERM stops cleanly, and the audit log verifies. */
	ASSERT_EQ(proc_stop(e->agentd, SIGTERM), 0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "audit", "verify", "--dir", e->audit, NULL), 0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "audit", "query", "--dir", e->audit, "--kind",
			       "lifecycle", NULL),
		  0);
	if (!strstr(out, "agent-adopt") || !strstr(out, "daemon-stop"))
		FAIL("lifecycle records: %s", out);
}

/* The wall clock counts from the add, across a kill -9 and restart of agentd: the restarted
 * daemon neither forgets the deadline nor starts it again. */
TEST(wall_clock_survives_a_restart)
{
	struct env *e = setup();
	char out[8192];
	FILE *f = fopen(e->policy, "w");

	ASSERT(f);
	fputs("{\"name\": \"t\", \"files\": [{\"path\": \"/\", \"rights\": [\"read\", \"exec\"]}],"
	      " \"limits\": {\"wall_clock\": \"3s\"}}\n",
	      f);
	fclose(f);
	start_agentd(e, true);
	ASSERT_EQ(add_agent(e, "t-wc"), 0);
	proc_stop(e->agentd, SIGKILL);
	start_agentd(e, true);
	/* Killed at the deadline: agentctl run passes SIGKILL through as 128 + 9. */
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "t-wc", "--", "sleep", "60", NULL), 137);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "audit", "query", "--dir", e->audit, "--kind",
			       "lifecycle", NULL),
		  0);
	if (!strstr(out, "agent-expired"))
		FAIL("no agent-expired record: %s", out);
}

/* From inside: connect (the kernel lets it through where BPF LSM does not run) and ask for the
 * status as root; 1 when agentd refuses with CONTROL_E_PERM, 2 when the kernel refused the
 * connection (EPERM, BPF LSM), 100+ otherwise. */
static int status_from_inside(void *path)
{
	char code[64];
	int fd = unix_connect(path);

	if (fd == -EPERM)
		return 2;
	if (fd < 0)
		return 100;
	if (send(fd, "\0\0\0\x1a{\"id\": 1, \"cmd\": \"status\"}", 30, MSG_NOSIGNAL) < 0 &&
	    errno != EPIPE)
		return 101;
	read_reply(fd, code, sizeof(code));
	close(fd);
	return !strcmp(code, CONTROL_E_PERM) ? 1 : !strcmp(code, "ok") ? 102 : 103;
}

/* An agent running as root, a tool's process, a process of an attached cgroup: none of them
 * talks to agentd, whatever the socket's mode; root outside still does. */
TEST(control_socket_refuses_agents_and_tools_even_as_root)
{
	struct env *e = setup();
	char cg[PATH_MAX + 32], foreign[PATH_MAX], out[4096];
	struct probe p;
	int want;

	probe_kernel(&p);
	want = probe_bpf_lsm_ok(&p) ? 2 : 1;
	start_agentd(e, true);
	ASSERT_EQ(add_agent(e, "t-root"), 0);
	snprintf(cg, sizeof(cg), "%s/t-root", e->cgroup);
	ASSERT_EQ(run_in_cgroup(cg, status_from_inside, e->control, NULL), want);
	snprintf(cg, sizeof(cg), "%s/tools.broker/t-tool", e->cgroup);
	if (mkdir(cg, 0755) && errno != EEXIST)
		FAIL("mkdir %s: %s", cg, strerror(errno));
	ASSERT_EQ(run_in_cgroup(cg, status_from_inside, e->control, NULL), 1);
	test_cgroup(foreign, sizeof(foreign));
	ASSERT_EQ(agentctl_run(out, sizeof(out), "attach", "t-root", "--cgroup", foreign,
			       "--allow-partial", NULL),
		  0);
	ASSERT_EQ(run_in_cgroup(foreign, status_from_inside, e->control, NULL), want);
	expect_status_ok(e->control);
}

/* The events ring's size in the pin directory, in bytes (0: no ring pinned). */
static __u32 pinned_ring(const char *pins)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX + 16];
	int fd;

	snprintf(path, sizeof(path), "%s/events", pins);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		info.max_entries = 0;
	close(fd);
	return info.max_entries;
}

/* agentd with the ring buffer option, started and stopped again: 0, or its exit status when it
 * would not start. */
static int agentd_ring(struct env *e, const char *mb)
{
	const char *ready[] = { "agentd: ready", NULL };
	char *argv[] = {
		"agentd",	    "--control", e->control, "--state-dir", e->state,
		"--pin-dir",	    e->pins,	 "--cgroup", e->cgroup,	    "--allow-partial",
		"--ring-buffer-mb", (char *)mb,	 NULL
	};
	int status;

	e->agentd = proc_start(argv);
	if (!proc_wait_line(e->agentd, 20000, ready)) {
		status = proc_stop(e->agentd, SIGKILL);
		return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	}
	status = proc_stop(e->agentd, SIGTERM);
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

/* The ring is the size asked (default 32 MiB); a pinned ring keeps its size across restarts
 * (its pending events with it); bad sizes are refused before anything starts. */
TEST(ring_buffer_size_is_set_kept_and_checked)
{
	static const char *const bad[] = { "0", "3", "2048", "-1", "8M", "", NULL };
	struct env *e = setup();
	size_t i;

	start_agentd(e, true);
	proc_stop(e->agentd, SIGTERM);
	ASSERT_EQ(pinned_ring(e->pins), 32U << 20);
	ASSERT_EQ(agentd_ring(e, "8"), 0);
	ASSERT_EQ(pinned_ring(e->pins), 32U << 20); /* pinned: kept */
	ASSERT_EQ(enforcer_teardown(e->pins), 0);
	ASSERT_EQ(agentd_ring(e, "8"), 0);
	ASSERT_EQ(pinned_ring(e->pins), 8U << 20);
	for (i = 0; bad[i]; i++)
		if (agentd_ring(e, bad[i]) != 2)
			FAIL("agentd --ring-buffer-mb \"%s\" was not refused", bad[i]);
}

/* The limit on process pid's descriptor numbers that leaves it `free` new descriptors. */
static int limit_leaving(pid_t pid, int free)
{
	char path[64];
	bool used[4096] = { false };
	struct dirent *de;
	int fd, n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	ASSERT(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && (fd = atoi(de->d_name)) < 4096)
			used[fd] = true;
	closedir(d);
	for (fd = 0; fd < 4096; fd++)
		if (!used[fd] && n++ == free)
			break;
	return fd;
}

/* Reads what came on fd: 1 when the peer closed it without having sent a byte (*got says
 * whether one came before), 0 otherwise. */
static int closed_silently(int fd, bool *got)
{
	char buf[256];
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		*got = true;
	return n == 0 && !*got;
}

/*
 * Out of descriptors, agentd closes a new connection at once instead of leaving it pending (its
 * listener would stay readable and its loop spin): the client reads EOF, without a reply. With
 * descriptors again, requests are answered.
 */
TEST(control_socket_sheds_connections_when_out_of_descriptors)
{
	struct pollfd pfd[32];
	bool got[32] = { false };
	struct env *e = setup();
	struct rlimit low, old;
	int n, i, shed = 0;

	start_agentd(e, true);
	ASSERT_OK(prlimit(e->agentd->pid, RLIMIT_NOFILE, NULL, &old));
	/* The soft limit only: raising a hard limit back needs CAP_SYS_RESOURCE. */
	low.rlim_cur = limit_leaving(e->agentd->pid, 0);
	low.rlim_max = old.rlim_max;
	ASSERT_OK(prlimit(e->agentd->pid, RLIMIT_NOFILE, &low, NULL));
	/* None left: every connection needs the one in reserve. */
	for (n = 0; n < 32; n++) {
		pfd[n] = (struct pollfd){ .fd = unix_connect(e->control), .events = POLLIN };
		ASSERT_OK(pfd[n].fd);
	}
	while (!shed && poll(pfd, n, 10000) > 0)
		for (i = 0; i < n; i++) {
			if (pfd[i].revents && closed_silently(pfd[i].fd, &got[i]))
				shed = 1;
			if (pfd[i].revents & (POLLHUP | POLLERR))
				pfd[i].fd = -pfd[i].fd - 1; /* closed: poll no more */
		}
	if (!shed)
		FAIL("%d connections to an agentd out of descriptors, none closed at once", n);
	for (i = 0; i < n; i++)
		close(pfd[i].fd < 0 ? -pfd[i].fd - 1 : pfd[i].fd);
	ASSERT_OK(prlimit(e->agentd->pid, RLIMIT_NOFILE, &old, NULL));
	expect_status_ok(e->control);
}
