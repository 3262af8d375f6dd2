// SPDX-License-Identifier: GPL-2.0
/*
 * Network policy, as cgroup-BPF programs: they need no BPF LSM, so they enforce on every kernel.
 * Attached (multi) to the cgroup above the agents; each decides for the agent of the current task.
 *
 * Destinations of connect() and sendmsg() pass two checks, in order:
 *   1. the structural deny list (host configuration, never agent policy): loopback, private,
 *      link-local, metadata, multicast ... in every form (IPv4 is kept IPv4-mapped, so the
 *      ::ffff:a.b.c.d form is the same key; userspace adds the NAT64 and 6to4 forms). Loopback
 *      is open only to agentd's endpoints for the agent and listeners the agent bound itself;
 *   2. the agent's CIDR and port rules (most specific prefix wins); no rule, no connection.
 * A broker tool's run (a cgroup of its own beside the agents') is no agent's: its destinations
 * pass what its registry entry's "network" allows (abi.h, struct agentd_tool_run), so that a tool
 * is not the agent's way around the structural list.
 * These programs see TCP and UDP, and connect() of ICMP echo sockets; the BPF LSM programs of
 * sock.bpf.c check the destinations of every other inet socket with the same decision
 * (inet.bpf.h, docs/HOOKS.md).
 * Fails closed: an agent without a loaded policy reaches nothing. Returns 1 allow, 0 deny (EPERM).
 */
#include "inet.bpf.h"
#include "grants.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* agentd's loopback endpoints for an agent (its egress proxy) -> 1; agentd writes them. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct agentd_endpoint_key);
	__type(value, __u32);
} endpoints SEC(".maps");

/* A broker tool run's cgroup id -> its caller and network (abi.h); agentd writes them before the
 * tool starts there and removes them with the cgroup. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct agentd_tool_run);
} tool_runs SEC(".maps");

/* The registered agent cgroup the binding task was found under (post_bind4/6), stored with the
 * socket and gone with it: on loopback an agent reaches the listener the kernel would deliver
 * to only when that cgroup is still its own. A cgroup id is never reused, and a removed agent's
 * or detached cgroup is no agent's any more, so a socket that outlives either is no one's. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} bound_by SEC(".maps");

static __always_inline int is_v4mapped(const __u8 a[16])
{
	__u64 hi;
	__u32 mid;

	__builtin_memcpy(&hi, a, 8);
	__builtin_memcpy(&mid, a + 8, 4);
	return !hi && mid == bpf_htonl(0xffff);
}

static __always_inline int is_loopback(const __u8 a[16])
{
	__u64 hi, lo;

	__builtin_memcpy(&hi, a, 8);
	__builtin_memcpy(&lo, a + 8, 8);
	if (hi)
		return 0;
	/* ::1, or ::ffff:127.x.y.z (bytes 8..12 are 00 00 ff ff 7f in memory order) */
	return lo == bpf_cpu_to_be64(1) || (lo & bpf_cpu_to_be64(0xffffffffff000000ULL)) ==
						   bpf_cpu_to_be64(0x0000ffff7f000000ULL);
}

/*
 * Whether the socket the kernel would deliver d to (TCP: the listener; UDP: the bound socket),
 * found by the kernel's own lookup in the caller's network namespace, was bound under a cgroup
 * that is agent a's now. An IPv4-mapped destination is looked up as the IPv4 one it is, which a
 * dual-stack listener on [::] takes too. Whose the port is, or was, does not matter: only the socket that would take
 * the connection, so a listener the host opens beside a socket the agent bound without
 * listening (SO_REUSEADDR) is not the agent's.
 */
static __always_inline int own_listener(struct bpf_sock_addr *ctx, const struct agent *a,
					const struct dest *d)
{
	struct bpf_sock_tuple t = {};
	struct bpf_sock *sk = NULL;
	__u64 *by, cg;

	if (is_v4mapped(d->addr)) {
		__builtin_memcpy(&t.ipv4.daddr, d->addr + 12, 4);
		t.ipv4.dport = bpf_htons(d->port);
		if (d->protocol == IPPROTO_TCP)
			sk = bpf_sk_lookup_tcp(ctx, &t, sizeof(t.ipv4), BPF_F_CURRENT_NETNS, 0);
		else if (d->protocol == IPPROTO_UDP)
			sk = bpf_sk_lookup_udp(ctx, &t, sizeof(t.ipv4), BPF_F_CURRENT_NETNS, 0);
	} else {
		__builtin_memcpy(t.ipv6.daddr, d->addr, 16);
		t.ipv6.dport = bpf_htons(d->port);
		if (d->protocol == IPPROTO_TCP)
			sk = bpf_sk_lookup_tcp(ctx, &t, sizeof(t.ipv6), BPF_F_CURRENT_NETNS, 0);
		else if (d->protocol == IPPROTO_UDP)
			sk = bpf_sk_lookup_udp(ctx, &t, sizeof(t.ipv6), BPF_F_CURRENT_NETNS, 0);
	}
	if (!sk)
		return 0;
	by = bpf_sk_storage_get(&bound_by, sk, NULL, 0);
	cg = by ? *by : 0;
	bpf_sk_release(sk);
	return cg && cgroup_agent(cg) == a->id;
}

