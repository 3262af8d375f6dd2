// SPDX-License-Identifier: GPL-2.0
/*
 * Host tier, without BPF LSM: agentctl drill through a real agentd (--allow-partial). What the
 * drill finds escaped is exactly what the daemon reports as not enforced (the gap of agent info,
 * which status and policy check --layers list too), for every shipped policy; and a drill leaves
 * nothing behind, whether it ends or its program is killed midway.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include "boundary.h"
#include "harness.h"
#include "kernel/probe.h"
#include "sandbox/gap_boundary.h"
#include "testlib.h"

static const char *const shipped[] = { "coding-agent", "demo-agent", "report-agent",
				       "research-agent", NULL };

static void need_fallback(void)
{
	struct probe p;

	probe_kernel(&p);
	if (probe_bpf_lsm_ok(&p))
		SKIP("BPF LSM works here: the VM tier drills it");
	if (!probe_landlock_ok(&p))
		SKIP("no Landlock on this kernel");
}

static json_t *parse(const char *out, const char *what)
{
	json_error_t jerr;
	json_t *j = json_loads(out, 0, &jerr);

	if (!j)
		FAIL("%s: not JSON (%s): %s", what, jerr.text, out);
	return j;
}

/* agent add NAME, with every var a shipped policy names pointed into dir. */
static void add_shipped(const char *name, const char *dir)
{
	char policy[PATH_MAX], ws[PATH_MAX], var[PATH_MAX + 16], dvar[PATH_MAX + 16], out[4096];
	int status;

	snprintf(policy, sizeof(policy), "%s/../policies/%s.json", test_bin_dir(), name);
	snprintf(ws, sizeof(ws), "%s/%s", dir, name);
	ASSERT_OK(mkdir(ws, 0755));
	snprintf(var, sizeof(var), "workspace=%s", ws);
	snprintf(dvar, sizeof(dvar), "dropbox=%s", ws);
	status = agentctl_run(out, sizeof(out), "agent", "add", name, "--policy", policy, "--var",
			      var, "--var", dvar, NULL);
	if (status)
		FAIL("agent add %s: exit %d: %s", name, status, out);
}

/* The boundaries the daemon says are not enforced for the agent. */
static unsigned int reported_gap(const char *name)
{
	char out[65536];
	struct gap_item it;
	unsigned int set = 0;
	json_t *j, *g;
	size_t i;
	int b;

	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "info", name, "--json", NULL), 0);
	j = parse(out, "agent info");
	json_array_foreach(
		json_object_get(json_object_get(json_object_get(j, "agent"), "enforcement"), "gap"),
		i, g)
	{
		it.rule = (char *)json_string_value(json_object_get(g, "rule"));
		it.why = (char *)json_string_value(json_object_get(g, "why"));
		b = gap_item_boundary(&it);
		if (b >= 0)
			set |= 1U << b;
	}
	json_decref(j);
	return set;
}

static const char *verdict_of(const json_t *b)
{
	return json_string_value(json_object_get(b, "verdict"));
}

TEST(drill_finds_escaped_exactly_the_reported_gap_for_every_shipped_policy)
{
	struct test_daemon d;
	char out[65536];
	unsigned int gap, escaped, drilled;
	const json_t *b;
	json_t *j;
	size_t i, k;
	int status, n;

	need_fallback();
	test_daemon_init(&d, "drill-gap");
	test_daemon_start(&d, "--allow-partial", NULL);
	for (k = 0; shipped[k]; k++) {
		add_shipped(shipped[k], d.dir);
		gap = reported_gap(shipped[k]);
		status = agentctl_run(out, sizeof(out), "drill", shipped[k], "--json", NULL);
		j = parse(out, shipped[k]);
		escaped = drilled = 0;
		json_array_foreach(json_object_get(json_object_get(j, "drill"), "boundaries"), i, b)
		{
			n = boundary_from_name(json_string_value(json_object_get(b, "boundary")));
			ASSERT(n >= 0);
			if (!strcmp(verdict_of(b), "allow-failed"))
				FAIL("%s: %s: the allowed operation failed: %s", shipped[k],
				     boundary_name(n), out);
			if (strcmp(verdict_of(b), "not-drilled"))
				drilled |= 1U << n;
			if (!strcmp(verdict_of(b), "escaped"))
				escaped |= 1U << n;
		}
		for (n = 0; n < BOUNDARY_COUNT; n++)
			if ((drilled & (1U << n)) && !(escaped & (1U << n)) != !(gap & (1U << n)))
				FAIL("%s: %s: the drill found it %s, the daemon reports it %s: %s",
				     shipped[k], boundary_name(n),
				     escaped & (1U << n) ? "escaped" : "blocked",
				     gap & (1U << n) ? "not enforced" : "enforced", out);
		if (status)
			FAIL("%s: drill exit %d: %s", shipped[k], status, out);
		/* Every kernel layer boundary was tried, not reported from the policy alone. */
		ASSERT_EQ(drilled & 0x7ffU, 0x7ffU);
		json_decref(j);
	}
}

