/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inet destinations and protocols, shared by the cgroup programs (net.bpf.c: TCP and UDP, and
 * ICMP echo connect()) and the BPF LSM ones (sock.bpf.c: every other inet socket, whose
 * connect() and sendmsg() no cgroup program sees). One structural deny list and one rule table
 * (maps shared by name), one decision.
 */
#ifndef AGENTD_INET_BPF_H
#define AGENTD_INET_BPF_H

#include "agent.bpf.h"
#include <bpf/bpf_endian.h>

#define IPPROTO_ICMP 1
#define IPPROTO_ICMPV6 58
#define IPPROTO_RAW 255
#define SOCK_RAW 3

/* Longest prefix wins: value 1 denies, 0 is a host-configured exception inside a denied range. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct agentd_addr_key);
	__type(value, __u32);
} structural_deny SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct agentd_net_key);
	__type(value, struct agentd_net_rule);
} net_rules SEC(".maps");

struct dest {
	__u8 addr[16]; /* IPv4-mapped for IPv4 */
	__u16 port; /* host order */
	__u16 family;
	__u32 protocol; /* IPPROTO_* */
	/* Not a TCP stream or UDP datagram socket: ICMP echo, raw. Ports mean nothing (a raw
	 * socket writes any port into its payload): the rule must grant udp on every port. */
	int portless;
};

static __always_inline void map_v4(__u8 addr[16], __u32 ip4)
{
	__builtin_memset(addr, 0, 10);
	addr[10] = 0xff;
	addr[11] = 0xff;
	__builtin_memcpy(addr + 12, &ip4, 4);
}

static __always_inline __u8 proto_bit(__u32 protocol)
{
	return protocol == IPPROTO_TCP	 ? AGENTD_PROTO_TCP
	       : protocol == IPPROTO_UDP ? AGENTD_PROTO_UDP
					 : 0;
}

static __always_inline int port_allowed(const struct agentd_net_rule *r, __u16 port)
{
	__u32 i;

	if (!r->nranges)
		return 1;
	for (i = 0; i < AGENTD_NET_PORT_RANGES; i++) {
		if (i >= r->nranges)
			break;
		if (port >= r->port_lo[i] && port <= r->port_hi[i])
			return 1;
	}
	return 0;
}

static __always_inline void emit_net_event(const struct agent *a, __u32 hook, int deny,
					   __u32 reason, __u32 rule_id, const struct dest *d)
{
	struct agentd_net_event *e;

	e = event_reserve(a->id, sizeof(*e));
	if (!e)
		return;
	event_fill(&e->hdr, AGENTD_EV_NET, sizeof(*e), &e->task, a, &e->verdict, hook, deny, reason,
		   rule_id);
	e->family = d->family;
	e->port = d->port;
	e->protocol = d->protocol;
	__builtin_memcpy(e->addr, d->addr, 16);
	event_submit(e);
}

/*
 * The structural deny list, then the agent's rules (most specific prefix). Returns 1 to deny,
 * with *reason (AGENTD_REASON_STRUCTURAL: the caller may open loopback) and *rule_id.
 */
static __always_inline int dest_denied(const struct agent *a, const struct dest *d, __u32 *reason,
				       __u32 *rule_id)
{
	struct agentd_addr_key sk = { .prefixlen = 128 };
	struct agentd_net_key rk = { .prefixlen = 64 + 128 };
	struct agentd_net_rule *rule;
	__u32 *structural;

	*rule_id = 0;
	if (!a->has_config) {
		*reason = AGENTD_REASON_NO_POLICY;
		return 1;
	}
	__builtin_memcpy(sk.addr, d->addr, 16);
	structural = bpf_map_lookup_elem(&structural_deny, &sk);
	if (structural && *structural) {
		*reason = AGENTD_REASON_STRUCTURAL;
		return 1;
	}
	rk.agent_id = a->id;
	rk.generation = a->cfg.generation;
	__builtin_memcpy(rk.addr, d->addr, 16);
	rule = bpf_map_lookup_elem(&net_rules, &rk);
	if (!rule) {
		*reason = AGENTD_REASON_NO_RULE;
		return 1;
	}
	*rule_id = rule->rule_id;
	*reason = AGENTD_REASON_RULE;
	if (d->portless)
		return !(rule->protocols & AGENTD_PROTO_UDP) || rule->nranges;
	return !(rule->protocols & proto_bit(d->protocol)) || !port_allowed(rule, d->port);
}

/*
 * Whether an agent may create an inet socket of this type and protocol (0: the type's default).
 * Allowed: TCP streams and UDP datagrams, whose connect() and sendmsg() the cgroup programs
 * check; ICMP echo datagrams where the policy grants "icmp", and raw sockets where it grants
 * "raw" (the caller checks the type), whose destinations the BPF LSM checks. Refused: what no
 * hook of ours follows (SCTP, MPTCP, UDP-Lite), and IPPROTO_RAW, whose packets carry a header
 * the sender writes, destination included. Other families pass (the caller checks them).
 */
static __always_inline int inet_protocol_allowed(const struct agent *a, int family, int type,
						 int protocol)
{
	if (family != AF_INET && family != AF_INET6)
		return 1;
	if (type == SOCK_STREAM)
		return protocol == 0 || protocol == IPPROTO_TCP;
	if (type == SOCK_DGRAM) {
		if (protocol == 0 || protocol == IPPROTO_UDP)
			return 1;
		return (a->cfg.flags & AGENTD_AGENT_ALLOW_ICMP) &&
		       protocol == (family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6);
	}
	if (type == SOCK_RAW)
		return protocol != IPPROTO_RAW;
	return 0;
}

#endif /* AGENTD_INET_BPF_H */
