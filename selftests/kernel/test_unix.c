// SPDX-License-Identifier: GPL-2.0
/*
 * Unix sockets (BPF LSM unix_stream_connect, unix_may_send): an agent's task reaches the unix
 * sockets its own agent's tasks created, and nothing else: not a host daemon's (path-named or
 * abstract), not another agent's; stream, seqpacket and datagram alike. Tasks of no agent are
 * never affected.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ops.h"

/* A unix address: a path, or an abstract name when name starts with '@'. */
struct uaddr {
	struct sockaddr_un sa;
	socklen_t len;
};

static void uaddr_set(struct uaddr *u, const char *name)
{
	size_t n = strlen(name);

	if (n >= sizeof(u->sa.sun_path))
		FAIL("unix address too long: %s", name);
	memset(u, 0, sizeof(*u));
	u->sa.sun_family = AF_UNIX;
	memcpy(u->sa.sun_path, name, n);
	if (name[0] == '@')
		u->sa.sun_path[0] = '\0';
	u->len = offsetof(struct sockaddr_un, sun_path) + n + (name[0] == '@' ? 0 : 1);
}

/* A bound socket of type at name, listening unless datagram: the fd, or -errno. */
static int unix_bound(int type, const char *name)
{
	struct uaddr u;
	int fd, err;

	uaddr_set(&u, name);
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&u.sa, u.len) || (type != SOCK_DGRAM && listen(fd, 8))) {
		err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

struct reach {
	int type;
	char name[108];
};

/* From a new socket of the type: connect() to name, or for datagrams an unconnected sendto()
 * (each send is checked); 0 or the errno. */
static int try_reach(void *arg)
{
	const struct reach *r = arg;
	struct uaddr u;
	int fd, err = 0;

	uaddr_set(&u, r->name);
	fd = socket(AF_UNIX, r->type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	if (r->type == SOCK_DGRAM) {
		if (sendto(fd, "x", 1, 0, (struct sockaddr *)&u.sa, u.len) != 1)
			err = errno;
	} else if (connect(fd, (struct sockaddr *)&u.sa, u.len)) {
		err = errno;
	}
	close(fd);
	return err;
}

/* A datagram socket connect()ed to name: the connect is checked too; 0 or the errno. */
static int try_connect_dgram(void *arg)
{
	const struct reach *r = arg;
	struct uaddr u;
	int fd, err = 0;

	uaddr_set(&u, r->name);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	if (connect(fd, (struct sockaddr *)&u.sa, u.len))
		err = errno;
	close(fd);
	return err;
}

static const int types[] = { SOCK_STREAM, SOCK_SEQPACKET, SOCK_DGRAM };

static void close_fd(void *arg)
{
	close((int)(long)arg);
}

/* Sockets of every type at a path in dir and under an abstract name, made by this (outside)
 * process and kept open until the test ends; their names in r[0..5]. */
static void outside_sockets(const char *dir, const char *tag, struct reach r[6])
{
	int i, fd;

	for (i = 0; i < 6; i++) {
		r[i].type = types[i % 3];
		if (i < 3)
			PATHF(r[i].name, "%s/%s-%d.sock", dir, tag, i);
		else
			snprintf(r[i].name, sizeof(r[i].name), "@agentd-test-%s-%d-%d", tag,
				 getpid(), i);
		fd = unix_bound(r[i].type, r[i].name);
		if (fd < 0)
			FAIL("socket at %s: %s", r[i].name, strerror(-fd));
		test_defer(close_fd, (void *)(long)fd);
	}
}

static const struct file_rule base_files[] = { { "/", RX } };

static void unix_agent(struct test_agent *ag, __u32 id, const struct file_rule *files, size_t n)
{
	struct ruleset rs = { .files = files, .nfiles = n };

	rs.sock_families = 1ULL << AF_UNIX;
	rs.sock_types = (1U << SOCK_STREAM) | (1U << SOCK_DGRAM) | (1U << SOCK_SEQPACKET);
	test_agent_start_as(ag, id, &rs, true);
}

TEST(unix_host_sockets_refused_to_agent_reachable_outside)
{
	struct test_agent ag;
	struct reach r[6];
	char dir[PATH_MAX];
	int i;

	test_dir(dir, sizeof(dir));
	outside_sockets(dir, "host", r);
	unix_agent(&ag, TEST_AGENT_ID, base_files, 1);
	for (i = 0; i < 6; i++) {
		if (test_agent_run(&ag, try_reach, &r[i]) != EPERM)
			FAIL("agent reached the host's %s (type %d): EPERM expected", r[i].name,
			     r[i].type);
		if (run_in_cgroup(NULL, try_reach, &r[i], NULL))
			FAIL("a task of no agent could not reach %s (type %d)", r[i].name,
			     r[i].type);
	}
	/* connect() of a datagram socket is checked as well as each send. */
	ASSERT_EQ(test_agent_run(&ag, try_connect_dgram, &r[2]), EPERM);
	ASSERT_EQ(test_agent_run(&ag, try_connect_dgram, &r[5]), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, try_connect_dgram, &r[5], NULL), 0);
}

/* In the agent: sockets of every type, path-named in dir and abstract, reached by the same
 * process and by a child; 0 or a step number. */
static int own_sockets(void *arg)
{
	const char *dir = arg;
	struct reach r;
	int i, fd, status;
	pid_t pid;

	for (i = 0; i < 6; i++) {
		r.type = types[i % 3];
		if (i < 3 && (size_t)snprintf(r.name, sizeof(r.name), "%s/own-%d.sock", dir, i) >=
				     sizeof(r.name))
			return 9;
		if (i >= 3)
			snprintf(r.name, sizeof(r.name), "@agentd-test-own-%d-%d", getpid(), i);
		fd = unix_bound(r.type, r.name);
		if (fd < 0)
			return 10 + i;
		if (try_reach(&r))
			return 20 + i;
		pid = fork();
		if (pid == 0)
			_exit(try_reach(&r));
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			return 30 + i;
		close(fd);
	}
	return 0;
}

TEST(unix_own_sockets_reachable_in_agent)
{
	char dir[PATH_MAX];
	struct test_agent ag;

	test_dir(dir, sizeof(dir));
	const struct file_rule files[] = {
		{ "/", RX },
		{ dir, AGENTD_RIGHT_READ | AGENTD_RIGHT_WRITE | AGENTD_RIGHT_CREATE |
			       AGENTD_RIGHT_REMOVE },
	};
	unix_agent(&ag, TEST_AGENT_ID, files, 2);
	ASSERT_EQ(test_agent_run(&ag, own_sockets, dir), 0);
}

/* In an agent: an abstract socket of the type, handed to the test over the inherited socketpair
 * (SCM_RIGHTS) so that it outlives this task; 0 or the errno. */
struct handover {
	int sv;
	struct reach r;
};

static int make_and_hand_over(void *arg)
{
	const struct handover *h = arg;
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = "s", .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	int fd = unix_bound(h->r.type, h->r.name);

	if (fd < 0)
		return -fd;
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (sendmsg(h->sv, &msg, 0) != 1)
		return errno;
	close(fd);
	return 0;
}

static int receive_fd(int sv)
{
	char cbuf[CMSG_SPACE(sizeof(int))], b;
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sv, &msg, MSG_CMSG_CLOEXEC) != 1)
		FAIL("recvmsg: %s", strerror(errno));
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		FAIL("no descriptor handed over");
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* Another agent's sockets are refused, whichever task of it made them; that agent's other tasks
 * still reach them, and so does a task of no agent. */