/* A child of pid running comm: its pid, or 0. */
static pid_t child_named(pid_t pid, const char *comm)
{
	char path[64], buf[512], *c;
	struct dirent *e;
	pid_t found = 0;
	int ppid, fd;
	ssize_t n;
	DIR *dir = opendir("/proc");

	ASSERT(dir != NULL);
	while (!found && (e = readdir(dir))) {
		snprintf(path, sizeof(path), "/proc/%.16s/stat", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		c = strrchr(buf, ')');
		if (!c || sscanf(c + 2, "%*c %d", &ppid) != 1 || ppid != pid)
			continue;
		if (strstr(buf, comm))
			found = atoi(e->d_name);
	}
	closedir(dir);
	return found;
}

static bool any_probe_file(const char *dir)
{
	struct dirent *e;
	bool found = false;
	DIR *d = opendir(dir);

	ASSERT(d != NULL);
	while ((e = readdir(d)))
		found |= !strncmp(e->d_name, ".agentd-drill-", 14);
	closedir(d);
	return found;
}

/* Nothing of the drill of agent name (id 1) left: cgroup, process, scratch, files, segment. */
static void assert_nothing_left(const struct test_daemon *d, const char *name, const char *ws)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/.drill-%s", d->cgroup, name);
	if (!access(path, F_OK))
		FAIL("the drill's cgroup %s is left", path);
	snprintf(path, sizeof(path), "%s/drill/.scratch-%s", d->state, name);
	if (!access(path, F_OK))
		FAIL("the drill's scratch directory %s is left", path);
	if (any_probe_file(ws))
		FAIL("a probe file is left in %s", ws);
	if (shmget(0x61640001, 0, 0) >= 0 || errno != ENOENT)
		FAIL("the drill's System V segment is left");
	if (child_named(d->agentd->pid, "(agentd-drill)"))
		FAIL("agentd-drill is left running");
}

TEST(drill_leaves_nothing_behind)
{
	char ws[PATH_MAX], path[PATH_MAX + 32], out[65536];
	struct test_daemon d;
	struct stat st;

	need_fallback();
	test_daemon_init(&d, "drill-clean");
	test_daemon_start(&d, "--allow-partial", NULL);
	add_shipped("demo-agent", d.dir);
	snprintf(ws, sizeof(ws), "%s/demo-agent", d.dir);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "drill", "demo-agent", NULL), 0);
	assert_nothing_left(&d, "demo-agent", ws);
	snprintf(path, sizeof(path), "%s/drill/demo-agent.json", d.state);
	ASSERT_OK(stat(path, &st));
	ASSERT_EQ(st.st_mode & 07777, 0600);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "rm", "demo-agent", NULL), 0);
	if (!access(path, F_OK))
		FAIL("agent rm left the drill record %s", path);
}

/* The exec boundary's allowed program: says it runs, then waits for ever. */
static const char hold_fmt[] = "#!/bin/sh\necho $$ > %s/ready\nread x < %s/never\n";

static const char hold_policy_fmt[] =
	"{\"name\": \"hold\", \"extends\": [\"%s/../policies/base/linux-userland.json\"],\n"
	" \"files\": [{\"path\": \"/usr/bin\", \"rights\": [\"read\", \"exec\"]},\n"
	"  {\"path\": \"%s\", \"rights\": [\"read\", \"write\", \"create\", \"remove\"]}],\n"
	" \"exec\": {\"allow\": [\"%s\"]}}\n";

/* Agent "hold" whose exec boundary blocks in its allowed program; the drill started and that
 * program running (it said so on ws/ready) when it returns. */
static struct proc *hold_drill(struct test_daemon *d, char *ws, size_t wssz, pid_t *script)
{
	char hold[PATH_MAX + 16], policy[PATH_MAX + 16], fifo[PATH_MAX + 16];
	char text[4 * PATH_MAX], line[64] = "";
	char *argv[] = { "agentctl", "drill", "hold", "--boundary", "exec", NULL };
	struct pollfd pfd = { .events = POLLIN };
	struct proc *p;

