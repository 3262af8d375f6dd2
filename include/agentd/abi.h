/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The ABI shared by the BPF programs and userspace: map keys and values and ring-buffer events.
 *
 * Rules: fixed-width __u8..__u64/__s32 fields only, explicit padding, a size assertion per struct,
 * no bool/enum/long/pointers. Event type and hook numbers are never reused.
 */
#ifndef AGENTD_ABI_H
#define AGENTD_ABI_H

#include <linux/types.h>

#define AGENTD_EVENT_VERSION 3 /* 3: file events carry a path, not only the object's name */

/* Event types (agentd_event_hdr.type). Never reuse a number. */
#define AGENTD_EV_FILE 1 /* struct agentd_file_event */
#define AGENTD_EV_NET 2 /* struct agentd_net_event */
#define AGENTD_EV_SELF 3 /* struct agentd_self_event */

/* Hooks (event .hook). Never reuse a number. */
#define AGENTD_HOOK_FILE_OPEN 1
#define AGENTD_HOOK_PATH_MKNOD 2
#define AGENTD_HOOK_PATH_MKDIR 3
#define AGENTD_HOOK_PATH_SYMLINK 4
#define AGENTD_HOOK_PATH_UNLINK 5
#define AGENTD_HOOK_PATH_RMDIR 6
#define AGENTD_HOOK_PATH_LINK 7
#define AGENTD_HOOK_PATH_RENAME 8
#define AGENTD_HOOK_PATH_TRUNCATE 9
#define AGENTD_HOOK_FILE_TRUNCATE 10
#define AGENTD_HOOK_PATH_CHMOD 11
#define AGENTD_HOOK_PATH_CHOWN 12
#define AGENTD_HOOK_INODE_SETXATTR 13
#define AGENTD_HOOK_INODE_REMOVEXATTR 14
#define AGENTD_HOOK_BPRM_CHECK 15
#define AGENTD_HOOK_MMAP_FILE 16
#define AGENTD_HOOK_FILE_MPROTECT 17
#define AGENTD_HOOK_CONNECT4 20
#define AGENTD_HOOK_CONNECT6 21
#define AGENTD_HOOK_SENDMSG4 22
#define AGENTD_HOOK_SENDMSG6 23
#define AGENTD_HOOK_BIND4 24
#define AGENTD_HOOK_BIND6 25
#define AGENTD_HOOK_SOCK_CREATE 26
#define AGENTD_HOOK_BPF 30
#define AGENTD_HOOK_PERF_EVENT_OPEN 31
#define AGENTD_HOOK_KERNEL_MODULE_REQUEST 32
#define AGENTD_HOOK_KERNEL_READ_FILE 33
#define AGENTD_HOOK_KERNEL_LOAD_DATA 34
#define AGENTD_HOOK_SB_MOUNT 35
#define AGENTD_HOOK_MOVE_MOUNT 36
#define AGENTD_HOOK_SB_UMOUNT 37
#define AGENTD_HOOK_SB_PIVOTROOT 38
#define AGENTD_HOOK_USERNS_CREATE 39
#define AGENTD_HOOK_TASK_KILL 40
#define AGENTD_HOOK_PTRACE_ACCESS_CHECK 41
#define AGENTD_HOOK_PTRACE_TRACEME 42
#define AGENTD_HOOK_KEY_ALLOC 43
#define AGENTD_HOOK_KEY_PERMISSION 44
#define AGENTD_HOOK_CGROUP_WRITE 45

/* Decisions (event .decision). */
#define AGENTD_DECISION_ALLOW 0
#define AGENTD_DECISION_DENY 1
/* Shadow mode (AGENTD_AGENT_SHADOW): the agent's own rules denied, the operation went on. */
#define AGENTD_DECISION_WOULD_DENY 2

