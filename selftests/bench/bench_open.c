// SPDX-License-Identifier: GPL-2.0
/*
 * The cost of agentd's programs on four loops, each in a forked child placed in a cgroup:
 *   open_close  open()+close() of a tmpfs file (/tmp/bench-target)
 *   stat        stat() of the same file
 *   exec        fork, execv("/bin/busybox", "true"), wait
 *   connect     socket(AF_INET, SOCK_DGRAM), connect() to 127.0.0.1 (an endpoint of the agent's),
 *               close
 * under these conditions, interleaved round by round (rotating which goes first), medians over
 * rounds, ratios against "none" of the same loop:
 *   none          no program attached
 *   outside       agentd's LSM programs attached; the task belongs to no agent (and is not in
 *                 the agent's cgroup, where agentd's cgroup-BPF programs stay attached: the
 *                 enforcer attaches them once, as agentd does)
 *   inside        attached; an agent's task; 12 rules ("/" all rights, /bin read and exec, 10
 *                 denies on other files); the walk from the target crosses /tmp's mount to "/"
 *   outside_old   outside, plus the inode_permission guard agentd had before (lsmcg.bpf.c): what
 *   inside_old    self-protection cost before it moved into once-per-operation hooks
 * and for open_close only:
 *   inside_100k   inside, with 100,000 more rules in the map (O(1) in rule count?)
 *   inside_deep   inside, the target 32 directories deeper (cost per level)
 *   inside_near   inside, with a rule on the target itself: the walk decides at its first
 *                 step (what an agent's open costs before any climbing)
 *   inside_ws     inside, the target two directories below a rule on its workspace
 *                 (/tmp/bench-ws/src/main.c, the rule on /tmp/bench-ws): an agent at work in
 *                 the tree its policy grants, the walk deciding in the target's own mount
 *   none_ws       none, on inside_ws's target (its path is longer: the kernel's own lookup
 *                 costs more), inside_ws's ratio is also given against it
 * and, for all four loops:
 *   floor         none of agentd's programs, one that returns at once on file_open
 *                 (lsmcg.bpf.c): what any BPF LSM program there costs before deciding anything
 * and for open_close only:
 *   floor_helper  floor, with the one kernel helper call agentd's identity check makes per
 *                 agent level (lsmcg.bpf.c): outside's cost split into the kernel's and agentd's
 * Prints "BENCH" lines. Needs root and BPF LSM (the VM tier runs it: make bench).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kernel/cgroup.h"
#include "common.h"
#include "kernel/enforcer.h"
#include "log.h"
#include "lsmcg.skel.h"
#include "kernel/rules.h"
#include "kernel/ruletab.h"

#define MAX_ROUNDS 31
#define RULES 10
#define BIG 100000
#define DEEP 32
#define AGENT 1

enum loop { OPEN_CLOSE, STAT, EXEC, CONNECT, NLOOP };

static const struct {
	const char *name;
	int ops;
} loops[NLOOP] = {
	{ "open_close", 20000 },
	{ "stat", 20000 },
	{ "exec", 200 },
	{ "connect", 5000 },
};

#define ALL_LOOPS ((1U << NLOOP) - 1)

struct cond {
	const char *name;
	bool attach, agent, big, deep, old, empty, helper, near, ws;
	unsigned loops; /* bit n: loop n is measured */
	double samples[NLOOP][MAX_ROUNDS];
	bool skip; /* not chosen (-c) */
};

