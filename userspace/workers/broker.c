// SPDX-License-Identifier: GPL-2.0
/*
 * agentd-worker AGENT-ID: the broker's worker, the only process that reads an agent's bytes.
 * (agentd-worker proxy IDLE-MS is the egress proxy's worker: proxy.c.)
 * agentd starts one per agent (fork and exec: a fresh image that holds nothing of agentd's
 * memory), with its channel to agentd as fd 3 and nothing else. It becomes a uid of its own (no
 * user's, one per agent: BMSG_WORKER_ID_BASE + the agent's id) with no capabilities
 * and confines itself with a seccomp filter that lets it read, write, poll and allocate, and
 * nothing else (no open, no socket, no exec). The agent's connections arrive over the channel
 * as SCM_RIGHTS, already checked by agentd; the worker frames and parses requests and passes
 * them back in a strict binary form (struct bmsg_request), or what it refused and why. agentd writes the replies itself; the
 * worker sends only what agentd hands it for agents that read slowly. One per agent, so that a
 * worker subverted by its agent's bytes can speak for that agent alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <openssl/sha.h>
#include "agentd/abi.h"
#include "wire/broker_proto.h"
#include "log.h"
#include "worker.h"

#define FDQ_MAX 64
#define CONN_OUT_MAX (256U << 20) /* replies an agent has not read: past this, it is dropped */

struct wconn {
	__u32 id;
	int fd;
	char *in, *out;
	size_t in_len, in_cap, out_len, out_off;
	__u64 sent; /* reply bytes written, for MSG_DRAINED */
	bool lost; /* the framing is lost: read no more */
	bool closing; /* agentd asked: close once the output is out */
};

struct worker {
	int chan;
	char *cin;
	size_t cin_len, cin_cap;
	int fdq[FDQ_MAX];
	size_t nfdq;
	struct wconn *conns[BROKER_CONNS_MAX];
	size_t n;
};

/* One writev for the header and the data (one wakeup of agentd, one system call). */
static void to_root(struct worker *w, __u32 type, __u32 conn, const void *data, size_t len)
{
	struct bmsg m = { type, conn, (__u32)len };
	struct iovec iov[2] = { { &m, sizeof(m) }, { (void *)data, len } };
	struct iovec *v = iov;
	int cnt = len ? 2 : 1;
	ssize_t n;

	while (cnt) {
		n = writev(w->chan, v, cnt);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0); /* agentd is gone */
		while (cnt && (size_t)n >= v->iov_len) {
			n -= v->iov_len;
			v++, cnt--;
		}
		if (cnt) {
			v->iov_base = (char *)v->iov_base + n;
			v->iov_len -= n;
		}
	}
}

static int queue_out(struct wconn *c, const char *data, size_t len)
{
	char *p;

	if (c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	if (c->out_len + len > CONN_OUT_MAX)
		return -ENOBUFS;
	p = realloc(c->out, c->out_len + len);
	if (!p)
		return -ENOMEM;
	c->out = p;
	memcpy(c->out + c->out_len, data, len);
	c->out_len += len;
	return 0;
}

static void conn_free(struct worker *w, size_t i, bool tell_root)
{
	struct wconn *c = w->conns[i];

	if (tell_root)
		to_root(w, MSG_CLOSED, c->id, NULL, 0);
	close(c->fd);
	free(c->in);
	free(c->out);
	free(c);
	w->conns[i] = w->conns[--w->n];
}

/*
 * Sends what agentd handed over, and tells agentd how much is out (it counts what its agent
 * leaves unread); once all of it is out, agentd may write again itself.
 */
static void flush(struct worker *w, size_t i)
{
	struct wconn *c = w->conns[i];
	__u64 before = c->sent;
	ssize_t n;

	if (c->out_off == c->out_len)
		return;
	while (c->out_off < c->out_len) {
		n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			if (c->sent != before)
				to_root(w, MSG_DRAINED, c->id, &c->sent, sizeof(c->sent));
			return;
		}
		if (n <= 0) {
			conn_free(w, i, true);
			return;
		}
		c->out_off += n;
		c->sent += n;
	}
	if (c->closing)
		conn_free(w, i, false);
	else
		to_root(w, MSG_DRAINED, c->id, &c->sent, sizeof(c->sent));
}

/* Tells agentd what was refused and why: it replies and writes the audit record. */
static void refuse(struct worker *w, struct wconn *c, const char *payload, size_t len, long long id,
		   const struct broker_error *err)
{
	struct bmsg_refused r = { .len = len, .id = id, .close = c->lost, .err = *err };

	SHA256((const unsigned char *)payload, len, r.sha256);
	to_root(w, MSG_REFUSED, c->id, &r, sizeof(r));
}

