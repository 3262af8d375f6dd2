// SPDX-License-Identifier: GPL-2.0
/*
 * The event pipeline end to end, natively: BPF (selftests/bench/bpf/loadgen.bpf.c, 624-byte file events from
 * system calls of the agent's tasks) -> the shared ring buffer -> agentd's consumer -> audit
 * records -> the hash-chained, group-committed (fdatasync per batch), rotated audit log.
 * Producers run in an agent cgroup at a fixed offered rate for a few seconds per step; each step
 * prints the rate written to the log and the events the kernel could not record (drops).
 * Fixed rates, lowest first; then a bisection between the highest rate without loss and the
 * lowest with it, which prints where loss begins; last, as much as the producers can make.
 * Usage: bench_events [PRODUCERS [SEGMENT_MB [SECONDS [RATE]]]] (default 1: one core produces,
 * the other consumes and writes; segments of 64 MiB, gzipped in the background as agentd does;
 * 4 seconds per rate). With RATE, that offered rate alone, for SECONDS: is it sustained?
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "audit/audit.h"
#include "kernel/event.h"
#include "kernel/cgroup.h"
#include "kernel/enforcer.h"
#include "log.h"
#include "kernel/rules.h"
#include "loadgen.skel.h"

#define AGENT 1
#define MAX_PRODUCERS 8
static double step_s = 4; /* seconds per offered rate */

struct consumer {
	struct audit_writer *w;
	__s64 off;
	unsigned long written;
	int err;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct consumer *c = ctx;
	union agentd_event ev;
	struct audit_record r;

	if (event_decode(data, len, &ev) < 0 || audit_record_from_event(&r, &ev, c->off))
		return 0;
	c->err = audit_writer_append(c->w, &r);
	c->written += !c->err;
	return c->err;
}

#define EVENTS_PER_CALL 32 /* as in selftests/bench/bpf/loadgen.bpf.c */

/*
 * A producer: events at rate per second (0: as fast as it can) until the deadline. Ahead of
 * its rate it sleeps, as an agent between system calls would, rather than spin: a spinning
 * producer would take a core from the consumer whatever the rate.
 */
static void produce(double rate, double until)
{
	double start = now_s(), t, ahead;
	unsigned long n = 0;

	while ((t = now_s()) < until) {
		ahead = rate ? n / rate - (t - start) : 0;
		if (ahead > 0) {
			struct timespec ts = { 0, (long)(ahead * 1e9) };

			nanosleep(&ts, NULL);
			continue;
		}
		for (int i = 0; i < 16; i++)
			syscall(SYS_getppid);
		n += 16 * EVENTS_PER_CALL;
	}
	_exit(0);
}

/* Every map of loadgen is one of the enforcer's (agent.bpf.h): all are shared
 * (enforcer_share_maps), so that identity (the shared section, agent_cgroups), configuration and
 * the ring are agentd's. A map left out would be loadgen's own and empty: its tasks no agent's,
 * and no event made. */
static int producers = 1;

static int step(struct enforcer *e, struct consumer *c, int cg_fd, double rate, __u64 *dropped)
{
	unsigned long before = c->written;
	__u64 drops0 = 0, drops1 = 0;
	double t0, until, cpu = 0, made;
	pid_t pids[MAX_PRODUCERS];
	int i, err;

	enforcer_drops(e, AGENT, &drops0);
	t0 = now_s();
	until = t0 + step_s;
	for (i = 0; i < producers; i++) {
		pids[i] = cgroup_fork_into(cg_fd);
		if (pids[i] == 0)
			produce(rate / producers, until);
	}
	while (now_s() < until + 0.5) {
		err = enforcer_consume(e, 5);
		if (err < 0 && err != -EINTR)
			return err;
		if (c->err || (err = audit_writer_tick(c->w)))
			return c->err ?: err;
	}
	for (i = 0; i < producers; i++) {
		struct rusage ru;

		if (wait4(pids[i], NULL, 0, &ru) == pids[i])
			cpu += ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
			       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	}
	while ((err = enforcer_consume(e, 0)) > 0)
		;
	err = audit_writer_flush(c->w);
	enforcer_drops(e, AGENT, &drops1);
	made = c->written - before + drops1 - drops0;
	/* The producers' CPU (system calls, and the BPF program in them) per event made. */
	printf("BENCH events producers %d offered %s%.0f/s written %.0f/s dropped %llu (%.2f%%) "
	       "producer CPU %.0f ns/event\n",
	       producers, rate ? "" : "max ", rate ? rate : made / step_s,
	       (c->written - before) / (double)step_s, (unsigned long long)(drops1 - drops0),
	       100.0 * (drops1 - drops0) / (made + 1), made ? cpu * 1e9 / made : 0);
	*dropped = drops1 - drops0;
	/* The producers ran their system calls: no event at all is a broken benchmark (the
	 * program found no agent), not a figure. */
	if (!err && !made) {
		fprintf(stderr, "bench_events: no event was made: the producers' tasks are no "
				"agent's to loadgen\n");
		return -ENODATA;
	}
	return err;
}