static struct cond conds[] = {
	{ .name = "none", .loops = ALL_LOOPS },
	{ .name = "outside", .attach = true, .loops = ALL_LOOPS },
	{ .name = "inside", .attach = true, .agent = true, .loops = ALL_LOOPS },
	{ .name = "outside_old", .attach = true, .old = true, .loops = ALL_LOOPS },
	{ .name = "inside_old", .attach = true, .agent = true, .old = true, .loops = ALL_LOOPS },
	{ .name = "inside_100k", .attach = true, .agent = true, .big = true, .loops = 1 },
	{ .name = "inside_deep", .attach = true, .agent = true, .deep = true, .loops = 1 },
	{ .name = "floor", .empty = true, .loops = ALL_LOOPS },
	{ .name = "inside_near", .attach = true, .agent = true, .near = true, .loops = 1 },
	{ .name = "inside_ws", .attach = true, .agent = true, .ws = true, .loops = 1 },
	{ .name = "none_ws", .ws = true, .loops = 1 },
	{ .name = "floor_helper", .empty = true, .helper = true, .loops = 1 },
};
#define NCOND (sizeof(conds) / sizeof(conds[0]))
enum { NONE, INSIDE = 2, INSIDE_100K = 5, INSIDE_DEEP = 6, INSIDE_NEAR = 8, INSIDE_WS, NONE_WS };

static int rounds = 15;
static unsigned chosen_loops = ALL_LOOPS;

struct bench {
	struct enforcer *e;
	struct lsmcg_bpf *old;
	struct bpf_link *old_link;
	const struct cond *attached; /* the condition whose programs are attached; NULL: unknown */
	int cg_fd[2]; /* plain, agent */
	char shallow[64], deep[PATH_MAX], ws_target[64];
	struct sockaddr_in udp;
	int udp_fd;
	__u32 gen;
	struct agentd_file_key *big_keys;
	struct agentd_file_rule *big_rules;
	struct agentd_file_key near_key, ws_key;
};

#define WS_DIR "/tmp/bench-ws"

static char *const exec_argv[] = { "/bin/busybox", "true", NULL };

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
	snprintf(b->ws_target, sizeof(b->ws_target), WS_DIR "/src/main.c");
	if ((mkdir(WS_DIR, 0755) && errno != EEXIST) ||
	    (mkdir(WS_DIR "/src", 0755) && errno != EEXIST))
		return -errno;
	strcpy(b->deep, "/tmp");
	for (i = 0; i < DEEP; i++) {
		n = strlen(b->deep);
		snprintf(b->deep + n, sizeof(b->deep) - n, "/d");
		if (mkdir(b->deep, 0755) && errno != EEXIST)
			return -errno;
	}
	n = strlen(b->deep);
	snprintf(b->deep + n, sizeof(b->deep) - n, "/target");
	return touch(b->shallow) ?: touch(b->deep) ?: touch(b->ws_target);
}

