// SPDX-License-Identifier: GPL-2.0
/*
 * open+close cost of the file policy, in three conditions interleaved round by round, so that
 * drift hits all alike (medians over rounds):
 *   none     no program attached
 *   outside  programs attached; the task belongs to no agent (one map lookup)
 *   inside   programs attached; the task is an agent's: rules "/" all rights and 10 deny rules
 *            on other files (the walk from the target crosses /tmp's mount up to "/")
 * Prints one "BENCH" line per figure. Needs root and BPF LSM (the VM tier runs it).
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
#include "cgroup.h"
#include "enforcer.h"
#include "rules.h"
#include "log.h"

#define ROUNDS 21
#define OPS 20000
#define RULES 10

enum cond { NONE, OUTSIDE, INSIDE, NCOND };
static const char *const cond_names[] = { "none", "outside", "inside" };

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* In a child placed in cgroup_fd: OPS open+close; returns ns per op, or < 0 on failure. */
static double measure(int cgroup_fd, const char *path)
{
	int pipefd[2], status, i, fd;
	double t, ns = -1;
	pid_t pid;

	if (pipe(pipefd))
		return -1;
	pid = cgroup_fork_into(cgroup_fd);
	if (pid == 0) {
		t = now_ns();
		for (i = 0; i < OPS; i++) {
			fd = open(path, O_RDONLY);
			if (fd < 0)
				_exit(1);
			close(fd);
		}
		t = (now_ns() - t) / OPS;
		_exit(write(pipefd[1], &t, sizeof(t)) == sizeof(t) ? 0 : 1);
	}
	close(pipefd[1]);
	if (pid > 0 && read(pipefd[0], &ns, sizeof(ns)) != sizeof(ns))
		ns = -1;
	close(pipefd[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	return ns;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int make_cgroup(const char *root, const char *name, char *path, size_t sz)
{
	snprintf(path, sz, "%s/%s", root, name);
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static int setup_rules(struct enforcer *e, const char *agent_cg)
{
	static char paths[RULES][64];
	struct file_rule files[RULES + 1] = { { "/", AGENTD_RIGHTS_ALL } };
	struct ruleset rs = { .files = files, .nfiles = RULES + 1 };
	int i, fd, err, failed;
	__u32 gen;

	for (i = 0; i < RULES; i++) {
		snprintf(paths[i], sizeof(paths[i]), "/tmp/bench-denied-%d", i);
		fd = open(paths[i], O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		if (fd < 0)
			return -errno;
		close(fd);
		files[i + 1] = (struct file_rule){ paths[i], 0 };
	}
	err = rules_apply(e, 1, &rs, &gen, &failed);
	return err ? err : enforcer_add_cgroup(e, agent_cg, 1);
}

static int run(struct enforcer *f, int cg_fd[2], const char *target)
{
	double samples[NCOND][ROUNDS], med[NCOND];
	int r, c, i, err;

	for (r = 0; r < ROUNDS; r++) {
		/* Rotate which condition goes first, so that no condition always follows a detach. */
		for (i = 0; i < NCOND; i++) {
			c = (r + i) % NCOND;
			enforcer_detach_lsm(f);
			err = c == NONE ? 0 : enforcer_attach_lsm(f);
			if (err)
				return err;
			samples[c][r] = measure(cg_fd[c == INSIDE], target);
			if (samples[c][r] < 0)
				return -EIO;
		}
	}
	enforcer_detach_lsm(f);
	for (c = 0; c < NCOND; c++) {
		qsort(samples[c], ROUNDS, sizeof(double), cmp_double);
		med[c] = samples[c][ROUNDS / 2];
		printf("BENCH open_close_%s_ns %.1f (p25 %.1f, p75 %.1f)\n", cond_names[c], med[c],
		       samples[c][ROUNDS / 4], samples[c][3 * ROUNDS / 4]);
	}
	printf("BENCH open_close_outside_ratio %.3f\n", med[OUTSIDE] / med[NONE]);
	printf("BENCH open_close_inside_ratio %.3f\n", med[INSIDE] / med[NONE]);
	printf("BENCH open_close_rounds %d ops_per_round %d rules %d\n", ROUNDS, OPS, RULES);
	return 0;
}

int main(void)
{
	char root[PATH_MAX], plain[PATH_MAX], agent[PATH_MAX];
	const char *target = "/tmp/bench-target";
	int cg_fd[2] = { -1, -1 }, err, fd;
	struct enforcer_opts opts = { .lsm = true };
	struct enforcer *f = NULL;

	log_init("bench_open", LOG_INFO);
	log_libbpf();
	err = cgroup2_mount(root, sizeof(root));
	if (err) {
		fprintf(stderr, "bench_open: no cgroup v2 mount\n");
		return 1;
	}
	cg_fd[0] = make_cgroup(root, "bench-plain", plain, sizeof(plain));
	cg_fd[1] = make_cgroup(root, "bench-agent", agent, sizeof(agent));
	fd = open(target, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	if (cg_fd[0] < 0 || cg_fd[1] < 0 || fd < 0) {
		fprintf(stderr, "bench_open: setup: %s\n", strerror(errno));
		return 1;
	}
	close(fd);
	err = enforcer_load(&f, &opts);
	if (!err)
		err = setup_rules(f, agent);
	if (!err)
		err = run(f, cg_fd, target);
	if (err)
		fprintf(stderr, "bench_open: %s\n", strerror(-err));
	enforcer_destroy(f);
	close(cg_fd[0]);
	close(cg_fd[1]);
	rmdir(plain);
	rmdir(agent);
	return err ? 1 : 0;
}
