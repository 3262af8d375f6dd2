/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_ENFORCER_INTERNAL_H
#define AGENTD_ENFORCER_INTERNAL_H

/*
 * What the enforcer's files share, not for its users (enforcer.h is their interface):
 *   enforcer.c         the objects, their loading, the enforcer's life
 *   enforcer_maps.c    map sharing among the objects, map pins, mappings of shared maps
 *   enforcer_pins.c    the pin directory: its format, the pinned ring's size, teardown
 *   enforcer_links.c   attaching: link pins, adoption, upgrade, stale links, detaching
 *   enforcer_agents.c  agent identity (levels, cgroup index), object filter, agent slots,
 *                      endpoints
 *   enforcer_events.c  the ring buffer: consumption, drops
 * Each uses only those listed above it, and enforcer.c uses all (make cycles).
 */
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "agentd/abi.h"
#include "kernel/enforcer.h"

#define ENFORCER_NOBJS 6
#define MAX_LINKS 128
#define MAX_MISSING 16

struct object {
	const char *name;
	const void *(*elf_bytes)(size_t *sz);
	/* The same object built for kernels with bpf_rdonly_cast() (6.2 and later), or NULL. */
	const void *(*elf_bytes_ro)(size_t *sz);
	bool lsm;
	struct bpf_object *obj;
};

struct enforcer {
	char pin_dir[PATH_MAX]; /* "" when not pinning */
	struct object objs[ENFORCER_NOBJS];
	struct bpf_link *lsm_links[MAX_LINKS];
	int nlsm_links;
	struct bpf_link *cg_links[MAX_LINKS];
	int ncg_links;
	const char *missing[MAX_MISSING + 1];
	int nmissing;
	struct ring_buffer *events;
	__u32 ring_bytes; /* 0: as the objects declare it */
	struct agentd_shared *shared; /* the shared section (abi.h), mapped */
	struct agentd_rule_bucket *rules; /* the rule_buckets map, mapped; NULL without them */
	struct agentd_agent_slot *slots; /* the agent_slots map, mapped */
	/* A switch (or a clear) since the last grace period this process saw: a half it left may
	 * still be read. True at load: an earlier agentd may have switched just before it ended. */
	bool unsettled;
};

/* enforcer_maps.c */
/* Refuses an object whose .bss is not agentd_shared alone (-EINVAL). */
int enforcer_check_shared_section(const struct bpf_object *obj);
/* Makes obj, opened and not loaded, reuse the maps of the objects already loaded (strict: each
 * of its maps, else -ENOENT). */
int enforcer_reuse_maps(const struct enforcer *e, struct bpf_object *obj, bool strict);
/* Sets the pin path of each of obj's maps in e->pin_dir. */
int enforcer_pin_maps(struct enforcer *e, struct bpf_object *obj);
/* Maps the shared map called name (BPF_F_MMAPABLE, bytes long) for reading and writing into
 * *out. Returns 0, -ENOENT when no object has it, or -errno. */
int enforcer_map_shared(const struct enforcer *e, const char *name, size_t bytes, void *out);

/* enforcer_pins.c */
/* Accepts pins of this format (marking an empty directory), refuses others: -ESTALE, said. */
int enforcer_check_pin_format(const char *pin_dir);
/* The size of the ring pinned in e->pin_dir into *bytes; *bytes as it was without one. */
int enforcer_pinned_ring_bytes(const struct enforcer *e, __u32 *bytes);

/* enforcer_agents.c */
/* Maps the shared section, rule_buckets and agent_slots, and brings the cgroup index and the
 * object filter up to date with the maps, before any program is attached. */
int enforcer_map_agents(struct enforcer *e);
void enforcer_unmap_agents(struct enforcer *e);

/* enforcer_events.c */
/* The ring buffer, consumed through fn. */
int enforcer_events_open(struct enforcer *e, event_fn fn, void *ctx);

#endif