/* The guest's loopback comes up down. */
static int lo_up(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		err = -errno;
	ifr.ifr_flags |= IFF_UP;
	if (!err && ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		err = -errno;
	close(fd);
	return err;
}

/* A UDP socket on 127.0.0.1 made the agent's endpoint: the agent may connect to it. */
static int setup_udp(struct bench *b)
{
	socklen_t len = sizeof(b->udp);
	__u8 addr[16] = { [10] = 0xff, [11] = 0xff, [12] = 127, [15] = 1 };
	int err = lo_up();

	if (err)
		return err;
	b->udp = (struct sockaddr_in){ .sin_family = AF_INET,
				       .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	b->udp_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (b->udp_fd < 0 || bind(b->udp_fd, (struct sockaddr *)&b->udp, sizeof(b->udp)) ||
	    getsockname(b->udp_fd, (struct sockaddr *)&b->udp, &len))
		return -errno;
	return enforcer_add_endpoint(b->e, AGENT, addr, ntohs(b->udp.sin_port), AGENTD_PROTO_UDP);
}

static int setup_rules(struct bench *b, const char *agent_cg)
{
	static char paths[RULES][64];
	struct file_rule files[RULES + 2] = {
		{ "/", AGENTD_RIGHTS_ALL },
		{ "/bin", AGENTD_RIGHT_READ | AGENTD_RIGHT_EXEC },
	};
	struct ruleset rs = { .files = files,
			      .nfiles = RULES + 2,
			      .sock_families = 1ULL << AF_INET,
			      .sock_types = 1U << SOCK_DGRAM };
	int i, err, failed;

	for (i = 0; i < RULES; i++) {
		snprintf(paths[i], sizeof(paths[i]), "/tmp/bench-denied-%d", i);
		err = touch(paths[i]);
		if (err)
			return err;
		files[i + 2] = (struct file_rule){ paths[i], 0 };
	}
	err = rules_apply(b->e, AGENT, &rs, &b->gen, &failed);
	err = err ?: enforcer_add_cgroup(b->e, agent_cg, AGENT);
	return err ?: enforcer_attach_cgroup(b->e, b->cg_fd[1]);
}

/* 100,000 rules on objects that do not exist (device 0xfffff): only the map's size changes. */
static int big_rules(struct bench *b, bool add)
{
	struct agentd_rule_bucket *t = enforcer_rules(b->e);
	__u32 i;
	int err;

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
	if (!t)
		return -ENOENT;
	/* Their bits in the object filter too, as agentd sets them (their share of its bits
	 * is part of what 100,000 rules cost). No task of the benchmark runs meanwhile. */
	for (i = 0; i < BIG; i++) {
		if (add) {
			enforcer_object_filter_add(b->e, b->big_keys[i].dev, b->big_keys[i].ino);
			err = ruletab_put(t, &b->big_keys[i], &b->big_rules[i]);
			if (err)
				return err;
		} else {
			ruletab_remove(t, &b->big_keys[i]);
		}
	}
	return add ? 0 : enforcer_object_filter_rebuild(b->e);
}

/* A rule with all rights on the object at path, in the agent's generation (key: its cache). */
static int extra_rule(struct bench *b, const char *path, struct agentd_file_key *key, bool add)
{
	struct agentd_rule_bucket *t = enforcer_rules(b->e);
	struct agentd_file_rule rule = { 99, AGENTD_RIGHTS_ALL };
	struct stat st;

	if (!key->ino) {
		if (stat(path, &st))
			return -errno;
		*key = (struct agentd_file_key){ AGENT, b->gen, kernel_dev(st.st_dev), st.st_ino };
	}
	if (!t)
		return -ENOENT;
	if (!add) {
		ruletab_remove(t, key);
		return enforcer_object_filter_rebuild(b->e);
	}
	enforcer_object_filter_add(b->e, key->dev, key->ino);
	return ruletab_put(t, key, &rule);
}

/*
 * The loops' tasks stand for an agent's, and an agent's task is never a fork of agentd (agentctl
 * run starts it; attach takes it as it is): without this, each fork of the exec loop would copy a
 * page-table entry for each of the rule table's 4,096 pages, which the kernel maps one by one
 * (on 6.1 it nearly doubled the loop's instructions, docs/PERFORMANCE.md).
 */
static int table_not_inherited(struct bench *b)
{
	void *t = enforcer_rules(b->e);

	return t && madvise(t, RULETAB_BYTES, MADV_DONTFORK) ? -errno : 0;
}

static void detach(struct bench *b)
{
	enforcer_detach_lsm(b->e);
	bpf_link__destroy(b->old_link);
	b->old_link = NULL;
	b->attached = NULL;
}

/* Whether conditions x and y run the same programs. */
static bool same_programs(const struct cond *x, const struct cond *y)
{
	return x->attach == y->attach && x->empty == y->empty && x->helper == y->helper &&
	       x->old == y->old;
}

/* c's programs, attached; left as they are when the condition before ran the same ones (an
 * attachment waits for RCU grace periods, seconds under emulation, between conditions that
 * would otherwise run back to back). */
static int attach(struct bench *b, const struct cond *c)
{
	int err;

	if (b->attached && same_programs(b->attached, c))
		return 0;
	detach(b);
	if (c->empty) {
		b->old_link = bpf_program__attach_lsm(c->helper ? b->old->progs.ident_file_open
								: b->old->progs.empty_file_open);
		if (!b->old_link)
			return -errno;
	} else if (c->attach) {
		err = enforcer_attach_lsm(b->e);
		if (err)
			return err;
		if (c->old) {
			b->old_link = bpf_program__attach_lsm(b->old->progs.old_inode_permission);
			if (!b->old_link)
				return -errno;
		}
	}
	b->attached = c;
	return 0;
}

static double measure(struct bench *b, const struct cond *c, enum loop l)
{
	const char *target = c->deep ? b->deep : c->ws ? b->ws_target : b->shallow;
	int fd = b->cg_fd[c->agent], ops = loops[l].ops;

	switch (l) {
	case OPEN_CLOSE:
		return bench_run(fd, bench_op_open_close, target, ops);
	case STAT:
		return bench_run(fd, bench_op_stat, target, ops);
	case EXEC:
		return bench_run(fd, bench_op_exec, exec_argv, ops);
	default:
		return bench_run(fd, bench_op_connect, &b->udp, ops);
	}
}

/* A condition's programs and extra rules in place (on), or its extra rules gone (off; the
 * programs stay until the next condition's attach). */
static int cond_setup(struct bench *b, const struct cond *c, bool on)
{
	int err = on ? attach(b, c) : 0;

	if (!err && c->big)
		err = big_rules(b, on);
	if (!err && c->near)
		err = extra_rule(b, b->shallow, &b->near_key, on);
	if (!err && c->ws)
		err = extra_rule(b, WS_DIR, &b->ws_key, on);
	return err;
}

/* One condition in one round: attached once, then its loops, rotating which goes first. */
static int measure_cond(struct bench *b, struct cond *c, int round)
{
	int err = cond_setup(b, c, true), i;
	enum loop l;

	for (i = 0; !err && i < NLOOP; i++) {
		l = (round + i) % NLOOP;
		if (!(c->loops & chosen_loops & (1U << l)))
			continue;
		c->samples[l][round] = measure(b, c, l);
		if (c->samples[l][round] < 0) {
			fprintf(stderr, "bench_open: %s %s failed\n", loops[l].name, c->name);
			err = -EIO;
		}
	}
	if (c->big || c->near || c->ws) {
		int e = cond_setup(b, c, false);

		err = err ?: e;
	}
	return err;
}

/* Run time and count, summed, of the loaded programs called name (BPF stats must be on). */
static void prog_stats(const char *name, __u64 *ns, __u64 *cnt)
{
	struct bpf_prog_info info;
	__u32 id = 0, len;
	int fd;

	*ns = *cnt = 0;
	while (!bpf_prog_get_next_id(id, &id)) {
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && !strcmp(info.name, name)) {
			*ns += info.run_time_ns;
			*cnt += info.run_cnt;
		}
		close(fd);
	}
}

static double median(double *samples);

/*
 * With -s, after the rounds: the file_open program's own time per call in each condition, from
 * the kernel's BPF statistics (run time without the trampoline's entry and exit; the
 * statistics add two clock reads per call, so they are kept out of the rounds), as many rounds
 * again, interleaved the same way; medians.
 */
static int prog_time(struct bench *b)
{
	static double samples[NCOND][MAX_ROUNDS], med[NCOND];
	int stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME), err = 0, r;
	__u64 ns0, cnt0, ns1, cnt1;
	const char *name;
	struct cond *c;
	size_t i;

	if (stats_fd < 0)
		return -errno;
	for (r = 0; !err && r < rounds; r++) {
		for (i = 0; !err && i < NCOND; i++) {
			c = &conds[(r + i) % NCOND];
			if (c->skip || (!c->attach && !c->empty))
				continue;
			name = c->helper  ? "ident_file_open"
			       : c->empty ? "empty_file_open"
					  : "file_open";
			err = cond_setup(b, c, true);
			if (err)
				break;
			prog_stats(name, &ns0, &cnt0);
			if (measure(b, c, OPEN_CLOSE) < 0)
				err = -EIO;
			prog_stats(name, &ns1, &cnt1);
			err = err ?: cond_setup(b, c, false);
			if (!err && cnt1 <= cnt0)
				err = -ENODATA;
			if (!err)
				samples[c - conds][r] = (double)(ns1 - ns0) / (double)(cnt1 - cnt0);
		}
	}
	detach(b);
	close(stats_fd);
	for (i = 0; !err && i < NCOND; i++) {
		c = &conds[i];
		if (c->skip || (!c->attach && !c->empty))
			continue;
		med[i] = median(samples[i]); /* sorts them */
		printf("BENCH open_close_%s_file_open_prog_ns %.1f (p25 %.1f, p75 %.1f)\n", c->name,
		       med[i], samples[i][rounds / 4], samples[i][3 * rounds / 4]);
	}
	/* The walk's own cost per level: the program's, without the kernel's lookup. */
	if (!err && !conds[INSIDE].skip && !conds[INSIDE_DEEP].skip)
		printf("BENCH open_close_per_level_prog_ns %.1f\n",
		       (med[INSIDE_DEEP] - med[INSIDE]) / DEEP);
	return err;
}

