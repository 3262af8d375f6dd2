// SPDX-License-Identifier: GPL-2.0
/*
 * agentd-worker proxy IDLE-MS: the egress proxy's worker. agentd execs it (a fresh image: no
 * mapping, descriptor or environment of agentd's) with its channel as fd PROXY_FD; it becomes a
 * uid of its own with no capabilities and confines itself with a kill-default seccomp filter,
 * because it reads bytes agents chose. Its main thread takes orders from the daemon (listeners
 * passed with SCM_RIGHTS, allowlists, ports, the agent's cgroups) and accepts; each connection
 * gets a thread that may block (DNS, connect, relay) without stalling anyone. Per connection, in
 * order: check that the peer's socket was created in one of the agent's cgroups (sock_diag), parse
 * the head (http_proxy.c), match the host against the agent's allowlist and the port against its
 * ports, resolve it once, check every address against the structural deny list, connect to an
 * address that was checked (never resolving again), then relay. A send blocked for the idle
 * timeout ends the connection as silence does. One report per connection goes back to the daemon.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netdb.h>
#include <seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/netlink.h>
#include "wire/accept.h"
#include "agentd/abi.h"
#include "log.h"
#include "policy/netdeny.h"
#include "wire/proxy_proto.h"
#include "kernel/sockdiag.h"
#include "worker.h"

#define HEAD_TIMEOUT_MS 10000
#define CONNECT_TIMEOUT_MS 10000
#define CONNS_MAX 512
#define CONNS_PER_AGENT 128 /* so that one agent cannot take every thread */
#define ADDRS_MAX 16
#define RELAY_BUF 65536

struct hostlist {
	atomic_int refs;
	atomic_bool gone; /* the agent was removed: its connections end */
	bool no_policy;
	__u16 nports, ncgroups;
	__u16 ports[PROXY_PORTS_MAX];
	__u64 cgroups[PROXY_CGROUPS_MAX];
	size_t n;
	char **hosts; /* point into buf */
	char buf[];
};

struct conn {
	struct conn *next;
	__u32 agent;
	int cfd, ufd; /* the agent's connection, the origin's (-1 until connected) */
	struct hostlist *hl;
	struct proxy_report rep;
	size_t len; /* bytes of head read into buf */
	char buf[HTTP_HEAD_MAX];
	char out[HTTP_OUT_MAX];
};

static int ctl_fd;
static int idle_ms; /* a relayed connection silent both ways this long is closed */
static int listeners[AGENTD_MAX_AGENTS]; /* by agent id; 0: none */
static struct hostlist *lists[AGENTD_MAX_AGENTS];
static pthread_mutex_t conns_lock = PTHREAD_MUTEX_INITIALIZER;
static struct conn *conns;
static int nconns, agent_conns[AGENTD_MAX_AGENTS];

static void hostlist_put(struct hostlist *hl)
{
	if (hl && atomic_fetch_sub(&hl->refs, 1) == 1) {
		free(hl->hosts);
		free(hl);
	}
}

/* The hosts of a message: NUL-terminated patterns filling len bytes exactly. */
static struct hostlist *hostlist_new(const struct proxy_msg *m)
{
	struct hostlist *hl = calloc(1, sizeof(*hl) + m->len + 1);
	size_t i, n = 0;

	if (!hl)
		return NULL;
	memcpy(hl->buf, m->hosts, m->len);
	hl->no_policy = m->flags & PROXY_F_NO_POLICY;
	if (m->nports > PROXY_PORTS_MAX || m->ncgroups > PROXY_CGROUPS_MAX) {
		free(hl);
		return NULL;
	}
	hl->nports = m->nports;
	hl->ncgroups = m->ncgroups;
	memcpy(hl->ports, m->ports, sizeof(hl->ports));
	memcpy(hl->cgroups, m->cgroups, sizeof(hl->cgroups));
	for (i = 0; i < m->len; i++)
		n += !hl->buf[i];
	hl->hosts = calloc(n + 1, sizeof(char *));
	if (!hl->hosts || (m->len && hl->buf[m->len - 1])) {
		free(hl->hosts);
		free(hl);
		return NULL;
	}
	for (i = 0; i < m->len; i += strlen(hl->buf + i) + 1)
		hl->hosts[hl->n++] = hl->buf + i;
	atomic_init(&hl->refs, 1);
	atomic_init(&hl->gone, false);
	return hl;
}

