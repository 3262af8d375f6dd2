// SPDX-License-Identifier: GPL-2.0
/*
 * What users pay (issue 26): agentd started as a daemon with its whole set of programs, an agent
 * added from a shipped-style policy (policies/base/linux-userland.json and a workspace), and
 * these loops, each run by a fresh exec of this program ("bench_e2e loop NAME OPS"):
 *   open_ws    open()+close() of a workspace file, /tmp/e2e-ws/f
 *   open_ws5   the same 5 levels below the workspace's rule
 *   open_ws17  17 levels below it
 *   open_mnt   a file on a tmpfs mounted at /tmp/e2e-ws/mnt: the walk crosses a mount point
 *   stat       stat() of /tmp/e2e-ws/f
 *   connect    socket(AF_INET, SOCK_DGRAM), connect() to 192.0.2.1:9 (on lo; the policy's
 *              connect rule allows it), close
 *   exec       fork, execv("/bin/busybox", "true"), wait
 * under these conditions, in one boot, interleaved round by round, medians, ratios to none:
 *   none       before agentd starts (and after "agentd --teardown" in later rounds)
 *   floor      agentd stopped; one empty BPF LSM program on each hook on which one of agentd's
 *              programs ran for the loop as a task of no agent (found with BPF stats, below)
 *   outside    agentd running, a task of no agent
 *   inside_cg  agentd running, placed in the agent's cgroup by clone3() (no seccomp filter, no
 *              capability limit): the BPF part of an agent's cost
 *   inside_sc  inside_cg, the loop under a seccomp filter that allows everything (one
 *              instruction): what any filter costs, whatever its layout
 *   inside     agentd running, through "agentctl run" (seccomp filter and all): what an agent pays
 *   inside_alt with -a AGENTCTL: inside, through another build's agentctl (VM_STAGE puts one at
 *              /agentd/extra/NAME): two builds of the layers agentctl run adds, in one boot
 * -r ROUNDS (default 5); -d DIV divides each loop's operations (a quicker, coarser run).
 * First, with kernel.bpf_stats_enabled (BPF_ENABLE_STATS), one pass prints for each loop and
 * agentd condition the programs that ran per operation and their instructions per run ("prof"
 * lines; on the instruction clock a run's ns are its instructions, stats included).
 * Prints "BENCH e2e" lines, the last ones a table of each ratio against its goal. Needs root,
 * BPF LSM and agentd's binaries at /agentd (the VM tier: make bench, selftests/vm/vm.sh).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include "common.h"
#include "kernel/cgroup.h"

#define AGENTD "/agentd/agentd"
#define AGENTCTL "/agentd/agentctl"
#define SELF "/agentd/selftests/bench_e2e"
#define POLICY "/agentd/policies/e2e-bench.json"
#define AGENT "e2e"
#define CONTROL "/run/agentd/e2e.sock"
#define STATE "/tmp/e2e-state"
#define WS "/tmp/e2e-ws"
#define AGENT_CG "/sys/fs/cgroup/agentd/" AGENT
#define MAX_ROUNDS 15
#define MAX_PROGS 256
#define MAX_HOOKS 16

enum loop { OPEN_WS, OPEN_WS5, OPEN_WS17, OPEN_MNT, STAT, CONNECT, EXEC, NLOOP };
enum cond { NONE, FLOOR, OUTSIDE, INSIDE_CG, INSIDE_SC, INSIDE, INSIDE_ALT, NCOND };

static const char *const cond_names[NCOND] = { "none",	    "floor",  "outside",   "inside_cg",
					       "inside_sc", "inside", "inside_alt" };
static const char *alt_agentctl;

static char ws17_dir[200], ws17[256];
static struct sockaddr_in udp_dest;
static char *const exec_argv[] = { "/bin/busybox", "true", NULL };

static struct {
	const char *name;
	int ops;
	bench_op op;
	const void *arg;
	double goal_inside; /* the bound for an agent started by agentctl run */
} loops[NLOOP] = {
	{ "open_ws", 10000, bench_op_open_close, WS "/f", 1.10 },
	{ "open_ws5", 10000, bench_op_open_close, WS "/a/b/c/d/f", 1.10 },
	{ "open_ws17", 10000, bench_op_open_close, ws17, 1.10 },
	{ "open_mnt", 10000, bench_op_open_close, WS "/mnt/f", 1.10 },
	{ "stat", 10000, bench_op_stat, WS "/f", 1.03 },
	{ "connect", 4000, bench_op_connect, &udp_dest, 1.10 },
	{ "exec", 100, bench_op_exec, exec_argv, 1.05 },
};