static double median(double *samples)
{
	qsort(samples, rounds, sizeof(double), bench_cmp_double);
	return samples[rounds / 2];
}

static void report(void)
{
	double med[NCOND][NLOOP];
	size_t c;
	int l;

	for (l = 0; l < NLOOP; l++) {
		for (c = 0; c < NCOND; c++) {
			if (conds[c].skip || !(conds[c].loops & chosen_loops & (1U << l)))
				continue;
			med[c][l] = median(conds[c].samples[l]);
			/* The samples are sorted now; "none" came first. The fastest round of each
			 * condition too: emulation's noise only ever adds time, and comes in modes. */
			printf("BENCH %s_%s_ns %.1f (p25 %.1f, p75 %.1f) ratio %.3f, fastest %.1f "
			       "ratio %.3f\n",
			       loops[l].name, conds[c].name, med[c][l],
			       conds[c].samples[l][rounds / 4], conds[c].samples[l][3 * rounds / 4],
			       med[c][l] / med[NONE][l], conds[c].samples[l][0],
			       conds[c].samples[l][0] / conds[NONE].samples[l][0]);
		}
	}
	if (!(chosen_loops & (1U << OPEN_CLOSE)))
		goto out;
	if (!conds[INSIDE_WS].skip && !conds[NONE_WS].skip)
		printf("BENCH open_close_inside_ws_vs_none_ws_ratio %.3f\n",
		       med[INSIDE_WS][OPEN_CLOSE] / med[NONE_WS][OPEN_CLOSE]);
	if (conds[INSIDE].skip)
		goto out;
	if (!conds[INSIDE_100K].skip)
		printf("BENCH open_close_100k_vs_12_rules_ratio %.3f\n",
		       med[INSIDE_100K][OPEN_CLOSE] / med[INSIDE][OPEN_CLOSE]);
	/* By the loop: the kernel's own lookup of the 32 more components is in it too. */
	if (!conds[INSIDE_DEEP].skip)
		printf("BENCH open_close_per_level_ns %.1f\n",
		       (med[INSIDE_DEEP][OPEN_CLOSE] - med[INSIDE][OPEN_CLOSE]) / DEEP);
	if (!conds[INSIDE_NEAR].skip)
		printf("BENCH open_close_climb_to_root_ns %.1f\n",
		       med[INSIDE][OPEN_CLOSE] - med[INSIDE_NEAR][OPEN_CLOSE]);
out:
	printf("BENCH rounds %d ops_per_round open_close %d stat %d exec %d connect %d\n", rounds,
	       loops[OPEN_CLOSE].ops, loops[STAT].ops, loops[EXEC].ops, loops[CONNECT].ops);
}

