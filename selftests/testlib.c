// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <linux/fs.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/io_uring.h>
#include "kernel/cgroup.h"
#include "kernel/enforcer.h"
#include "harness.h"
#include "testlib.h"

static void rmdir_path(void *path)
{
	rmdir(path);
	free(path);
}

static void unlink_path(void *path)
{
	unlink(path);
	free(path);
}

void test_cgroup_in(const char *parent, char *path, size_t pathsz)
{
	static int serial;
	char root[PATH_MAX];
	int err;

	if (!parent) {
		err = cgroup2_mount(root, sizeof(root));
		if (err)
			FAIL("no cgroup v2 mount: %s", strerror(-err));
		parent = root;
	}
	snprintf(path, pathsz, "%s/agentd-test-%d-%d", parent, getpid(), serial++);
	if (mkdir(path, 0755))
		FAIL("mkdir %s: %s", path, strerror(errno));
	test_defer(rmdir_path, strdup(path));
}

static void teardown_pins(void *path)
{
	enforcer_teardown(path);
	free(path);
}

void test_pin_dir(char *path, size_t pathsz)
{
	snprintf(path, pathsz, "/sys/fs/bpf/agentd-test-%d", getpid());
	test_defer(teardown_pins, strdup(path));
}

void test_cgroup(char *path, size_t pathsz)
{
	test_cgroup_in(NULL, path, pathsz);
}

void test_unlink_at_end(const char *path)
{
	test_defer(unlink_path, strdup(path));
}

