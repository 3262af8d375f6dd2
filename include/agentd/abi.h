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

#define AGENTD_EVENT_VERSION 1

/* Event types (agentd_event_hdr.type). Never reuse a number. */
#define AGENTD_EV_FILE 1

/* Hooks (agentd_file_event.hook). Never reuse a number. */
#define AGENTD_HOOK_FILE_OPEN 1

/* Decisions (event .decision). */
#define AGENTD_DECISION_ALLOW 0
#define AGENTD_DECISION_DENY 1

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
#define AGENTD_EVF_NAME_TRUNCATED (1U << 0)

#define AGENTD_COMM_LEN 16
#define AGENTD_NAME_LEN 256

/* Capacity of the per-agent arrays (drop counters); agent ids are 1..AGENTD_MAX_AGENTS-1. */
#define AGENTD_MAX_AGENTS 1024

/* Every event starts with this header; len covers the whole event, header included. */
struct agentd_event_hdr {
	__u16 type;
	__u16 version;
	__u32 len;
	__u64 ts_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
};
_Static_assert(sizeof(struct agentd_event_hdr) == 16, "agentd_event_hdr layout");

/* agent_cgroups map: cgroup v2 id -> the agent it belongs to. */
struct agentd_agent {
	__u32 agent_id;
	__u32 generation; /* policy generation the agent's rules were compiled at */
};
_Static_assert(sizeof(struct agentd_agent) == 8, "agentd_agent layout");

/*
 * file_rules map key: one file-system object of one agent. dev is the kernel's internal dev_t
 * (major << 20 | minor), as in super_block.s_dev; userspace converts st_dev to it.
 */
struct agentd_file_key {
	__u32 agent_id;
	__u32 pad;
	__u64 dev;
	__u64 ino;
};
_Static_assert(sizeof(struct agentd_file_key) == 24, "agentd_file_key layout");

struct agentd_file_rule {
	__u32 rule_id; /* reported in events as the rule that decided */
	__u32 flags; /* reserved, 0 */
};
_Static_assert(sizeof(struct agentd_file_rule) == 8, "agentd_file_rule layout");

struct agentd_file_event {
	struct agentd_event_hdr hdr;
	__u64 cgroup_id;
	__u32 agent_id;
	__u32 generation;
	__u32 pid; /* thread-group id */
	__u32 tid;
	__u32 uid;
	__u32 hook;
	__u32 decision;
	__u32 rule_id;
	__u64 dev;
	__u64 ino;
	__u32 flags;
	__u32 name_len; /* bytes in name, without the NUL */
	char comm[AGENTD_COMM_LEN];
	char name[AGENTD_NAME_LEN]; /* the object's own dentry name, NUL-terminated */
};
_Static_assert(sizeof(struct agentd_file_event) == 96 + AGENTD_NAME_LEN,
	       "agentd_file_event layout");

#endif /* AGENTD_ABI_H */