static int run(struct bench *b)
{
	size_t i;
	int r, err;

	for (r = 0; r < rounds; r++) {
		for (i = 0; i < NCOND; i++) {
			if (conds[(r + i) % NCOND].skip)
				continue;
			err = measure_cond(b, &conds[(r + i) % NCOND], r);
			if (err)
				return err;
		}
	}
	detach(b);
	report();
	return 0;
}

static int choose_conds(char *list)
{
	char *name, *save = NULL;
	size_t i;

	for (i = 0; i < NCOND; i++)
		conds[i].skip = true;
	for (name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < NCOND && strcmp(conds[i].name, name); i++)
			;
		if (i == NCOND) {
			fprintf(stderr, "bench_open: -c: no condition \"%s\"\n", name);
			return -1;
		}
		conds[i].skip = false;
	}
	if (conds[NONE].skip) {
		fprintf(stderr, "bench_open: -c: the ratios need \"none\"\n");
		return -1;
	}
	return 0;
}

static int choose_loops(char *list)
{
	char *name, *save = NULL;
	int l;

	chosen_loops = 0;
	for (name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		for (l = 0; l < NLOOP && strcmp(loops[l].name, name); l++)
			;
		if (l == NLOOP) {
			fprintf(stderr, "bench_open: -l: no loop \"%s\"\n", name);
			return -1;
		}
		chosen_loops |= 1U << l;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: bench_open [-r ROUNDS] [-c COND,...] [-l LOOP,...] [-s] [-v]\n"
		"  -r  rounds, 1 to %d (default 15)\n"
		"  -c  conditions to measure (default all; \"none\" is required)\n"
		"  -l  loops: open_close, stat, exec, connect (default all)\n"
		"  -s  then the file_open program's own time per call, from BPF statistics\n"
		"  -v  libbpf's messages (the verifier's log of a refused program)\n",
		MAX_ROUNDS);
}