/* Why (event .reason). Never reuse a number. */
#define AGENTD_REASON_RULE 1 /* the most specific rule (rule_id) decided */
#define AGENTD_REASON_NO_RULE 2 /* no rule covers the object: default deny */
#define AGENTD_REASON_WALK_TOO_DEEP 3 /* the ancestry walk hit its bound: fail closed */
#define AGENTD_REASON_LINK_WIDENS 4 /* link/rename would give the object more rights */
#define AGENTD_REASON_WRITABLE_EXEC 5 /* exec from a tree the agent can write */
#define AGENTD_REASON_ANON_EXEC 6 /* exec or executable map of a memfd/anonymous file */
#define AGENTD_REASON_NO_POLICY 7 /* the agent has no loaded policy: fail closed */
#define AGENTD_REASON_STRUCTURAL 8 /* the structural network deny list */
#define AGENTD_REASON_SELF_PROTECT 9 /* denied to every agent */
#define AGENTD_REASON_OUTSIDE_AGENT 10 /* the target task is outside the agent */

/*
 * File rights, as policies grant them to file-system objects and their trees. Exec of a binary,
 * and executable mappings of a file, need AGENTD_RIGHT_EXEC on it.
 */
#define AGENTD_RIGHT_READ (1U << 0) /* open for reading; list a directory */
#define AGENTD_RIGHT_WRITE (1U << 1) /* open for writing or appending */
#define AGENTD_RIGHT_EXEC (1U << 2) /* execute; map executable */
#define AGENTD_RIGHT_CREATE (1U << 3) /* create files, directories, nodes, symlinks inside */
#define AGENTD_RIGHT_REMOVE (1U << 4) /* unlink, rmdir */
#define AGENTD_RIGHT_LINK (1U << 5) /* be the source or destination of link and rename */
#define AGENTD_RIGHT_TRUNCATE (1U << 6) /* truncate, O_TRUNC */
#define AGENTD_RIGHT_SETATTR (1U << 7) /* chmod, chown, utimes, extended attributes */
#define AGENTD_RIGHTS_ALL 0xffU

/* agentd_file_event.flags */
/* The path lost its leading components: too long for path[], or more than AGENTD_MAX_WALK. */
#define AGENTD_EVF_PATH_TRUNCATED (1U << 0)
#define AGENTD_EVF_INTERNAL (1U << 1) /* the object is on an internal mount: no path reaches it */

#define AGENTD_COMM_LEN 16
#define AGENTD_PATH_LEN 512 /* a power of two: the BPF path builder masks offsets with it */

/* Agent ids are 1..AGENTD_MAX_AGENTS-1. Agent cgroups sit at up to AGENTD_MAX_AGENT_LEVELS
 * distinct cgroup levels; a task's ancestry is searched at those levels only. */
#define AGENTD_MAX_AGENTS 1024
#define AGENTD_MAX_AGENT_LEVELS 4
#define AGENTD_MAX_CGROUP_LEVEL 32
/* Bound of the dentry ancestry walk (components, mount crossings included). */
#define AGENTD_MAX_WALK 64

/* Every event starts with this header; len covers the whole event, header included. */
struct agentd_event_hdr {
	__u16 type;
	__u16 version;
	__u32 len;
	__u64 ts_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
};
_Static_assert(sizeof(struct agentd_event_hdr) == 16, "agentd_event_hdr layout");

/* agentd_shared.levels: the cgroup levels agents sit at, appended, never reordered (a level is
 * stored before the count that includes it), so that a reader racing an update still finds
 * every level it found before. */
struct agentd_agent_levels {
	__u32 count;
	__u32 level[AGENTD_MAX_AGENT_LEVELS];
	__u32 pad[3];
};
_Static_assert(sizeof(struct agentd_agent_levels) == 32, "agentd_agent_levels layout");

/*
 * agentd_shared.cgroup_index: AGENTD_CGROUP_INDEX_SLOTS 64-bit words (agentd writes each with
 * one 8-byte store), the slot of a cgroup id its low 16 bits (cgroup ids are
 * allocated in sequence). A word is 0 when no id in agent_cgroups has those low bits; the one
 * such id with its low 16 bits replaced by its agent id (agentd_cgroup_index_word()); or
 * AGENTD_CGROUP_INDEX_SEVERAL, when several do and agent_cgroups decides. So the identity of a
 * task costs one load at each agent level, and a hash lookup only in a shared slot. An id is
 * added to agent_cgroups before its slot names it, and its slot is recomputed after it leaves.
 */
