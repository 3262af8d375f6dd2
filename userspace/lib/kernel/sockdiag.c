// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include "kernel/sockdiag.h"

/* The peer's socket has the peer's address as its source: the request names the connection
 * from the peer's side. */
static int request(int fd, struct inet_diag_req_v2 *r)
{
	struct sockaddr_storage me, peer;
	socklen_t ml = sizeof(me), pl = sizeof(peer);

	if (getsockname(fd, (struct sockaddr *)&me, &ml) ||
	    getpeername(fd, (struct sockaddr *)&peer, &pl))
		return -errno;
	if (me.ss_family != peer.ss_family)
		return -EAFNOSUPPORT;
	r->sdiag_family = me.ss_family;
	r->sdiag_protocol = IPPROTO_TCP;
	r->idiag_states = ~0U;
	r->id.idiag_cookie[0] = r->id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	if (me.ss_family == AF_INET) {
		const struct sockaddr_in *m = (void *)&me, *p = (void *)&peer;

		r->id.idiag_sport = p->sin_port;
		r->id.idiag_dport = m->sin_port;
		memcpy(r->id.idiag_src, &p->sin_addr, 4);
		memcpy(r->id.idiag_dst, &m->sin_addr, 4);
	} else if (me.ss_family == AF_INET6) {
		const struct sockaddr_in6 *m = (void *)&me, *p = (void *)&peer;

		r->id.idiag_sport = p->sin6_port;
		r->id.idiag_dport = m->sin6_port;
		memcpy(r->id.idiag_src, &p->sin6_addr, 16);
		memcpy(r->id.idiag_dst, &m->sin6_addr, 16);
	} else {
		return -EAFNOSUPPORT;
	}
	return 0;
}

/* One reply: an error, or one inet_diag_msg and its attributes. */
static int parse(const char *buf, size_t len, __u64 *cgid)
{
	const struct nlmsghdr *h = (const void *)buf;
	const struct inet_diag_msg *m;
	const struct rtattr *a;
	unsigned int rest;

	if (!NLMSG_OK(h, len))
		return -EBADMSG;
	if (h->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(h);

		if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
			return -EBADMSG;
		return e->error ? e->error : -ENOENT;
	}
	if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
		return -EBADMSG;
	m = NLMSG_DATA(h);
	rest = h->nlmsg_len - NLMSG_LENGTH(sizeof(*m));
	for (a = (const void *)(m + 1); RTA_OK(a, rest); a = RTA_NEXT(a, rest))
		if (a->rta_type == INET_DIAG_CGROUP_ID && RTA_PAYLOAD(a) == sizeof(__u64)) {
			memcpy(cgid, RTA_DATA(a), sizeof(__u64));
			return 0;
		}
	return -EOPNOTSUPP;
}

int sockdiag_peer_cgroup(int fd, __u64 *cgid)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req = { .nlh = { .nlmsg_len = sizeof(req),
			   .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			   .nlmsg_flags = NLM_F_REQUEST } };
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	char buf[4096] __attribute__((aligned(NLMSG_ALIGNTO)));
	int nl, err = request(fd, &req.r);
	ssize_t n = 0;

	if (err)
		return err;
	nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return -errno;
	if (sendto(nl, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		err = -errno;
	while (!err && (n = recv(nl, buf, sizeof(buf), 0)) < 0 && errno == EINTR)
		;
	if (!err)
		err = n < 0 ? -errno : parse(buf, n, cgid);
	close(nl);
	return err;
}
