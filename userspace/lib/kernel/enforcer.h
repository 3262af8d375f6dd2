/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_ENFORCER_H
#define AGENTD_ENFORCER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>
#include "agentd/abi.h"
#include "kernel/kdev.h"

/*
 * Every BPF object agentd loads, sharing one set of maps (agents, rules, events):
 *   files, exec, self, sock   BPF LSM programs (when the kernel runs BPF LSM)
 *   net                       cgroup-BPF programs (every kernel)
 */
struct enforcer;
struct bpf_object;

/* Called for each ring-buffer record; a non-zero return stops consumption and is returned. */
typedef int (*event_fn)(void *ctx, void *data, size_t len);

struct enforcer_opts {
	bool lsm; /* load the BPF LSM objects (probe first: the kernel must run BPF LSM) */
	event_fn on_event; /* may be NULL when nobody consumes */
	void *ctx;
	/*
	 * A bpffs directory to pin maps and links in, so that enforcement outlives the process:
	 * maps already pinned there are reused (their rules, agents and pending events with them)
	 * and programs whose links are pinned there are not attached again, unless the pinned
	 * link runs other code (an upgrade): then the new one replaces it; links of programs this
	 * build lacks are removed. NULL: nothing pinned, everything ends with the process.
	 */
	const char *pin_dir;
	/*
	 * The events ring buffer's size in bytes: a power of two, at least a page; 0: the 4 MiB the
	 * objects declare. A ring already pinned in pin_dir keeps the size it has (its pending
	 * events with it); enforcer_ring_bytes() says what was used.
	 */
	__u32 ring_bytes;
	/*
	 * Load the objects built for every kernel even where the kernel has bpf_rdonly_cast(),
	 * whose own build of files and exec is loaded otherwise (bpf/rights.bpf.h). For the tests:
	 * they prove on each kernel that the same objects load and decide there.
	 */
	bool plain_objects;
};

/*
 * The format of a pin directory: the maps agentd pins there, their names, types, key and value
 * layouts and meaning, the shared section's layout. Pins of another format cannot be reused, so
 * the load refuses them (-ESTALE, saying to run agentd --teardown). Any change to those bumps it;
 * a change of programs alone does not (an upgrade replaces their links). The directory holds the
 * format in a pinned map of this name (enforcer_pins.c says why a map).
 */
#define ENFORCER_PIN_FORMAT 1U
#define ENFORCER_PIN_FORMAT_PIN "pin_format"

/* What agentd's daemon asks for: room for stalls of the consumer of about 0.1 s at 500 k
 * events/s of 624 bytes (docs/PERFORMANCE.md). */
#define ENFORCER_RING_BYTES_DEFAULT (32U << 20)

/* Opens and loads the objects, fills the structural deny list. Returns 0 or -errno (-ESTALE:
 * pins of another format in opts->pin_dir, said in a message); *out is NULL on failure. */
int enforcer_load(struct enforcer **out, const struct enforcer_opts *opts);
/* The events ring buffer's size in bytes. */
__u32 enforcer_ring_bytes(const struct enforcer *e);
/* Attaches the BPF LSM programs (global hooks). */
int enforcer_attach_lsm(struct enforcer *e);
void enforcer_detach_lsm(struct enforcer *e);
/* Attaches the cgroup-BPF programs to the cgroup open at cgroup_fd (multi: others coexist). */
int enforcer_attach_cgroup(struct enforcer *e, int cgroup_fd);
/* LSM hooks this kernel lacks ("file_truncate" before 6.2, ...); NULL-terminated. */
const char *const *enforcer_missing_hooks(const struct enforcer *e);

/* The file rule table (abi.h, ruletab.h), mapped; NULL without the file objects. */
struct agentd_rule_bucket *enforcer_rules(struct enforcer *e);

/* The shared section (abi.h: agent levels, cgroup index, object filter), mapped; for tests. */
struct agentd_shared *enforcer_shared(struct enforcer *e);

/*
 * The object filter (abi.h): enforcer_object_filter_add() sets the bit of an object before an
 * entry naming it is added to the rule table or mount_roots (rules.c does; so must anything
 * else that adds one: an entry without its bit is never looked up, and the walk goes on above
 * it).
 * enforcer_object_filter_rebuild() clears the bits no entry needs any more, after deletions.
 * Callers serialize (agentd's one thread). Both do nothing without the file objects.
 */
void enforcer_object_filter_add(struct enforcer *e, __u64 dev, __u64 ino);
int enforcer_object_filter_rebuild(struct enforcer *e);

