// SPDX-License-Identifier: GPL-2.0
/*
 * open+close cost of the file policy, conditions interleaved round by round (rotating which
 * goes first), medians over rounds, ratios against "none":
 *   none          no LSM program attached
 *   outside       attached; the task belongs to no agent (identity lookup only)
 *   inside        attached; an agent's task; 11 rules ("/" all rights, 10 denies on other files);
 *                 the walk from the target crosses /tmp's mount up to "/"
 *   inside_100k   the same with 100,000 more rules in the map (O(1) in rule count?)
 *   inside_deep   the same as inside, the target 32 directories deeper (cost per level)
 * Prints "BENCH" lines. Needs root and BPF LSM (the VM tier runs it: make bench).
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
#include <bpf/bpf.h>
#include "cgroup.h"
#include "common.h"
#include "enforcer.h"
#include "log.h"
#include "rules.h"

#define ROUNDS 15
#define OPS 20000
#define RULES 10
#define BIG 100000
#define DEEP 32
#define AGENT 1

struct cond {
	const char *name;
	bool attach, agent, big, deep;
	double samples[ROUNDS];
};

static struct cond conds[] = {
	{ .name = "none" },
	{ .name = "outside", .attach = true },
	{ .name = "inside", .attach = true, .agent = true },
	{ .name = "inside_100k", .attach = true, .agent = true, .big = true },
	{ .name = "inside_deep", .attach = true, .agent = true, .deep = true },
};
#define NCOND (sizeof(conds) / sizeof(conds[0]))

struct bench {
	struct enforcer *e;
	int cg_fd[2]; /* plain, agent */
	char shallow[64], deep[PATH_MAX];
	__u32 gen;
	struct agentd_file_key *big_keys;
	struct agentd_file_rule *big_rules;
};

static int touch(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static int setup_files(struct bench *b)
{
	size_t n;
	int i;

	snprintf(b->shallow, sizeof(b->shallow), "/tmp/bench-target");
	strcpy(b->deep, "/tmp");
	for (i = 0; i < DEEP; i++) {
		n = strlen(b->deep);
		snprintf(b->deep + n, sizeof(b->deep) - n, "/d");
		if (mkdir(b->deep, 0755) && errno != EEXIST)
			return -errno;
	}
	n = strlen(b->deep);
	snprintf(b->deep + n, sizeof(b->deep) - n, "/target");
	return touch(b->shallow) ?: touch(b->deep);
}

static int setup_rules(struct bench *b, const char *agent_cg)
{
	static char paths[RULES][64];
	struct file_rule files[RULES + 1] = { { "/", AGENTD_RIGHTS_ALL } };
	struct ruleset rs = { .files = files, .nfiles = RULES + 1 };
	int i, err, failed;

	for (i = 0; i < RULES; i++) {
		snprintf(paths[i], sizeof(paths[i]), "/tmp/bench-denied-%d", i);
		err = touch(paths[i]);
		if (err)
			return err;
		files[i + 1] = (struct file_rule){ paths[i], 0 };
	}
	err = rules_apply(b->e, AGENT, &rs, &b->gen, &failed);
	return err ?: enforcer_add_cgroup(b->e, agent_cg, AGENT);
}

/* 100,000 rules on objects that do not exist (device 0xfffff): only the map's size changes. */
static int big_rules(struct bench *b, bool add)
{
	int fd = enforcer_map_fd(b->e, "file_rules");
	__u32 i, count = BIG;

	if (!b->big_keys) {
		b->big_keys = calloc(BIG, sizeof(*b->big_keys));
		b->big_rules = calloc(BIG, sizeof(*b->big_rules));
		if (!b->big_keys || !b->big_rules)
			return -ENOMEM;
		for (i = 0; i < BIG; i++) {
			b->big_keys[i] = (struct agentd_file_key){ AGENT, b->gen, 0xfffff, i + 1 };
			b->big_rules[i] = (struct agentd_file_rule){ 100 + i, AGENTD_RIGHT_READ };
		}
	}
	if (add ? bpf_map_update_batch(fd, b->big_keys, b->big_rules, &count, NULL)
		: bpf_map_delete_batch(fd, b->big_keys, &count, NULL))
		return -errno;
	return 0;
}

static int measure_cond(struct bench *b, struct cond *c, int round)
{
	int err;

	enforcer_detach_lsm(b->e);
	err = c->attach ? enforcer_attach_lsm(b->e) : 0;
	if (!err && c->big)
		err = big_rules(b, true);
	if (err)
		return err;
	c->samples[round] =
		bench_open_close(b->cg_fd[c->agent], c->deep ? b->deep : b->shallow, OPS);
	if (c->big)
		err = big_rules(b, false);
	return c->samples[round] < 0 ? -EIO : err;
}

static double median(struct cond *c)
{
	qsort(c->samples, ROUNDS, sizeof(double), bench_cmp_double);
	return c->samples[ROUNDS / 2];
}

static int run(struct bench *b)
{
	double med[NCOND];
	size_t c, i;
	int r, err;

	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < NCOND; i++) {
			err = measure_cond(b, &conds[(r + i) % NCOND], r);
			if (err)
				return err;
		}
	}
	enforcer_detach_lsm(b->e);
	for (c = 0; c < NCOND; c++) {
		med[c] = median(&conds[c]);
		printf("BENCH open_close_%s_ns %.1f (p25 %.1f, p75 %.1f) ratio %.3f\n",
		       conds[c].name, med[c], conds[c].samples[ROUNDS / 4],
		       conds[c].samples[3 * ROUNDS / 4], med[c] / med[0]);
	}
	printf("BENCH open_close_100k_vs_11_rules_ratio %.3f\n", med[3] / med[2]);
	printf("BENCH open_close_per_level_ns %.1f\n", (med[4] - med[2]) / DEEP);
	printf("BENCH rounds %d ops_per_round %d\n", ROUNDS, OPS);
	return 0;
}

int main(void)
{
	struct enforcer_opts opts = { .lsm = true };
	struct bench b = { .cg_fd = { -1, -1 } };
	char root[PATH_MAX];
	int err;

	log_init("bench_open", LOG_INFO);
	log_libbpf();
	err = cgroup2_mount(root, sizeof(root));
	if (err) {
		fprintf(stderr, "bench_open: no cgroup v2 mount\n");
		return 1;
	}
	b.cg_fd[0] = bench_cgroup(root, "bench-plain");
	b.cg_fd[1] = bench_cgroup(root, "bench-agent");
	err = b.cg_fd[0] < 0 ? b.cg_fd[0] : b.cg_fd[1] < 0 ? b.cg_fd[1] : setup_files(&b);
	if (!err)
		err = enforcer_load(&b.e, &opts);
	if (!err) {
		snprintf(root + strlen(root), sizeof(root) - strlen(root), "/bench-agent");
		err = setup_rules(&b, root);
	}
	if (!err)
		err = run(&b);
	if (err)
		fprintf(stderr, "bench_open: %s\n", strerror(-err));
	enforcer_destroy(b.e);
	free(b.big_keys);
	free(b.big_rules);
	return err ? 1 : 0;
}
