// SPDX-License-Identifier: GPL-2.0
/*
 * BPF LSM tests: run in the VM tier on each Debian kernel, and natively where the host kernel
 * loads BPF LSM programs. Each drives the real agentd and tries the operation from inside an
 * agent cgroup, checking errno; and the same operation outside, or on another object, succeeds.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "harness.h"
#include "ops.h"

struct slice {
	struct test_daemon d;
	char cgroup[PATH_MAX]; /* the agent's */
	char secret[PATH_MAX];
	char other[PATH_MAX];
	struct proc *agentd;
};

/* A policy that allows everything but opening denied: every right below /, none on denied, each
 * socket family the policy language names, connections anywhere, binding, and memfd and
 * writable executables. */
static void write_deny_policy(const char *path, const char *denied)
{
	char text[2 * PATH_MAX];

	snprintf(text, sizeof(text),
		 "{\"name\": \"deny-open\", \"files\": ["
		 "{\"path\": \"/\", \"rights\": [\"read\", \"write\", \"exec\", \"create\","
		 " \"remove\", \"link\", \"truncate\", \"setattr\"]},"
		 "{\"path\": \"%s\", \"rights\": []}],"
		 " \"exec\": {\"allow_memfd\": true, \"allow_writable\": true},"
		 " \"network\": {\"connect\": [{\"cidr\": \"0.0.0.0/0\"}, {\"cidr\": \"::/0\"}],"
		 " \"bind\": true,"
		 " \"sockets\": [\"inet\", \"inet6\", \"unix\", \"netlink\", \"packet\", "
		 "\"raw\"]}}\n",
		 denied);
	test_write(path, text, 0644);
}

/* agentd (decisions on stdout: -v) with an agent denied the file at secret (created when
 * empty). With -o omit-deny-rule the policy denies "other-decoy" instead, so that the deny
 * tests must fail: proof that they can. */
static void slice_start_denying(struct slice *s, const char *secret)
{
	char decoy[PATH_MAX], policy[PATH_MAX];

	test_daemon_init(&s->d, "files");
	if (secret)
		snprintf(s->secret, sizeof(s->secret), "%s", secret);
	else
		test_file(s->secret, sizeof(s->secret), "secret", "s3cr3t\n");
	test_file(s->other, sizeof(s->other), "other", "public\n");
	test_file(decoy, sizeof(decoy), "other-decoy", "decoy\n");
	snprintf(policy, sizeof(policy), "%s/policy.json", s->d.dir);
	write_deny_policy(policy, test_option("omit-deny-rule") ? decoy : s->secret);
	test_daemon_start(&s->d, "-v", NULL);
	s->agentd = s->d.agentd;
	test_daemon_add(&s->d, "t", policy, s->cgroup, sizeof(s->cgroup));
}

static void slice_start(struct slice *s)
{
	slice_start_denying(s, NULL);
}

/* Opens O_PATH (which runs no file_open check), then reopens through /proc/self/fd. */
static int try_reopen_o_path(void *path)
{
	char proc_path[64];
	int fd = open(path, O_PATH | O_CLOEXEC);

	if (fd < 0)
		return 100 + errno;
	snprintf(proc_path, sizeof(proc_path), "/proc/self/fd/%d", fd);
	return try_open(proc_path);
}

TEST(probe_finds_bpf_lsm)
{
	char *argv[] = { "agentd", "--probe", NULL };
	const char *avail[] = { "BPF LSM:", "available", NULL };
	struct proc *p = proc_start(argv);
	int status;

	if (!proc_wait_line(p, 20000, avail))
		FAIL("agentd --probe does not report BPF LSM available: \"%s\"", p->buf);
	status = proc_stop(p, 0);
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
}

TEST(file_open_denied_inside_agent)
{
	char pid_field[32], path_field[PATH_MAX + 16];
	struct slice s;
	pid_t child;

	slice_start(&s);
	ASSERT_EQ(run_in_cgroup(s.cgroup, try_open, s.secret, &child), EPERM);
	snprintf(pid_field, sizeof(pid_field), " pid=%d ", child);
	snprintf(path_field, sizeof(path_field), " path=\"%s\"", s.secret);
	const char *want[] = { pid_field, "deny agent=1 ", "hook=file_open reason=rule rule=2 ",
			       path_field, NULL };
	if (!proc_wait_line(s.agentd, 10000, want))
		FAIL("agentd printed no deny event for pid %d: \"%s\"", child, s.agentd->buf);
}

TEST(file_open_other_file_allowed_inside_agent)
{
	struct slice s;

	slice_start(&s);
	ASSERT_EQ(run_in_cgroup(s.cgroup, try_open, s.other, NULL), 0);
}

TEST(file_open_allowed_outside_agent)
{
	struct slice s;

	slice_start(&s);
	ASSERT_EQ(run_in_cgroup(NULL, try_open, s.secret, NULL), 0);
}

