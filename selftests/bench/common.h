/* SPDX-License-Identifier: GPL-2.0 */
/* What the VM benchmarks share (bench_open.c, bench_lsm_cgroup.c): the loops, each run in a
 * child placed in a cgroup, and the helpers around them. */
#ifndef AGENTD_BENCH_COMMON_H
#define AGENTD_BENCH_COMMON_H

struct enforcer;
struct lsmcg_bpf;

/* One operation of a loop, in the child: 0 or -1. */
typedef int (*bench_op)(const void *arg);

int bench_op_open_close(const void *path); /* open(path, O_RDONLY), close */
int bench_op_stat(const void *path); /* stat(path) */
int bench_op_exec(const void *argv); /* fork, execv(argv[0], argv) in the child, wait: exit 0 */
int bench_op_connect(const void *sin); /* socket(AF_INET, SOCK_DGRAM), connect(sin), close */

/* In a child placed in the cgroup open at cgroup_fd: ops calls of op(arg); ns per call, or < 0
 * on failure. */
double bench_run(int cgroup_fd, bench_op op, const void *arg, int ops);
/* qsort() comparison of doubles. */
int bench_cmp_double(const void *a, const void *b);
/* Creates (or reuses) root/name and opens it; returns the fd or -errno. */
int bench_cgroup(const char *root, const char *name);
/* Opens and loads selftests/bench/bpf/lsmcg.bpf.c with the enforcer's maps (one set of rules and agents for
 * both); attaches nothing. Returns 0 or -errno. */
int bench_lsmcg_load(struct enforcer *e, struct lsmcg_bpf **out);

#endif
