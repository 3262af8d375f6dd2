/* SPDX-License-Identifier: GPL-2.0 */
/* What the VM benchmarks of open+close share (bench_open.c, bench_lsm_cgroup.c). */
#ifndef AGENTD_BENCH_COMMON_H
#define AGENTD_BENCH_COMMON_H

/* In a child placed in the cgroup open at cgroup_fd: ops open+close of path; ns per op, or
 * < 0 on failure. */
double bench_open_close(int cgroup_fd, const char *path, int ops);
/* qsort() comparison of doubles. */
int bench_cmp_double(const void *a, const void *b);
/* Creates (or reuses) root/name and opens it; returns the fd or -errno. */
int bench_cgroup(const char *root, const char *name);

#endif
