// SPDX-License-Identifier: GPL-2.0
/*
 * Not built by make: one driver for comparing trees (docs/PERFORMANCE.md). It calls only
 * enforcer_load(), rules_apply() and the cgroup add/attach calls and their undoing, which older
 * trees have too, so the same source is linked against each tree's library and the builds run
 * alternately on one machine:
 *
 *   cc -O2 -std=gnu11 -D_GNU_SOURCE -I TREE/include -I TREE/userspace/lib -I TREE/build \
 *      selftests/bench/ab/sock_create_ab.c TREE/build/libagentd.a \
 *      -lbpf -lelf -lz -ljansson -lcrypto -lseccomp -o sock_create_ab_TREE
 *   sock_create_ab_TREE [LOOPS [ROUNDS]]   (default 1,000,000 sockets, 5 rounds)
 *
 * An agent's task (its policy allowing the socket) runs socket(AF_INET, SOCK_DGRAM) + close;
 * each round prints the cgroup/sock_create program's own time per call (BPF statistics): the
 * identity and configuration every hook of an agent's task reads first, natively (cgroup-BPF
 * runs on hosts that refuse BPF LSM). make bench's bench_identity measures the current tree.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "kernel/cgroup.h"
#include "kernel/enforcer.h"
#include "kernel/rules.h"

static int prog_stats(int cg_fd, double *ns, double *cnt)
{
	struct bpf_prog_info info = {};
	__u32 ids[4], n = 4, len = sizeof(info);
	int fd, err = 0;

	if (bpf_prog_query(cg_fd, BPF_CGROUP_INET_SOCK_CREATE, 0, NULL, ids, &n) || n != 1)
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

int main(int argc, char **argv)
{
	const struct ruleset rs = { .sock_families = 1ULL << AF_INET,
				    .sock_types = 1U << SOCK_DGRAM };
	int loops = argc > 1 ? atoi(argv[1]) : 1000000, rounds = argc > 2 ? atoi(argv[2]) : 5;
	struct enforcer_opts opts = {};
	struct enforcer *e = NULL;
	char root[4096], cg[4200];
	double ns0, c0, ns1, c1;
	int cg_fd, stats, failed, r, err;
	__u32 gen;

	if (loops < 1 || rounds < 1 || cgroup2_mount(root, sizeof(root)))
		return 2;
	snprintf(cg, sizeof(cg), "%s/sock-create-ab", root);
	if (mkdir(cg, 0755) && errno != EEXIST)
		return 1;
	cg_fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = cg_fd < 0 ? -errno : 0;
	err = err ?: enforcer_load(&e, &opts);
	err = err ?: rules_apply(e, 7, &rs, &gen, &failed);
	err = err ?: enforcer_add_cgroup(e, cg, 7);
	err = err ?: enforcer_attach_cgroup(e, cg_fd);
	stats = err ? -1 : bpf_enable_stats(BPF_STATS_RUN_TIME);
	for (r = 0; r < rounds && !err && stats >= 0; r++) {
		pid_t pid;
		int i, fd;

		err = prog_stats(cg_fd, &ns0, &c0);
		pid = err ? -1 : fork();
		if (pid == 0) {
			char path[4300], buf[32];

			snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
			snprintf(buf, sizeof(buf), "%d", getpid());
			fd = open(path, O_WRONLY);
			if (fd < 0 || write(fd, buf, strlen(buf)) < 0)
				_exit(1);
			close(fd);
			for (i = 0; i < loops; i++) {
				fd = socket(AF_INET, SOCK_DGRAM, 0);
				if (fd < 0)
					_exit(1);
				close(fd);
			}
			_exit(0);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
		err = err ?: prog_stats(cg_fd, &ns1, &c1);
		if (!err && c1 - c0 < loops)
			err = -ENODATA;
		if (!err)
			printf("sock_create ns/call %.1f (calls %.0f)\n", (ns1 - ns0) / (c1 - c0),
			       c1 - c0);
	}
	if (stats >= 0)
		close(stats);
	if (err)
		fprintf(stderr, "sock_create_ab: %s\n", strerror(-err));
	if (e) {
		enforcer_detach_cgroup(e, cg_fd);
		enforcer_remove_cgroup(e, cg);
	}
	enforcer_destroy(e);
	if (cg_fd >= 0)
		close(cg_fd);
	rmdir(cg);
	return err || stats < 0 ? 1 : 0;
}