/* The hooks on which agentd's programs ran for each loop as a task of no agent: vmlinux BTF
 * ids of bpf_lsm_<hook>, what floor attaches an empty program to. */
static struct {
	__u32 btf_id[MAX_HOOKS];
	int n;
} hooks[NLOOP];

static double samples[NLOOP][NCOND][MAX_ROUNDS];
static int rounds = 5;
static pid_t agentd_pid = -1;

static void fixtures_paths(void)
{
	int n = snprintf(ws17_dir, sizeof(ws17_dir), "%s", WS);

	for (int i = 0; i < 16; i++)
		n += snprintf(ws17_dir + n, sizeof(ws17_dir) - n, "/d%d", i);
	snprintf(ws17, sizeof(ws17), "%s/f", ws17_dir);
	udp_dest.sin_family = AF_INET;
	udp_dest.sin_port = htons(9);
	inet_pton(AF_INET, "192.0.2.1", &udp_dest.sin_addr);
}

/* A seccomp filter that allows every call: the cost of having one. */
static int seccomp_allow_all(void)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { .len = 1, .filter = &allow };

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

/* The loop itself, in the process exec'd for it: prints ns per operation. */
static int loop_main(const char *name, int ops, bool filter)
{
	struct timespec a, b;

	fixtures_paths();
	if (filter && seccomp_allow_all()) {
		perror("bench_e2e: seccomp");
		return 1;
	}
	for (int l = 0; l < NLOOP; l++) {
		if (strcmp(loops[l].name, name))
			continue;
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (int i = 0; i < ops; i++)
			if (loops[l].op(loops[l].arg)) {
				fprintf(stderr, "bench_e2e: %s: operation %d: %m\n", name, i);
				return 1;
			}
		clock_gettime(CLOCK_MONOTONIC, &b);
		printf("%.3f\n",
		       ops ? ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / ops : 0);
		return 0;
	}
	fprintf(stderr, "bench_e2e: no loop \"%s\"\n", name);
	return 2;
}

static int sh(const char *cmd)
{
	int status = system(cmd);

	if (status)
		fprintf(stderr, "bench_e2e: \"%s\": status %d\n", cmd, status);
	return status ? -1 : 0;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* The workspace and its files, a tmpfs below it, the address on lo, what the base policy names
 * that the VM's initramfs lacks, and the agent's policy. */
static int fixtures(void)
{
	static const char policy[] =
		"{\n"
		"  \"name\": \"" AGENT "\",\n"
		"  \"extends\": [\"base/linux-userland.json\"],\n"
		"  \"mode\": \"act\",\n"
		"  \"files\": [ { \"path\": \"" WS
		"\", \"rights\": [\"read\", \"write\", \"create\","
		" \"remove\", \"link\", \"truncate\", \"setattr\"] } ],\n"
		"  \"exec\": { \"allow\": [\"/bin/busybox\", \"" SELF "\"] },\n"
		"  \"network\": { \"sockets\": [\"inet\"],\n"
		"    \"connect\": [ { \"cidr\": \"192.0.2.1\", \"ports\": [9], \"protocol\": "
		"\"udp\" } ] }\n"
		"}\n";
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "mkdir -p %s %s/a/b/c/d %s/mnt && touch %s/f %s/a/b/c/d/f",
		 ws17_dir, WS, WS, WS, WS);
	if (sh(cmd) || mount("tmpfs", WS "/mnt", "tmpfs", 0, NULL))
		return -1;
	snprintf(cmd, sizeof(cmd), "touch %s %s/mnt/f", ws17, WS);
	if (sh(cmd) || sh("ip link set lo up && ip addr add 192.0.2.1/32 dev lo"))
		return -1;
	if (sh("mkdir -p /etc/ssl /usr/lib /lib /usr/share /run/agentd && touch /etc/passwd "
	       "/etc/group "
	       "/etc/ld.so.cache"))
		return -1;
	setenv("AGENTD_CONTROL", CONTROL, 1);
	return write_file(POLICY, policy);
}

