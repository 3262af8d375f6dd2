// SPDX-License-Identifier: GPL-2.0
/*
 * lsm/ against lsm_cgroup/ attachment for agentd's hottest hook (selftests/bench/bpf/lsmcg.bpf.c: file_open),
 * open+close of a file 8 directories down, conditions interleaved round by round (rotating
 * which goes first), medians, ratios against "none":
 *   none             no program attached
 *   global_outside   lsm/ programs; the task belongs to no agent
 *   global_inside    lsm/ programs; an agent's task ("/" with every right)
 *   cgroup_outside   lsm_cgroup/ programs attached to the agent's cgroup; a task of no agent
 *   cgroup_inside    lsm_cgroup/ programs; an agent's task
 * The programs share agentd's maps (loaded by the enforcer, whose own programs stay detached)
 * and decide exactly as agentd's do. Prints "BENCH" lines. Needs root and BPF LSM (the VM).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "kernel/cgroup.h"
#include "common.h"
#include "kernel/enforcer.h"
#include "log.h"
#include "lsmcg.skel.h"
#include "kernel/rules.h"

#define ROUNDS 15
#define OPS 20000
#define DEPTH 8
#define AGENT 1

enum attach { NONE, GLOBAL, CGROUP };

struct cond {
	const char *name;
	enum attach attach;
	bool agent;
	double samples[ROUNDS];
};

static struct cond conds[] = {
	{ "none", NONE, false, {} },	       { "global_outside", GLOBAL, false, {} },
	{ "global_inside", GLOBAL, true, {} }, { "cgroup_outside", CGROUP, false, {} },
	{ "cgroup_inside", CGROUP, true, {} },
};
#define NCOND (sizeof(conds) / sizeof(conds[0]))

struct bench {
	struct enforcer *e;
	struct lsmcg_bpf *skel;
	struct bpf_link *link;
	int cg_fd[2]; /* plain, agent */
	char target[PATH_MAX];
};

static void detach(struct bench *b)
{
	bpf_link__destroy(b->link);
	b->link = NULL;
}

static int attach(struct bench *b, enum attach how)
{
	struct lsmcg_bpf *p = b->skel;

	detach(b);
	if (how == GLOBAL)
		b->link = bpf_program__attach_lsm(p->progs.global_file_open);
	else if (how == CGROUP)
		b->link = bpf_program__attach_cgroup(p->progs.cgroup_file_open, b->cg_fd[1]);
	else
		return 0;
	return b->link ? 0 : -errno;
}

static int setup_target(struct bench *b)
{
	size_t n;
	int i, fd;

	strcpy(b->target, "/tmp");
	for (i = 0; i < DEPTH; i++) {
		n = strlen(b->target);
		snprintf(b->target + n, sizeof(b->target) - n, "/d");
		if (mkdir(b->target, 0755) && errno != EEXIST)
			return -errno;
	}
	n = strlen(b->target);
	snprintf(b->target + n, sizeof(b->target) - n, "/target");
	fd = open(b->target, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* The benchmark's programs use the enforcer's maps: one set of rules and agents for both. */
static int load(struct bench *b, const char *agent_cg)
{
	const struct file_rule files[] = { { "/", AGENTD_RIGHTS_ALL } };
	const struct ruleset rs = { .files = files, .nfiles = 1 };
	struct enforcer_opts opts = { .lsm = true };
	int err, failed;
	__u32 gen;

	err = enforcer_load(&b->e, &opts);
	err = err ?: bench_lsmcg_load(b->e, &b->skel);
	err = err ?: rules_apply(b->e, AGENT, &rs, &gen, &failed);
	return err ?: enforcer_add_cgroup(b->e, agent_cg, AGENT);
}

static int run(struct bench *b)
{
	double med[NCOND];
	struct cond *c;
	size_t i;
	int r, err;

	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < NCOND; i++) {
			c = &conds[(r + i) % NCOND];
			err = attach(b, c->attach);
			if (err)
				return err;
			c->samples[r] =
				bench_run(b->cg_fd[c->agent], bench_op_open_close, b->target, OPS);
			if (c->samples[r] < 0)
				return -EIO;
		}
	}
	detach(b);
	for (i = 0; i < NCOND; i++) {
		qsort(conds[i].samples, ROUNDS, sizeof(double), bench_cmp_double);
		med[i] = conds[i].samples[ROUNDS / 2];
		printf("BENCH attach_%s_ns %.1f (p25 %.1f, p75 %.1f) ratio %.3f\n", conds[i].name,
		       med[i], conds[i].samples[ROUNDS / 4], conds[i].samples[3 * ROUNDS / 4],
		       med[i] / med[0]);
	}
	printf("BENCH attach rounds %d ops_per_round %d depth %d\n", ROUNDS, OPS, DEPTH);
	return 0;
}

int main(void)
{
	struct bench b = { .cg_fd = { -1, -1 } };
	char root[PATH_MAX];
	int err;

	log_init("bench_lsm_cgroup", LOG_INFO);
	log_libbpf();
	err = cgroup2_mount(root, sizeof(root));
	if (err) {
		fprintf(stderr, "bench_lsm_cgroup: no cgroup v2 mount\n");
		return 1;
	}
	b.cg_fd[0] = bench_cgroup(root, "bench-cg-plain");
	b.cg_fd[1] = bench_cgroup(root, "bench-cg-agent");
	err = b.cg_fd[0] < 0 ? b.cg_fd[0] : b.cg_fd[1] < 0 ? b.cg_fd[1] : setup_target(&b);
	if (!err) {
		snprintf(root + strlen(root), sizeof(root) - strlen(root), "/bench-cg-agent");
		err = load(&b, root);
	}
	if (!err)
		err = run(&b);
	if (err)
		fprintf(stderr, "bench_lsm_cgroup: %s\n", strerror(-err));
	detach(&b);
	lsmcg_bpf__destroy(b.skel);
	enforcer_destroy(b.e);
	return err ? 1 : 0;
}
