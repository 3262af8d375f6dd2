// SPDX-License-Identifier: GPL-2.0
/*
 * Host tier: the daemon's live audit stream, agentctl attach (the live view, --pid, --cgroup)
 * and detach, on this kernel: cgroup-BPF holds here without BPF LSM, so the network rules are
 * what an attached process is checked against (a loopback connect allowed before the attach is
 * refused with EPERM after it). Every process, cgroup, pin and file is removed on every exit.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "kernel/cgroup.h"
#include "harness.h"
#include "kernel/probe.h"
#include "testlib.h"

#define WAIT_MS 20000

struct env {
	char dir[256];
	char state[PATH_MAX];
	char control[PATH_MAX];
	char stream[PATH_MAX];
	char audit[PATH_MAX];
	char pins[PATH_MAX];
	char cgroup[PATH_MAX];
	char policy[PATH_MAX];
	struct proc *agentd;
};

static void write_self_to(const char *cgroup)
{
	char procs[PATH_MAX + 16];
	int fd;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cgroup);
	fd = open(procs, O_WRONLY | O_CLOEXEC);
	ASSERT_OK(fd);
	ASSERT_EQ(write(fd, "0", 1), 1);
	close(fd);
}

static void own_cgroup(char *out, size_t sz);

/* agentd in a cgroup of its own (SERVICE/agentd), as under a service manager: the test's
 * processes are not in it. The test moves itself there for the fork, and back. */
static char service_cg[PATH_MAX + 16]; /* where the last agentd started runs */

static struct proc *start_in_service_cgroup(char *const argv[])
{
	static int serial;
	char root[PATH_MAX / 2], svc[PATH_MAX], mine[PATH_MAX + 8];
	char *cg = service_cg;
	struct proc *p;

	ASSERT_EQ(cgroup2_mount(root, sizeof(root)), 0);
	own_cgroup(mine, sizeof(mine));
	snprintf(svc, sizeof(svc), "%s/agentd-svc-%d-%d", root, getpid(), serial++);
	ASSERT_OK(mkdir(svc, 0755));
	test_cgroup_tree_at_end(svc);
	snprintf(service_cg, sizeof(service_cg), "%s/agentd", svc);
	ASSERT_OK(mkdir(cg, 0755));
	write_self_to(cg);
	p = proc_start(argv);
	write_self_to(mine);
	return p;
}

/* agentd --allow-partial on the test's paths, and --stream PATH --stream-group G when given. */
static void start_agentd_with(struct env *e, const char *stream, const char *group)
{
	const char *ready[] = { "agentd: ready", NULL };
	char *argv[17] = { "agentd", "--control",   e->control, "--state-dir",
			   e->state, "--audit-dir", e->audit,	"--pin-dir",
			   e->pins,  "--cgroup",    e->cgroup,	"--allow-partial" };

	if (stream) {
		argv[12] = "--stream";
		argv[13] = (char *)stream;
		argv[14] = "--stream-group";
		argv[15] = (char *)group;
	}
	e->agentd = start_in_service_cgroup(argv);
	if (!proc_wait_line(e->agentd, WAIT_MS, ready))
		FAIL("agentd did not get ready: \"%s\"", e->agentd->buf);
}

static void start_agentd(struct env *e)
{
	start_agentd_with(e, NULL, NULL);
}

static struct env *setup(void)
{
	static struct env e;
	char root[PATH_MAX - 64];

	ASSERT_EQ(cgroup2_mount(root, sizeof(root)), 0);
	test_tmpdir(e.dir, sizeof(e.dir), "attach");
	snprintf(e.state, sizeof(e.state), "%s/state", e.dir);
	snprintf(e.control, sizeof(e.control), "%s/run/control.sock", e.dir);
	snprintf(e.stream, sizeof(e.stream), "%s/run/audit.sock", e.dir);
	snprintf(e.audit, sizeof(e.audit), "%s/audit", e.dir);
	snprintf(e.policy, sizeof(e.policy), "%s/policy.json", e.dir);
	snprintf(e.cgroup, sizeof(e.cgroup), "%s/agentd-test-%d", root, getpid());
	test_pin_dir(e.pins, sizeof(e.pins));
	test_cgroup_tree_at_end(e.cgroup);
	test_write(e.policy,
		   "{\"name\": \"t\", \"files\": [{\"path\": \"/\", \"rights\": [\"read\", "
		   "\"exec\"]}],"
		   " \"network\": {\"sockets\": [\"inet\", \"unix\"]}}\n",
		   0644);
	setenv("AGENTD_CONTROL", e.control, 1);
	unsetenv("AGENTD_STREAM");
	return &e;
}

static void add_agent(struct env *e, const char *name)
{
	char out[4096];

	if (agentctl_run(out, sizeof(out), "agent", "add", name, "--policy", e->policy, NULL))
		FAIL("agent add %s: %s", name, out);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* ---- the stream, from a subscriber's side ---- */

struct sub {
	int fd;
	char buf[1 << 16];
	size_t len;
	char line[16384];
};

static void sub_close(void *arg)
{
	struct sub *s = arg;

	if (s->fd >= 0)
		close(s->fd);
	free(s);
}

static struct sub *subscribe(const char *path, const char *filter)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct sub *s = calloc(1, sizeof(*s));

	ASSERT(s);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	test_defer(sub_close, s);
	ASSERT_OK(s->fd);
	ASSERT_OK(connect(s->fd, (struct sockaddr *)&sa, sizeof(sa)));
	ASSERT_OK(dprintf(s->fd, "%s\n", filter));
	return s;
}

/* The next line holding needle (earlier lines are skipped), or NULL at the end of the stream. */
static const char *sub_wait(struct sub *s, const char *needle)
{
	struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
	long long deadline = now_ms() + WAIT_MS;
	char *nl;
	ssize_t n;

	for (;;) {
		while ((nl = memchr(s->buf, '\n', s->len))) {
			size_t l = nl - s->buf;

			snprintf(s->line, sizeof(s->line), "%.*s", (int)l, s->buf);
			memmove(s->buf, nl + 1, s->len - l - 1);
			s->len -= l + 1;
			if (strstr(s->line, needle))
				return s->line;
		}
		if (poll(&pfd, 1, (int)(deadline - now_ms())) <= 0)
			FAIL("no line with \"%s\" within %d ms", needle, WAIT_MS);
		n = read(s->fd, s->buf + s->len, sizeof(s->buf) - s->len);
		if (n <= 0)
			return NULL;
		s->len += n;
	}
}

/* ---- processes the tests attach ---- */

/* A process that connects when asked: a port on cmd, the errno back on res. */
struct worker {
	pid_t pid;
	int cmd, res;
};

static void worker_loop(int cmd, int res)
{
	int port, err;

	while (read(cmd, &port, sizeof(port)) == sizeof(port)) {
		err = test_loopback_connect(&port);
		if (write(res, &err, sizeof(err)) != sizeof(err))
			break;
	}
	_exit(0);
}

static void worker_kill(void *arg)
{
	struct worker *w = arg;

	if (w->pid > 0) {
		kill(w->pid, SIGKILL);
		waitpid(w->pid, NULL, 0);
	}
	close(w->cmd);
	close(w->res);
	free(w);
}

