// SPDX-License-Identifier: GPL-2.0
/*
 * An agent's identity and configuration, natively on the host (cgroup-BPF runs here; BPF LSM
 * does not): socket(AF_INET, SOCK_DGRAM) + close in a loop, whose cgroup/sock_create program
 * finds the task's agent (the agent levels and the cgroup index, agent_cgroups when a slot is shared),
 * reads its configuration (agent_slots) and tests the family and type, what every hook of an
 * agent's task does first. Conditions, interleaved round by round (rotating which goes first):
 *
 *   none     no program attached to the task's cgroup
 *   outside  agentd's cgroup programs attached, a task of no agent (the identity's "no agent"
 *            path, which every hook takes for such tasks; agentd attaches its cgroup programs
 *            above agents only, so host tasks run none of them)
 *   inside   an agent's task, its policy allowing the socket
 *   shared   inside, with a second agent cgroup in the same slot of agent_cgroup_index (an id
 *            65,536 above): the identity goes on to the agent_cgroups hash lookup
 *
 * Then, with the kernel's BPF statistics on (a separate pass: they cost two clock reads a
 * call), sock_create's own time per call in each condition that runs it.
 *
 * usage: bench_identity [ROUNDS [OPS]]   (default 15 rounds of 200,000 sockets)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "kernel/cgroup.h"
#include "common.h"
#include "kernel/enforcer.h"
#include "log.h"
#include "kernel/rules.h"

#define AGENT 7
#define MAX_ROUNDS 101

enum { NONE, OUTSIDE, INSIDE, SHARED, NCOND };
static const char *const names[NCOND] = { "none", "outside", "inside", "shared" };

static int op_socket(const void *unused)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	(void)unused;
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* The sock_create program attached to the cgroup: its run time and count so far. */
static int prog_stats(int cg_fd, double *ns, double *cnt)
{
	struct bpf_prog_info info = {};
	__u32 ids[4], n = 4, len = sizeof(info);
	int fd, err = 0;

	if (bpf_prog_query(cg_fd, BPF_CGROUP_INET_SOCK_CREATE, 0, NULL, ids, &n))
		return -errno;
	if (n != 1)
		return -ENOENT;
	fd = bpf_prog_get_fd_by_id(ids[0]);
	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		err = -errno;
	close(fd);
	*ns = info.run_time_ns;
	*cnt = info.run_cnt;
	return err;
}

static void print_stats(const char *what, const char *cond, double *v, int n, double base)
{
	qsort(v, n, sizeof(*v), bench_cmp_double);
	printf("BENCH identity_socket_%s_%s_ns %.1f (p25 %.1f, p75 %.1f)", cond, what, v[n / 2],
	       v[n / 4], v[3 * n / 4]);
	if (base > 0)
		printf(" ratio %.3f, fastest ratio %.3f", v[n / 2] / base, v[0] / base);
	printf("\n");
}