int main(int argc, char **argv)
{
	struct enforcer_opts opts = { .lsm = true };
	struct bench b = { .cg_fd = { -1, -1 }, .udp_fd = -1 };
	char root[PATH_MAX];
	enum log_level level = LOG_INFO;
	bool stats = false;
	int err, opt;

	while ((opt = getopt(argc, argv, "r:c:l:sv")) != -1) {
		switch (opt) {
		case 'r':
			rounds = atoi(optarg);
			if (rounds < 1 || rounds > MAX_ROUNDS) {
				usage();
				return 2;
			}
			break;
		case 'c':
			if (choose_conds(optarg))
				return 2;
			break;
		case 'l':
			if (choose_loops(optarg))
				return 2;
			break;
		case 's':
			stats = true;
			break;
		case 'v':
			level = LOG_DEBUG;
			break;
		default:
			usage();
			return 2;
		}
	}
	if (optind != argc) {
		usage();
		return 2;
	}
	log_init("bench_open", level);
	log_libbpf();
	err = cgroup2_mount(root, sizeof(root));
	if (err) {
		fprintf(stderr, "bench_open: no cgroup v2 mount\n");
		return 1;
	}
	b.cg_fd[0] = bench_cgroup(root, "bench-plain");
	b.cg_fd[1] = bench_cgroup(root, "bench-agent");
	err = b.cg_fd[0] < 0 ? b.cg_fd[0] : b.cg_fd[1] < 0 ? b.cg_fd[1] : setup_files(&b);
	err = err ?: enforcer_load(&b.e, &opts);
	err = err ?: table_not_inherited(&b);
	err = err ?: bench_lsmcg_load(b.e, &b.old);
	err = err ?: setup_udp(&b);
	if (!err) {
		snprintf(root + strlen(root), sizeof(root) - strlen(root), "/bench-agent");
		err = setup_rules(&b, root);
	}
	err = err ?: run(&b);
	if (!err && stats)
		err = prog_time(&b);
	if (err)
		fprintf(stderr, "bench_open: %s\n", strerror(-err));
	if (b.e)
		detach(&b);
	if (b.udp_fd >= 0)
		close(b.udp_fd);
	lsmcg_bpf__destroy(b.old);
	enforcer_destroy(b.e);
	free(b.big_keys);
	free(b.big_rules);
	return err ? 1 : 0;
}
