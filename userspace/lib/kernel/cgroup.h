/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_CGROUP_H
#define AGENTD_CGROUP_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>

/*
 * Finds the cgroup v2 mount point in a mountinfo stream (fields per proc(5), octal escapes
 * decoded). Returns 0, -ENOENT when there is none, -ENAMETOOLONG when out is too small.
 */
int mountinfo_find_cgroup2(FILE *mountinfo, char *out, size_t outsz);
/* The same for the calling process (/proc/self/mountinfo). */
int cgroup2_mount(char *out, size_t outsz);

/* The cgroup v2 id of the cgroup at path: what bpf_get_current_cgroup_id() returns inside it. */
int cgroup_id(const char *path, __u64 *id);

/*
 * fork(), with the child inside the cgroup open at cgroup_fd from its first instruction
 * (clone3 with CLONE_INTO_CGROUP). Returns the child's pid in the parent, 0 in the child,
 * -errno on failure.
 */
pid_t cgroup_fork_into(int cgroup_fd);

/* Writes text to a cgroup control file (cgroup.kill, pids.max, ...). Returns 0 or -errno. */
int cgroup_write(const char *path, const char *text);

/* The cgroup v2 of process pid as /proc/<pid>/cgroup gives it ("/x/y", below the cgroup2 mount,
 * in the caller's cgroup namespace). Returns 0, -ESRCH when there is no such process, or -errno.
 */
int cgroup_of_pid(pid_t pid, char *out, size_t outsz);
/* The same for one thread (tid) of process pid: threads of one process may be in different
 * cgroups for a moment (an exiting one is never moved). */
int cgroup_of_task(pid_t pid, pid_t tid, char *out, size_t outsz);

/*
 * The cgroup v2 of the process at the other end of a connected unix socket: its path as
 * /proc/<pid>/cgroup gives it (below the cgroup2 mount, in the caller's cgroup namespace) in
 * cg, its pid and uid in *pid and *uid (uid may be NULL). The pid comes from SO_PEERCRED and is
 * pinned with SO_PEERPIDFD where the kernel has it (6.5+), so that what is read is still the
 * peer's. Returns 0, -ESRCH when the peer is gone (or its pid names another process by now), or
 * -errno.
 */
int cgroup_of_peer(int fd, pid_t *pid, uid_t *uid, char *cg, size_t cgsz);
/* Whether path is top or below it, component-wise. */
int cgroup_path_below(const char *path, const char *top);

#endif
