// SPDX-License-Identifier: GPL-2.0
/*
 * Socket families and types an agent may create, for every family (packet, netlink, raw, unix,
 * ...): the BPF LSM layer. cgroup/sock_create (net.bpf.c) covers inet alone where BPF LSM is
 * unavailable. Kernel-internal sockets are not the agent's. Fails closed without a policy.
 * And the broker's sockets: an agent connects only to its own (unix_stream_connect).
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
struct socket {
	struct file *file;
} __attribute__((preserve_access_index));

struct sock {
	struct socket *sk_socket;
} __attribute__((preserve_access_index));

/* The sockfs inode of a broker socket's listener -> its agent (filled by agentd). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, AGENTD_MAX_BROKER_SOCKETS);
	__type(key, __u64);
	__type(value, __u32);
} broker_sockets SEC(".maps");

/*
 * Fails open for sockets that are not agentd's (other unix rules are not this hook's), closed
 * for another agent's broker socket. agentd checks the peer again on accept; this makes the
 * connection impossible rather than refused.
 */
SEC("lsm/unix_stream_connect")
int BPF_PROG(unix_stream_connect, struct sock *sock, struct sock *other, struct sock *newsk,
	     int ret)
{
	struct agentd_net_event *e;
	struct agent a;
	__u32 *owner;
	__u64 ino;
	int deny;

	if (ret)
		return ret;
	if (!current_agent(&a))
		return 0;
	ino = BPF_CORE_READ(other, sk_socket, file, f_inode, i_ino);
	owner = bpf_map_lookup_elem(&broker_sockets, &ino);
	if (!owner)
		return 0;
	deny = *owner != a.id;
	if (!want_event(&a, deny))
		return lsm_verdict(deny);
	e = event_reserve(a.id, sizeof(*e));
	if (e) {
		event_fill(&e->hdr, AGENTD_EV_NET, sizeof(*e), &e->task, &a, &e->verdict,
			   AGENTD_HOOK_UNIX_STREAM_CONNECT, deny,
			   deny ? AGENTD_REASON_NOT_OWN_SOCKET : AGENTD_REASON_RULE, 0);
		__builtin_memset(e->addr, 0, sizeof(e->addr));
		e->family = AF_UNIX;
		e->port = 0;
		e->protocol = SOCK_STREAM;
		event_submit(e);
	}
	return lsm_verdict(deny);
}