#define AGENTD_CGROUP_INDEX_SLOTS 65536
#define AGENTD_CGROUP_INDEX_SEVERAL 0xffffULL /* low bits no agent id can have */

static inline __u64 agentd_cgroup_index_word(__u64 cgroup_id, __u32 agent_id)
{
	return (cgroup_id & ~(__u64)(AGENTD_CGROUP_INDEX_SLOTS - 1)) | agent_id;
}

/*
 * agentd_shared.object_filter: AGENTD_OBJECT_FILTER_BITS bits in 64-bit words, one per hash of a file system object (device, inode). The bit of every object in
 * rule_buckets or mount_roots, of any agent and generation, is set before the entry is added;
 * bits of objects no entry names any more are cleared by a rebuild after entries are deleted. A
 * clear bit answers "no rule here" with one load: the path walk looks up its maps only at levels
 * whose bit is set.
 */
#define AGENTD_OBJECT_FILTER_SHIFT 22
#define AGENTD_OBJECT_FILTER_BITS (1U << AGENTD_OBJECT_FILTER_SHIFT)
#define AGENTD_OBJECT_FILTER_WORDS (AGENTD_OBJECT_FILTER_BITS / 64)

/* The object's bit: a multiplicative hash (inode numbers are often sequential; the device
 * moves into the high bits the multiplication carries down). */
static inline __u32 agentd_object_bit(__u64 dev, __u64 ino)
{
	return (__u32)(((ino ^ (dev << 40)) * 0x9E3779B97F4A7C15ULL) >>
		       (64 - AGENTD_OBJECT_FILTER_SHIFT));
}

/*
 * What every program reads first, before any map lookup: the agent levels, the cgroup index and
 * the object filter, as the one global variable of each BPF object's .bss section (not a
 * .bss.* section of its own: Debian 12's bpftool, which generates the skeletons, does not know
 * those). libbpf makes the section a one-element array map, which agentd shares among the
 * objects and pins as AGENTD_SHARED_PIN, and a program reaches it by its address, where a map
 * of its own would cost a lookup (about a dozen instructions each). All three are derived state: the index from
 * agent_cgroups, the filter from rule_buckets and mount_roots; only the levels are carried
 * from an earlier build's pins (enforcer.c).
 */
#define AGENTD_SHARED_SECTION ".bss"
#define AGENTD_SHARED_PIN "agentd_shared"

struct agentd_shared {
	struct agentd_agent_levels levels;
	__u64 cgroup_index[AGENTD_CGROUP_INDEX_SLOTS];
	__u64 object_filter[AGENTD_OBJECT_FILTER_WORDS];
};
_Static_assert(sizeof(struct agentd_shared) ==
		       32 + 8 * (AGENTD_CGROUP_INDEX_SLOTS + AGENTD_OBJECT_FILTER_WORDS),
	       "agentd_shared layout");

/* Who acted: the same block in every event. */
struct agentd_task {
	__u64 cgroup_id;
	__u32 agent_id;
	__u32 generation;
	__u32 pid; /* thread-group id */
	__u32 tid;
	__u32 uid;
	__u32 pad;
	char comm[AGENTD_COMM_LEN];
};
_Static_assert(sizeof(struct agentd_task) == 48, "agentd_task layout");

/* What was decided: the same block in every event. */
struct agentd_verdict {
	__u32 hook;
	__u32 decision;
	__u32 reason;
	__u32 rule_id; /* 0: no rule */
};
_Static_assert(sizeof(struct agentd_verdict) == 16, "agentd_verdict layout");

/*
 * agent_cgroups map: cgroup v2 id -> agent id (__u32). agent_slots map: agent id -> its
 * configuration (struct agentd_agent_slot). The configuration names the generation of the
 * agent's rules: a reload writes the new generation's rules beside the old, then switches the
 * configuration in one aligned store (below).
 */