static __u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

static void report(struct conn *c)
{
	c->rep.agent = c->agent;
	/* A lost report is logged here; the connection has already ended either way. */
	if (send(ctl_fd, &c->rep, sizeof(c->rep), MSG_NOSIGNAL) != sizeof(c->rep))
		log_err("proxy worker: report for agent %u: %s\n", c->agent, strerror(errno));
}

/* Both sockets of a connection wait at most idle_ms in send() (SO_SNDTIMEO): a peer that stops
 * reading ends the connection as silence does. Returns 0, -EAGAIN (that wait ran out) or -1. */
static int send_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return -EAGAIN;
		if (w <= 0)
			return -1;
		p += w, n -= w;
	}
	return 0;
}

static void send_timeout(int fd)
{
	struct timeval tv = { .tv_sec = idle_ms / 1000, .tv_usec = idle_ms % 1000 * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static void refuse(struct conn *c, int status, const char *why)
{
	char head[256];
	int n = http_status_head(status, why, head, sizeof(head));

	c->rep.status = status;
	snprintf(c->rep.why, sizeof(c->rep.why), "%s", why);
	send_all(c->cfd, head, n);
}

/* Reads until the head is complete. Returns 0 with the request parsed, or -1 (refused). */
static int read_head(struct conn *c, struct http_request *req, size_t *outlen)
{
	struct pollfd pfd = { .fd = c->cfd, .events = POLLIN };
	__u64 deadline = now_ms() + HEAD_TIMEOUT_MS, t;
	ssize_t n;
	int r;

	for (;;) {
		r = http_request_parse(c->buf, c->len, req, c->out, outlen);
		if (r == 1)
			return 0;
		if (r < 0) {
			refuse(c, req->status, req->why);
			return -1;
		}
		t = now_ms();
		if (t >= deadline || poll(&pfd, 1, deadline - t) <= 0) {
			refuse(c, 408, "head-timeout");
			return -1;
		}
		n = recv(c->cfd, c->buf + c->len, sizeof(c->buf) - c->len, 0);
		if (n <= 0) {
			c->rep.status = 400;
			snprintf(c->rep.why, sizeof(c->rep.why), "closed-before-head");
			return -1;
		}
		c->len += n;
	}
}

static void describe(struct proxy_report *rep, const struct sockaddr *sa)
{
	const void *a = sa->sa_family == AF_INET
				? (const void *)&((struct sockaddr_in *)sa)->sin_addr
				: (const void *)&((struct sockaddr_in6 *)sa)->sin6_addr;

	rep->has_addr = 1;
	snprintf(rep->family, sizeof(rep->family), "%s",
		 sa->sa_family == AF_INET ? "inet" : "inet6");
	inet_ntop(sa->sa_family, a, rep->addr, sizeof(rep->addr));
}

/*
 * Resolves the host once and checks every address; any denied address refuses the name (a
 * name that mixes public and private addresses is not one to trust). Returns how many
 * addresses were kept in out, or -1 (refused).
 */
static int resolve(struct conn *c, const struct http_request *req,
		   struct sockaddr_storage out[ADDRS_MAX], socklen_t lens[ADDRS_MAX])
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res, *ai;
	char port[8];
	int n = 0;

	snprintf(port, sizeof(port), "%u", req->port);
	if (getaddrinfo(req->host, port, &hints, &res)) {
		refuse(c, 502, "resolve-failed");
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		if (netdeny_sockaddr_denied(ai->ai_addr)) {
			describe(&c->rep, ai->ai_addr);
			refuse(c, 403, "denied-address");
			freeaddrinfo(res);
			return -1;
		}
		if (n < ADDRS_MAX && ai->ai_addrlen <= sizeof(out[0])) {
			memcpy(&out[n], ai->ai_addr, ai->ai_addrlen);
			lens[n++] = ai->ai_addrlen;
		}
	}
	freeaddrinfo(res);
	if (!n)
		refuse(c, 502, "resolve-failed");
	return n ? n : -1;
}

static int connect_one(const struct sockaddr_storage *ss, socklen_t len)
{
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), err = 0;
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	socklen_t el = sizeof(err);

	if (fd < 0)
		return -1;
	if (connect(fd, (const struct sockaddr *)ss, len) && errno != EINPROGRESS)
		goto fail;
	if (poll(&pfd, 1, CONNECT_TIMEOUT_MS) != 1 ||
	    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) || err)
		goto fail;
	if (fcntl(fd, F_SETFL, 0))
		goto fail;
	send_timeout(fd);
	return fd;
