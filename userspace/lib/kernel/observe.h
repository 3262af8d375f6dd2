/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the kernel holds for an agent, read from the kernel (agentctl inspect, docs/INSPECT.md):
 * the links of agentd's programs and the code they run, the agent's configuration and rule
 * entries in the maps, its cgroups' registration; and the same entries as a compiled policy says
 * they should be, counted and digested alike so that the two compare.
 */
#ifndef AGENTD_OBSERVE_H
#define AGENTD_OBSERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "boundary.h"
#include "kernel/enforcer.h"
#include "kernel/rules.h"

#define OBSERVE_DIGEST_HEX 65

/* One program of this build and what the kernel holds of it. */
struct observed_prog {
	char object[16]; /* "files", "net", ... */
	char hook[64]; /* the section's hook: "file_open", "connect4", ... */
	enum boundary boundary;
	bool lsm;
	__u8 tag[8]; /* the build's program's tag */
	__u32 link_id; /* the pinned link's id; 0: no pin, or not a link */
	__u32 prog_id; /* the program the link runs; 0: none */
	bool same_code; /* that program's tag is the build's, on the same shared maps */
	bool attached; /* the link is attached (a cgroup link: to the cgroup its pin names) */
	bool effective; /* cgroup programs: among those the kernel runs for the agent's cgroup */
};

/*
 * Every program of e (the build's), with its pinned link in pin_dir as the kernel reports it.
 * Cgroup programs: their links pinned for the cgroup of id attach_cgroup_id, and whether they
 * run for the cgroup open at agent_cgroup_fd (the kernel's effective programs there). *out is
 * malloc'd. Returns 0 or -errno.
 */
int observe_programs(const struct enforcer *e, const char *pin_dir, __u64 attach_cgroup_id,
		     int agent_cgroup_fd, struct observed_prog **out, size_t *n);

/* A set of map entries: how many, and a digest of them (sorted, so independent of order). */
struct observed_entries {
	size_t n;
	char digest[OBSERVE_DIGEST_HEX];
};

/* The agent's file and network rule entries of generation gen in the kernel's maps (files:
 * -ENOENT without the file objects). */
int observe_file_rules(const struct enforcer *e, __u32 agent_id, __u32 gen,
		       struct observed_entries *o);
int observe_net_rules(const struct enforcer *e, __u32 agent_id, __u32 gen,
		      struct observed_entries *o);
/* The entries rules_apply() writes for rs, counted and digested as above. */
int expect_file_rules(const struct ruleset *rs, __u32 agent_id, __u32 gen,
		      struct observed_entries *o);
int expect_net_rules(const struct ruleset *rs, __u32 agent_id, __u32 gen,
		     struct observed_entries *o);

/* The agent agent_cgroups names for the cgroup at path: 0 and *agent_id, -ENOENT when it names
 * none, or -errno. */
int observe_cgroup_agent(const struct enforcer *e, const char *path, __u32 *agent_id);
/* Entries of agent_id in a map keyed by something and valued by agent id (broker_sockets), or
 * keyed by struct agentd_endpoint_key (endpoints). */
int observe_broker_sockets(const struct enforcer *e, __u32 agent_id, size_t *n);
int observe_endpoints(const struct enforcer *e, __u32 agent_id, size_t *n);
/* Entries of the structural deny list. */
int observe_structural(const struct enforcer *e, size_t *n);

#endif

/* One process of an agent, as /proc shows it now. */
#define OBSERVE_FDS_MAX 8 /* descriptors outside its rights kept; more are counted */
#define OBSERVE_LISTEN_MAX 8

struct observed_fd {
	int fd;
	int flags; /* its open flags (fdinfo) */
	__u32 needs; /* AGENTD_RIGHT_READ and/or _WRITE, as its flags need */
	__u32 rights; /* what the policy grants there */
	char path[256];
};

struct observed_task {
	int pid;
	char comm[17];
	int seccomp; /* 0 none, 1 strict, 2 filter; -1 unknown */
	int no_new_privs;
	__u64 cap_eff, cap_prm, cap_bnd;
	unsigned uid[4], gid[4]; /* real, effective, saved, file system */
	/* Namespaces it shares with the caller (agentd): "net mnt ..." ("" none). */
	char ns_shared[96];
	unsigned nfds, nsockets;
	struct observed_fd outside[OBSERVE_FDS_MAX];
	unsigned noutside; /* may pass OBSERVE_FDS_MAX */
	char listening[OBSERVE_LISTEN_MAX][80]; /* "tcp 127.0.0.1:8080" */
	unsigned nlistening;
};

/*
 * The rights the policy grants at a file-system object (kernel dev, inode): 1 and *rights when a
 * rule names it, else 0. observe_task() walks up from each descriptor's file as the kernel's
 * rights walk does, the nearest rule deciding; no rule at all: no rights.
 */
typedef int (*observe_rights_fn)(void *ctx, __u64 dev, __u64 ino, __u32 *rights);

/* Reads process pid: its status, namespaces, descriptors (those outside the rights rights_fn
 * gives, from the file a descriptor holds up to its root), listening sockets. Returns 0, -ESRCH
 * when it is gone, or -errno. */
int observe_task(int pid, observe_rights_fn rights_fn, void *ctx, struct observed_task *t);
