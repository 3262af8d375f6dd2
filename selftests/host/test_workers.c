// SPDX-License-Identifier: GPL-2.0
/*
 * Host tier: what agentd's workers hold. Each is exec'd (a fresh image): no mapping of a BPF map
 * (agentd maps its enforcement maps read-write), no BPF descriptor, no descriptor of agentd's
 * besides the sockets it passes on purpose, no environment, and a stderr that is a pipe agentd
 * reads rather than agentd's own stderr.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kernel/cgroup.h"
#include "harness.h"
#include "testlib.h"

#define TARGETS_MAX 1024

struct wenv {
	char dir[256];
	char state[PATH_MAX], control[PATH_MAX], audit[PATH_MAX], pins[PATH_MAX];
	char cgroup[PATH_MAX], policy[PATH_MAX];
	struct proc *agentd;
};

/* agentd with agent "t-w" (so that a broker worker runs beside the proxy's). */
static struct wenv *setup(void)
{
	static struct wenv e;
	const char *ready[] = { "agentd: ready", NULL };
	char root[PATH_MAX - 64], out[4096];
	char *argv[] = { "agentd",	"--control",	   e.control,	"--state-dir", e.state,
			 "--audit-dir", e.audit,	   "--pin-dir", e.pins,	       "--cgroup",
			 e.cgroup,	"--allow-partial", NULL };

	ASSERT_EQ(cgroup2_mount(root, sizeof(root)), 0);
	test_tmpdir(e.dir, sizeof(e.dir), "wk");
	snprintf(e.state, sizeof(e.state), "%s/state", e.dir);
	snprintf(e.control, sizeof(e.control), "%s/run/control.sock", e.dir);
	snprintf(e.audit, sizeof(e.audit), "%s/audit", e.dir);
	snprintf(e.policy, sizeof(e.policy), "%s/policy.json", e.dir);
	snprintf(e.cgroup, sizeof(e.cgroup), "%s/agentd-wk-%d", root, getpid());
	test_pin_dir(e.pins, sizeof(e.pins));
	test_cgroup_tree_at_end(e.cgroup);
	test_write(e.policy,
		   "{\"name\": \"t\", \"files\": [{\"path\": \"/\", \"rights\": [\"read\"]}], "
		   "\"network\": {\"proxy\": {\"allow_hosts\": [\"example.test\"]}}}\n",
		   0644);
	setenv("AGENTD_CONTROL", e.control, 1);
	e.agentd = proc_start(argv);
	if (!proc_wait_line(e.agentd, 20000, ready))
		FAIL("agentd did not get ready: \"%s\"", e.agentd->buf);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "add", "t-w", "--policy", e.policy, NULL),
		  0);
	return &e;
}

/* What each descriptor of pid points at ("socket:[N]", "pipe:[N]", a path, ...). */
static size_t fd_targets(pid_t pid, char (*out)[PATH_MAX], int *fds, size_t max)
{
	char dir[64], link[PATH_MAX];
	struct dirent *de;
	size_t n = 0;
	ssize_t len;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	ASSERT(d);
	while ((de = readdir(d)) && n < max) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
		len = readlink(link, out[n], PATH_MAX - 1);
		if (len < 0)
			continue; /* closed meanwhile (opendir's own, for agentd) */
		out[n][len] = '\0';
		fds[n++] = atoi(de->d_name);
	}
	closedir(d);
	return n;
}

static bool has_target(char (*t)[PATH_MAX], size_t n, const char *want)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(t[i], want))
			return true;
	return false;
}

/* agentd's children: its workers (no tool or agentctl run is running in these tests). */
static size_t workers_of(pid_t agentd, pid_t *out, size_t max)
{
	char path[64], buf[4096], *p, *end;
	size_t n = 0, len = 0;
	ssize_t r;
	long pid;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)agentd, (int)agentd);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_OK(fd);
	while ((r = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += r;
	buf[len] = '\0';
	close(fd);
	for (p = buf; (pid = strtol(p, &end, 10)) > 0 && n < max; p = end)
		out[n++] = pid;
	return n;
}

static bool maps_name_bpf(pid_t pid)
{
	char path[64], line[1024];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	ASSERT(f);
	while (fgets(line, sizeof(line), f))
		found |= strstr(line, "anon_inode:bpf") != NULL;
	fclose(f);
	return found;
}

static size_t environ_len(pid_t pid)
{
	char path[64], buf[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_OK(fd);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	ASSERT_OK(n);
	return n;
}

static void check_worker(pid_t w, char (*mine)[PATH_MAX], size_t nmine, const char *agentd_err)
{
	static char t[TARGETS_MAX][PATH_MAX];
	int fds[TARGETS_MAX];
	size_t n = fd_targets(w, t, fds, TARGETS_MAX), i;

	if (maps_name_bpf(w))
		FAIL("worker %d maps a BPF object", (int)w);
	if (environ_len(w))
		FAIL("worker %d has an environment", (int)w);
	for (i = 0; i < n; i++) {
		if (!strncmp(t[i], "anon_inode:bpf", 14))
			FAIL("worker %d: fd %d is %s", (int)w, fds[i], t[i]);
		/* Sockets are passed on purpose (the channel's other end is not agentd's); an
		 * anon_inode's name is not its identity (the worker's own epoll). */
		if (strncmp(t[i], "socket:", 7) && strncmp(t[i], "pipe:", 5) &&
		    strncmp(t[i], "anon_inode:", 11) && strcmp(t[i], "/dev/null") &&
		    has_target(mine, nmine, t[i]))
			FAIL("worker %d: fd %d is agentd's %s", (int)w, fds[i], t[i]);
		if (fds[i] == 1 || fds[i] == 2) {
			/* A pipe whose read end agentd holds, and not agentd's own stderr. */
			if (strncmp(t[i], "pipe:", 5) || !has_target(mine, nmine, t[i]) ||
			    !strcmp(t[i], agentd_err))
				FAIL("worker %d: fd %d is %s, not a pipe to agentd", (int)w, fds[i],
				     t[i]);
		}
	}
}

TEST(workers_hold_no_mapping_descriptor_or_stderr_of_agentds)
{
	static char mine[TARGETS_MAX][PATH_MAX];
	int fds[TARGETS_MAX];
	struct wenv *e = setup();
	pid_t w[16];
	size_t nmine, nw, i, k;

	nmine = fd_targets(e->agentd->pid, mine, fds, TARGETS_MAX);
	/* What the workers must not hold is there to hold. */
	ASSERT(maps_name_bpf(e->agentd->pid));
	nw = workers_of(e->agentd->pid, w, 16);
	if (nw < 2)
		FAIL("%zu children of agentd, expected the proxy's worker and t-w's", nw);
	for (k = 0; k < nmine; k++)
		if (fds[k] == 2)
			break;
	ASSERT(k < nmine);
	for (i = 0; i < nw; i++)
		check_worker(w[i], mine, nmine, mine[k]);
}