#define AGENTD_AGENT_ALLOW_MEMFD_EXEC (1U << 0)
#define AGENTD_AGENT_ALLOW_WRITABLE_EXEC (1U << 1)
#define AGENTD_AGENT_LOG_ALLOWS (1U << 2)
#define AGENTD_AGENT_ALLOW_BIND (1U << 3)
#define AGENTD_AGENT_ALLOW_DEVICES (1U << 4) /* mknod of character and block devices */
/* ICMP echo ("ping") sockets: SOCK_DGRAM with IPPROTO_ICMP or IPPROTO_ICMPV6 (bpf/inet.bpf.h) */
#define AGENTD_AGENT_ALLOW_ICMP (1U << 5)
/* Shadow mode: a deny by the agent's own rules is recorded as AGENTD_DECISION_WOULD_DENY and the
 * operation proceeds; structural network deny and self-protection stay enforced. */
#define AGENTD_AGENT_SHADOW (1U << 6)
/* With AGENTD_AGENT_SHADOW: the structural network deny is shadowed too (agentd's host option
 * --shadow-structural; docs/SHADOW.md). */
#define AGENTD_AGENT_SHADOW_STRUCTURAL (1U << 7)

struct agentd_agent_config {
	__u32 generation;
	__u32 flags; /* AGENTD_AGENT_* */
	__u64 sock_families; /* bit n: the agent may create AF_n sockets */
	__u32 sock_types; /* bit n: SOCK_n (1 stream, 2 dgram, 3 raw, 5 seqpacket) */
	__u32 pad;
	__u64 capabilities; /* bit n: the agent's tasks may use capability n (CAP_*) */
};
_Static_assert(sizeof(struct agentd_agent_config) == 32, "agentd_agent_config layout");

/*
 * agent_slots: an array map indexed by agent id, mapped by agentd (BPF_F_MMAPABLE), whose lookup
 * the verifier inlines (the hash map it replaced cost a hashed lookup per decision). The
 * configuration in force is cfg[generation & 1], whose own generation equals generation; 0: none
 * (the agent is denied everything). A switch writes the half the new generation names, then
 * stores generation (one aligned 4-byte store: a program reads the old value or the new, and each
 * names a half written whole). A half is written again only after an RCU grace period since the
 * switch away from it, so that no program still reads it (enforcer_agent_switch()).
 */
struct agentd_agent_slot {
	__u32 generation;
	__u32 pad;
	struct agentd_agent_config cfg[2];
};
_Static_assert(sizeof(struct agentd_agent_slot) == 72, "agentd_agent_slot layout");

/*
 * A file rule's key: one file-system object in one generation of one agent's rules (the key of
 * mount_roots too). dev is the kernel's internal dev_t (major << 20 | minor), as in
 * super_block.s_dev; userspace converts st_dev to it.
 */
struct agentd_file_key {
	__u32 agent_id;
	__u32 generation;
	__u64 dev;
	__u64 ino;
};
_Static_assert(sizeof(struct agentd_file_key) == 24, "agentd_file_key layout");

struct agentd_file_rule {
	__u32 rule_id; /* reported in events as the rule that decided */
	__u32 rights; /* AGENTD_RIGHT_* granted on the object and, unless overridden, below it */
};
_Static_assert(sizeof(struct agentd_file_rule) == 8, "agentd_file_rule layout");

/*
 * rule_buckets: the file rules of every agent and generation, an array map of buckets, mapped by
 * agentd, where a hash map was (whose lookup cost an agent's open 180-207 instructions of the
 * BPF program, docs/PERFORMANCE.md): a program hashes the key, looks up two buckets with lookups
 * the verifier inlines, and compares the slots of each. An entry lives in one of the two buckets
 * its key hashes to (agentd_rule_bucket()), in a slot whose owner (agentd_rule_owner()) is the
 * entry's agent and generation, 0 when the slot is free, so a lookup that finds no match in both
 * is a definite "no rule here". agentd fills a slot's object and rule, then stores its owner
 * (release); it frees a slot by storing owner 0, and only for a generation no program can hold
 * (never in force, or after a grace period since the switch away from it), so that a program
 * never sees a slot change under an owner it matches. Entries never move. A key whose two
 * buckets are both full cannot be added: the policy is refused (-ENOSPC), nothing of it stays.
 * 2^16 buckets of 8 slots, 16 MiB: agentd puts an entry in the emptier of its two buckets,
 * which keeps them even. Keys at random first find both buckets full at about 72% of the slots
 * (377,000 entries; the hash map held 262,144), which test_ruletab.c checks.
 */