void test_file(char *path, size_t pathsz, const char *name, const char *text)
{
	static char dir[PATH_MAX];
	FILE *f;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/agentd-test-XXXXXX");
		if (!mkdtemp(dir))
			FAIL("mkdtemp: %s", strerror(errno));
		test_defer(rmdir_path, strdup(dir));
	}
	snprintf(path, pathsz, "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		FAIL("create %s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
	test_unlink_at_end(path);
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static void remove_tree(void *path)
{
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	free(path);
}

void test_dir(char *path, size_t pathsz)
{
	char tmpl[] = "/tmp/agentd-test-XXXXXX";

	if (!mkdtemp(tmpl))
		FAIL("mkdtemp: %s", strerror(errno));
	snprintf(path, pathsz, "%s", tmpl);
	test_defer(remove_tree, strdup(path));
}

static void unmount_path(void *path)
{
	umount2(path, MNT_DETACH);
	free(path);
}

void test_mount_tmpfs(const char *dir)
{
	if (mount("tmpfs", dir, "tmpfs", 0, "size=1m"))
		FAIL("mount tmpfs on %s: %s", dir, strerror(errno));
	test_defer(unmount_path, strdup(dir));
}

void test_mount_bpffs(const char *dir)
{
	if (mount("bpf", dir, "bpf", 0, NULL))
		FAIL("mount bpf on %s: %s", dir, strerror(errno));
	test_defer(unmount_path, strdup(dir));
}

void test_bind_mount(const char *from, const char *to)
{
	if (mount(from, to, NULL, MS_BIND, NULL))
		FAIL("bind mount %s on %s: %s", from, to, strerror(errno));
	test_defer(unmount_path, strdup(to));
}

int test_ring_registering(const char *path)
{
	struct io_uring_params p = {};
	int ring = syscall(SYS_io_uring_setup, 2, &p), fd;

	if (ring < 0)
		FAIL("io_uring_setup: %s", strerror(errno));
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		FAIL("open %s: %s", path, strerror(errno));
	if (syscall(SYS_io_uring_register, ring, IORING_REGISTER_FILES, &fd, 1))
		FAIL("registering %s: %s", path, strerror(errno));
	close(fd);
	return ring;
}

void test_write(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	size_t len = strlen(text);

	if (fd < 0)
		FAIL("create %s: %s", path, strerror(errno));
	if (write(fd, text, len) != (ssize_t)len)
		FAIL("write %s: %s", path, strerror(errno));
	close(fd);
}

void test_copy(const char *from, const char *to, mode_t mode)
{
	int in = open(from, O_RDONLY | O_CLOEXEC), out;
	struct stat st;

	if (in < 0 || fstat(in, &st))
		FAIL("open %s: %s", from, strerror(errno));
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (out < 0)
		FAIL("create %s: %s", to, strerror(errno));
	if (sendfile(out, in, NULL, st.st_size) != st.st_size)
		FAIL("copy %s to %s: %s", from, to, strerror(errno));
	close(in);
	close(out);
}

void test_bin_for_all(const char *name, char *path, size_t pathsz)
{
	char dir[PATH_MAX - NAME_MAX - 1], from[PATH_MAX];

	test_tmpdir(dir, sizeof(dir), "bin");
	if (chmod(dir, 0711))
		FAIL("chmod %s: %s", dir, strerror(errno));
	snprintf(from, sizeof(from), "%s/%s", test_bin_dir(), name);
	snprintf(path, pathsz, "%s/%s", dir, name);
	test_copy(from, path, 0755);
}

/* The enforcer loaded once by the test binary's parent process (test_enforcer_preload), which
 * every test child inherits: loading under QEMU's emulation takes seconds. */
static struct enforcer *shared;
static bool shared_lsm;
static int shared_err;

void test_enforcer_preload(bool lsm)
{
	shared_err = enforcer_load(&shared, &(struct enforcer_opts){ .lsm = lsm });
	if (!shared_err && lsm)
		shared_err = enforcer_attach_lsm(shared);
	if (shared_err) {
		enforcer_destroy(shared);
		shared = NULL;
	}
	shared_lsm = lsm;
}

static void agent_destroy(void *arg)
{
	enforcer_destroy(arg);
}

/* The shared enforcer outlives the test: forget the test's agent in it. arg is a copy of the
 * agent, the cleanup's own: cleanups run after the test has returned, when an agent on its stack
 * is gone. */
static void agent_forget(void *arg)
{
	struct test_agent *a = arg;

	enforcer_remove_cgroup(a->e, a->cgroup);
	rules_remove(a->e, a->id);
	free(a);
}

void test_agent_apply(struct test_agent *a, const struct ruleset *rs)
{
	int err, failed = -1;

	err = rules_apply(a->e, a->id, rs, &a->generation, &failed);
	if (err)
		FAIL("rules_apply (file rule %d): %s", failed, strerror(-err));
}

static void agent_enforcer(struct test_agent *a, bool lsm)
{
	int err;

	if (shared_err && (shared_lsm || !lsm))
		FAIL("loading the enforcer (BPF LSM %s): %s", shared_lsm ? "on" : "off",
		     strerror(-shared_err));
	if (shared && (shared_lsm || !lsm)) {
		a->e = shared;
		return;
	}
	err = enforcer_load(&a->e, &(struct enforcer_opts){ .lsm = lsm });
	if (err)
		FAIL("enforcer_load: %s", strerror(-err));
	test_defer(agent_destroy, a->e);
	if (!lsm)
		return;
	err = enforcer_attach_lsm(a->e);
	if (err)
		FAIL("enforcer_attach_lsm: %s", strerror(-err));
}

void test_agent_start(struct test_agent *a, const struct ruleset *rs, bool lsm)
{
	test_agent_start_as(a, TEST_AGENT_ID, rs, lsm);
}

static void agent_setup(struct test_agent *a, const struct ruleset *rs);

void test_agent_start_as(struct test_agent *a, __u32 id, const struct ruleset *rs, bool lsm)
{
	memset(a, 0, sizeof(*a));
	a->id = id;
	test_cgroup(a->cgroup, sizeof(a->cgroup));
	agent_enforcer(a, lsm);
	agent_setup(a, rs);
}

void test_agent_start_plain(struct test_agent *a, const struct ruleset *rs)
{
	int err;

	memset(a, 0, sizeof(*a));
	a->id = TEST_AGENT_ID;
	test_cgroup(a->cgroup, sizeof(a->cgroup));
	err = enforcer_load(&a->e, &(struct enforcer_opts){ .lsm = true, .plain_objects = true });
	if (err)
		FAIL("enforcer_load (plain objects): %s", strerror(-err));
	test_defer(agent_destroy, a->e);
	err = enforcer_attach_lsm(a->e);
	if (err)
		FAIL("enforcer_attach_lsm (plain objects): %s", strerror(-err));
	agent_setup(a, rs);
}

/* The agent's rules and cgroup in a->e, its cgroup programs attached. */
static void agent_setup(struct test_agent *a, const struct ruleset *rs)
{
	struct test_agent *copy;
	int err, cgfd;

	copy = malloc(sizeof(*copy));
	if (!copy)
		FAIL("out of memory");
	*copy = *a;
	test_defer(agent_forget, copy);
	test_agent_apply(a, rs);
	err = enforcer_add_cgroup(a->e, a->cgroup, a->id);
	if (err)
		FAIL("enforcer_add_cgroup %s: %s", a->cgroup, strerror(-err));
	cgfd = open(a->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgfd < 0)
		FAIL("open %s: %s", a->cgroup, strerror(errno));
	err = enforcer_attach_cgroup(a->e, cgfd);
	close(cgfd);
	if (err)
		FAIL("enforcer_attach_cgroup %s: %s", a->cgroup, strerror(-err));
}

int test_agent_run(const struct test_agent *a, int (*fn)(void *), void *arg)
{
	return run_in_cgroup(a->cgroup, fn, arg, NULL);
}

static void proc_kill(void *arg)
{
	struct proc *p = arg;

	if (p->pid > 0) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, NULL, 0);
	}
	close(p->out_fd);
	free(p);
}