int main(int argc, char **argv)
{
	const struct ruleset rs = { .sock_families = 1ULL << AF_INET,
				    .sock_types = 1U << SOCK_DGRAM };
	static double loop[NCOND][MAX_ROUNDS], prog[NCOND][MAX_ROUNDS];
	int rounds = argc > 1 ? atoi(argv[1]) : 15, ops = argc > 2 ? atoi(argv[2]) : 200000;
	int fds[NCOND] = { -1, -1, -1, -1 }, stats = -1, failed, err = 0, r, k, c;
	char root[PATH_MAX], path[PATH_MAX + 32];
	double ns0, c0, ns1, c1, fastest0 = 0;
	struct enforcer_opts opts = {};
	struct enforcer *e = NULL;
	__u64 shared_id = 0;
	__u32 gen;

	if (rounds < 1 || rounds > MAX_ROUNDS || ops < 1 || argc > 3) {
		fprintf(stderr, "usage: bench_identity [ROUNDS: 1..%d [OPS]]\n", MAX_ROUNDS);
		return 2;
	}
	log_init("bench_identity", LOG_WARN);
	if (cgroup2_mount(root, sizeof(root)))
		return 1;
	for (c = 0; c < NCOND && !err; c++) {
		snprintf(path, sizeof(path), "bench-identity-%s", names[c]);
		fds[c] = bench_cgroup(root, path);
		err = fds[c] < 0 ? fds[c] : 0;
	}
	err = err ?: enforcer_load(&e, &opts);
	err = err ?: rules_apply(e, AGENT, &rs, &gen, &failed);
	snprintf(path, sizeof(path), "%s/bench-identity-inside", root);
	err = err ?: enforcer_add_cgroup(e, path, AGENT);
	snprintf(path, sizeof(path), "%s/bench-identity-shared", root);
	err = err ?: enforcer_add_cgroup(e, path, AGENT);
	err = err ?: cgroup_id(path, &shared_id);
	if (!err) {
		/* The level of the shared cgroup is the inside one's: the agent levels hold it. */
		err = enforcer_add_cgroup_id(e, shared_id + AGENTD_CGROUP_INDEX_SLOTS,
					     enforcer_shared(e)->levels.level[0], AGENT);
	}
	for (c = OUTSIDE; c < NCOND && !err; c++)
		err = enforcer_attach_cgroup(e, fds[c]);
	for (r = 0; r < rounds && !err; r++) {
		for (k = 0; k < NCOND && !err; k++) {
			c = (r + k) % NCOND;
			loop[c][r] = bench_run(fds[c], op_socket, NULL, ops);
			err = loop[c][r] < 0 ? -EIO : 0;
		}
	}
	stats = err ? -1 : bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (!err && stats < 0)
		err = -errno;
	for (r = 0; r < rounds && !err; r++) {
		for (k = 0; k < NCOND - 1 && !err; k++) {
			c = OUTSIDE + (r + k) % (NCOND - 1);
			err = prog_stats(fds[c], &ns0, &c0);
			err = err ?: bench_run(fds[c], op_socket, NULL, ops) < 0 ? -EIO : 0;
			err = err ?: prog_stats(fds[c], &ns1, &c1);
			if (!err && c1 - c0 < ops)
				err = -ENODATA; /* the program did not run for each call */
			prog[c][r] = err ? 0 : (ns1 - ns0) / (c1 - c0);
		}
	}
	if (stats >= 0)
		close(stats);
	if (!err) {
		printf("BENCH identity rounds %d ops_per_round %d (socket+close)\n", rounds, ops);
		for (c = 0; c < NCOND; c++) {
			double base;

			qsort(loop[NONE], rounds, sizeof(double), bench_cmp_double);
			base = loop[NONE][rounds / 2];
			fastest0 = loop[NONE][0];
			if (c == NONE) {
				printf("BENCH identity_socket_none_ns %.1f (p25 %.1f, p75 %.1f), "
				       "fastest "
				       "%.1f\n",
				       base, loop[NONE][rounds / 4], loop[NONE][3 * rounds / 4],
				       fastest0);
				continue;
			}
			qsort(loop[c], rounds, sizeof(double), bench_cmp_double);
			printf("BENCH identity_socket_%s_ns %.1f (p25 %.1f, p75 %.1f) ratio %.3f, "
			       "fastest ratio %.3f\n",
			       names[c], loop[c][rounds / 2], loop[c][rounds / 4],
			       loop[c][3 * rounds / 4], loop[c][rounds / 2] / base,
			       loop[c][0] / fastest0);
		}
		for (c = OUTSIDE; c < NCOND; c++)
			print_stats("prog", names[c], prog[c], rounds, 0);
	} else {
		fprintf(stderr, "bench_identity: %s\n", strerror(-err));
	}
	for (c = OUTSIDE; c < NCOND; c++)
		if (fds[c] >= 0 && e)
			enforcer_detach_cgroup(e, fds[c]);
	if (e) {
		enforcer_remove_cgroup_id(e, shared_id + AGENTD_CGROUP_INDEX_SLOTS);
		for (c = INSIDE; c < NCOND; c++) {
			snprintf(path, sizeof(path), "%s/bench-identity-%s", root, names[c]);
			enforcer_remove_cgroup(e, path);
		}
	}
	enforcer_destroy(e);
	for (c = 0; c < NCOND; c++) {
		if (fds[c] >= 0)
			close(fds[c]);
		snprintf(path, sizeof(path), "%s/bench-identity-%s", root, names[c]);
		rmdir(path);
	}
	return err ? 1 : 0;
}
