// SPDX-License-Identifier: GPL-2.0
/*
 * Socket families and types an agent may create, for every family (packet, netlink, raw, unix,
 * ...): the BPF LSM layer. cgroup/sock_create (net.bpf.c) covers inet alone where BPF LSM is
 * unavailable. Kernel-internal sockets are not the agent's. Fails closed without a policy.
 * And unix sockets: an agent reaches its own broker socket and the sockets its own tasks
 * created, nothing else (unix_stream_connect, unix_may_send).
 * And the destinations of inet sockets the cgroup programs of net.bpf.c do not see (ICMP echo,
 * raw), with the same structural list and rules, and the IP options that would send a packet
 * elsewhere than its checked destination (socket_connect, socket_sendmsg, socket_setsockopt).
 */
#include "inet.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define SOCK_TYPE_MASK 0xf

SEC("lsm/socket_create")
int BPF_PROG(socket_create, int family, int type, int protocol, int kern, int ret)
{
	struct agentd_net_event *e;
	struct agent a;
	__u32 reason;
	int deny;

	if (ret || kern)
		return ret;
	if (!current_agent(&a))
		return 0;
	type &= SOCK_TYPE_MASK;
	deny = !a.has_config || !(a.cfg.sock_families & (1ULL << (family & 63))) ||
	       !(a.cfg.sock_types & (1U << type));
	reason = a.has_config ? AGENTD_REASON_NO_RULE : AGENTD_REASON_NO_POLICY;
	if (!deny && !inet_protocol_allowed(&a, family, type, protocol)) {
		reason = AGENTD_REASON_PROTOCOL;
		deny = 1;
	}
	if (!want_event(&a, deny))
		return lsm_verdict(deny);
	e = event_reserve(a.id, sizeof(*e));
	if (e) {
		event_fill(&e->hdr, AGENTD_EV_NET, sizeof(*e), &e->task, &a, &e->verdict,
			   AGENTD_HOOK_SOCK_CREATE, deny, reason, 0);
		__builtin_memset(e->addr, 0, sizeof(e->addr));
		e->family = family;
		e->port = 0;
		e->protocol = type;
		event_submit(e);
	}
	return lsm_verdict(enforced(&a, deny, reason));
}

/* The kernel fields read below (CO-RE); kernel.h has struct file and struct inode. */
struct sock;

struct socket {
	short type;
	struct file *file;
	struct sock *sk;
} __attribute__((preserve_access_index));

struct sock_cgroup_data {
	struct cgroup *cgroup; /* v2 */
} __attribute__((preserve_access_index));

struct sock {
	struct socket *sk_socket;
	struct sock_cgroup_data sk_cgrp_data;
} __attribute__((preserve_access_index));

/* The socket cookie of a broker socket's listener -> its agent (filled by agentd, SO_COOKIE):
 * 64 bits, never reused while the system runs, unlike an inode number. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, AGENTD_MAX_BROKER_SOCKETS);
	__type(key, __u64);
	__type(value, __u32);
} broker_sockets SEC(".maps");

/*
 * Which unix sockets an agent's task may reach, by connect() (stream, seqpacket) or send
 * (datagram): its own agent's broker socket, and sockets its own agent's tasks created; never a
 * host daemon's, another agent's, or anyone else's abstract socket. Returns the reason to deny,
 * or 0.
 */
static __always_inline __u32 unix_peer_denied(const struct agent *a, struct sock *peer)
{
	__u64 cookie = bpf_get_socket_cookie(peer);
	__u32 *owner;

	owner = bpf_map_lookup_elem(&broker_sockets, &cookie);
	if (owner)
		return *owner == a->id ? 0 : AGENTD_REASON_NOT_OWN_SOCKET;
	/* The kernel keeps the cgroup v2 of the task that created each socket (sk_alloc()): the
	 * peer is the agent's own when that cgroup, or its nearest registered ancestor, is one of
	 * the agent's. */
	return cgroup_tree_agent(BPF_CORE_READ(peer, sk_cgrp_data.cgroup)) == a->id
		       ? 0
		       : AGENTD_REASON_NOT_OWN_UNIX_SOCKET;
}