#define AGENTD_RULE_BUCKETS_SHIFT 16
#define AGENTD_RULE_BUCKETS (1U << AGENTD_RULE_BUCKETS_SHIFT)
#define AGENTD_RULE_BUCKET_SLOTS 8

struct agentd_rule_slot {
	__u64 owner;
	__u64 dev;
	__u64 ino;
	struct agentd_file_rule rule;
};
_Static_assert(sizeof(struct agentd_rule_slot) == 32, "agentd_rule_slot layout");

struct agentd_rule_bucket {
	struct agentd_rule_slot slot[AGENTD_RULE_BUCKET_SLOTS];
};
_Static_assert(sizeof(struct agentd_rule_bucket) == 256, "agentd_rule_bucket layout");

/* Never 0: agent ids start at 1. */
static inline __u64 agentd_rule_owner(__u32 agent_id, __u32 generation)
{
	return (__u64)agent_id << 32 | generation;
}

/* The key's hash: the object and its owner mixed, then multiplied (inode numbers are often
 * sequential; the multiplication carries the low bits' differences into the high ones). */
static inline __u64 agentd_rule_hash(__u64 owner, __u64 dev, __u64 ino)
{
	return ((ino ^ (dev << 40)) + owner * 0xC2B2AE3D27D4EB4FULL) * 0x9E3779B97F4A7C15ULL;
}

/* The key's two buckets: the top bits of its hash, and the next ones. */
static inline __u32 agentd_rule_bucket(__u64 hash, int second)
{
	return (__u32)(hash >> (64 - (second ? 2 : 1) * AGENTD_RULE_BUCKETS_SHIFT)) &
	       (AGENTD_RULE_BUCKETS - 1);
}

struct agentd_file_event {
	struct agentd_event_hdr hdr;
	struct agentd_task task;
	struct agentd_verdict verdict;
	__u32 rights_needed;
	__u32 rights_held;
	__u64 dev;
	__u64 ino;
	__u32 flags;
	__u32 path_len; /* bytes in path, without the NUL */
	/* Built from dentry names up to the root of the task's mount namespace, crossing mounts,
	 * NUL-terminated. Best effort, for people: rules never depend on it. Relative (the name
	 * alone) for objects on internal mounts; its tail when AGENTD_EVF_PATH_TRUNCATED. */
	char path[AGENTD_PATH_LEN];
};
_Static_assert(sizeof(struct agentd_file_event) == 112 + AGENTD_PATH_LEN,
	       "agentd_file_event layout");

/*
 * net_rules LPM trie key: prefixlen counts the 64 bits of agent id and generation, then address
 * bits. IPv4 is stored IPv4-mapped (::ffff:a.b.c.d), so a v4 /n is a prefix of 64 + 96 + n bits.
 */
struct agentd_net_key {
	__u32 prefixlen;
	__u32 agent_id;
	__u32 generation;
	__u8 addr[16];
};
_Static_assert(sizeof(struct agentd_net_key) == 28, "agentd_net_key layout");

#define AGENTD_NET_PORT_RANGES 8
#define AGENTD_PROTO_TCP (1U << 0)
#define AGENTD_PROTO_UDP (1U << 1)

struct agentd_net_rule {
	__u32 rule_id;
	__u32 protocols; /* AGENTD_PROTO_* */
	__u32 nranges; /* 0: every port */
	__u32 pad;
	__u16 port_lo[AGENTD_NET_PORT_RANGES];
	__u16 port_hi[AGENTD_NET_PORT_RANGES];
};
_Static_assert(sizeof(struct agentd_net_rule) == 16 + 4 * AGENTD_NET_PORT_RANGES,
	       "agentd_net_rule layout");

/* structural_deny LPM trie key: no agent part; the list is host configuration. */
struct agentd_addr_key {
	__u32 prefixlen;
	__u8 addr[16];
};
_Static_assert(sizeof(struct agentd_addr_key) == 20, "agentd_addr_key layout");

/* endpoints hash: (agent, loopback address, port, protocol) the agent may reach on loopback:
 * agentd's own endpoints for it, and listeners it bound itself (removed when they close). */
