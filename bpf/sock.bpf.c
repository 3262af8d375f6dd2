// SPDX-License-Identifier: GPL-2.0
/*
 * Socket families and types an agent may create, for every family (packet, netlink, raw, unix,
 * ...): the BPF LSM layer. cgroup/sock_create (net.bpf.c) covers inet alone where BPF LSM is
 * unavailable. Kernel-internal sockets are not the agent's. Fails closed without a policy.
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