struct pipes {
	int cmd[2], res[2];
};

static void pipes_open(struct pipes *p)
{
	ASSERT_OK(pipe2(p->cmd, O_CLOEXEC));
	ASSERT_OK(pipe2(p->res, O_CLOEXEC));
}

/* A worker in the cgroup at path (NULL: where the test runs); with child, it forks a second
 * worker first (its pid in child->pid, killed by this test too). */
static struct worker *worker_start(const char *path, struct worker **child)
{
	struct worker *w = calloc(1, sizeof(*w)), *c = NULL;
	struct pipes pw, pc;
	pid_t gc;
	int cgfd = -1;

	ASSERT(w);
	pipes_open(&pw);
	if (child) {
		c = calloc(1, sizeof(*c));
		ASSERT(c);
		pipes_open(&pc);
	}
	if (path) {
		cgfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ASSERT_OK(cgfd);
		w->pid = cgroup_fork_into(cgfd);
		close(cgfd);
	} else {
		w->pid = fork();
	}
	ASSERT_OK(w->pid);
	if (!w->pid) {
		if (child) {
			gc = fork();
			if (gc == 0)
				worker_loop(pc.cmd[0], pc.res[1]);
			if (write(pw.res[1], &gc, sizeof(gc)) != sizeof(gc))
				_exit(1);
		}
		worker_loop(pw.cmd[0], pw.res[1]);
	}
	close(pw.cmd[0]);
	close(pw.res[1]);
	w->cmd = pw.cmd[1];
	w->res = pw.res[0];
	test_defer(worker_kill, w);
	if (child) {
		close(pc.cmd[0]);
		close(pc.res[1]);
		c->cmd = pc.cmd[1];
		c->res = pc.res[0];
		ASSERT_EQ(read(w->res, &c->pid, sizeof(c->pid)), sizeof(c->pid));
		test_defer(worker_kill, c);
		*child = c;
	}
	return w;
}

static int worker_connect(struct worker *w, int port)
{
	int err;

	ASSERT_EQ(write(w->cmd, &port, sizeof(port)), sizeof(port));
	ASSERT_EQ(read(w->res, &err, sizeof(err)), sizeof(err));
	return err;
}

/* Whether the process's cgroup v2 is path. */
/* 1 when the process's cgroup v2 is path, 0 when not, -1 when the process is gone. */
static int cgroup_is(pid_t pid, const char *path)
{
	char root[PATH_MAX], file[64], line[PATH_MAX], want[PATH_MAX + 8];
	bool found = false;
	FILE *f;

	ASSERT_EQ(cgroup2_mount(root, sizeof(root)), 0);
	snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	snprintf(want, sizeof(want), "0::%s\n", path + strlen(root));
	f = fopen(file, "re");
	if (!f && errno == ENOENT)
		return -1;
	ASSERT(f);
	while (!found && fgets(line, sizeof(line), f))
		found = !strcmp(line, want);
	fclose(f);
	return found;
}

static bool in_cgroup(pid_t pid, const char *path)
{
	int r = cgroup_is(pid, path);

	if (r < 0)
		FAIL("process %d is gone", pid);
	return r;
}

/* Denied connects from inside an agent until told to stop; how many in *count. */
struct flood {
	volatile int stop;
	volatile long count;
};

static void flood_stop(void *arg)
{
	struct flood *f = arg;

	f->stop = 1;
}

static pid_t flood_start(const char *cgroup, int port, struct flood *f)
{
	int cgfd = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	pid_t pid;

	ASSERT_OK(cgfd);
	pid = cgroup_fork_into(cgfd);
	close(cgfd);
	ASSERT_OK(pid);
	if (pid == 0) {
		while (!f->stop)
			if (test_loopback_connect(&port) == EPERM)
				f->count++;
		_exit(0);
	}
	return pid;
}