struct agentd_endpoint_key {
	__u32 agent_id;
	__u16 port; /* host byte order */
	__u8 protocol; /* AGENTD_PROTO_* */
	__u8 pad;
	__u8 addr[16];
};
_Static_assert(sizeof(struct agentd_endpoint_key) == 24, "agentd_endpoint_key layout");

/*
 * Broker tool runs (net.bpf.c's tool_runs hash: a run's cgroup v2 id -> this). A tool runs for an
 * agent but outside it, in a cgroup of its own, so the agent's rules do not apply there; these do.
 * AGENTD_TOOL_NET_NONE: no connect() or sendmsg() to any inet address. AGENTD_TOOL_NET_PUBLIC:
 * any address outside the structural deny list, and the host's name servers on port 53: the
 * endpoints of agent id AGENTD_TOOL_RESOLVERS (no agent has id 0).
 */
#define AGENTD_TOOL_NET_NONE 0
#define AGENTD_TOOL_NET_PUBLIC 1
#define AGENTD_TOOL_RESOLVERS 0
struct agentd_tool_run {
	__u32 agent_id; /* the caller: decisions are recorded as its */
	__u32 network; /* AGENTD_TOOL_NET_* */
};
_Static_assert(sizeof(struct agentd_tool_run) == 8, "agentd_tool_run layout");

struct agentd_net_event {
	struct agentd_event_hdr hdr;
	struct agentd_task task;
	struct agentd_verdict verdict;
	__u16 family; /* AF_INET, AF_INET6 */
	__u16 port; /* host byte order */
	__u32 protocol; /* IPPROTO_*, or for sock_create the socket type */
	__u8 addr[16]; /* IPv4 as IPv4-mapped IPv6 */
};
_Static_assert(sizeof(struct agentd_net_event) == 104, "agentd_net_event layout");

struct agentd_self_event {
	struct agentd_event_hdr hdr;
	struct agentd_task task;
	struct agentd_verdict verdict;
	__u32 target_pid; /* signals and ptrace; 0 otherwise */
	__u32 arg; /* the hook's main argument: bpf cmd, signal, ... */
};
_Static_assert(sizeof(struct agentd_self_event) == 88, "agentd_self_event layout");

/*
 * Unix sockets (docs/ARCHITECTURE.md). broker_sockets hash: the socket cookie of an agent's
 * listening broker socket (__u64, SO_COOKIE of the listening fd; bpf_get_socket_cookie() in the
 * hook: 64 bits, never reused while the system runs) -> that agent's id (__u32).
 * lsm/unix_stream_connect and lsm/unix_may_send (sock.bpf.c) let an agent's task reach its own
 * agent's broker socket and the unix sockets its own agent's tasks created, nothing else: a net
 * event, family AF_UNIX, protocol the peer's socket type (SOCK_STREAM, SOCK_SEQPACKET,
 * SOCK_DGRAM), no address.
 */
#define AGENTD_HOOK_UNIX_STREAM_CONNECT 46
#define AGENTD_HOOK_UNIX_MAY_SEND 47
#define AGENTD_REASON_NOT_OWN_SOCKET 11 /* another agent's broker socket */
#define AGENTD_REASON_NOT_OWN_UNIX_SOCKET 12 /* a unix socket no task of the agent created */
#define AGENTD_MAX_BROKER_SOCKETS AGENTD_MAX_AGENTS

/*
 * Cgroup writes (AGENTD_HOOK_CGROUP_WRITE, a self event) name in arg the hook that saw them:
 * AGENTD_HOOK_FILE_OPEN, a path hook, AGENTD_HOOK_INODE_SETXATTR/REMOVEXATTR, or one of these
 * two. (Until they moved there, one inode_permission hook saw them all; arg was its mask.)
 */
#define AGENTD_HOOK_TASK_ALLOC 48 /* clone3(CLONE_INTO_CGROUP) */
#define AGENTD_HOOK_FILE_RECEIVE 49 /* a cgroup file open for writing, received */