fail:
	close(fd);
	return -1;
}

/* Connects to the checked addresses in order; the one that answers is the one recorded. */
static int connect_checked(struct conn *c, struct sockaddr_storage *ss, socklen_t *lens, int n)
{
	int i, fd = -1;

	for (i = 0; i < n && fd < 0; i++) {
		describe(&c->rep, (struct sockaddr *)&ss[i]);
		fd = connect_one(&ss[i], lens[i]);
	}
	if (fd < 0) {
		refuse(c, 502, "connect-failed");
		return -1;
	}
	pthread_mutex_lock(&conns_lock);
	c->ufd = fd;
	pthread_mutex_unlock(&conns_lock);
	return 0;
}

/*
 * Both ways until both sides have finished; a half-close is passed on. Silence both ways for
 * idle_ms ends the connection: a tunnel nobody uses holds a thread and a slot of the agent's.
 */
static void relay(struct conn *c)
{
	int fds[2] = { c->cfd, c->ufd }, open = 2, i, r = 1;
	struct pollfd pfd[2] = { { .fd = c->cfd, .events = POLLIN },
				 { .fd = c->ufd, .events = POLLIN } };
	__u64 *count[2] = { &c->rep.up, &c->rep.down };
	char *buf = malloc(RELAY_BUF);
	ssize_t n;
	int sent;

	if (!buf)
		return;
	while (open && (r = poll(pfd, 2, idle_ms)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (i = 0; i < 2; i++) {
			if (pfd[i].fd < 0 || !pfd[i].revents)
				continue;
			n = recv(fds[i], buf, RELAY_BUF, 0);
			sent = n > 0 ? send_all(fds[!i], buf, n) : 0;
			if (n > 0 && !sent) {
				*count[i] += n;
				continue;
			}
			if (sent == -EAGAIN)
				snprintf(c->rep.why, sizeof(c->rep.why), "send-timeout");
			/* An error (a reset, a peer not reading, the agent's removal) ends both
			 * directions. */
			open = n ? 0 : open - 1;
			pfd[i].fd = -1;
			shutdown(fds[!i], SHUT_WR);
		}
	}
	if (open && r == 0) {
		snprintf(c->rep.why, sizeof(c->rep.why), "idle-timeout");
		shutdown(c->cfd, SHUT_RDWR);
		shutdown(c->ufd, SHUT_RDWR);
	}
	free(buf);
}

/* Whether the peer's socket was created in one of the agent's cgroups. The kernel lets only
 * this agent of all agents reach the listener, but any process outside every agent could: it
 * would be served, and audited, as the agent. */
static const char *peer_refused(const struct conn *c)
{
	__u64 cg;
	int i;

	/* Undecided (the peer closed already, or an older kernel) is refused. */
	if (sockdiag_peer_cgroup(c->cfd, &cg))
		return "peer-cgroup-unknown";
	for (i = 0; i < c->hl->ncgroups; i++)
		if (c->hl->cgroups[i] == cg)
			return NULL;
	return "not-the-agents-cgroup";
}

static bool port_allowed(const struct hostlist *hl, __u16 port)
{
	int i;

	for (i = 0; i < hl->nports; i++)
		if (hl->ports[i] == port)
			return true;
	return false;
}

static void serve(struct conn *c)
{
	struct sockaddr_storage ss[ADDRS_MAX];
	socklen_t lens[ADDRS_MAX];
	struct http_request req;
	size_t outlen, extra;
	const char *why;
	int n;

	send_timeout(c->cfd);
	why = peer_refused(c);
	if (why) {
		refuse(c, 403, why);
		return;
	}
	if (read_head(c, &req, &outlen))
		return;
	snprintf(c->rep.host, sizeof(c->rep.host), "%s", req.host);
	c->rep.port = req.port;
	if (c->hl->no_policy) {
		refuse(c, 403, "no-policy");
		return;
	}
	if (!http_host_allowed(req.host, c->hl->hosts, c->hl->n)) {
		refuse(c, 403, "host-not-allowed");
		return;
	}
	if (!port_allowed(c->hl, req.port)) {
		refuse(c, 403, "port-not-allowed");
		return;
	}
	n = resolve(c, &req, ss, lens);
	if (n < 0)
		return;
	/* The resolution may have taken seconds: an agent removed meanwhile connects nowhere. */
	if (atomic_load(&c->hl->gone)) {
		refuse(c, 403, "agent-removed");
		return;
	}
	if (connect_checked(c, ss, lens, n))
		return;
	c->rep.status = 200;
	extra = c->len - req.head_len;
	if (req.connect) {
		char ok[64];

		send_all(c->cfd, ok, http_status_head(200, NULL, ok, sizeof(ok)));
	} else {
		send_all(c->ufd, c->out, outlen);
		c->rep.up += outlen;
	}
	send_all(c->ufd, c->buf + req.head_len, extra);
	c->rep.up += extra;
	relay(c);
}

static void conn_free(struct conn *c)
{
	struct conn **pp;

	pthread_mutex_lock(&conns_lock);
	for (pp = &conns; *pp && *pp != c; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = c->next;
	nconns--;
	agent_conns[c->agent]--;
	close(c->cfd);
	if (c->ufd >= 0)
		close(c->ufd);
	pthread_mutex_unlock(&conns_lock);
	hostlist_put(c->hl);
	free(c);
}

static void *conn_thread(void *arg)
{
	struct conn *c = arg;

	serve(c);
	report(c);
	conn_free(c);
	return NULL;
}

static void accept_all(__u32 agent)
{
	pthread_attr_t attr;
	struct conn *c;
	pthread_t t;
	bool full;
	int fd;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (;;) {
		fd = accept_shedding(listeners[agent], SOCK_CLOEXEC);
		if (fd == -ECONNABORTED)
			continue;
		if (fd < 0)
			break;
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		*c = (struct conn){ .agent = agent, .cfd = fd, .ufd = -1, .hl = lists[agent] };
		atomic_fetch_add(&c->hl->refs, 1);
		pthread_mutex_lock(&conns_lock);
		c->next = conns;
		conns = c;
		nconns++;
		agent_conns[agent]++;
		full = nconns > CONNS_MAX || agent_conns[agent] > CONNS_PER_AGENT;
		pthread_mutex_unlock(&conns_lock);
		if (full) {
			refuse(c, 503, "too-many-connections");
			report(c);
			conn_free(c);
		} else if (pthread_create(&t, &attr, conn_thread, c)) {
			refuse(c, 503, "no-thread");
			report(c);
			conn_free(c);
		}
	}
	pthread_attr_destroy(&attr);
}

/* The agent goes: its listener closes and its connections are cut. */
static void agent_down(int ep, __u32 agent)
{
	struct conn *c;

	if (listeners[agent]) {
		epoll_ctl(ep, EPOLL_CTL_DEL, listeners[agent], NULL);
		close(listeners[agent]);
		listeners[agent] = 0;
	}
	if (lists[agent])
		atomic_store(&lists[agent]->gone, true);
	hostlist_put(lists[agent]);
	lists[agent] = NULL;
	pthread_mutex_lock(&conns_lock);
	for (c = conns; c; c = c->next) {
		if (c->agent != agent)
			continue;
		shutdown(c->cfd, SHUT_RDWR);
		if (c->ufd >= 0)
			shutdown(c->ufd, SHUT_RDWR);
	}
	pthread_mutex_unlock(&conns_lock);
}

static int agent_up(int ep, const struct proxy_msg *m, int lfd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = m->agent };
	struct hostlist *hl = hostlist_new(m);

	if (lfd < 0 || !hl || fcntl(lfd, F_SETFL, O_NONBLOCK)) {
		hostlist_put(hl);
		return -EINVAL;
	}
	agent_down(ep, m->agent);
	listeners[m->agent] = lfd;
	lists[m->agent] = hl;
	return epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) ? -errno : 0;
}