static struct flood *flood_map(void)
{
	struct flood *f =
		mmap(NULL, sizeof(*f), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	ASSERT(f != MAP_FAILED);
	test_defer(flood_stop, f);
	return f;
}

static void flood_end(struct flood *f, pid_t pid)
{
	int status;

	f->stop = 1;
	ASSERT_OK(waitpid(pid, &status, 0));
	ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Whether line holds every needle. */
static int holds_all(const char *line, const char *const needles[])
{
	int i;

	for (i = 0; needles[i] && strstr(line, needles[i]); i++)
		;
	return !needles[i];
}

/* Counts the lines of the log holding every needle, read as agentctl writes them: a flood's
 * log has no size bound (how many denials a flood makes before its subscriber is dropped
 * depends on the machine's load). */
static long count_records(struct env *e, const char *const needles[])
{
	char *argv[] = { "agentctl", "audit", "query", "--dir", e->audit, NULL };
	static char buf[1 << 20];
	size_t len = 0;
	char *nl, *line;
	struct proc *p;
	int status;
	ssize_t n;
	long count = 0;

	p = proc_start(argv);
	while ((n = read(p->out_fd, buf + len, sizeof(buf) - 1 - len)) > 0) {
		len += n;
		buf[len] = '\0';
		for (line = buf; (nl = strchr(line, '\n')); line = nl + 1) {
			*nl = '\0';
			count += holds_all(line, needles);
		}
		len -= line - buf;
		memmove(buf, line, len);
		if (len == sizeof(buf) - 1)
			FAIL("audit query: a record longer than %zu bytes", sizeof(buf) - 1);
	}
	if (len)
		FAIL("audit query: output ends in a partial line");
	status = proc_stop(p, 0);
	ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return count;
}

/* ---- the stream ---- */

TEST(stream_subscribers_get_records_live_and_filtered)
{
	struct env *e = setup();
	struct sub *life, *pol, *deny;
	char cg[PATH_MAX + 64];
	struct stat st;
	int lfd, port;

	start_agentd(e);
	ASSERT_OK(stat(e->stream, &st));
	ASSERT_EQ(st.st_mode & 0777, 0600);
	life = subscribe(e->stream, "kind=lifecycle");
	pol = subscribe(e->stream, "kind=policy");
	deny = subscribe(e->stream, "agent=1 decision=deny");
	add_agent(e, "t-live");
	/* Each subscriber gets its kind, not the other's. */
	if (strstr(sub_wait(life, "\"kind\""), "\"policy\""))
		FAIL("a policy record passed kind=lifecycle: %s", life->line);
	if (!strstr(life->line, "agent-add"))
		FAIL("first lifecycle record: %s", life->line);
	ASSERT(sub_wait(pol, "policy-load"));
	if (!strstr(pol->line, "\"agent_name\":\"t-live\""))
		FAIL("policy record: %s", pol->line);
	/* The agent's denial reaches the subscriber once committed (one: a flood would outrun a
	 * subscriber on a loaded machine and have it dropped, which another test checks). */
	lfd = test_loopback_listener(&port);
	snprintf(cg, sizeof(cg), "%s/t-live", e->cgroup);
	ASSERT_EQ(run_in_cgroup(cg, test_loopback_connect, &port, NULL), EPERM);
	ASSERT(sub_wait(deny, "\"kind\":\"net\""));
	if (!strstr(deny->line, "\"decision\":\"deny\"") || !strstr(deny->line, "127.0.0.1"))
		FAIL("denial record: %s", deny->line);
	close(lfd);
}

/* From inside an agent: subscribe to the stream as root. 1 when agentd refuses with its error
 * line, 2 when the kernel refused the connect (EPERM, BPF LSM), 100+ otherwise. */
static int subscribe_from_inside(void *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct pollfd pfd = { .events = POLLIN };
	char buf[512] = "";
	ssize_t n;
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", (const char *)path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 100;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return errno == EPERM ? 2 : 101;
	if (send(fd, "kind=lifecycle\n", 15, MSG_NOSIGNAL) < 0 && errno != EPIPE &&
	    errno != ECONNRESET)
		return 102;
	pfd.fd = fd;
	if (poll(&pfd, 1, WAIT_MS) <= 0)
		return 103; /* subscribed and silent: not refused */
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	if (n > 0)
		buf[n] = '\0';
	return !strncmp(buf, "error: refused: ", 16) ? 1 : 104;
}

/* An agent running as root does not read the stream (every agent's records), whatever the
 * socket's mode; root outside still does. */
TEST(stream_refuses_agents_even_as_root)
{
	struct env *e = setup();
	char cg[PATH_MAX + 64];
	struct probe pr;
	struct sub *s;

	probe_kernel(&pr);
	start_agentd(e);
	add_agent(e, "t-peek");
	snprintf(cg, sizeof(cg), "%s/t-peek", e->cgroup);
	ASSERT_EQ(run_in_cgroup(cg, subscribe_from_inside, e->stream, NULL),
		  probe_bpf_lsm_ok(&pr) ? 2 : 1);
	s = subscribe(e->stream, "kind=lifecycle");
	add_agent(e, "t-peek2");
	ASSERT(sub_wait(s, "agent-add"));
}

TEST(stream_drops_a_stalled_subscriber_and_the_file_keeps_everything)
{
	const char *net[] = { "\"kind\":\"net\"", "\"agent\":1,", "\"decision\":\"deny\"", NULL };
	const char *ringbuf[] = { "\"source\":\"ringbuf\"", NULL };
	const char *dropped[] = { "subscriber-dropped", "\"source\":\"stream\"", NULL };
	struct env *e = setup();
	char cg[PATH_MAX + 64], out[4096], expect[128], *cp;
	struct flood *f = flood_map();
	struct sub *stalled, *loss;
	long got = 0, in_file;
	int lfd, port;
	ssize_t n;
	pid_t pid;

	start_agentd(e);
	add_agent(e, "t-flood");
	/* One subscriber never reads; another waits for the record that says it was dropped. */
	stalled = subscribe(e->stream, "");
	loss = subscribe(e->stream, "kind=loss");
	lfd = test_loopback_listener(&port);
	snprintf(cg, sizeof(cg), "%s/t-flood", e->cgroup);
	pid = flood_start(cg, port, f);
	ASSERT(sub_wait(loss, "subscriber-dropped"));
	flood_end(f, pid);
	close(lfd);
	/* The stalled one finds what its buffers held, then the end of the stream. */
	while ((n = read(stalled->fd, stalled->buf, sizeof(stalled->buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			got += stalled->buf[i] == '\n';
	ASSERT_EQ(n, 0);
	/* agentd stops: whatever waits in the ring buffer goes to the file first. */
	ASSERT_EQ(proc_stop(e->agentd, SIGTERM), 0);
	in_file = count_records(e, net);
	if (got >= f->count || in_file != f->count || count_records(e, ringbuf))
		FAIL("%ld denials made, %ld in the file, %ld reached the stalled subscriber, "
		     "%ld ring-buffer loss records",
		     (long)f->count, in_file, got, count_records(e, ringbuf));
	ASSERT(count_records(e, dropped) >= 1);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "audit", "verify", "--dir", e->audit, NULL), 0);
	/* The checkpoint verify prints holds on the same log. */
	cp = strstr(out, "--expect ");
	ASSERT(cp);
	cp += strlen("--expect ");
	cp[strcspn(cp, "\n")] = '\0';
	snprintf(expect, sizeof(expect), "%s", cp);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "audit", "verify", "--dir", e->audit, "--expect",
			       expect, NULL),
		  0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "audit", "verify", "--dir", e->audit, "--expect",
			       "999999999", NULL),
		  1);
}

/* As uid 65534 in group gid only: subscribes, says so on ready, then waits for an agent-add.
 * Exit 0: got it; 1: connect refused (EACCES); other: something else went wrong. */
struct as_nobody {
	const char *stream;
	gid_t gid;
	int ready;
};

static int subscribe_as_nobody(void *arg)
{
	struct as_nobody *n = arg;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[4096];
	ssize_t r;
	int fd;

	if (setgroups(0, NULL) || setgid(n->gid) || setuid(65534))
		return 100;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", n->stream);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return errno == EACCES ? 1 : 101;
	if (dprintf(fd, "kind=lifecycle\n") < 0 || write(n->ready, "r", 1) != 1)
		return 102;
	while ((r = read(fd, buf, sizeof(buf) - 1)) > 0) {
		buf[r] = '\0';
		if (strstr(buf, "agent-add"))
			return 0;
	}
	return 103;
}

TEST(stream_group_lets_its_members_subscribe)
{
	struct env *e = setup();
	char stream[PATH_MAX + 16], out[4096];
	struct as_nobody n = { .stream = stream };
	int pipefd[2], status;
	struct stat st;
	pid_t pid;
	char c;

	snprintf(stream, sizeof(stream), "%s/audit-run/audit.sock", e->dir);
	ASSERT_OK(chmod(e->dir, 0755));
	start_agentd_with(e, stream, "nogroup");
	ASSERT_OK(stat(stream, &st));
	ASSERT_EQ(st.st_mode & 0777, 0660);
	ASSERT_EQ(st.st_gid, 65534);
	/* Not in the group: the socket's mode refuses. */
	n.gid = 12345;
	n.ready = -1;
	ASSERT_EQ(run_in_cgroup(NULL, subscribe_as_nobody, &n, NULL), 1);
	/* In the group: subscribed, and records come. */
	ASSERT_OK(pipe2(pipefd, O_CLOEXEC));
	n.gid = 65534;
	n.ready = pipefd[1];
	pid = fork();
	ASSERT_OK(pid);
	if (pid == 0)
		_exit(subscribe_as_nobody(&n));
	close(pipefd[1]);
	if (read(pipefd[0], &c, 1) != 1) {
		waitpid(pid, &status, 0);
		FAIL("the subscriber in the group did not subscribe: exit %d", WEXITSTATUS(status));
	}
	if (agentctl_run(out, sizeof(out), "agent", "add", "t-grp", "--policy", e->policy, NULL)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		FAIL("agent add: %s", out);
	}
	ASSERT_OK(waitpid(pid, &status, 0));
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
}

TEST(audit_follow_uses_the_stream_when_agentd_is_up)
{
	const char *net[] = { "\"kind\":\"net\"", NULL };
	struct env *e = setup();
	char cg[PATH_MAX + 64];
	int lfd, port, status, i;
	struct proc *p;
	bool seen = false;

	start_agentd(e);
	add_agent(e, "t-fol");
	snprintf(cg, sizeof(cg), "%s/t-fol", e->cgroup);
	lfd = test_loopback_listener(&port);
	/* The stream's default place is beside the control socket ($AGENTD_CONTROL). */
	char *argv[] = { "agentctl", "audit", "follow", "--kind", "net", NULL };
	p = proc_start(argv);
	/* One denial at a time until follow prints one: before it subscribes, records pass it
	 * by, and a flood outran it until the daemon dropped it (as it must a reader that falls
	 * behind), which once failed this test. */
	for (i = 0; i < 50 && !seen; i++) {
		ASSERT_EQ(run_in_cgroup(cg, test_loopback_connect, &port, NULL), EPERM);
		seen = proc_wait_line(p, 200, net);
	}
	if (!seen)
		FAIL("follow printed no net record: %s", p->buf);
	/* A stream follower ends with the daemon (a file follower would not); what it still
	 * prints is read, so that it is never blocked on its output. */
	ASSERT_EQ(proc_stop(e->agentd, SIGTERM), 0);
	while (read(p->out_fd, p->buf, sizeof(p->buf)) > 0)
		;
	status = proc_stop(p, 0);
	ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 3);