/*
 * Agents' configurations (abi.h, agent_slots). enforcer_agent_config(): the one in force, or
 * -ENOENT. enforcer_agent_switch() puts cfg in force (cfg->generation: not 0, and of the other
 * parity than the one in force, so that it names the other half; -EINVAL otherwise) with one
 * store, after waiting for the programs that may still read the half it writes;
 * enforcer_agent_clear() leaves agent_id none (its tasks are denied everything). Callers
 * serialize. enforcer_wait_for_programs() returns once every BPF program running when it was
 * called has finished (an RCU grace period). Each returns 0 or -errno.
 */
int enforcer_agent_config(const struct enforcer *e, __u32 agent_id,
			  struct agentd_agent_config *cfg);
int enforcer_agent_switch(struct enforcer *e, __u32 agent_id,
			  const struct agentd_agent_config *cfg);
int enforcer_agent_clear(struct enforcer *e, __u32 agent_id);
int enforcer_wait_for_programs(struct enforcer *e);

/* Registers the cgroup at path (and so its descendants) as agent_id's. */
int enforcer_add_cgroup(struct enforcer *e, const char *path, __u32 agent_id);
int enforcer_remove_cgroup(struct enforcer *e, const char *path);
/* The same by cgroup id and level (from the cgroup v2 root, which is level 0). */
int enforcer_add_cgroup_id(struct enforcer *e, __u64 id, int level, __u32 agent_id);
int enforcer_remove_cgroup_id(struct enforcer *e, __u64 id);

/*
 * Opens (or closes) a loopback endpoint of agentd's to agent_id: addr (16 bytes, IPv4 as
 * IPv4-mapped), port (host order), protocol AGENTD_PROTO_TCP or _UDP. The cgroup programs let
 * an agent reach loopback only at its endpoints. Returns 0 or -errno (-ENOENT: not there).
 */
int enforcer_add_endpoint(struct enforcer *e, __u32 agent_id, const __u8 addr[16], __u16 port,
			  __u8 protocol);
int enforcer_remove_endpoint(struct enforcer *e, __u32 agent_id, const __u8 addr[16], __u16 port,
			     __u8 protocol);

/*
 * A broker tool run's cgroup (by id), held to network (AGENTD_TOOL_NET_*) for the agent it runs
 * for; registered before the tool starts there, removed once the cgroup is gone. Returns 0 or
 * -errno (-ENOSPC: too many runs at once; -ENOENT: not there).
 */
int enforcer_add_tool_run(struct enforcer *e, __u64 cgroup_id, __u32 agent_id, __u32 network);
int enforcer_remove_tool_run(struct enforcer *e, __u64 cgroup_id);
/* Forgets every tool run (agentd starting: the runs of an agentd before it are gone). */
int enforcer_clear_tool_runs(struct enforcer *e);
/* The host's name servers that public tool runs reach on port 53 (TCP and UDP): addrs (n of
 * them, 16 bytes each, IPv4 as IPv4-mapped) replace the ones set before. Returns 0 or -errno. */
int enforcer_set_resolvers(struct enforcer *e, const __u8 (*addrs)[16], size_t n);

/* Waits up to timeout_ms, then consumes every pending event. Returns events consumed or -errno. */
int enforcer_consume(struct enforcer *e, int timeout_ms);
/* An epoll fd readable once the programs wake the consumer (past a backlog, not per event), for
 * a caller's own loop; it stays readable while events wait. -EINVAL without a ring buffer. */
int enforcer_events_fd(const struct enforcer *e);
/* Events the kernel could not record for agent_id, summed over CPUs. */
int enforcer_drops(struct enforcer *e, __u32 agent_id, __u64 *drops);
/* The fd of a shared map by name ("mount_roots", "agent_cgroups", ...), for rules.c. */
int enforcer_map_fd(const struct enforcer *e, const char *name);
/* Makes obj (opened, not loaded: a benchmark's own object on agentd's maps) reuse the enforcer's
 * map of each of its maps' names, and its shared section. -ENOENT when the enforcer lacks one. */
int enforcer_share_maps(const struct enforcer *e, struct bpf_object *obj);
/* Detaches, unloads, frees; accepts NULL. Pinned links and maps stay. */
void enforcer_destroy(struct enforcer *e);
/* Removes everything pinned in pin_dir, and so ends the enforcement pinned there; pins of any
 * format (the agents are forgotten first, ending enforcement at once, only in pins of this one). */
int enforcer_teardown(const char *pin_dir);
/* Detaches the cgroup-BPF programs enforcer_attach_cgroup() attached to the cgroup open at
 * cgroup_fd, by this process or (pinned) by an earlier one, and removes their pins. */
int enforcer_detach_cgroup(struct enforcer *e, int cgroup_fd);

#endif