static void request(struct worker *w, struct wconn *c, const char *payload, size_t len)
{
	struct broker_error err = { 0 };
	struct broker_request req;
	size_t blen;
	char *bin;

	if (broker_request_parse(payload, len, &req, &err)) {
		refuse(w, c, payload, len, req.id, &err);
		return;
	}
	if (!broker_request_encode(&req, &bin, &blen))
		to_root(w, MSG_REQUEST, c->id, bin, blen);
	else
		refuse(w, c, payload, len, req.id,
		       &(struct broker_error){ BROKER_E_FAILED, "out of memory" });
	free(bin);
	broker_request_free(&req);
}

/* Whole frames in the connection's buffer; a framing error ends the connection. */
static void frames(struct worker *w, struct wconn *c)
{
	size_t n = 0, off = 0;
	int r;

	while (!c->lost && (r = broker_frame_check(c->in + off, c->in_len - off, BROKER_REQUEST_MAX,
						   &n)) != 0) {
		if (r < 0) {
			struct broker_error err = { BROKER_E_FRAME, "" };

			snprintf(err.message, sizeof(err.message), "%s",
				 r == -EMSGSIZE ? "a frame longer than the limit"
						: "a frame of length 0");
			c->lost = true;
			refuse(w, c, c->in + off, c->in_len - off, -1, &err);
			off = c->in_len;
			break;
		}
		request(w, c, c->in + off + BROKER_HDR, n);
		off += BROKER_HDR + n;
	}
	memmove(c->in, c->in + off, c->in_len - off);
	c->in_len -= off;
}

static void conn_read(struct worker *w, size_t i)
{
	struct wconn *c = w->conns[i];
	size_t want = BROKER_HDR + BROKER_REQUEST_MAX;
	ssize_t n;
	char *p;

	if (c->lost || c->closing) { /* hung up: nothing more to read or to send */
		conn_free(w, i, true);
		return;
	}
	if (c->in_cap < want && c->in_len == c->in_cap) {
		size_t cap = c->in_cap ? c->in_cap * 4 : 65536;

		p = realloc(c->in, cap < want ? cap : want);
		if (!p)
			return;
		c->in = p, c->in_cap = cap < want ? cap : want;
	}
	n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, MSG_DONTWAIT);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		conn_free(w, i, true);
		return;
	}
	c->in_len += n;
	frames(w, c);
}

static int find_conn(struct worker *w, __u32 id)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (w->conns[i]->id == id)
			return (int)i;
	return -1;
}

static void new_conn(struct worker *w, __u32 id)
{
	struct wconn *c;
	int fd;

	if (!w->nfdq) { /* its fd was lost (the queue was full): agentd must let go of its copy */
		to_root(w, MSG_CLOSED, id, NULL, 0);
		return;
	}
	fd = w->fdq[0];
	memmove(w->fdq, w->fdq + 1, --w->nfdq * sizeof(int));
	c = calloc(1, sizeof(*c));
	if (!c || w->n >= BROKER_CONNS_MAX) {
		free(c);
		close(fd);
		to_root(w, MSG_CLOSED, id, NULL, 0);
		return;
	}
	c->id = id;
	c->fd = fd;
	w->conns[w->n++] = c;
}

static void message(struct worker *w, const struct bmsg *m, const char *data)
{
	int i = m->type == MSG_CONN ? -1 : find_conn(w, m->conn);

	switch (m->type) {
	case MSG_CONN:
		new_conn(w, m->conn);
		break;
	case MSG_REPLY:
		if (i < 0)
			break;
		if (queue_out(w->conns[i], data, m->len))
			conn_free(w, i, true);
		else
			flush(w, i);
		break;
	case MSG_CLOSE:
		if (i < 0)
			break;
		w->conns[i]->closing = true;
		if (w->conns[i]->out_off == w->conns[i]->out_len)
			conn_free(w, i, false);
		break;
	default:
		_exit(2);
	}
}

static void chan_read(struct worker *w)
{
	char cbuf[CMSG_SPACE(sizeof(int) * FDQ_MAX)];
	struct iovec iov;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	struct bmsg m;
	size_t off = 0, k, nfd;
	ssize_t n;

	if (w->cin_cap - w->cin_len < 65536) {
		char *p = realloc(w->cin, w->cin_cap * 2 + 65536);

		if (!p)
			_exit(3);
		w->cin = p, w->cin_cap = w->cin_cap * 2 + 65536;
	}
	iov = (struct iovec){ w->cin + w->cin_len, w->cin_cap - w->cin_len };
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	n = recvmsg(w->chan, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0 && errno == EINTR)
		return;
	if (n <= 0)
		_exit(0);
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < nfd; k++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + k * sizeof(int), sizeof(int));
			if (w->nfdq < FDQ_MAX)
				w->fdq[w->nfdq++] = fd;
			else
				close(fd);
		}
	}
	w->cin_len += n;
	while (w->cin_len - off >= sizeof(m)) {
		memcpy(&m, w->cin + off, sizeof(m));
		if (m.len > BMSG_MAX)
			_exit(2);
		if (w->cin_len - off - sizeof(m) < m.len)
			break;
		message(w, &m, w->cin + off + sizeof(m));
		off += sizeof(m) + m.len;
	}
	memmove(w->cin, w->cin + off, w->cin_len - off);
	w->cin_len -= off;
}