	close(lfd);
}

/* ---- attach ---- */

TEST(attach_live_view_prints_the_agents_decisions)
{
	const char *header[] = { "t-view", "interrupt to stop", NULL };
	const char *denied[] = { "deny", "net", "127.0.0.1:", NULL };
	struct env *e = setup();
	char cg[PATH_MAX + 64], out[4096];
	int lfd, port, i;
	struct proc *p;
	bool seen = false;

	start_agentd(e);
	add_agent(e, "t-view");
	ASSERT_EQ(agentctl_run(out, sizeof(out), "attach", "t-nope", NULL), 1);
	char *argv[] = { "agentctl", "attach", "t-view", NULL };
	p = proc_start(argv);
	if (!proc_wait_line(p, WAIT_MS, header))
		FAIL("no header: %s", p->buf);
	lfd = test_loopback_listener(&port);
	snprintf(cg, sizeof(cg), "%s/t-view", e->cgroup);
	/* One denial at a time until the view shows one: its subscription may be read a pass
	 * later, and a flood could outrun the view until the daemon drops it. */
	for (i = 0; i < 50 && !seen; i++) {
		ASSERT_EQ(run_in_cgroup(cg, test_loopback_connect, &port, NULL), EPERM);
		seen = proc_wait_line(p, 200, denied);
	}
	if (!seen)
		FAIL("the view showed no denial: %s", p->buf);
	close(lfd);
	if (!strstr(p->line, "connect4"))
		FAIL("view line: %s", p->line);
}

/* ---- records by agent name ---- */

/*
 * agentctl audit query --agent NAME: every line (read whole, as count_records() does), and how
 * many are kernel net denials. Fails on a line that is not NAME's.
 */
static long query_net_denials(struct env *e, const char *name, int *agent_id)
{
	char *argv[] = { "agentctl", "audit",	"query",      "--dir",
			 e->audit,   "--agent", (char *)name, NULL };
	static char buf[1 << 20];
	char want[128], *line, *nl, *id;
	size_t len = 0;
	struct proc *p;
	long count = 0;
	ssize_t n;
	int status;

	snprintf(want, sizeof(want), "\"agent_name\":\"%s\"", name);
	p = proc_start(argv);
	while ((n = read(p->out_fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	buf[len] = '\0';
	status = proc_stop(p, 0);
	ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	for (line = buf; (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		if (!strstr(line, want))
			FAIL("query --agent %s returned another's record: %s", name, line);
		if (!strstr(line, "\"kind\":\"net\"") || !strstr(line, "\"decision\":\"deny\""))
			continue;
		id = strstr(line, "\"agent\":");
		ASSERT(id);
		*agent_id = atoi(id + strlen("\"agent\":"));
		count++;
	}
	return count;
}

static void deny_loopback(struct env *e, const char *name, int port)
{
	char cg[PATH_MAX + 64];

	snprintf(cg, sizeof(cg), "%s/%s", e->cgroup, name);
	ASSERT_EQ(run_in_cgroup(cg, test_loopback_connect, &port, NULL), EPERM);
}

/*
 * Kernel records name their agent: query --agent NAME returns the agent's cgroup-BPF denial,
 * and another agent's query does not. An agent removed and its id given to a new one: the old
 * name still finds the old agent's kernel records, and not the new agent's.
 */
TEST(audit_query_by_name_finds_the_agents_kernel_denials_across_id_reuse)
{
	struct env *e = setup();
	int lfd, port, id_a = 0, id_b = 0, id_old = 0, id_new = 0;
	char out[4096];

	start_agentd(e);
	add_agent(e, "t-qa");
	add_agent(e, "t-qb");
	add_agent(e, "t-old");
	lfd = test_loopback_listener(&port);
	deny_loopback(e, "t-qa", port);
	deny_loopback(e, "t-old", port);
	if (agentctl_run(out, sizeof(out), "agent", "rm", "t-old", NULL))
		FAIL("agent rm t-old: %s", out);
	add_agent(e, "t-new");
	deny_loopback(e, "t-new", port);
	close(lfd);
	/* stopped: every record is committed */
	ASSERT_EQ(proc_stop(e->agentd, SIGTERM), 0);

	ASSERT_EQ(query_net_denials(e, "t-qa", &id_a), 1);
	ASSERT_EQ(query_net_denials(e, "t-qb", &id_b), 0);
	ASSERT_EQ(query_net_denials(e, "t-old", &id_old), 1);
	ASSERT_EQ(query_net_denials(e, "t-new", &id_new), 1);
	/* the case in point: the new agent has the old one's id */
	ASSERT_EQ(id_new, id_old);
}

/* follow --agent NAME (its filter, on the stream) and attach NAME see the agent's kernel
 * denials: both match on the name. */
TEST(audit_follow_and_attach_by_name_see_the_agents_kernel_denials)
{
	const char *denied[] = { "\"kind\":\"net\"", "\"agent_name\":\"t-fa\"", NULL };
	const char *viewed[] = { "deny", "connect4", "127.0.0.1:", NULL };
	const char *header[] = { "t-fa", "interrupt to stop", NULL };
	char *follow_argv[] = { "agentctl", "audit", "follow", "--agent", "t-fa", NULL };
	char *attach_argv[] = { "agentctl", "attach", "t-fa", "--json", NULL };
	char *view_argv[] = { "agentctl", "attach", "t-fa", NULL };
	bool followed = false, attached = false, viewed_ok = false;
	struct proc *follow, *attach, *view;
	struct env *e = setup();
	int lfd, port, i;

	start_agentd(e);
	add_agent(e, "t-fa");
	view = proc_start(view_argv);
	if (!proc_wait_line(view, WAIT_MS, header))
		FAIL("no header: %s", view->buf);
	follow = proc_start(follow_argv);
	attach = proc_start(attach_argv);
	lfd = test_loopback_listener(&port);
	/* One denial at a time until each shows one (a subscription may be read a pass later). */
	for (i = 0; i < 50 && !(followed && attached && viewed_ok); i++) {
		deny_loopback(e, "t-fa", port);
		followed = followed || proc_wait_line(follow, 200, denied);
		attached = attached || proc_wait_line(attach, 200, denied);
		viewed_ok = viewed_ok || proc_wait_line(view, 200, viewed);
	}
	close(lfd);
	if (!followed)
		FAIL("follow --agent t-fa printed no kernel denial: %s", follow->buf);
	if (!attached)
		FAIL("attach t-fa --json printed no kernel denial: %s", attach->buf);
	if (!viewed_ok)
		FAIL("attach t-fa showed no kernel denial: %s", view->buf);
}

TEST(attach_pid_moves_the_process_and_its_children_under_the_network_rules)
{
	struct env *e = setup();
	char out[8192], cg[PATH_MAX + 64], pid_s[16];
	struct worker *w, *child;
	struct probe pr;
	int lfd, port;

	probe_kernel(&pr);
	start_agentd(e);
	add_agent(e, "t-pid");
	snprintf(cg, sizeof(cg), "%s/t-pid", e->cgroup);
	lfd = test_loopback_listener(&port);
	w = worker_start(NULL, &child);
	snprintf(pid_s, sizeof(pid_s), "%d", w->pid);
	/* Outside every agent, loopback is reachable. */
	ASSERT_EQ(worker_connect(w, port), 0);
	ASSERT_EQ(worker_connect(child, port), 0);
	if (!probe_bpf_lsm_ok(&pr)) {
		/* Only cgroup-BPF would hold: refused, and nothing moved. */
		ASSERT_EQ(agentctl_run(out, sizeof(out), "attach", "t-pid", "--pid", pid_s, NULL),
			  1);
		ASSERT(!in_cgroup(w->pid, cg));
		ASSERT_EQ(worker_connect(w, port), 0);
	}
	ASSERT_EQ(agentctl_run(out, sizeof(out), "attach", "t-pid", "--pid", pid_s,
			       "--allow-partial", NULL),
		  0);
	if (!strstr(out, "2 processes moved") || !strstr(out, "network  cgroup-BPF") ||
	    (!probe_bpf_lsm_ok(&pr) && !strstr(out, "files    NOT ENFORCED")))
		FAIL("attach --pid: %s", out);
	ASSERT(in_cgroup(w->pid, cg));
	ASSERT(in_cgroup(child->pid, cg));
	ASSERT_EQ(worker_connect(w, port), EPERM);
	ASSERT_EQ(worker_connect(child, port), EPERM);
	/* Once in, a process never leaves for another agent; agentd never attaches itself. */
	add_agent(e, "t-other");
	ASSERT_EQ(agentctl_run(out, sizeof(out), "attach", "t-other", "--pid", pid_s,
			       "--allow-partial", NULL),
		  1);
	snprintf(pid_s, sizeof(pid_s), "%d", e->agentd->pid);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "attach", "t-other", "--pid", pid_s,
			       "--allow-partial", NULL),
		  1);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "attach", "t-other", "--pid", "999999999", NULL),
		  2);
	close(lfd);
}

