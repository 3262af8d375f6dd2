// SPDX-License-Identifier: GPL-2.0
/*
 * Socket families and types an agent may create, for every family (packet, netlink, raw, unix,
 * ...): the BPF LSM layer. cgroup/sock_create (net.bpf.c) covers inet alone where BPF LSM is
 * unavailable. Kernel-internal sockets are not the agent's. Fails closed without a policy.
 * And unix sockets: an agent reaches its own broker socket and the sockets its own tasks
 * created, nothing else (unix_stream_connect, unix_may_send).
 */
#include "agent.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define SOCK_TYPE_MASK 0xf

SEC("lsm/socket_create")
int BPF_PROG(socket_create, int family, int type, int protocol, int kern, int ret)
{
	struct agentd_net_event *e;
	struct agent a;
	int deny;

	if (ret || kern)
		return ret;
	if (!current_agent(&a))
		return 0;
	type &= SOCK_TYPE_MASK;
	deny = !a.has_config || !(a.cfg.sock_families & (1ULL << (family & 63))) ||
	       !(a.cfg.sock_types & (1U << type));
	if (!want_event(&a, deny))
		return lsm_verdict(deny);
	e = event_reserve(a.id, sizeof(*e));
	if (e) {
		event_fill(&e->hdr, AGENTD_EV_NET, sizeof(*e), &e->task, &a, &e->verdict,
			   AGENTD_HOOK_SOCK_CREATE, deny,
			   a.has_config ? AGENTD_REASON_NO_RULE : AGENTD_REASON_NO_POLICY, 0);
		__builtin_memset(e->addr, 0, sizeof(e->addr));
		e->family = family;
		e->port = 0;
		e->protocol = type;
		event_submit(e);
	}
	return lsm_verdict(deny);
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