/* The fixed rates, then a bisection of the first step where loss begins, to 1/16 of it. */
static int sweep(struct enforcer *e, struct consumer *c, int cg_fd)
{
	static const double rates[] = { 250000, 500000, 750000, 1000000, 1500000, 2000000 };
	double lo = 0, hi = 0, mid;
	__u64 dropped;
	size_t i;
	int err;

	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		err = step(e, c, cg_fd, rates[i], &dropped);
		if (err)
			return err;
		if (dropped && !hi)
			hi = rates[i];
		if (!dropped && !hi)
			lo = rates[i];
	}
	if (!hi) {
		printf("BENCH events producers %d no loss up to %.0f/s offered\n", producers, lo);
		return step(e, c, cg_fd, 0, &dropped);
	}
	while (hi - lo > rates[0] / 16) {
		mid = (lo + hi) / 2;
		err = step(e, c, cg_fd, mid, &dropped);
		if (err)
			return err;
		if (dropped)
			hi = mid;
		else
			lo = mid;
	}
	printf("BENCH events producers %d loss begins between %.0f/s (none) and %.0f/s offered\n",
	       producers, lo, hi);
	return step(e, c, cg_fd, 0, &dropped);
}

int main(int argc, char **argv)
{
	struct enforcer_opts eo = { .on_event = on_event,
				    .ring_bytes = ENFORCER_RING_BYTES_DEFAULT };
	struct audit_writer_opts wo = { .host = "bench", .no_append_flag = true };
	char root[PATH_MAX], cg[PATH_MAX + 16], dir[] = "/var/tmp/agentd-bench-XXXXXX";
	struct consumer c = { .off = audit_mono_to_real_ns() };
	struct ruleset rs = { 0 };
	struct loadgen_bpf *skel = NULL;
	struct enforcer *e = NULL;
	int err, cg_fd = -1, failed;
	double sustained = 0;
	__u64 dropped = 0;
	__u32 gen;

	if (argc > 1)
		producers = atoi(argv[1]);
	if (argc > 2)
		wo.segment_bytes = strtoull(argv[2], NULL, 10) << 20;
	if (argc > 3)
		step_s = atof(argv[3]);
	if (argc > 4)
		sustained = atof(argv[4]);
	if (producers < 1 || producers > MAX_PRODUCERS || argc > 5 || step_s < 1 ||
	    (argc > 4 && sustained < 1)) {
		fprintf(stderr,
			"usage: bench_events [PRODUCERS: 1..%d [SEGMENT_MB [SECONDS [RATE]]]]\n"
			"  SECONDS per offered rate (default 4); with RATE, that rate alone\n",
			MAX_PRODUCERS);
		return 2;
	}
	log_init("bench_events", LOG_INFO);
	log_libbpf();
	eo.ctx = &c;
	if (cgroup2_mount(root, sizeof(root)) || !mkdtemp(dir))
		return 1;
	snprintf(cg, sizeof(cg), "%s/bench-events", root);
	if (mkdir(cg, 0755) && errno != EEXIST)
		return 1;
	err = audit_writer_open(&c.w, dir, &wo);
	err = err ?: enforcer_load(&e, &eo);
	err = err ?: rules_apply(e, AGENT, &rs, &gen, &failed);
	err = err ?: enforcer_add_cgroup(e, cg, AGENT);
	if (!err) {
		skel = loadgen_bpf__open();
		err = skel ? enforcer_share_maps(e, skel->obj) : -errno;
		err = err ?: loadgen_bpf__load(skel);
		err = err ?: loadgen_bpf__attach(skel);
	}
	cg_fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!err && sustained)
		err = step(e, &c, cg_fd, sustained, &dropped);
	else if (!err)
		err = sweep(e, &c, cg_fd);
	if (err)
		fprintf(stderr, "bench_events: %s\n", strerror(-err));
	loadgen_bpf__destroy(skel);
	enforcer_destroy(e);
	audit_writer_close(c.w);
	if (cg_fd >= 0)
		close(cg_fd);
	rmdir(cg);
	snprintf(root, sizeof(root), "rm -rf '%s'", dir);
	if (system(root))
		fprintf(stderr, "bench_events: cleanup of %s failed\n", dir);
	return err ? 1 : 0;
}