static __always_inline int unix_check(struct sock *peer, __u32 hook, __u32 type)
{
	struct agentd_net_event *e;
	struct agent a;
	__u32 reason;
	int deny;

	if (!current_agent(&a))
		return 0;
	reason = unix_peer_denied(&a, peer);
	deny = reason != 0;
	if (!want_event(&a, deny))
		return lsm_verdict(deny);
	e = event_reserve(a.id, sizeof(*e));
	if (e) {
		event_fill(&e->hdr, AGENTD_EV_NET, sizeof(*e), &e->task, &a, &e->verdict, hook,
			   deny, deny ? reason : AGENTD_REASON_RULE, 0);
		__builtin_memset(e->addr, 0, sizeof(e->addr));
		e->family = AF_UNIX;
		e->port = 0;
		e->protocol = type;
		event_submit(e);
	}
	return lsm_verdict(deny);
}

SEC("lsm/unix_stream_connect")
int BPF_PROG(unix_stream_connect, struct sock *sock, struct sock *other, struct sock *newsk,
	     int ret)
{
	if (ret)
		return ret;
	return unix_check(other, AGENTD_HOOK_UNIX_STREAM_CONNECT,
			  BPF_CORE_READ(other, sk_socket, type));
}

/* Datagrams: connect() of a datagram socket, and every send to an address. */
SEC("lsm/unix_may_send")
int BPF_PROG(unix_may_send, struct socket *sock, struct socket *other, int ret)
{
	struct sock *sk;

	if (ret)
		return ret;
	sk = other->sk;
	if (!sk)
		return -EPERM; /* not seen: a peer without its sock */
	return unix_check(sk, AGENTD_HOOK_UNIX_MAY_SEND, SOCK_DGRAM);
}

/* ---- inet sockets the cgroup programs do not see ---- */

struct msghdr;

#define SOL_IP 0
#define SOL_IPV6 41
#define IP_HDRINCL 3
#define IP_OPTIONS 4
#define IP_RETOPTS 7
#define IPV6_2292RTHDR 24
#define IPV6_HDRINCL 36
#define IPV6_RTHDR 57
#define MAX_CMSGS 8

struct sock_common___inet {
	unsigned short skc_family;
} __attribute__((preserve_access_index));

struct sock___inet {
	struct sock_common___inet __sk_common;
	__u16 sk_type;
	__u16 sk_protocol;
} __attribute__((preserve_access_index));

struct msghdr___inet {
	void *msg_name;
	int msg_namelen;
	void *msg_control;
	__u64 msg_controllen; /* size_t: __kernel_size_t is 32 bits for the BPF target */
} __attribute__((preserve_access_index));

struct cmsg_head {
	__u64 len; /* size_t */
	int level;
	int type;
};

/* What the programs below read of a socket's sock: loads the verifier checks against the
 * kernel's type, no helper call (socket_sendmsg runs for every send of every task). */
struct inet_view {
	__u16 family; /* AF_INET, AF_INET6; 0 for another family */
	__u16 type;
	__u16 protocol;
};

static __always_inline void inet_view(struct socket *sock, struct inet_view *v)
{
	struct sock___inet *sk = (struct sock___inet *)sock->sk;

	v->family = 0;
	if (!sk)
		return;
	v->family = sk->__sk_common.skc_family;
	if (v->family != AF_INET && v->family != AF_INET6) {
		v->family = 0;
		return;
	}
	v->type = sk->sk_type;
	v->protocol = sk->sk_protocol;
}

/* Whether a cgroup program checks this socket's destinations: TCP streams, UDP datagrams. */
static __always_inline int cgroup_checked(const struct inet_view *v)
{
	return (v->type == SOCK_STREAM && v->protocol == IPPROTO_TCP) ||
	       (v->type == SOCK_DGRAM && v->protocol == IPPROTO_UDP);
}