TEST(file_open_deny_follows_the_object)
{
	char hard[PATH_MAX + 8], sym[PATH_MAX + 8];
	struct slice s;

	slice_start(&s);
	snprintf(hard, sizeof(hard), "%s.hard", s.secret);
	snprintf(sym, sizeof(sym), "%s.sym", s.secret);
	ASSERT_OK(link(s.secret, hard));
	test_unlink_at_end(hard);
	ASSERT_OK(symlink(s.secret, sym));
	test_unlink_at_end(sym);
	ASSERT_EQ(run_in_cgroup(s.cgroup, try_open, hard, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(s.cgroup, try_open, sym, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(s.cgroup, try_reopen_o_path, s.secret, NULL), EPERM);
}

TEST(agentd_stops_cleanly_on_sigterm)
{
	struct slice s;
	int status;

	slice_start(&s);
	status = proc_stop(s.agentd, SIGTERM);
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
}

/* A slice denying f, a file secret at the top of a tmpfs mounted below a test directory. */
static void slice_denying_secret_on_tmpfs(struct slice *s, char *f, size_t fsz)
{
	char top[PATH_MAX], m[PATH_MAX];

	test_dir(top, sizeof(top));
	if (mkdir(PATHF(m, "%s/mnt", top), 0755))
		FAIL("mkdir %s: %s", m, strerror(errno));
	test_mount_tmpfs(m);
	test_write(pathf(f, fsz, "%s/secret", m), "s3cr3t\n", 0644);
	slice_start_denying(s, f);
}

/* The event's path runs through the mount point of the file system the object is on. */
TEST(file_event_path_crosses_mounts)
{
	char f[PATH_MAX], want_path[PATH_MAX + 16];
	struct slice s;

	slice_denying_secret_on_tmpfs(&s, f, sizeof(f));
	ASSERT_EQ(run_in_cgroup(s.cgroup, try_open, f, NULL), EPERM);
	snprintf(want_path, sizeof(want_path), " path=\"%s\"", f);
	const char *want[] = { "deny agent=1 ", "hook=file_open", want_path, NULL };
	if (!proc_wait_line(s.agentd, 10000, want))
		FAIL("no deny event with path %s: \"%s\"", f, s.agentd->buf);
}

/* A hook that sees no mount (utimes here) names the object from the top of its file system:
 * the path's tail, marked truncated. */
TEST(inode_hook_event_path_is_a_marked_tail)
{
	char f[PATH_MAX];
	struct slice s;

	slice_denying_secret_on_tmpfs(&s, f, sizeof(f));
	ASSERT_EQ(run_in_cgroup(s.cgroup, op_utimes, OP(.a = f), NULL), EPERM);
	const char *want[] = { "deny agent=1 ", "hook=inode_setattr reason=rule",
			       " path=\"/secret\" path_truncated", NULL };
	if (!proc_wait_line(s.agentd, 10000, want))
		FAIL("no inode_setattr deny event with the path's tail: \"%s\"", s.agentd->buf);
}

/* Builds top/NAME/NAME/.../f with n directories of the given name. */
static void nested_file(const char *top, const char *name, int n, char *path, size_t sz)
{
	size_t len = strlen(top), step = strlen(name) + 1;
	int i;

	if (len + step * n + 3 > sz)
		FAIL("path too long");
	strcpy(path, top);
	for (i = 0; i < n; i++) {
		path[len] = '/';
		strcpy(path + len + 1, name);
		len += step;
		if (mkdir(path, 0755) && errno != EEXIST)
			FAIL("mkdir %s: %s", path, strerror(errno));
	}
	strcpy(path + len, "/f");
	test_write(path, "x\n", 0644);
}

/* A path longer than the event holds, or deeper than the walk, keeps its tail, marked. */
static void check_tail(const char *name, int n)
{
	char top[PATH_MAX], f[PATH_MAX], tail[64];
	struct slice s;

	test_dir(top, sizeof(top));
	nested_file(top, name, n, f, sizeof(f));
	slice_start_denying(&s, f);
	ASSERT_EQ(run_in_cgroup(s.cgroup, try_open, f, NULL), EPERM);
	snprintf(tail, sizeof(tail), "%.20s/f\" path_truncated", name);
	const char *want[] = { "deny agent=1 ", "hook=file_open reason=rule", tail, NULL };
	if (!proc_wait_line(s.agentd, 10000, want))
		FAIL("no deny event with a truncated path: \"%s\"", s.agentd->buf);
}

TEST(file_event_path_too_long_keeps_its_tail)
{
	char name[101];

	memset(name, 'x', 100);
	name[100] = '\0';
	check_tail(name, 8); /* 8 x 101 bytes > AGENTD_PATH_LEN */
}

TEST(file_event_path_too_deep_keeps_its_tail)
{
	check_tail("d", AGENTD_MAX_WALK + 10); /* the rule is on the file: no walk limit */
}