/* The cgroup v2 directory this test runs in, as cgroup_is() takes it ("ROOT/" for the root). */
static void own_cgroup(char *out, size_t sz)
{
	char root[PATH_MAX / 2], line[PATH_MAX / 2];
	FILE *f = fopen("/proc/self/cgroup", "re");

	ASSERT(f);
	ASSERT_EQ(cgroup2_mount(root, sizeof(root)), 0);
	out[0] = '\0';
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::/", 4)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, sz, "%s%s", root, line + 3);
		}
	fclose(f);
	ASSERT(out[0]);
}

/*
 * A cgroup file opened for writing before the process is an agent's is not checked again when
 * written: an attach finding one in a moved process (here in both, inherited) is refused, and
 * the processes moved are moved back where they were.
 */
TEST(attach_pid_refuses_a_process_holding_a_writable_cgroup_fd)
{
	struct env *e = setup();
	char out[8192], cg[PATH_MAX + 64], mine[PATH_MAX + 8], other[PATH_MAX],
		procs[PATH_MAX + 16];
	char pid_s[16];
	struct worker *w, *child;
	int fd;

	start_agentd(e);
	add_agent(e, "t-fd");
	snprintf(cg, sizeof(cg), "%s/t-fd", e->cgroup);
	own_cgroup(mine, sizeof(mine));
	test_cgroup(other, sizeof(other));
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", other);
	fd = open(procs, O_WRONLY); /* no O_CLOEXEC: the workers inherit it */
	ASSERT_OK(fd);
	w = worker_start(NULL, &child);
	close(fd);
	snprintf(pid_s, sizeof(pid_s), "%d", w->pid);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "attach", "t-fd", "--pid", pid_s,
			       "--allow-partial", "--json", NULL),
		  1);
	if (!strstr(out, "holds a cgroup file open for writing") || !strstr(out, procs) ||
	    !strstr(out, "moved back"))
		FAIL("attach --pid: %s", out);
	ASSERT(in_cgroup(w->pid, mine));
	ASSERT(in_cgroup(child->pid, mine));
	/* Without the descriptor, the same tree attaches. */
	w = worker_start(NULL, &child);
	snprintf(pid_s, sizeof(pid_s), "%d", w->pid);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "attach", "t-fd", "--pid", pid_s,
			       "--allow-partial", NULL),
		  0);
	ASSERT(in_cgroup(w->pid, cg));
	ASSERT(in_cgroup(child->pid, cg));
}

/*
 * The same through io_uring: a cgroup file registered with a ring is written without being
 * opened again and needs no descriptor once registered, so a process holding the ring is
 * refused as well (agentd reads the registered files from the ring's fdinfo).
 */
TEST(attach_pid_refuses_a_process_whose_io_uring_registers_a_cgroup_file)
{
	struct env *e = setup();
	char out[8192], mine[PATH_MAX + 8], other[PATH_MAX], procs[PATH_MAX + 16], pid_s[16];
	struct worker *w;
	int ring;

	start_agentd(e);
	add_agent(e, "t-ring");
	own_cgroup(mine, sizeof(mine));
	test_cgroup(other, sizeof(other));
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", other);
	ring = test_ring_registering(procs);
	w = worker_start(NULL, NULL); /* inherits the ring (fork keeps O_CLOEXEC descriptors) */
	close(ring);
	snprintf(pid_s, sizeof(pid_s), "%d", w->pid);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "attach", "t-ring", "--pid", pid_s,
			       "--allow-partial", "--json", NULL),
		  1);
	if (!strstr(out, "io_uring") || !strstr(out, procs) || !strstr(out, "moved back"))
		FAIL("attach --pid: %s", out);
	ASSERT(in_cgroup(w->pid, mine));
}

/*
 * A process built to race the attach: it holds the procs files of a cgroup outside and of the
 * agent's, and once it finds itself moved it leaves through the first, comes back through the
 * second and closes both, so that a check after the move would see nothing. agentd stops what
 * it moves (a frozen staging cgroup) and checks it stopped: the process is checked holding
 * both, every time, and refused. (Before, the check came after the move with the process
 * running, and it got through in some of the tries: five tries make that near certain.)
 */