TEST(unix_other_agents_sockets_refused)
{
	struct test_agent a, b;
	struct handover h;
	int sv[2], i, fd;

	unix_agent(&a, TEST_AGENT_ID, base_files, 1);
	unix_agent(&b, TEST_AGENT_ID + 1, base_files, 1);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		FAIL("socketpair: %s", strerror(errno));
	test_defer(close_fd, (void *)(long)sv[0]);
	test_defer(close_fd, (void *)(long)sv[1]);
	h.sv = sv[1];
	for (i = 0; i < 3; i++) {
		h.r.type = types[i];
		snprintf(h.r.name, sizeof(h.r.name), "@agentd-test-b-%d-%d", getpid(), i);
		ASSERT_EQ(test_agent_run(&b, make_and_hand_over, &h), 0);
		fd = receive_fd(sv[0]);
		test_defer(close_fd, (void *)(long)fd);
		if (test_agent_run(&a, try_reach, &h.r) != EPERM)
			FAIL("agent A reached agent B's %s (type %d): EPERM expected", h.r.name,
			     h.r.type);
		if (test_agent_run(&b, try_reach, &h.r))
			FAIL("agent B's other task could not reach B's %s (type %d)", h.r.name,
			     h.r.type);
		if (run_in_cgroup(NULL, try_reach, &h.r, NULL))
			FAIL("a task of no agent could not reach %s (type %d)", h.r.name, h.r.type);
	}
}