/*
 * The destination in a sockaddr the kernel copied in, read as the socket's family reads it
 * (raw IPv4 sockets take an address of family 0 as IPv4, raw IPv6 ones as IPv6). Returns 0, or
 * AGENTD_REASON_UNREADABLE for an address too short or unreadable; *none is set for a connect()
 * to AF_UNSPEC, which disconnects.
 */
static __always_inline __u32 read_dest(struct dest *d, const void *addr, int len, int connect,
				       int *none)
{
	__u16 sa_family;
	__u32 ip4;

	*none = 0;
	if (len < (int)sizeof(sa_family) || bpf_probe_read_kernel(&sa_family, 2, addr))
		return AGENTD_REASON_UNREADABLE;
	if (connect && sa_family == 0) {
		*none = 1;
		return 0;
	}
	if (d->family == AF_INET) {
		/* struct sockaddr_in: port at 2, address at 4, 16 bytes */
		if (len < 16 || bpf_probe_read_kernel(&ip4, 4, addr + 4) ||
		    bpf_probe_read_kernel(&d->port, 2, addr + 2))
			return AGENTD_REASON_UNREADABLE;
		map_v4(d->addr, ip4);
	} else {
		/* struct sockaddr_in6: port at 2, address at 8, 24 bytes at least */
		if (len < 24 || bpf_probe_read_kernel(d->addr, 16, addr + 8) ||
		    bpf_probe_read_kernel(&d->port, 2, addr + 2))
			return AGENTD_REASON_UNREADABLE;
	}
	d->port = bpf_ntohs(d->port);
	return 0;
}

/* Checks an inet destination of a socket no cgroup program checks; returns the LSM verdict. */
static __always_inline int uncovered_dest(const struct inet_view *v, const void *addr, int len,
					  __u32 hook)
{
	struct dest d = { .portless = 1 };
	__u32 reason, rule_id = 0;
	struct agent a;
	int deny, none;

	if (!v->family || cgroup_checked(v) || !current_agent(&a))
		return 0;
	d.family = v->family;
	d.protocol = v->protocol;
	reason = read_dest(&d, addr, len, hook == AGENTD_HOOK_SOCKET_CONNECT, &none);
	if (none)
		return 0;
	deny = reason || dest_denied(&a, &d, &reason, &rule_id);
	if (want_event(&a, deny))
		emit_net_event(&a, hook, deny, reason, rule_id, &d);
	return lsm_verdict(enforced(&a, deny, reason));
}

SEC("lsm/socket_connect")
int BPF_PROG(socket_connect, struct socket *sock, struct sockaddr *address, int addrlen, int ret)
{
	struct inet_view v;

	if (ret)
		return ret;
	inet_view(sock, &v);
	return uncovered_dest(&v, address, addrlen, AGENTD_HOOK_SOCKET_CONNECT);
}

/* bind() of those sockets: their protocols bind in their own way (ping_bind, raw_bind), which
 * runs no cgroup/bind4 or bind6. The policy's "bind", as for TCP and UDP (net.bpf.c). */
SEC("lsm/socket_bind")
int BPF_PROG(socket_bind, struct socket *sock, struct sockaddr *address, int addrlen, int ret)
{
	struct dest d = { .portless = 1 };
	struct inet_view v;
	struct agent a;
	int deny;

	if (ret)
		return ret;
	inet_view(sock, &v);
	if (!v.family || cgroup_checked(&v) || !current_agent(&a))
		return 0;
	deny = !a.has_config || !(a.cfg.flags & AGENTD_AGENT_ALLOW_BIND);
	if (want_event(&a, deny)) {
		d.family = v.family;
		d.protocol = v.protocol;
		emit_net_event(&a, AGENTD_HOOK_SOCKET_BIND, deny,
			       a.has_config ? AGENTD_REASON_NO_RULE : AGENTD_REASON_NO_POLICY, 0,
			       &d);
	}
	/* Without a configuration there is no shadow mode: the reason matters only with one. */
	return lsm_verdict(enforced(&a, deny, AGENTD_REASON_NO_RULE));
}