/* One order from the daemon. Returns 0, or -1 when the daemon is gone. */
static int take_order(int ep)
{
	static char buf[sizeof(struct proxy_msg) + PROXY_MSG_MAX];
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct proxy_msg *m = (struct proxy_msg *)buf;
	struct cmsghdr *cm;
	struct hostlist *hl;
	int lfd = -1;
	ssize_t n;

	n = recvmsg(ctl_fd, &mh, MSG_CMSG_CLOEXEC);
	if (n <= 0)
		return n < 0 && errno == EINTR ? 0 : -1;
	cm = CMSG_FIRSTHDR(&mh);
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&lfd, CMSG_DATA(cm), sizeof(int));
	if ((size_t)n < sizeof(*m) || m->len != n - sizeof(*m) || !m->agent ||
	    m->agent >= AGENTD_MAX_AGENTS) {
		log_err("proxy worker: malformed order from the daemon, ignoring\n");
	} else if (m->type == PROXY_MSG_UP) {
		if (!agent_up(ep, m, lfd))
			return 0;
		log_err("proxy worker: agent %u: cannot serve its listener\n", m->agent);
	} else if (m->type == PROXY_MSG_HOSTS && (hl = hostlist_new(m))) {
		hostlist_put(lists[m->agent]);
		lists[m->agent] = hl;
	} else if (m->type == PROXY_MSG_DOWN) {
		agent_down(ep, m->agent);
	}
	if (lfd >= 0)
		close(lfd);
	return 0;
}