/* Runs argv (in the cgroup cg_fd when >= 0) with its stdout to a pipe; its first line in out. */
static int run_capture(char *const argv[], int cg_fd, char *out, size_t outsz)
{
	int pipefd[2], status;
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe(pipefd))
		return -1;
	pid = cg_fd >= 0 ? cgroup_fork_into(cg_fd) : fork();
	if (pid == 0) {
		dup2(pipefd[1], 1);
		close(pipefd[0]);
		close(pipefd[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pipefd[1]);
	while (pid > 0 && got < (ssize_t)outsz - 1 &&
	       (n = read(pipefd[0], out + got, outsz - 1 - got)) > 0)
		got += n;
	out[got] = 0;
	close(pipefd[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* One loop under one condition: ns per operation, or -1. */
static double run_loop(int l, enum cond c, int ops)
{
	char n[16], out[256];
	char *loop_argv[] = {
		SELF, "loop", (char *)loops[l].name, n, c == INSIDE_SC ? "seccomp" : NULL, NULL
	};
	char *run_argv[] = { c == INSIDE_ALT ? (char *)alt_agentctl : AGENTCTL,
			     "run",
			     AGENT,
			     "--",
			     SELF,
			     "loop",
			     (char *)loops[l].name,
			     n,
			     NULL };
	int cg_fd = -1, err;

	snprintf(n, sizeof(n), "%d", ops);
	if ((c == INSIDE_CG || c == INSIDE_SC) &&
	    (cg_fd = open(AGENT_CG, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	err = run_capture(c >= INSIDE ? run_argv : loop_argv, cg_fd, out, sizeof(out));
	if (cg_fd >= 0)
		close(cg_fd);
	if (err) {
		printf("FAIL e2e: %s under %s: status %d\n", loops[l].name, cond_names[c], err);
		return -1;
	}
	return atof(out);
}

/* agentd as a daemon, its output drained to /tmp/e2e-agentd.log; returns once it is ready and
 * the agent is added. */
static int agentd_start(void)
{
	static int starts;
	char state[64];
	char *argv[] = { AGENTD, "--control", CONTROL, "--state-dir", state, NULL };
	char *add[] = { AGENTCTL, "agent", "add", AGENT, "--policy", POLICY, NULL };
	char line[512], out[4096];
	int pipefd[2];
	FILE *f;

	/* A state directory per start: the audit log is append-only, and the agent is added anew. */
	snprintf(state, sizeof(state), "%s-%d", STATE, starts++);
	if (pipe(pipefd))
		return -1;
	agentd_pid = fork();
	if (agentd_pid == 0) {
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		close(pipefd[0]);
		close(pipefd[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pipefd[1]);
	f = fdopen(pipefd[0], "r");
	while (f && fgets(line, sizeof(line), f) && !strstr(line, "agentd: ready"))
		fputs(line, stderr);
	if (!f || feof(f)) {
		fprintf(stderr, "bench_e2e: agentd did not get ready\n");
		return -1;
	}
	/* A drainer, so that agentd never blocks on its output. */
	if (fork() == 0) {
		FILE *log = fopen("/tmp/e2e-agentd.log", "a");

		while (fgets(line, sizeof(line), f))
			if (log)
				fputs(line, log);
		_exit(0);
	}
	fclose(f);
	if (run_capture(add, -1, out, sizeof(out))) {
		fprintf(stderr, "bench_e2e: agent add: %s\n", out);
		return -1;
	}
	return 0;
}

/* SIGTERM (enforcement stays, pinned), then --teardown (it ends), and the agent's cgroup
 * removed. */
static int agentd_stop(void)
{
	char *teardown[] = { AGENTD, "--teardown", NULL };
	char out[1024];
	int status;

	if (agentd_pid > 0) {
		kill(agentd_pid, SIGTERM);
		waitpid(agentd_pid, &status, 0);
		agentd_pid = -1;
	}
	while (waitpid(-1, &status, WNOHANG) > 0)
		;
	if (run_capture(teardown, -1, out, sizeof(out)))
		return -1;
	if (rmdir(AGENT_CG)) {
		fprintf(stderr, "bench_e2e: rmdir %s: %m\n", AGENT_CG);
		return -1;
	}
	return 0;
}

struct prog_stat {
	__u32 id, type, btf_id;
	char name[BPF_OBJ_NAME_LEN];
	__u64 cnt, ns;
};

static int prog_stats(struct prog_stat *s, int max)
{
	__u32 id = 0;
	int n = 0;

	while (n < max && !bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
			s[n] = (struct prog_stat){ .id = id,
						   .type = info.type,
						   .btf_id = info.attach_btf_id,
						   .cnt = info.run_cnt,
						   .ns = info.run_time_ns };
			memcpy(s[n].name, info.name, sizeof(s[n].name));
			n++;
		}
		close(fd);
	}
	return n;
}

static const char *hook_name(const struct btf *vmlinux, __u32 btf_id)
{
	const struct btf_type *t = vmlinux ? btf__type_by_id(vmlinux, btf_id) : NULL;
	const char *name = t ? btf__name_by_offset(vmlinux, t->name_off) : NULL;

	if (!name)
		return "?";
	return strncmp(name, "bpf_lsm_", 8) ? name : name + 8;
}

static void add_hook(int l, __u32 btf_id)
{
	for (int i = 0; i < hooks[l].n; i++)
		if (hooks[l].btf_id[i] == btf_id)
			return;
	if (hooks[l].n < MAX_HOOKS)
		hooks[l].btf_id[hooks[l].n++] = btf_id;
}

static struct prog_stat before[MAX_PROGS], mid[MAX_PROGS], after[MAX_PROGS];

/* One loop under one agentd condition with stats on: runs of ops operations and of none (what
 * starting the loop's process costs, subtracted), each program's runs per operation and
 * instructions per run. */
static int profile_loop(const struct btf *vmlinux, int l, enum cond c)
{
	int ops = loops[l].ops / 10, n0, n1, n2;

	n0 = prog_stats(before, MAX_PROGS);
	if (run_loop(l, c, 0) < 0)
		return -1;
	n1 = prog_stats(mid, MAX_PROGS);
	if (run_loop(l, c, ops) < 0)
		return -1;
	n2 = prog_stats(after, MAX_PROGS);
	if (n0 != n1 || n1 != n2)
		return -1;
	for (int i = 0; i < n2; i++) {
		__u64 c0 = mid[i].cnt - before[i].cnt, c1 = after[i].cnt - mid[i].cnt;
		__u64 t0 = mid[i].ns - before[i].ns, t1 = after[i].ns - mid[i].ns;
		double per_op = ((double)c1 - c0) / ops;

		if (c1 <= c0 || per_op < 0.5)
			continue;
		printf("BENCH e2e prof %-9s %-9s %-16s %-22s %5.2f runs/op %6.0f ns/run\n",
		       loops[l].name, cond_names[c], after[i].name,
		       after[i].type == BPF_PROG_TYPE_LSM ? hook_name(vmlinux, after[i].btf_id)
							  : "(not LSM)",
		       per_op, (double)(t1 - t0) / (c1 - c0));
		if (c == OUTSIDE && after[i].type == BPF_PROG_TYPE_LSM)
			add_hook(l, after[i].btf_id);
	}
	return 0;
}

static int profile(void)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME), err = 0;

	if (stats_fd < 0) {
		printf("FAIL e2e: BPF_ENABLE_STATS: %s\n", strerror(-stats_fd));
		btf__free(vmlinux);
		return -1;
	}
	for (int l = 0; l < NLOOP && !err; l++)
		for (enum cond c = OUTSIDE; c <= INSIDE && !err; c++)
			if (c != INSIDE_SC)
				err = profile_loop(vmlinux, l, c);
	close(stats_fd);
	btf__free(vmlinux);
	for (int l = 0; l < NLOOP; l++) {
		printf("BENCH e2e floor %-9s hooks:", loops[l].name);
		for (int i = 0; i < hooks[l].n; i++)
			printf(" %u", hooks[l].btf_id[i]);
		printf("\n");
	}
	return err;
}

/* An empty BPF LSM program (return 0) attached to each of loop l's hooks; links in fds. */
static int floor_attach(int l, int *fds)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int n = 0;

	for (int i = 0; i < hooks[l].n; i++) {
		LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_LSM_MAC,
			    .attach_btf_id = hooks[l].btf_id[i]);
		int prog = bpf_prog_load(BPF_PROG_TYPE_LSM, "e2e_floor", "GPL", insns, 2, &opts);

		if (prog < 0)
			return prog;
		fds[n] = bpf_link_create(prog, 0, BPF_LSM_MAC, NULL);
		close(prog);
		if (fds[n] < 0)
			return fds[n];
		n++;
	}
	return n;
}

static int measure(int r, int l, enum cond c)
{
	int fds[MAX_HOOKS], n = 0;
	double ns;

	if (c == FLOOR && (n = floor_attach(l, fds)) < 0) {
		printf("FAIL e2e: floor of %s: %s\n", loops[l].name, strerror(-n));
		return -1;
	}
	ns = run_loop(l, c, loops[l].ops);
	while (n > 0)
		close(fds[--n]);
	samples[l][c][r] = ns;
	return ns < 0 ? -1 : 0;
}

/* One phase of a round: conditions first..last for every loop, the order rotated by round. */
static int phase(int r, enum cond first, enum cond last)
{
	int k = last - first + 1;

	for (int l = 0; l < NLOOP; l++)
		for (int i = 0; i < k; i++)
			if (measure(r, l, first + (i + r) % k))
				return -1;
	return 0;
}

static double median(int l, enum cond c)
{
	double v[MAX_ROUNDS];

	memcpy(v, samples[l][c], sizeof(double) * rounds);
	qsort(v, rounds, sizeof(double), bench_cmp_double);
	return rounds % 2 ? v[rounds / 2] : (v[rounds / 2 - 1] + v[rounds / 2]) / 2;
}

static void report(void)
{
	printf("BENCH e2e %-9s %10s %6s %7s %9s %9s %6s %10s  %-28s %s\n", "loop", "none", "floor",
	       "outside", "inside_cg", "inside_sc", "inside", "inside_alt",
	       "goal: outside <= floor+0.005", "goal: inside (agentctl run)");
	for (int l = 0; l < NLOOP; l++) {
		double none = median(l, NONE), q[NCOND];

		for (enum cond c = FLOOR; c < NCOND; c++)
			q[c] = median(l, c) / none;
		printf("BENCH e2e %-9s %10.0f %6.3f %7.3f %9.3f %9.3f %6.3f %10.3f  %-3s (%5.3f <= "
		       "%5.3f)%9s %-3s (%5.3f <= %4.2f)\n",
		       loops[l].name, none, q[FLOOR], q[OUTSIDE], q[INSIDE_CG], q[INSIDE_SC],
		       q[INSIDE], alt_agentctl ? q[INSIDE_ALT] : 0,
		       q[OUTSIDE] <= q[FLOOR] + 0.005 ? "met" : "NOT", q[OUTSIDE], q[FLOOR] + 0.005,
		       "", q[INSIDE] <= loops[l].goal_inside ? "met" : "NOT", q[INSIDE],
		       loops[l].goal_inside);
	}
}

static int bench(void)
{
	if (fixtures() || agentd_start() || profile() || agentd_stop()) {
		printf("FAIL e2e: setup or profile (the console has the reason)\n");
		return 1;
	}
	for (int r = 0; r < rounds; r++) {
		bool up_first = r % 2;
		enum cond last = alt_agentctl ? INSIDE_ALT : INSIDE;

		if ((up_first && (agentd_start() || phase(r, OUTSIDE, last) || agentd_stop())) ||
		    phase(r, NONE, FLOOR) ||
		    (!up_first && (agentd_start() || phase(r, OUTSIDE, last) || agentd_stop()))) {
			printf("FAIL e2e: round %d (the console has the reason)\n", r + 1);
			return 1;
		}
		fprintf(stderr, "bench_e2e: round %d of %d\n", r + 1, rounds);
	}
	report();
	return 0;
}

int main(int argc, char **argv)
{
	int opt, div = 1;

	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "loop"))
		return loop_main(argv[2], atoi(argv[3]), argc == 5);
	while ((opt = getopt(argc, argv, "r:d:a:")) != -1) {
		if (opt == 'a')
			alt_agentctl = optarg;
		else if (opt == 'd')
			div = atoi(optarg);
		else if (opt == 'r')
			rounds = atoi(optarg);
		if (opt == '?' || rounds < 1 || rounds > MAX_ROUNDS || div < 1 || div > 100) {
			fprintf(stderr,
				"usage: bench_e2e [-r ROUNDS (1-%d)] [-d DIV (1-100)] [-a "
				"AGENTCTL]\n",
				MAX_ROUNDS);
			return 2;
		}
	}
	for (int l = 0; l < NLOOP; l++)
		loops[l].ops = loops[l].ops / div > 10 ? loops[l].ops / div : 10;
	setvbuf(stdout, NULL, _IOLBF, 0);
	fixtures_paths();
	return bench();
}
