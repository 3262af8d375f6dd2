/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_FILES_H
#define AGENTD_FILES_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

/* The file-policy BPF object: its programs, maps and event ring buffer. */
struct files;

/* Called for each ring-buffer record; a non-zero return stops consumption and is returned. */
typedef int (*event_fn)(void *ctx, void *data, size_t len);

/* The kernel's internal dev_t (as super_block.s_dev) for a userspace st_dev. */
__u64 kernel_dev(dev_t st_dev);

/* Opens and loads the object. Returns 0 or -errno; *out is NULL on failure. */
int files_load(struct files **out, event_fn on_event, void *ctx);
int files_attach(struct files *f);
void files_detach(struct files *f);
/* Registers a cgroup (by v2 id) as agent_id's. */
int files_add_agent(struct files *f, __u64 cgroup_id, __u32 agent_id, __u32 generation);
/* Denies agent_id opening the object at path (resolved now, to device + inode). */
int files_deny(struct files *f, __u32 agent_id, const char *path, __u32 rule_id);
/* Waits up to timeout_ms, then consumes every pending event. Returns events consumed or -errno. */
int files_consume(struct files *f, int timeout_ms);
/* Events the kernel could not record for agent_id, summed over CPUs. */
int files_drops(struct files *f, __u32 agent_id, __u64 *drops);
/* Detaches, unloads, frees; accepts NULL. */
void files_destroy(struct files *f);

#endif