/* Its own uid, no capabilities, no new privileges; dies with the daemon (set after the uid change,
 * which clears it). First, as many descriptors as allowed: two per connection, CONNS_MAX
 * connections, may pass the usual soft limit of 1024. */
static int drop_privileges(pid_t daemon)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (setgroups(0, NULL) || setresgid(PROXY_WORKER_UID, PROXY_WORKER_UID, PROXY_WORKER_UID) ||
	    setresuid(PROXY_WORKER_UID, PROXY_WORKER_UID, PROXY_WORKER_UID) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_DUMPABLE, 0) ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL))
		return -errno;
	return getppid() == daemon ? 0 : -ESRCH;
}

/*
 * The system calls the worker needs (threads, epoll, sockets, the resolver reading /etc and
 * loading NSS modules, sock_diag for the peer's cgroup); any other kills the worker.
 */
static int confine(void)
{
	static const int allow[] = {
		SCMP_SYS(read),		SCMP_SYS(write),	   SCMP_SYS(readv),
		SCMP_SYS(writev),	SCMP_SYS(pread64),	   SCMP_SYS(close),
		SCMP_SYS(fstat),	SCMP_SYS(newfstatat),	   SCMP_SYS(statx),
		SCMP_SYS(lseek),	SCMP_SYS(openat),	   SCMP_SYS(fcntl),
		SCMP_SYS(mmap),		SCMP_SYS(munmap),	   SCMP_SYS(mprotect),
		SCMP_SYS(madvise),	SCMP_SYS(mremap),	   SCMP_SYS(brk),
		SCMP_SYS(futex),	SCMP_SYS(set_robust_list), SCMP_SYS(rseq),
		SCMP_SYS(clone),	SCMP_SYS(clone3),	   SCMP_SYS(exit),
		SCMP_SYS(exit_group),	SCMP_SYS(rt_sigaction),	   SCMP_SYS(rt_sigprocmask),
		SCMP_SYS(rt_sigreturn), SCMP_SYS(sigaltstack),	   SCMP_SYS(gettid),
		SCMP_SYS(getpid),	SCMP_SYS(getppid),	   SCMP_SYS(getuid),
		SCMP_SYS(geteuid),	SCMP_SYS(getgid),	   SCMP_SYS(getegid),
		SCMP_SYS(uname),	SCMP_SYS(clock_gettime),   SCMP_SYS(clock_nanosleep),
		SCMP_SYS(nanosleep),	SCMP_SYS(sched_yield),	   SCMP_SYS(sched_getaffinity),
		SCMP_SYS(getrandom),	SCMP_SYS(epoll_wait),	   SCMP_SYS(epoll_pwait),
		SCMP_SYS(epoll_ctl),	SCMP_SYS(epoll_create1),   SCMP_SYS(poll),
		SCMP_SYS(ppoll),	SCMP_SYS(accept4),	   SCMP_SYS(connect),
		SCMP_SYS(sendto),	SCMP_SYS(recvfrom),	   SCMP_SYS(sendmsg),
		SCMP_SYS(recvmsg),	SCMP_SYS(sendmmsg),	   SCMP_SYS(recvmmsg),
		SCMP_SYS(shutdown),	SCMP_SYS(getsockopt),	   SCMP_SYS(setsockopt),
		SCMP_SYS(getsockname),	SCMP_SYS(getpeername),	   SCMP_SYS(restart_syscall),
		SCMP_SYS(tgkill),
	};
	static const int families[] = { AF_INET, AF_INET6, AF_UNIX };
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	int err = ctx ? 0 : -ENOMEM;
	size_t i;

	for (i = 0; !err && i < sizeof(allow) / sizeof(allow[0]); i++)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allow[i], 0);
	for (i = 0; !err && i < sizeof(families) / sizeof(families[0]); i++)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
				       SCMP_A0(SCMP_CMP_EQ, families[i]));
	if (!err)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 2,
				       SCMP_A0(SCMP_CMP_EQ, AF_NETLINK),
				       SCMP_A2(SCMP_CMP_EQ, NETLINK_SOCK_DIAG));
	if (!err)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				       SCMP_A1(SCMP_CMP_EQ, FIONREAD));
	if (!err)
		err = seccomp_load(ctx);
	seccomp_release(ctx);
	return err;
}