/*
 * Hooks that see a dentry and no mount (utimes, extended attributes, POSIX ACLs) cannot cross
 * mounts upward. mount_roots hash, keyed by agentd_file_key on the dentry a mount shows at its
 * top: the rights at that mount's mount point, intersected over every mount with that root, as
 * agentd saw its mount table when the policy loaded. Such a walk stays inside the object's file
 * system and intersects the rights of every mount root it passes (it cannot tell which mount the
 * object was reached through): a bind mount can only narrow what it grants (rights.bpf.h).
 */
struct agentd_mount_root {
	__u32 rule_id; /* the rule that decided at the mount point; 0 for none or several */
	__u32 rights;
};
_Static_assert(sizeof(struct agentd_mount_root) == 8, "agentd_mount_root layout");

#define AGENTD_MAX_MOUNT_ROOTS 65536
#define AGENTD_HOOK_INODE_SETATTR 50 /* utimes: access and modification times */
#define AGENTD_HOOK_INODE_SET_ACL 51 /* Linux 6.2 on; before, ACLs went through setxattr */
#define AGENTD_HOOK_INODE_REMOVE_ACL 52
/* A walk without a mount reached the top of a file system that no mount agentd saw shows: fail
 * closed. */
#define AGENTD_REASON_UNKNOWN_MOUNT 13
/* A map the decision reads could not be looked up: fail closed. No current program produces it
 * (the object filter it guarded is in the shared section now); kept so that older logs read. */
#define AGENTD_REASON_MAP_UNREADABLE 14
/* The kernel could not store what a later decision needs (a bound socket's agent: no memory for
 * its socket storage): the operation is denied rather than left unknown. */
#define AGENTD_REASON_UNRECORDED 15

/*
 * Inet sockets the cgroup connect and sendmsg programs do not see (ICMP echo, raw, anything but
 * TCP stream and UDP datagram sockets): their destinations, checked by the BPF LSM programs of
 * sock.bpf.c against the same structural list and rules (bpf/inet.bpf.h, docs/HOOKS.md). Net
 * events; sock_create events carry the reason AGENTD_REASON_PROTOCOL for a protocol refused.
 */
#define AGENTD_HOOK_SOCKET_CONNECT 80
#define AGENTD_HOOK_SOCKET_SENDMSG 81
#define AGENTD_HOOK_SOCKET_SETSOCKOPT 82 /* protocol: the option, level << 16 | optname */
#define AGENTD_HOOK_SOCKET_BIND 83 /* no address: the policy's "bind" decides */
/* The socket's protocol is not one an agent may use: one no cgroup hook sees and no policy grants
 * (SCTP, MPTCP, UDP-Lite, IPPROTO_RAW), or ICMP without the policy's "icmp". */
#define AGENTD_REASON_PROTOCOL 20
/* An IP option that sends a packet somewhere else than the address checked: a source route, a
 * routing header, a header the sender writes (IP_HDRINCL). */
#define AGENTD_REASON_REROUTE 21
/* The destination or the control messages could not be read: fail closed. */
#define AGENTD_REASON_UNREADABLE 22
/* Allowed by a time-limited grant (agentctl grant) where the agent's rules alone deny. */
#define AGENTD_REASON_GRANT 23
/* A broker tool run's connect or send that its registry entry's "network" does not allow. */
#define AGENTD_REASON_TOOL_NETWORK 24

/*
 * Containment (contain.bpf.c, docs/ARCHITECTURE.md): capabilities, tasks outside the agent,
 * System V IPC objects, terminals, kernel-wide settings, device nodes, notification marks.
 * Self events; arg is the hook's main argument (the capability, the command, the signal).
 */