struct proc *proc_start(char *const argv[])
{
	struct proc *p = calloc(1, sizeof(*p));
	char exe[PATH_MAX];
	int fds[2];

	if (!p)
		FAIL("out of memory");
	snprintf(exe, sizeof(exe), "%s/%s", test_bin_dir(), argv[0]);
	if (pipe2(fds, O_CLOEXEC))
		FAIL("pipe: %s", strerror(errno));
	p->pid = fork();
	if (p->pid < 0)
		FAIL("fork: %s", strerror(errno));
	if (p->pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		execv(exe, argv);
		fprintf(stderr, "exec %s: %s\n", exe, strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	p->out_fd = fds[0];
	test_defer(proc_kill, p);
	return p;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Finds the first whole line holding every needle, moves it to p->line and drops the output up to
 * it, so that a line is matched once. */
static const char *find_line(struct proc *p, const char *const needles[])
{
	char *line = p->buf, *nl;
	size_t n;
	int i;

	while ((nl = memchr(line, '\n', p->buf + p->len - line))) {
		*nl = '\0';
		for (i = 0; needles[i] && strstr(line, needles[i]); i++)
			;
		if (!needles[i]) {
			n = nl - line;
			if (n >= sizeof(p->line))
				n = sizeof(p->line) - 1;
			memcpy(p->line, line, n);
			p->line[n] = '\0';
			p->len -= nl + 1 - p->buf;
			memmove(p->buf, nl + 1, p->len);
			p->buf[p->len] = '\0';
			return p->line;
		}
		*nl = '\n';
		line = nl + 1;
	}
	return NULL;
}

const char *proc_wait_line(struct proc *p, int timeout_ms, const char *const needles[])
{
	long deadline = now_ms() + timeout_ms;
	struct pollfd pfd = { .fd = p->out_fd, .events = POLLIN };
	const char *line;
	ssize_t n;

	for (;;) {
		line = find_line(p, needles);
		if (line)
			return line;
		if (now_ms() >= deadline || p->len == sizeof(p->buf) - 1)
			return NULL;
		if (poll(&pfd, 1, deadline - now_ms()) <= 0)
			continue;
		n = read(p->out_fd, p->buf + p->len, sizeof(p->buf) - 1 - p->len);
		if (n <= 0)
			return find_line(p, needles);
		p->len += n;
		p->buf[p->len] = '\0';
	}
}

int proc_stop(struct proc *p, int sig)
{
	int status;

	kill(p->pid, sig);
	if (waitpid(p->pid, &status, 0) < 0)
		FAIL("waitpid: %s", strerror(errno));
	p->pid = 0;
	return status;
}

int run_in_cgroup(const char *path, int (*fn)(void *), void *arg, pid_t *child)
{
	int cgfd = -1, status;
	pid_t pid;

	if (path) {
		cgfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cgfd < 0)
			FAIL("open %s: %s", path, strerror(errno));
		pid = cgroup_fork_into(cgfd);
		if (pid < 0)
			FAIL("clone3(CLONE_INTO_CGROUP) into %s: %s", path, strerror(-pid));
	} else {
		pid = fork();
		if (pid < 0)
			FAIL("fork: %s", strerror(errno));
	}
	if (pid == 0)
		_exit(fn(arg));
	if (child)
		*child = pid;
	if (cgfd >= 0)
		close(cgfd);
	if (waitpid(pid, &status, 0) < 0)
		FAIL("waitpid: %s", strerror(errno));
	if (!WIFEXITED(status))
		FAIL("child killed by signal %d", WTERMSIG(status));
	return WEXITSTATUS(status);
}

int try_open(void *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

int try_create(void *path)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* Lifts FS_APPEND_FL from the files in dir and in its subdirectories, or rm cannot remove them. */
static void lift_append_only(const char *dir, int depth)
{
	char path[PATH_MAX + 300];
	struct dirent *de;
	int fd, flags;
	DIR *d = opendir(dir);

	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (de->d_type == DT_DIR && depth > 0) {
			lift_append_only(path, depth - 1);
			continue;
		}
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0)
			continue;
		if (!ioctl(fd, FS_IOC_GETFLAGS, &flags) && (flags & FS_APPEND_FL)) {
			flags &= ~FS_APPEND_FL;
			ioctl(fd, FS_IOC_SETFLAGS, &flags);
		}
		close(fd);
	}
	if (d)
		closedir(d);
}

static void rm_tree(void *dir)
{
	char cmd[PATH_MAX + 16];

	lift_append_only(dir, 4);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", (char *)dir);
	if (system(cmd))
		fprintf(stderr, "cleanup: %s failed\n", cmd);
	free(dir);
}

/* Not under /tmp or /var/tmp: an agent started by agentctl run has private ones, and tests put
 * there what it must reach (or be refused by a rule, not by a path it cannot see). */
#define TEST_TMP_BASE "/var/lib/agentd-test"

void test_tmpdir(char *path, size_t pathsz, const char *name)
{
	static const char *const dirs[] = { "/var", "/var/lib", TEST_TMP_BASE };
	static int serial;
	size_t i;

	/* The VM tier's guest has no /var. */
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (mkdir(dirs[i], 0755) && errno != EEXIST)
			FAIL("mkdir %s: %s", dirs[i], strerror(errno));
	snprintf(path, pathsz, TEST_TMP_BASE "/%s-%d-%d", name, getpid(), serial++);
	if (mkdir(path, 0700))
		FAIL("mkdir %s: %s", path, strerror(errno));
	test_defer(rm_tree, strdup(path));
}

/* Waits (5 s at most) until cgroup.events says the cgroup is empty: it signals POLLPRI. */
static void wait_empty(const char *cg)
{
	char path[PATH_MAX + 320], buf[256];
	struct pollfd pfd = { .events = POLLPRI };
	ssize_t n;
	int i;

	snprintf(path, sizeof(path), "%s/cgroup.events", cg);
	pfd.fd = open(path, O_RDONLY | O_CLOEXEC);
	for (i = 0; pfd.fd >= 0 && i < 100; i++) {
		n = pread(pfd.fd, buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			break;
		buf[n] = '\0';
		if (strstr(buf, "populated 0") || poll(&pfd, 1, 5000) <= 0)
			break;
	}
	if (pfd.fd >= 0)
		close(pfd.fd);
}

/* Kills what runs in each child of cgroup, then removes the children depth first, then cgroup. */
static void rm_cgroup_children(const char *cgroup)
{
	char path[PATH_MAX + 300];
	struct dirent *de;
	DIR *d = opendir(cgroup);
	int fd;

	while (d && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/cgroup.kill", cgroup, de->d_name);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (write(fd, "1", 1) < 0)
				perror("cleanup: cgroup.kill");
			close(fd);
		}
		snprintf(path, sizeof(path), "%s/%s", cgroup, de->d_name);
		wait_empty(path);
		rm_cgroup_children(path);
		rmdir(path);
	}
	if (d)
		closedir(d);
}

static void rm_cgroup_tree(void *cgroup)
{
	rm_cgroup_children(cgroup);
	rmdir(cgroup);
	free(cgroup);
}

void test_cgroup_tree_at_end(const char *path)
{
	test_defer(rm_cgroup_tree, strdup(path));
}

int agentctl_run(char *out, size_t outsz, ...)
{
	char *argv[32] = { "agentctl" };
	struct pollfd pfd;
	struct proc *p;
	size_t len = 0;
	ssize_t n;
	va_list ap;
	int i = 1, status;

	va_start(ap, outsz);
	while (i < 31 && (argv[i] = va_arg(ap, char *)))
		i++;
	va_end(ap);
	p = proc_start(argv);
	pfd = (struct pollfd){ .fd = p->out_fd, .events = POLLIN };
	while (len + 1 < outsz && poll(&pfd, 1, 60000) > 0) {
		n = read(p->out_fd, out + len, outsz - 1 - len);
		if (n <= 0)
			break;
		len += n;
	}
	out[len] = '\0';
	/* Output that does not fit would leave agentctl blocked on a full pipe and the wait
	 * below with it: the test fails instead, saying so. */
	if (len + 1 == outsz) {
		proc_stop(p, SIGKILL);
		FAIL("agentctl %s: more than %zu bytes of output", argv[1], outsz - 1);
	}
	status = proc_stop(p, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int test_loopback_listener(int *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ASSERT_OK(fd);
	ASSERT_OK(bind(fd, (struct sockaddr *)&sa, sizeof(sa)));
	ASSERT_OK(listen(fd, 64));
	ASSERT_OK(getsockname(fd, (struct sockaddr *)&sa, &len));
	*port = ntohs(sa.sin_port);
	return fd;
}

int test_loopback_connect(void *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				  .sin_port = htons(*(int *)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		err = errno;
	close(fd);
	return err;
}

void test_daemon_init(struct test_daemon *d, const char *name)
{
	static int serial;
	char root[PATH_MAX - 64];
	int err;

	memset(d, 0, sizeof(*d));
	err = cgroup2_mount(root, sizeof(root));
	if (err)
		FAIL("no cgroup v2 mount: %s", strerror(-err));
	test_tmpdir(d->dir, sizeof(d->dir), name);
	snprintf(d->control, sizeof(d->control), "%s/control.sock", d->dir);
	snprintf(d->state, sizeof(d->state), "%s/state", d->dir);
	snprintf(d->audit, sizeof(d->audit), "%s/audit", d->dir);
	snprintf(d->cgroup, sizeof(d->cgroup), "%s/agentd-test-%d-d%d", root, getpid(), serial++);
	test_pin_dir(d->pins, sizeof(d->pins));
	test_cgroup_tree_at_end(d->cgroup);
	setenv("AGENTD_CONTROL", d->control, 1);
}

static struct proc *daemon_spawn(struct test_daemon *d, va_list ap)
{
	char *argv[32] = { "agentd", "--control",   d->control, "--state-dir",
			   d->state, "--audit-dir", d->audit,	"--pin-dir",
			   d->pins,  "--cgroup",    d->cgroup };
	int i = 11;

	while (i < 31 && (argv[i] = va_arg(ap, char *)))
		i++;
	d->agentd = proc_start(argv);
	return d->agentd;
}

struct proc *test_daemon_spawn(struct test_daemon *d, ...)
{
	va_list ap;

	va_start(ap, d);
	daemon_spawn(d, ap);
	va_end(ap);
	return d->agentd;
}

void test_daemon_start(struct test_daemon *d, ...)
{
	const char *ready[] = { "agentd: ready", NULL };
	va_list ap;

	va_start(ap, d);
	daemon_spawn(d, ap);
	va_end(ap);
	if (!proc_wait_line(d->agentd, TEST_READY_MS, ready))
		FAIL("agentd did not get ready: \"%s\"", d->agentd->buf);
}

void test_daemon_add(const struct test_daemon *d, const char *name, const char *policy, char *cg,
		     size_t cgsz)
{
	char out[4096];
	int status = agentctl_run(out, sizeof(out), "agent", "add", name, "--policy", policy, NULL);

	if (status)
		FAIL("agent add %s: exit %d: %s", name, status, out);
	if (cg)
		snprintf(cg, cgsz, "%s/%s", d->cgroup, name);
}

struct proc *test_audit_follower(const char *audit_dir)
{
	char *argv[] = { "agentctl", "audit", "follow", "--dir", (char *)audit_dir, NULL };
	char live[PATH_MAX + 16], ev[sizeof(struct inotify_event) + NAME_MAX + 1];
	struct pollfd pfd = { .events = POLLIN };
	struct proc *p;

	snprintf(live, sizeof(live), "%s/audit.log", audit_dir);
	pfd.fd = inotify_init1(IN_CLOEXEC);
	ASSERT_OK(pfd.fd);
	ASSERT_OK(inotify_add_watch(pfd.fd, live, IN_OPEN));
	p = proc_start(argv);
	/* agentd has the log open already, so the first open is the follower's. */
	if (poll(&pfd, 1, 10000) != 1 || read(pfd.fd, ev, sizeof(ev)) <= 0)
		FAIL("agentctl audit follow did not open %s", live);
	close(pfd.fd);
	return p;
}

static void ifreq_ioctl(int fd, unsigned long req, struct ifreq *ifr)
{
	if (ioctl(fd, req, ifr))
		FAIL("ioctl %#lx on %s: %s", req, ifr->ifr_name, strerror(errno));
}

void test_netns(const char *const addrs[], size_t n)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
	size_t i;
	int fd;

	if (unshare(CLONE_NEWNET))
		FAIL("unshare(CLONE_NEWNET): %s", strerror(errno));
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ASSERT_OK(fd);
	ifreq_ioctl(fd, SIOCGIFFLAGS, &ifr);
	ifr.ifr_flags |= IFF_UP;
	ifreq_ioctl(fd, SIOCSIFFLAGS, &ifr);
	for (i = 0; i < n; i++) {
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo:%u", (unsigned char)(i + 1));
		sin->sin_family = AF_INET;
		if (inet_pton(AF_INET, addrs[i], &sin->sin_addr) != 1)
			FAIL("bad address %s", addrs[i]);
		ifreq_ioctl(fd, SIOCSIFADDR, &ifr);
	}
	close(fd);
}

void test_sin(struct sockaddr_in *sin, const char *addr, int port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &sin->sin_addr) != 1)
		FAIL("bad address %s", addr);
}

int test_listener_at(const char *addr, int *port)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1;

	ASSERT_OK(fd);
	ASSERT_OK(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
	test_sin(&sin, addr, *port);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) || listen(fd, 16))
		FAIL("listening on %s:%d: %s", addr, *port, strerror(errno));
	ASSERT_OK(getsockname(fd, (struct sockaddr *)&sin, &len));
	*port = ntohs(sin.sin_port);
	return fd;
}

bool test_accepted(int l)
{
	struct pollfd pfd = { .fd = l, .events = POLLIN };
	int c;

	if (poll(&pfd, 1, 20000) <= 0)
		return false;
	c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (c >= 0)
		close(c);
	return c >= 0;
}

int test_connect_sin(void *sin)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return errno;
	if (connect(fd, sin, sizeof(struct sockaddr_in)))
		err = errno;
	close(fd);
	return err;
}