/* IP options that route a packet through an address other than its destination (which is all
 * any of our hooks checks), or let the sender write the header. */
static __always_inline int reroutes(int level, int optname)
{
	if (level == SOL_IP)
		return optname == IP_OPTIONS || optname == IP_RETOPTS || optname == IP_HDRINCL;
	if (level == SOL_IPV6)
		return optname == IPV6_RTHDR || optname == IPV6_2292RTHDR ||
		       optname == IPV6_HDRINCL;
	return 0;
}

static __always_inline int reroute_denied(const struct agent *a, __u16 family, int level,
					  int optname, __u32 hook, __u32 reason)
{
	struct dest d = { .family = family, .protocol = (__u32)level << 16 | (optname & 0xffff) };

	if (want_event(a, 1))
		emit_net_event(a, hook, 1, reason, 0, &d);
	return lsm_verdict(1);
}

SEC("lsm/socket_setsockopt")
int BPF_PROG(socket_setsockopt, struct socket *sock, int level, int optname, int ret)
{
	struct inet_view v;
	struct agent a;

	if (ret)
		return ret;
	inet_view(sock, &v);
	if (!v.family || !reroutes(level, optname) || !current_agent(&a))
		return 0;
	return reroute_denied(&a, v.family, level, optname, AGENTD_HOOK_SOCKET_SETSOCKOPT,
			      AGENTD_REASON_REROUTE);
}

/*
 * The first of the control messages of msg that reroutes (as a level << 16 | type), 0 for none,
 * -1 when they cannot be read. The kernel copied them in (____sys_sendmsg); a caller that
 * passed user memory on (msg_control_is_user) is read there.
 */
static __always_inline long cmsg_reroute(struct msghdr___inet *msg)
{
	__u64 len = msg->msg_controllen, off = 0;
	const void *ctl = msg->msg_control;
	struct cmsg_head h;
	long err;
	int i;

	for (i = 0; i < MAX_CMSGS; i++) {
		if (off + sizeof(h) > len)
			return 0;
		err = bpf_probe_read_kernel(&h, sizeof(h), ctl + off);
		if (err)
			err = bpf_probe_read_user(&h, sizeof(h), ctl + off);
		if (err || h.len < sizeof(h) || h.len > len - off)
			return -1;
		if (reroutes(h.level, h.type))
			return (long)h.level << 16 | (h.type & 0xffff);
		off += (h.len + sizeof(long) - 1) & ~(sizeof(long) - 1);
	}
	return off >= len ? 0 : -1;
}

SEC("lsm/socket_sendmsg")
int BPF_PROG(socket_sendmsg, struct socket *sock, struct msghdr *msg, int size, int ret)
{
	struct msghdr___inet *m = (struct msghdr___inet *)msg;
	struct inet_view v;
	struct agent a;
	long opt;

	if (ret)
		return ret;
	inet_view(sock, &v);
	if (!v.family)
		return 0;
	if (m->msg_controllen && current_agent(&a)) {
		opt = cmsg_reroute(m);
		if (opt)
			return reroute_denied(&a, v.family, opt < 0 ? 0 : opt >> 16, opt & 0xffff,
					      AGENTD_HOOK_SOCKET_SENDMSG,
					      opt < 0 ? AGENTD_REASON_UNREADABLE
						      : AGENTD_REASON_REROUTE);
	}
	if (!m->msg_name)
		return 0; /* the connected destination, checked at connect() */
	return uncovered_dest(&v, m->msg_name, m->msg_namelen, AGENTD_HOOK_SOCKET_SENDMSG);
}