/* agentd-worker proxy IDLE-MS, its channel as fd PROXY_FD: serves until agentd closes it. */
int proxy_main(int argc, char **argv)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 0 }, evs[32];
	unsigned long idle = 0;
	char *end = NULL;
	struct stat st;
	int ep, n, i, err;
	pid_t daemon = getppid();

	log_init("agentd-worker proxy", LOG_INFO);
	if (argc != 3 || fstat(PROXY_FD, &st) || !S_ISSOCK(st.st_mode) ||
	    !(idle = strtoul(argv[2], &end, 10)) || *end || idle > 86400000UL) {
		fprintf(stderr,
			"agentd-worker proxy: started by agentd only (its channel on fd %d)\n",
			PROXY_FD);
		return 2;
	}
	syscall(SYS_close_range, PROXY_FD + 1U, ~0U, 0U);
	ctl_fd = PROXY_FD;
	idle_ms = (int)idle;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	err = drop_privileges(daemon);
	if (!err)
		err = accept_reserve();
	if (!err)
		err = confine();
	if (err) {
		log_err("proxy worker: dropping privileges: %s\n", strerror(-err));
		_exit(1);
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, ctl_fd, &ev)) {
		log_err("proxy worker: epoll: %s\n", strerror(errno));
		_exit(1);
	}
	for (;;) {
		n = epoll_wait(ep, evs, 32, -1);
		for (i = 0; i < n; i++) {
			if (!evs[i].data.u32) {
				if (take_order(ep))
					_exit(0);
			} else if (listeners[evs[i].data.u32]) {
				accept_all(evs[i].data.u32);
			}
		}
	}
}