static void racer_loop(const char *home, int out_fd, int back_fd)
{
	char line[PATH_MAX], want[PATH_MAX + 8];
	FILE *f;

	snprintf(want, sizeof(want), "0::%s\n", home);
	for (;;) {
		f = fopen("/proc/self/cgroup", "re");
		if (!f)
			_exit(1);
		line[0] = '\0';
		while (fgets(line, sizeof(line), f) && strncmp(line, "0::", 3))
			;
		fclose(f);
		if (strcmp(line, want))
			break; /* moved */
	}
	if (write(out_fd, "0", 1) == 1 && write(back_fd, "0", 1) == 1) {
		close(out_fd);
		close(back_fd);
	}
	pause();
	_exit(0);
}

static void kill_racer(void *pid)
{
	kill((pid_t)(long)pid, SIGKILL);
	waitpid((pid_t)(long)pid, NULL, 0);
}

TEST(attach_pid_stops_what_it_moves_so_no_process_races_the_check)
{
	struct env *e = setup();
	char out[8192], root[PATH_MAX], mine[PATH_MAX + 8], other[PATH_MAX], cg[PATH_MAX + 64],
		procs[PATH_MAX + 80], pid_s[16];
	int out_fd, back_fd, try;
	pid_t pid;

	ASSERT_EQ(cgroup2_mount(root, sizeof(root)), 0);
	start_agentd(e);
	add_agent(e, "t-race");
	snprintf(cg, sizeof(cg), "%s/t-race", e->cgroup);
	own_cgroup(mine, sizeof(mine));
	test_cgroup(other, sizeof(other));
	for (try = 0; try < 5; try++) {
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", other);
		out_fd = open(procs, O_WRONLY | O_CLOEXEC);
		ASSERT_OK(out_fd);
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
		back_fd = open(procs, O_WRONLY | O_CLOEXEC);
		ASSERT_OK(back_fd);
		pid = fork();
		ASSERT_OK(pid);
		if (pid == 0)
			racer_loop(mine + strlen(root), out_fd, back_fd);
		test_defer(kill_racer, (void *)(long)pid);
		close(out_fd);
		close(back_fd);
		snprintf(pid_s, sizeof(pid_s), "%d", pid);
		if (agentctl_run(out, sizeof(out), "attach", "t-race", "--pid", pid_s,
				 "--allow-partial", "--json", NULL) != 1 ||
		    !strstr(out, "holds a cgroup file open for writing") ||
		    !strstr(out, "moved back"))
			FAIL("try %d: attach --pid of a racing process: %s", try, out);
	}
}

/* A staging cgroup that an agentd which died mid-attach left holding processes (never checked)
 * refuses the next attach, and stays; an empty one is removed and the attach goes on. */
TEST(attach_pid_refuses_while_an_unfinished_attach_holds_processes)
{
	struct env *e = setup();
	char out[8192], staging[PATH_MAX + 64], procs[PATH_MAX + 80], num[16], pid_s[16];
	struct worker *left, *w;

	start_agentd(e);
	add_agent(e, "t-left");
	snprintf(staging, sizeof(staging), "%s/t-left/agentd-attach", e->cgroup);
	ASSERT_OK(mkdir(staging, 0755));
	left = worker_start(NULL, NULL);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", staging);
	snprintf(num, sizeof(num), "%d", left->pid);
	ASSERT_EQ(cgroup_write(procs, num), 0);
	w = worker_start(NULL, NULL);
	snprintf(pid_s, sizeof(pid_s), "%d", w->pid);
	if (agentctl_run(out, sizeof(out), "attach", "t-left", "--pid", pid_s, "--allow-partial",
			 "--json", NULL) == 0 ||
	    !strstr(out, "never checked"))
		FAIL("attach beside an unfinished one: %s", out);
	ASSERT(in_cgroup(left->pid, staging));
	/* Emptied (the operator moved its process on), it goes, and the attach is made. */
	snprintf(procs, sizeof(procs), "%s/t-left/cgroup.procs", e->cgroup);
	ASSERT_EQ(cgroup_write(procs, num), 0);
	if (agentctl_run(out, sizeof(out), "attach", "t-left", "--pid", pid_s, "--allow-partial",
			 NULL))
		FAIL("attach: %s", out);
	ASSERT(access(staging, F_OK) && errno == ENOENT);
}

/* Forks until told to stop: every fifth child stays (blocked on a pipe, 600 at most), the
 * others exit at once. Says "s" on done when it has stopped forking. */
struct forker {
	volatile int stop;
	volatile int kept;
};

static void forker_loop(struct forker *f, int done)
{
	int hold[2];
	pid_t pid;
	char c;

	if (pipe(hold))
		_exit(1);
	for (int i = 0; !f->stop; i++) {
		bool keep = i % 5 == 0 && f->kept < 600;

		pid = fork();
		if (pid == 0) {
			if (!keep)
				_exit(0);
			close(hold[1]);
			(void)!read(hold[0], &c, 1);
			_exit(0);
		}
		if (pid > 0 && keep)
			f->kept++;
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
	(void)!write(done, "s", 1);
	pause();
	_exit(0);
}

static void kill_group(void *arg)
{
	kill(-*(pid_t *)arg, SIGKILL);
	free(arg);
}

/* The pids whose ancestry reaches root, in out (at most max). */
static int descendants(pid_t root, pid_t *out, int max)
{
	static struct {
		int pid, ppid;
	} t[32768];
	char path[64], buf[512], *p;
	struct dirent *de;
	int n = 0, k = 0, i, j, cur, depth;
	DIR *d = opendir("/proc");
	FILE *f;

	ASSERT(d);
	while ((de = readdir(d)) && n < 32768) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", atoi(de->d_name));
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) &&
		    sscanf(p + 1, " %*c %d", &t[n].ppid) == 1)
			t[n++].pid = atoi(de->d_name);
		fclose(f);
	}
	closedir(d);
	for (i = 0; i < n && k < max; i++) {
		for (cur = t[i].pid, depth = 0; cur > 1 && cur != root && depth < 64; depth++) {
			for (j = 0; j < n && t[j].pid != cur; j++)
				;
			cur = j < n ? t[j].ppid : 0;
		}
		if (cur == root)
			out[k++] = t[i].pid;
	}
	return k;
}