#define AGENTD_HOOK_CAPABLE 53
#define AGENTD_HOOK_SYSLOG 54
#define AGENTD_HOOK_SETTIME 55
#define AGENTD_HOOK_QUOTACTL 56
#define AGENTD_HOOK_USERFAULTFD 57 /* inode_init_security_anon of a userfaultfd */
#define AGENTD_HOOK_FILE_SEND_SIGIOTASK 58
#define AGENTD_HOOK_FILE_FCNTL 59
#define AGENTD_HOOK_FILE_IOCTL 60 /* file_ioctl and file_ioctl_compat */
#define AGENTD_HOOK_TASK_SETPGID 61
#define AGENTD_HOOK_TASK_SETNICE 62
#define AGENTD_HOOK_TASK_SETIOPRIO 63
#define AGENTD_HOOK_TASK_SETSCHEDULER 64
#define AGENTD_HOOK_TASK_PRLIMIT 65
#define AGENTD_HOOK_TASK_MOVEMEMORY 66
#define AGENTD_HOOK_IPC_PERMISSION 67
#define AGENTD_HOOK_SHM_ASSOCIATE 68
#define AGENTD_HOOK_MSG_QUEUE_ASSOCIATE 69
#define AGENTD_HOOK_SEM_ASSOCIATE 70
#define AGENTD_HOOK_SHM_SHMAT 71
#define AGENTD_HOOK_MSG_QUEUE_MSGSND 72
#define AGENTD_HOOK_MSG_QUEUE_MSGRCV 73
#define AGENTD_HOOK_SHM_SHMCTL 74
#define AGENTD_HOOK_MSG_QUEUE_MSGCTL 75
#define AGENTD_HOOK_SEM_SEMCTL 76
#define AGENTD_HOOK_SEM_SEMOP 77
#define AGENTD_HOOK_IPC_ALLOC 78 /* shm/msg_queue/sem_alloc_security; arg: 1 shm, 2 msg, 3 sem */
#define AGENTD_HOOK_PATH_NOTIFY 79 /* a file event: inotify, fanotify, dnotify marks */

/* A character or block device: created only when the policy grants devices; opened only through
 * a rule on the node itself or on a devtmpfs tree (a file event, hook file_open or path_mknod). */
#define AGENTD_REASON_DEVICE 16
#define AGENTD_REASON_CAPABILITY 17 /* a capability the policy does not grant */
#define AGENTD_REASON_NOT_OWN_IPC 18 /* a System V IPC object no task of the agent created */

/*
 * Time-limited grants (agentctl grant, docs/POLICY.md "Grants"): looked up only where an agent's
 * own rules deny (reason AGENTD_REASON_RULE or AGENTD_REASON_NO_RULE), never where structural
 * deny, self-protection or any other reason does. A grant that lifts a deny is used: the event
 * says so (decision allow, reason AGENTD_REASON_GRANT, rule_id the grant's id), whatever the
 * policy logs. file_grants hash: agentd_file_key with generation 0 (a grant outlives reloads) ->
 * agentd_grant, rights AGENTD_RIGHT_* on that object alone. net_grants LPM trie:
 * agentd_grant_net_key -> agentd_grant, rights AGENTD_PROTO_*.
 */
#define AGENTD_MAX_GRANTS 4096
/* The first use claims it: one compare-and-swap of claimed_by from 0 to the claiming process.
 * An exec is one use though several hooks see it (the open, the exec, the loader's mappings):
 * the open needs the grant unclaimed or the process's, the exec claims it, a mapping claims it
 * or finds it the process's (bpf/grants.bpf.h). */
#define AGENTD_GRANT_ONCE (1U << 0)

struct agentd_grant {
	__u64 expires_ns; /* CLOCK_BOOTTIME (bpf_ktime_get_boot_ns); 0: until used or revoked */
	__u32 id; /* agentd's grant id, 1.. */
	__u32 rights;
	__u32 flags; /* AGENTD_GRANT_* */
	__u32 used; /* uses the kernel let through */
	__u32 claimed_by; /* a once grant: the process (tgid) that claimed it; 0: none yet */
	__u32 pad;
};
_Static_assert(sizeof(struct agentd_grant) == 32, "agentd_grant layout");

/* prefixlen counts the 64 bits of agent id, port and pad, then address bits (IPv4 kept
 * IPv4-mapped, as in agentd_net_key): a grant names one port. */
struct agentd_grant_net_key {
	__u32 prefixlen;
	__u32 agent_id;
	__u16 port; /* host byte order */
	__u16 pad;
	__u8 addr[16];
};
_Static_assert(sizeof(struct agentd_grant_net_key) == 28, "agentd_grant_net_key layout");

/* The number of capabilities a policy can name (CAP_LAST_CAP + 1 on Linux 6.1 to 6.12). */
#define AGENTD_CAP_COUNT 41

#endif /* AGENTD_ABI_H */