/* Loopback open to the agent: agentd's endpoints for it, and listeners it bound itself. */
static __always_inline int own_endpoint(struct bpf_sock_addr *ctx, const struct agent *a,
					const struct dest *d)
{
	struct agentd_endpoint_key k = {
		.agent_id = a->id,
		.port = d->port,
		.protocol = proto_bit(d->protocol),
	};

	__builtin_memcpy(k.addr, d->addr, 16);
	return bpf_map_lookup_elem(&endpoints, &k) || own_listener(ctx, a, d);
}

/*
 * A task of no agent: a broker tool's run is held to its "network"; anything else under the
 * agents' parent (agentd's own processes) passes. A public run reaches what the structural list
 * does not deny, and the host's name servers (TCP and UDP port 53). Returns 1 allow, 0 deny.
 */
static __always_inline int check_tool_dest(__u32 hook, const struct dest *d)
{
	struct agentd_addr_key sk = { .prefixlen = 128 };
	struct agentd_endpoint_key ek = {
		.agent_id = AGENTD_TOOL_RESOLVERS,
		.port = d->port,
		.protocol = proto_bit(d->protocol),
	};
	__u64 cg = bpf_get_current_cgroup_id();
	struct agentd_tool_run *run = bpf_map_lookup_elem(&tool_runs, &cg);
	__u32 reason = AGENTD_REASON_TOOL_NETWORK, *structural;
	struct agent a;
	int deny = 1;

	if (!run)
		return 1;
	if (run->network == AGENTD_TOOL_NET_PUBLIC) {
		__builtin_memcpy(sk.addr, d->addr, 16);
		structural = bpf_map_lookup_elem(&structural_deny, &sk);
		deny = structural && *structural;
		if (deny) {
			reason = AGENTD_REASON_STRUCTURAL;
			__builtin_memcpy(ek.addr, d->addr, 16);
			deny = d->portless || d->port != 53 ||
			       !bpf_map_lookup_elem(&endpoints, &ek);
		}
	}
	if (deny) {
		agent_config(&a, run->agent_id);
		a.cgroup = cg;
		emit_net_event(&a, hook, deny, reason, 0, d);
	}
	return cgroup_verdict(deny);
}

/* A grant for what the agent's rules deny (grants.bpf.h): 1 with the grant as reason and rule. A
 * portless socket (ICMP echo) has no port a grant could name. */
static __always_inline int dest_granted(const struct agent *a, const struct dest *d, __u32 *reason,
					__u32 *rule_id)
{
	__u32 id = d->portless ? 0 : net_grant(a, d->addr, d->port, proto_bit(d->protocol));

	if (!id)
		return 0;
	*reason = AGENTD_REASON_GRANT;
	*rule_id = id;
	return 1;
}

/* Returns 1 to allow, 0 to deny. Loopback is open to TCP and UDP only: agentd's endpoints and
 * the agent's own listeners are theirs. */
static __always_inline int check_dest(struct bpf_sock_addr *ctx, __u32 hook, const struct dest *d)
{
	__u32 reason, rule_id;
	struct agent a;
	int deny;

	if (!current_agent(&a))
		return check_tool_dest(hook, d);
	deny = dest_denied(&a, d, &reason, &rule_id);
	if (deny && reason == AGENTD_REASON_STRUCTURAL && !d->portless && is_loopback(d->addr))
		deny = !own_endpoint(ctx, &a, d);
	else if (deny && (reason == AGENTD_REASON_RULE || reason == AGENTD_REASON_NO_RULE))
		deny = !dest_granted(&a, d, &reason, &rule_id);
	if (want_event(&a, deny) || reason == AGENTD_REASON_GRANT)
		emit_net_event(&a, hook, deny, reason, rule_id, d);
	return cgroup_verdict(enforced(&a, deny, reason));
}

static __always_inline int check4(struct bpf_sock_addr *ctx, __u32 hook)
{
	struct dest d = { .family = AF_INET, .protocol = ctx->protocol };

	d.portless = !proto_bit(ctx->protocol);
	map_v4(d.addr, ctx->user_ip4);
	d.port = bpf_ntohs(ctx->user_port);
	return check_dest(ctx, hook, &d);
}

static __always_inline int check6(struct bpf_sock_addr *ctx, __u32 hook)
{
	struct dest d = { .family = AF_INET6, .protocol = ctx->protocol };
	__u32 w[4];

	d.portless = !proto_bit(ctx->protocol);
	w[0] = ctx->user_ip6[0];
	w[1] = ctx->user_ip6[1];
	w[2] = ctx->user_ip6[2];
	w[3] = ctx->user_ip6[3];
	__builtin_memcpy(d.addr, w, 16);
	d.port = bpf_ntohs(ctx->user_port);
	return check_dest(ctx, hook, &d);
}