TEST(attach_pid_leaves_no_child_behind_while_the_tree_forks)
{
	struct env *e = setup();
	char out[8192], cg[PATH_MAX + 64], pid_s[16], c;
	struct forker *f =
		mmap(NULL, sizeof(*f), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pid, *pgid = malloc(sizeof(*pgid)), tree[1024];
	int done[2], n, i;

	ASSERT(f != MAP_FAILED && pgid);
	start_agentd(e);
	add_agent(e, "t-fork");
	snprintf(cg, sizeof(cg), "%s/t-fork", e->cgroup);
	ASSERT_OK(pipe2(done, O_CLOEXEC));
	pid = fork();
	ASSERT_OK(pid);
	if (pid == 0) {
		setpgid(0, 0);
		forker_loop(f, done[1]);
	}
	setpgid(pid, pid);
	*pgid = pid;
	test_defer(kill_group, pgid);
	snprintf(pid_s, sizeof(pid_s), "%d", pid);
	/* Attached while it forks. */
	if (agentctl_run(out, sizeof(out), "attach", "t-fork", "--pid", pid_s, "--allow-partial",
			 NULL))
		FAIL("attach: %s", out);
	f->stop = 1;
	ASSERT_EQ(read(done[0], &c, 1), 1);
	n = descendants(pid, tree, 1024);
	ASSERT(n >= 1);
	/* Every member of the tree, kept children included, is inside (those that exited are
	 * zombies or gone: a zombie's cgroup file still reads). */
	for (i = 0; i < n; i++)
		if (!cgroup_is(tree[i], cg))
			FAIL("process %d of the tree (%d kept children) is outside %s: %s", tree[i],
			     f->kept, cg, out);
}

/* The pins of the cgroup programs attached to the cgroup at path. */
static int pins_for(struct env *e, const char *path)
{
	char cmd[PATH_MAX * 2 + 64], out[64];
	__u64 id;
	FILE *f;

	ASSERT_EQ(cgroup_id(path, &id), 0);
	snprintf(cmd, sizeof(cmd), "ls %s | grep -c -- '-%llu$'", e->pins, (unsigned long long)id);
	f = popen(cmd, "r");
	ASSERT(f);
	ASSERT(fgets(out, sizeof(out), f));
	pclose(f);
	return atoi(out);
}

/* The same for a foreign cgroup: a process below it holding a writable cgroup file refuses the
 * attach, and the cgroup is not the agent's (its processes reach loopback as before). */
TEST(attach_cgroup_refuses_a_process_holding_a_writable_cgroup_fd)
{
	struct env *e = setup();
	char out[8192], foreign[PATH_MAX], below[PATH_MAX], procs[PATH_MAX + 16];
	struct worker *w;
	int lfd, port, fd;

	test_cgroup(foreign, sizeof(foreign));
	test_cgroup_in(foreign, below, sizeof(below));
	start_agentd(e);
	add_agent(e, "t-cgfd");
	lfd = test_loopback_listener(&port);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", below);
	fd = open(procs, O_WRONLY); /* no O_CLOEXEC: the worker inherits it */
	ASSERT_OK(fd);
	w = worker_start(below, NULL);
	close(fd);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "attach", "t-cgfd", "--cgroup", foreign,
			       "--allow-partial", "--json", NULL),
		  1);
	if (!strstr(out, "holds a cgroup file open for writing") || !strstr(out, procs))
		FAIL("attach --cgroup: %s", out);
	ASSERT_EQ(worker_connect(w, port), 0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "info", "t-cgfd", "--json", NULL), 0);
	if (strstr(out, foreign))
		FAIL("agent info lists %s: %s", foreign, out);
	close(lfd);
}

TEST(attach_cgroup_puts_a_foreign_cgroup_under_the_agent_and_survives_a_restart)
{
	struct env *e = setup();
	char out[8192], foreign[PATH_MAX], cg[PATH_MAX + 64];
	struct worker *w, *late;
	struct probe pr;
	int lfd, port;

	probe_kernel(&pr);
	test_cgroup(foreign, sizeof(foreign));
	start_agentd(e);
	add_agent(e, "t-cg");
	lfd = test_loopback_listener(&port);
	w = worker_start(foreign, NULL);
	ASSERT_EQ(worker_connect(w, port), 0);
	if (!probe_bpf_lsm_ok(&pr))
		ASSERT_EQ(
			agentctl_run(out, sizeof(out), "attach", "t-cg", "--cgroup", foreign, NULL),
			1);
	ASSERT_EQ(worker_connect(w, port), 0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "attach", "t-cg", "--cgroup", foreign,
			       "--allow-partial", NULL),
		  0);
	if (!strstr(out, "limits   NOT APPLIED"))
		FAIL("attach --cgroup: %s", out);
	/* The process that was running there, and one started later, are the agent's now. */
	ASSERT_EQ(worker_connect(w, port), EPERM);
	late = worker_start(foreign, NULL);
	ASSERT_EQ(worker_connect(late, port), EPERM);
	ASSERT(pins_for(e, foreign) > 0);
	/* Refused: twice, to another agent, agentd's own tree, a directory that is no cgroup. */
	add_agent(e, "t-cg2");
	ASSERT_EQ(agentctl_run(out, sizeof(out), "attach", "t-cg2", "--cgroup", foreign,
			       "--allow-partial", NULL),
		  1);
	snprintf(cg, sizeof(cg), "%s/t-cg2", e->cgroup);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "attach", "t-cg", "--cgroup", cg,
			       "--allow-partial", NULL),
		  1);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "attach", "t-cg", "--cgroup", e->dir,
			       "--allow-partial", NULL),
		  1);

	/* kill -9, then a restart with the pins gone: only the state can bring it back. */
	proc_stop(e->agentd, SIGKILL);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "ls", NULL), 3);
	start_agentd(e);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "info", "t-cg", "--json", NULL), 0);
	if (!strstr(out, foreign))
		FAIL("agent info after restart: %s", out);
	ASSERT_EQ(worker_connect(w, port), EPERM);
	ASSERT_EQ(proc_stop(e->agentd, SIGTERM), 0);
	{
		char *argv[] = { "agentd", "--teardown", "--pin-dir", e->pins, NULL };
		struct proc *t = proc_start(argv);

		ASSERT_EQ(proc_stop(t, 0), 0);
	}
	ASSERT_EQ(worker_connect(w, port), 0);
	start_agentd(e);
	ASSERT_EQ(worker_connect(w, port), EPERM);
	ASSERT(pins_for(e, foreign) > 0);

	/* detach gives it back; attach again, then agent rm gives it back too. */
	ASSERT_EQ(agentctl_run(out, sizeof(out), "detach", "t-cg", "--cgroup", foreign, NULL), 0);
	ASSERT_EQ(worker_connect(w, port), 0);
	ASSERT_EQ(pins_for(e, foreign), 0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "detach", "t-cg", "--cgroup", foreign, NULL), 1);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "attach", "t-cg", "--cgroup", foreign,
			       "--allow-partial", NULL),
		  0);
	ASSERT_EQ(worker_connect(w, port), EPERM);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "rm", "t-cg", NULL), 0);
	ASSERT_EQ(worker_connect(w, port), 0);
	ASSERT_EQ(pins_for(e, foreign), 0);
	/* rm released it and killed nothing there. */
	ASSERT_EQ(kill(w->pid, 0), 0);
	close(lfd);
}