/*
 * Backpressure: no request is read from a connection while replies wait to go out on it, so an
 * agent that sends and never reads is held by its own socket's buffer, not by this process.
 */
static short interest(const struct wconn *c)
{
	bool pending = c->out_off < c->out_len;

	return (c->closing || c->lost || pending ? 0 : POLLIN) | (pending ? POLLOUT : 0);
}

static int confine(void)
{
	static const int allowed[] = {
		SCMP_SYS(read),
		SCMP_SYS(write),
		SCMP_SYS(readv),
		SCMP_SYS(writev),
		SCMP_SYS(recvfrom),
		SCMP_SYS(recvmsg),
		SCMP_SYS(sendto),
		SCMP_SYS(sendmsg),
		SCMP_SYS(poll),
		SCMP_SYS(ppoll),
		SCMP_SYS(close),
		SCMP_SYS(exit),
		SCMP_SYS(exit_group),
		SCMP_SYS(brk),
		SCMP_SYS(munmap),
		SCMP_SYS(mremap),
		SCMP_SYS(madvise),
		SCMP_SYS(fcntl),
		SCMP_SYS(rt_sigreturn),
		SCMP_SYS(rt_sigprocmask),
		SCMP_SYS(getpid),
		SCMP_SYS(gettid),
		SCMP_SYS(clock_gettime),
		SCMP_SYS(futex),
		SCMP_SYS(restart_syscall),
		SCMP_SYS(newfstatat),
		SCMP_SYS(fstat),
		SCMP_SYS(getrandom),
		SCMP_SYS(tgkill),
	};
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	size_t i;
	int err = ctx ? 0 : -ENOMEM;

	for (i = 0; !err && i < sizeof(allowed) / sizeof(allowed[0]); i++)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
	/* Memory, never executable. */
	if (!err)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
				       SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	if (!err)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
				       SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	if (!err)
		err = seccomp_load(ctx);
	seccomp_release(ctx);
	return err;
}

/* The agent's worker id, no other group, no capabilities, no new privileges, then the filter. */
static int drop(pid_t parent, uid_t id)
{
	unsigned char sha[32];
	gid_t gid = id;

	/* What the filter would refuse later: jansson's hash seed, OpenSSL's setup. */
	json_object_seed(0);
	SHA256((const unsigned char *)"", 0, sha);
	if (setgroups(1, &gid) || setresgid(id, id, id) || setresuid(id, id, id))
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0))
		return -errno;
	if (getppid() != parent)
		return -ESRCH;
	return confine();
}

int main(int argc, char **argv)
{
	static struct worker w;
	struct pollfd fds[BROKER_CONNS_MAX + 1];
	unsigned long agent = 0;
	struct stat st;
	char *end = NULL;
	size_t i, n;
	int err;

	if (argc > 1 && !strcmp(argv[1], "proxy"))
		return proxy_main(argc, argv);
	log_init("agentd-worker", LOG_INFO);
	if (argc != 2 || fstat(BMSG_FD, &st) || !S_ISSOCK(st.st_mode) ||
	    !(agent = strtoul(argv[1], &end, 10)) || *end || agent >= AGENTD_MAX_AGENTS) {
		fprintf(stderr, "agentd-worker: started by agentd only (its channel on fd %d)\n",
			BMSG_FD);
		return 2;
	}
	syscall(SYS_close_range, BMSG_FD + 1U, ~0U, 0U);
	signal(SIGPIPE, SIG_IGN);
	err = drop(getppid(), (uid_t)(BMSG_WORKER_ID_BASE + agent));
	if (err) {
		log_err("dropping privileges: %s\n", strerror(-err));
		return 1;
	}
	w.chan = BMSG_FD;
	for (;;) {
		fds[0] = (struct pollfd){ .fd = w.chan, .events = POLLIN };
		for (i = 0; i < w.n; i++)
			fds[i + 1] = (struct pollfd){ .fd = w.conns[i]->fd,
						      .events = interest(w.conns[i]) };
		n = w.n;
		if (poll(fds, n + 1, -1) < 0)
			continue;
		/* Backwards: closing connection i moves the last one into its place. */
		for (i = n; i-- > 0;) {
			if (!fds[i + 1].revents || i >= w.n || w.conns[i]->fd != fds[i + 1].fd)
				continue;
			if (fds[i + 1].revents & POLLOUT)
				flush(&w, i);
			if (i < w.n && w.conns[i]->fd == fds[i + 1].fd &&
			    (fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
				conn_read(&w, i);
		}
		if (fds[0].revents)
			chan_read(&w);
	}
}