	need_fallback();
	test_daemon_init(d, "drill-kill");
	snprintf(ws, wssz, "%s/ws", d->dir);
	ASSERT_OK(mkdir(ws, 0755));
	snprintf(fifo, sizeof(fifo), "%s/ready", ws);
	ASSERT_OK(mkfifo(fifo, 0600));
	snprintf(fifo, sizeof(fifo), "%s/never", ws);
	ASSERT_OK(mkfifo(fifo, 0600));
	snprintf(hold, sizeof(hold), "%s/hold.sh", d->dir);
	snprintf(text, sizeof(text), hold_fmt, ws, ws);
	test_write(hold, text, 0755);
	snprintf(policy, sizeof(policy), "%s/hold.json", d->dir);
	snprintf(text, sizeof(text), hold_policy_fmt, test_bin_dir(), ws, hold);
	test_write(policy, text, 0644);
	test_daemon_start(d, "--allow-partial", NULL);
	test_daemon_add(d, "hold", policy, NULL, 0);

	snprintf(fifo, sizeof(fifo), "%s/ready", ws);
	pfd.fd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT(pfd.fd >= 0);
	p = proc_start(argv);
	/* A bound on failure, not a timed assertion: the drill reaches the program at once. */
	if (poll(&pfd, 1, TEST_READY_MS) != 1 || read(pfd.fd, line, sizeof(line) - 1) <= 0)
		FAIL("the drill never ran the exec boundary's allowed program");
	close(pfd.fd);
	if (script)
		*script = atoi(line);
	return p;
}

TEST(drill_leaves_nothing_behind_when_its_program_is_killed)
{
	char ws[PATH_MAX];
	struct test_daemon d;
	struct proc *p = hold_drill(&d, ws, sizeof(ws), NULL);
	pid_t drill = child_named(d.agentd->pid, "(agentd-drill)");
	int status;

	ASSERT(drill > 0);
	ASSERT_OK(kill(drill, SIGKILL));
	status = proc_stop(p, 0);
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 3);
	assert_nothing_left(&d, "hold", ws);
}

/* agentd owns the drill: agentctl killed, the drill still ends (at its deadline here, its
 * program being stuck) and leaves nothing; the next request is answered after that. */
TEST(drill_leaves_nothing_behind_when_agentctl_is_killed)
{
	char ws[PATH_MAX], out[65536];
	struct test_daemon d;
	struct proc *p = hold_drill(&d, ws, sizeof(ws), NULL);

	proc_stop(p, SIGKILL);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "ls", NULL), 0);
	assert_nothing_left(&d, "hold", ws);
}

/* agentd killed during a drill: its next start removes the drill's cgroup (and the processes in
 * it) and scratch directory. */
TEST(drill_left_by_a_killed_agentd_is_removed_at_its_next_start)
{
	char ws[PATH_MAX], path[PATH_MAX + 64];
	struct test_daemon d;
	struct proc *p = hold_drill(&d, ws, sizeof(ws), NULL);

	proc_stop(d.agentd, SIGKILL);
	proc_stop(p, SIGKILL);
	snprintf(path, sizeof(path), "%s/.drill-hold", d.cgroup);
	ASSERT_OK(access(path, F_OK));
	test_daemon_start(&d, "--allow-partial", NULL);
	if (!access(path, F_OK))
		FAIL("the drill's cgroup %s is left after a restart", path);
	snprintf(path, sizeof(path), "%s/drill/.scratch-hold", d.state);
	if (!access(path, F_OK))
		FAIL("the drill's scratch directory %s is left after a restart", path);
}

/* A drill process killed (by the agent: the same agent to the kernel) fails the drill, not a
 * boundary passed untried. */
TEST(drill_fails_when_a_boundary_process_is_killed)
{
	char ws[PATH_MAX], stat[64], buf[512], out[65536];
	struct test_daemon d;
	pid_t script, boundary;
	struct proc *p = hold_drill(&d, ws, sizeof(ws), &script);
	char *c;
	int fd, status;
	ssize_t n;

	snprintf(stat, sizeof(stat), "/proc/%d/stat", script);
	fd = open(stat, O_RDONLY | O_CLOEXEC);
	ASSERT(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	c = strrchr(buf, ')');
	ASSERT(c && sscanf(c + 2, "%*c %d", &boundary) == 1);
	/* The script is the exec boundary's fork; its parent the boundary's process. */
	ASSERT_OK(kill(boundary, SIGKILL));
	status = proc_stop(p, 0);
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 1);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "ls", NULL), 0);
	assert_nothing_left(&d, "hold", ws);
}