/* agentd's children, its workers (no tool or run is going on). */
static int children_of(pid_t pid, pid_t *out, int max)
{
	char path[64], buf[4096], *p, *end;
	size_t len = 0;
	ssize_t r;
	long c;
	int n = 0, fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_OK(fd);
	while ((r = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += r;
	buf[len] = '\0';
	close(fd);
	for (p = buf; (c = strtol(p, &end, 10)) > 0 && n < max; p = end)
		out[n++] = c;
	return n;
}

static void refused(const char *agent, const char *opt, const char *arg, const char *why)
{
	char out[8192];

	if (agentctl_run(out, sizeof(out), "attach", agent, opt, arg, "--allow-partial", "--json",
			 NULL) != 1 ||
	    !strstr(out, why))
		FAIL("attach %s %s %s: expected a refusal saying \"%s\": %s", agent, opt, arg, why,
		     out);
}

static void rmdir_at_end(void *path)
{
	rmdir(path);
}

/* What is agentd's, the init system's or the broker's tools' is never attached: agentd's
 * workers, pid 1, a process of agentd's own cgroup or of init.scope, and those cgroups. */
TEST(attach_refuses_agentd_its_workers_init_and_their_cgroups)
{
	static char init_scope[PATH_MAX + 16];
	struct env *e = setup();
	char root[PATH_MAX], pid_s[16], cg[PATH_MAX + 32], parent[PATH_MAX + 16];
	struct worker *w;
	pid_t kids[16];
	int n, i;

	ASSERT_EQ(cgroup2_mount(root, sizeof(root)), 0);
	start_agentd(e);
	add_agent(e, "t-prot");
	n = children_of(e->agentd->pid, kids, 16);
	ASSERT(n >= 2); /* the proxy's worker, t-prot's broker worker */
	for (i = 0; i < n; i++) {
		snprintf(pid_s, sizeof(pid_s), "%d", kids[i]);
		refused("t-prot", "--pid", pid_s, "started by agentd");
	}
	refused("t-prot", "--pid", "1", "init or an ancestor of agentd");
	/* A process of agentd's own cgroup that agentd did not start. */
	w = worker_start(service_cg, NULL);
	snprintf(pid_s, sizeof(pid_s), "%d", w->pid);
	refused("t-prot", "--pid", pid_s, "agentd's own cgroup");
	ASSERT(in_cgroup(w->pid, service_cg));
	refused("t-prot", "--cgroup", service_cg, "agentd itself runs in");
	snprintf(parent, sizeof(parent), "%s", service_cg);
	*strrchr(parent, '/') = '\0';
	refused("t-prot", "--cgroup", parent, "agentd itself runs in");
	snprintf(cg, sizeof(cg), "%s/sub", service_cg);
	ASSERT_OK(mkdir(cg, 0755));
	refused("t-prot", "--cgroup", cg, "agentd's own cgroup");
	/* init.scope: made for the test where no init system made one. */
	snprintf(init_scope, sizeof(init_scope), "%s/init.scope", root);
	if (!mkdir(init_scope, 0755)) {
		test_defer(rmdir_at_end, init_scope);
		w = worker_start(init_scope, NULL);
		snprintf(pid_s, sizeof(pid_s), "%d", w->pid);
		refused("t-prot", "--pid", pid_s, "init.scope");
		ASSERT(in_cgroup(w->pid, init_scope));
	}
	refused("t-prot", "--cgroup", init_scope, "init.scope");
}

/*
 * A process inside a cgroup being attached, holding cgroup files of another cgroup and of its
 * own, waits until it is the agent's (its connect() is refused), then leaves, acts as no
 * agent's, comes back and closes them: the check of what the tree holds must not miss it.
 */
static void cgroup_racer_loop(int port, int out_fd, int back_fd)
{
	for (;;)
		if (test_loopback_connect(&port) == EPERM)
			break;
	if (write(out_fd, "0", 1) == 1 && write(back_fd, "0", 1) == 1) {
		close(out_fd);
		close(back_fd);
	}
	pause();
	_exit(0);
}

static void kill_slot(void *arg)
{
	pid_t *pid = arg;

	if (*pid > 0) {
		kill(*pid, SIGKILL);
		waitpid(*pid, NULL, 0);
		*pid = 0;
	}
}

static bool frozen_by_its_file(const char *cgroup)
{
	char path[PATH_MAX + 16], buf[8] = "";
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.freeze", cgroup);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_OK(fd);
	ASSERT(read(fd, buf, sizeof(buf) - 1) > 0);
	close(fd);
	return buf[0] == '1';
}

#define DECOYS 40
#define DECOY_FDS 900

static void decoys_stop(void *arg)
{
	pid_t *pids = arg;
	int i;

	for (i = 0; i < DECOYS; i++)
		kill_slot(&pids[i]);
}

/* Processes that make the check of a tree long (each holds many descriptors, none writable). */
static void decoys_start(const char *cgroup, pid_t *pids)
{
	int cgfd = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC), p[2], i, k, fd;
	char c;

	ASSERT_OK(cgfd);
	ASSERT_OK(pipe2(p, O_CLOEXEC));
	for (i = 0; i < DECOYS; i++) {
		pids[i] = cgroup_fork_into(cgfd);
		if (pids[i] < 0)
			FAIL("clone3 into %s: %s", cgroup, strerror(-pids[i]));
		if (pids[i])
			continue;
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		for (k = 0; fd >= 0 && k < DECOY_FDS; k++)
			if (dup(fd) < 0)
				_exit(1);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	test_defer(decoys_stop, pids);
	for (i = 0; i < DECOYS; i++)
		ASSERT_EQ(read(p[0], &c, 1), 1);
	close(p[0]);
	close(p[1]);
	close(cgfd);
}

TEST(attach_cgroup_stops_the_tree_so_no_process_races_the_check)
{
	static pid_t racers[5], decoys[DECOYS];
	struct env *e = setup();
	char out[8192], foreign[PATH_MAX], sub[PATH_MAX], other[PATH_MAX], procs[PATH_MAX + 16];
	int out_fd, back_fd, try, lfd, port;
	pid_t pid;

	start_agentd(e);
	add_agent(e, "t-cgrace");
	/* A port nobody listens on: refused by the peer (ECONNREFUSED) until the agent's rules
	 * hold (EPERM). */
	lfd = test_loopback_listener(&port);
	close(lfd);
	test_cgroup(foreign, sizeof(foreign));
	test_cgroup_in(foreign, sub, sizeof(sub));
	test_cgroup(other, sizeof(other));
	/* The check reads the top's processes before the racer's, below: without the decoys
	 * making it long, it ends before the racer's first move out does. */
	decoys_start(foreign, decoys);
	for (try = 0; try < 5; try++) {
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", other);
		out_fd = open(procs, O_WRONLY | O_CLOEXEC);
		ASSERT_OK(out_fd);
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", sub);
		back_fd = open(procs, O_WRONLY | O_CLOEXEC);
		ASSERT_OK(back_fd);
		pid = fork();
		ASSERT_OK(pid);
		if (pid == 0) {
			if (write(back_fd, "0", 1) != 1)
				_exit(1);
			cgroup_racer_loop(port, out_fd, back_fd);
		}
		racers[try] = pid;
		test_defer(kill_slot, &racers[try]);
		close(out_fd);
		close(back_fd);
		while (!in_cgroup(pid, sub))
			sched_yield();
		if (agentctl_run(out, sizeof(out), "attach", "t-cgrace", "--cgroup", foreign,
				 "--allow-partial", "--json", NULL) != 1 ||
		    !strstr(out, "holds a cgroup file open for writing"))
			FAIL("try %d: attach --cgroup of a tree with a racing process: %s", try,
			     out);
		/* Refused, and thawed: it runs on, as no agent's. */
		ASSERT(!frozen_by_its_file(foreign));
		kill_slot(&racers[try]);
	}
}