SEC("cgroup/connect4")
int connect4(struct bpf_sock_addr *ctx)
{
	return check4(ctx, AGENTD_HOOK_CONNECT4);
}

SEC("cgroup/connect6")
int connect6(struct bpf_sock_addr *ctx)
{
	return check6(ctx, AGENTD_HOOK_CONNECT6);
}

SEC("cgroup/sendmsg4")
int sendmsg4(struct bpf_sock_addr *ctx)
{
	return check4(ctx, AGENTD_HOOK_SENDMSG4);
}

SEC("cgroup/sendmsg6")
int sendmsg6(struct bpf_sock_addr *ctx)
{
	return check6(ctx, AGENTD_HOOK_SENDMSG6);
}

static __always_inline int check_bind(__u32 hook, __u16 family, __u32 protocol)
{
	struct dest d = { .family = family, .protocol = protocol };
	struct agent a;
	int deny;

	if (!current_agent(&a))
		return 1;
	deny = !a.has_config || !(a.cfg.flags & AGENTD_AGENT_ALLOW_BIND);
	if (want_event(&a, deny))
		emit_net_event(&a, hook, deny,
			       a.has_config ? AGENTD_REASON_NO_RULE : AGENTD_REASON_NO_POLICY, 0,
			       &d);
	/* Without a configuration there is no shadow mode: the reason matters only with one. */
	return cgroup_verdict(enforced(&a, deny, AGENTD_REASON_NO_RULE));
}

SEC("cgroup/bind4")
int bind4(struct bpf_sock_addr *ctx)
{
	return check_bind(AGENTD_HOOK_BIND4, AF_INET, ctx->protocol);
}

SEC("cgroup/bind6")
int bind6(struct bpf_sock_addr *ctx)
{
	return check_bind(AGENTD_HOOK_BIND6, AF_INET6, ctx->protocol);
}

/* After a bind succeeded: the socket is the agent's. Storage the kernel cannot give denies the
 * bind (the kernel undoes it): an agent's listener that no lookup would know as its own. */
static __always_inline int remember_bound(struct bpf_sock *sk, __u32 hook, const __u8 addr[16])
{
	struct dest d = { .family = (__u16)sk->family, .protocol = sk->protocol };
	struct agent a;
	__u64 *by;

	if (!current_agent(&a))
		return 1;
	by = bpf_sk_storage_get(&bound_by, sk, NULL, BPF_SK_STORAGE_GET_F_CREATE);
	if (by) {
		*by = a.cgroup;
		return 1;
	}
	d.port = (__u16)sk->src_port;
	__builtin_memcpy(d.addr, addr, 16);
	emit_net_event(&a, hook, 1, AGENTD_REASON_UNRECORDED, 0, &d);
	return 0;
}

SEC("cgroup/post_bind4")
int post_bind4(struct bpf_sock *sk)
{
	__u8 addr[16];

	map_v4(addr, sk->src_ip4);
	return remember_bound(sk, AGENTD_HOOK_BIND4, addr);
}

SEC("cgroup/post_bind6")
int post_bind6(struct bpf_sock *sk)
{
	__u32 w[4];

	w[0] = sk->src_ip6[0];
	w[1] = sk->src_ip6[1];
	w[2] = sk->src_ip6[2];
	w[3] = sk->src_ip6[3];
	return remember_bound(sk, AGENTD_HOOK_BIND6, (const __u8 *)w);
}

/* inet sockets only (the kernel runs this hook in inet_create/inet6_create): types, and the
 * protocols an agent may use (inet.bpf.h), here too where there is no BPF LSM. The BPF LSM layer
 * (sock.bpf.c) checks every family. */
SEC("cgroup/sock_create")
int sock_create(struct bpf_sock *sk)
{
	struct dest d = { .family = sk->family, .protocol = sk->type };
	struct agent a;
	__u32 reason;
	int deny;

	if (!current_agent(&a))
		return 1;
	reason = a.has_config ? AGENTD_REASON_NO_RULE : AGENTD_REASON_NO_POLICY;
	deny = !a.has_config || !(a.cfg.sock_families & (1ULL << (sk->family & 63))) ||
	       !(a.cfg.sock_types & (1U << (sk->type & 31)));
	if (!deny && !inet_protocol_allowed(&a, sk->family, sk->type, sk->protocol)) {
		reason = AGENTD_REASON_PROTOCOL;
		deny = 1;
	}
	if (want_event(&a, deny))
		emit_net_event(&a, AGENTD_HOOK_SOCK_CREATE, deny, reason, 0, &d);
	return cgroup_verdict(enforced(&a, deny, reason));
}
