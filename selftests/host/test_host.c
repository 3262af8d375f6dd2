// SPDX-License-Identifier: GPL-2.0
/* Host tier: what the running kernel allows natively, as root. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "audit/audit.h"
#include "kernel/cgroup.h"
#include "kernel/enforcer.h"
#include "audit/loss.h"
#include "harness.h"
#include "kernel/probe.h"
#include "kernel/rules.h"
#include "testlib.h"

static bool bpf_lsm_listed(void)
{
	char list[LSM_LIST_MAX] = "";
	FILE *f = fopen("/sys/kernel/security/lsm", "re");

	if (f) {
		if (!fgets(list, sizeof(list), f))
			list[0] = '\0';
		fclose(f);
	}
	return lsm_list_has(list, "bpf");
}

/* Runs agentd --probe; returns its exit status, the BPF LSM line in line. */
static int agentd_probe(char *line, size_t linesz)
{
	char *argv[] = { "agentd", "--probe", NULL };
	const char *want[] = { "BPF LSM:", NULL };
	struct proc *p = proc_start(argv);
	const char *l;
	int status;

	l = proc_wait_line(p, 20000, want);
	if (!l)
		FAIL("agentd --probe printed no BPF LSM line: \"%s\"", p->buf);
	snprintf(line, linesz, "%s", l);
	status = proc_stop(p, 0);
	if (!WIFEXITED(status))
		FAIL("agentd --probe killed by signal %d", WTERMSIG(status));
	return WEXITSTATUS(status);
}

TEST(probe_verdict_matches_kernel)
{
	char line[256];
	int status = agentd_probe(line, sizeof(line));

	/* securityfs is mounted by agentd --probe itself when absent. */
	if (!bpf_lsm_listed())
		ASSERT_EQ(status, 1);
	if (status == 1)
		ASSERT(strstr(line, "UNAVAILABLE"));
	else if (status == 0)
		ASSERT(strstr(line, "available"));
	else
		FAIL("agentd --probe exited %d", status);
}

/*
 * Never silently unconfined: without BPF LSM, agentd (without --allow-partial) refuses to start,
 * so that no agent's file rule is taken on and left unenforced.
 */
TEST(agentd_refuses_rule_it_cannot_enforce)
{
	const char *ready[] = { "agentd: ready", NULL };
	struct test_daemon d;
	char line[256];
	int status;

	if (agentd_probe(line, sizeof(line)) == 0)
		SKIP("BPF LSM works on this kernel: the kernel tests run natively instead");
	test_daemon_init(&d, "nolsm");
	test_daemon_spawn(&d, NULL);
	if (proc_wait_line(d.agentd, 20000, ready))
		FAIL("agentd claims to enforce BPF LSM rules on a kernel that refuses BPF LSM");
	status = proc_stop(d.agentd, 0);
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 3);
}

static int check_own_cgroup(void *want)
{
	char line[PATH_MAX + 8] = "";
	FILE *f = fopen("/proc/self/cgroup", "re");
	int found = 0;

	if (!f)
		return 2;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3) && !strcmp(line + 3, want))
			found = 1;
	fclose(f);
	return found ? 0 : 1;
}

TEST(child_starts_inside_its_cgroup)
{
	char root[PATH_MAX], cg[PATH_MAX], want[PATH_MAX + 2];
	struct stat st;
	__u64 id;

	ASSERT_EQ(cgroup2_mount(root, sizeof(root)), 0);
	test_cgroup(cg, sizeof(cg));
	snprintf(want, sizeof(want), "%s\n", cg + strlen(root));
	ASSERT_EQ(run_in_cgroup(cg, check_own_cgroup, want, NULL), 0);
	/* And a child of no agent is not in it. */
	ASSERT_EQ(run_in_cgroup(NULL, check_own_cgroup, want, NULL), 1);

	/* The id BPF keys on is the cgroup directory's kernfs id. */
	ASSERT_EQ(cgroup_id(cg, &id), 0);
	ASSERT_OK(stat(cg, &st));
	ASSERT_EQ(id, st.st_ino);
}

/* Sets agent's drop counter (per CPU: all on CPU 0) as the programs would have counted. */
static void set_drops(struct enforcer *e, __u32 agent, __u64 n)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *vals = calloc(ncpu, sizeof(*vals));

	ASSERT(vals);
	vals[0] = n;
	ASSERT_OK(bpf_map_update_elem(enforcer_map_fd(e, "event_drops"), &agent, vals, BPF_ANY));
	free(vals);
}

/* Loss is never silent: each growth of a drop counter becomes one loss record with the delta,
 * naming the agent. */
TEST(drop_counters_become_loss_records)
{
	struct enforcer_opts opts = {};
	static struct loss_tracker t;
	struct audit_writer_opts wo = { .host = "test", .no_append_flag = true };
	struct audit_writer *w = NULL;
	struct enforcer *e = NULL;
	char dir[PATH_MAX], cmd[PATH_MAX + 128], line[256];
	FILE *f;
	int n = 0;

	test_tmpdir(dir, sizeof(dir), "loss");
	ASSERT_EQ(enforcer_load(&e, &opts), 0);
	ASSERT_EQ(audit_writer_open(&w, dir, &wo), 0);
	ASSERT_EQ(loss_check(&t, e, w, 7, "a7"), 0);
	set_drops(e, 7, 5);
	ASSERT_EQ(loss_check(&t, e, w, 7, "a7"), 5);
	ASSERT_EQ(loss_check(&t, e, w, 7, "a7"), 0);
	set_drops(e, 7, 12);
	ASSERT_EQ(loss_check(&t, e, w, 7, "a7"), 7);
	ASSERT_EQ(audit_writer_close(w), 0);
	enforcer_destroy(e);

	snprintf(cmd, sizeof(cmd),
		 "grep -o '\"kind\":\"loss\"[^}]*\"agent_name\":\"a7\"[^}]*\"count\":[0-9]*' "
		 "%s/audit.log",
		 dir);
	f = popen(cmd, "r");
	ASSERT(f);
	while (fgets(line, sizeof(line), f))
		n++;
	pclose(f);
	ASSERT_EQ(n, 2);
}

static void close_fd(void *arg)
{
	close((int)(long)arg);
}

/* An enforcer without pins keeps its cgroup links in a bounded table: detaching a cgroup frees
 * its slots, so attach and detach can alternate past the table's size; the programs hold while
 * attached and not after. */
TEST(cgroup_attach_detach_alternate_without_running_out)
{
	struct enforcer_opts opts = {};
	struct ruleset rs = { 0 };
	struct enforcer *e = NULL;
	char cg[PATH_MAX];
	int fd, i, port, lfd, failed;
	__u32 gen;

	test_cgroup(cg, sizeof(cg));
	ASSERT_EQ(enforcer_load(&e, &opts), 0);
	ASSERT_EQ(rules_apply(e, 9, &rs, &gen, &failed), 0);
	ASSERT_EQ(enforcer_add_cgroup(e, cg, 9), 0);
	fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_OK(fd);
	test_defer(close_fd, (void *)(long)fd);
	lfd = test_loopback_listener(&port);
	test_defer(close_fd, (void *)(long)lfd);
	for (i = 0; i < 40; i++) {
		ASSERT_EQ(enforcer_attach_cgroup(e, fd), 0);
		ASSERT_EQ(enforcer_detach_cgroup(e, fd), 0);
	}
	ASSERT_EQ(enforcer_attach_cgroup(e, fd), 0);
	/* Loopback is structurally denied to an agent: the programs are there. */
	ASSERT_EQ(run_in_cgroup(cg, test_loopback_connect, &port, NULL), EPERM);
	ASSERT_EQ(enforcer_detach_cgroup(e, fd), 0);
	ASSERT_EQ(run_in_cgroup(cg, test_loopback_connect, &port, NULL), 0);
	enforcer_remove_cgroup(e, cg);
	enforcer_destroy(e);
}

/* socket(AF_INET, SOCK_DGRAM), then close: 0 or the errno (a run_in_cgroup() body). */
static int make_udp_socket(void *unused)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	(void)unused;
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/*
 * An agent's configuration (agent_slots, abi.h) through its slot's halves, each generation in
 * force for the kernel's next decision, both halves written twice; and no configuration denying
 * everything.
 */
TEST(agent_configuration_switches_halves)
{
	const struct ruleset udp = { .sock_families = 1ULL << AF_INET,
				     .sock_types = 1U << SOCK_DGRAM },
			     none = { 0 };
	struct agentd_agent_config cfg = { .generation = 7,
					   .sock_families = udp.sock_families,
					   .sock_types = udp.sock_types };
	struct enforcer_opts opts = {};
	struct enforcer *e = NULL;
	char cg[PATH_MAX];
	__u32 id = 12, gen;
	int fd, failed;

	test_cgroup(cg, sizeof(cg));
	ASSERT_EQ(enforcer_load(&e, &opts), 0);
	ASSERT_EQ(enforcer_agent_switch(e, id, &cfg), 0);
	memset(&cfg, 0, sizeof(cfg));
	ASSERT_EQ(enforcer_agent_config(e, id, &cfg), 0);
	ASSERT_EQ(cfg.generation, 7);
	ASSERT_EQ(enforcer_add_cgroup(e, cg, id), 0);
	fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_OK(fd);
	test_defer(close_fd, (void *)(long)fd);
	ASSERT_EQ(enforcer_attach_cgroup(e, fd), 0);
	/* Generation 7 (half 1): UDP sockets allowed. */
	ASSERT_EQ(run_in_cgroup(cg, make_udp_socket, NULL, NULL), 0);
	ASSERT_EQ(rules_apply(e, id, &none, &gen, &failed), 0);
	ASSERT_EQ(gen, 8);
	ASSERT_EQ(run_in_cgroup(cg, make_udp_socket, NULL, NULL), EPERM);
	ASSERT_EQ(rules_apply(e, id, &udp, &gen, &failed), 0);
	ASSERT_EQ(gen, 9);
	ASSERT_EQ(run_in_cgroup(cg, make_udp_socket, NULL, NULL), 0);
	ASSERT_EQ(rules_apply(e, id, &none, &gen, &failed), 0);
	ASSERT_EQ(gen, 10);
	ASSERT_EQ(run_in_cgroup(cg, make_udp_socket, NULL, NULL), EPERM);
	ASSERT_EQ(rules_apply(e, id, &udp, &gen, &failed), 0);
	ASSERT_EQ(run_in_cgroup(cg, make_udp_socket, NULL, NULL), 0);
	/* A switch to the half in force is refused, and changes nothing. */
	ASSERT_EQ(enforcer_agent_config(e, id, &cfg), 0);
	cfg.generation += 2;
	cfg.sock_families = 0;
	ASSERT_EQ(enforcer_agent_switch(e, id, &cfg), -EINVAL);
	ASSERT_EQ(enforcer_agent_config(e, id, &cfg), 0);
	ASSERT_EQ(cfg.generation, 11);
	ASSERT_EQ(run_in_cgroup(cg, make_udp_socket, NULL, NULL), 0);
	/* No configuration: the agent's tasks are denied everything. */
	ASSERT_EQ(rules_remove(e, id), 0);
	ASSERT_EQ(enforcer_agent_config(e, id, &cfg), -ENOENT);
	ASSERT_EQ(run_in_cgroup(cg, make_udp_socket, NULL, NULL), EPERM);
	ASSERT_EQ(enforcer_detach_cgroup(e, fd), 0);
	ASSERT_EQ(run_in_cgroup(cg, make_udp_socket, NULL, NULL), 0);
	enforcer_remove_cgroup(e, cg);
	enforcer_destroy(e);
}

/* How many link descriptors this process holds. */
static int link_fds(void)
{
	char path[PATH_MAX], target[64];
	struct dirent *de;
	ssize_t len;
	int n = 0;
	DIR *d = opendir("/proc/self/fd");

	if (!d)
		FAIL("/proc/self/fd: %s", strerror(errno));
	while ((de = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len > 0) {
			target[len] = '\0';
			n += !strcmp(target, "anon_inode:bpf_link");
		}
	}
	closedir(d);
	return n;
}

/* A link pinned by an earlier agentd runs this build's code, but on a map that is no longer
 * pinned (its pin removed by hand, so this load made it afresh): the link is replaced, not
 * adopted, or it would go on enforcing what agentd no longer writes. And agentd keeps no
 * descriptor of a pinned link (one kept held the replaced link attached). */
TEST(pinned_link_on_other_maps_is_replaced)
{
	const struct ruleset udp = { .sock_families = 1ULL << AF_INET,
				     .sock_types = 1U << SOCK_DGRAM },
			     none = { 0 };
	char cg[PATH_MAX], pins[128], pin[160];
	struct enforcer_opts opts = {};
	struct enforcer *e = NULL;
	__u32 id = 13, gen;
	int fd, failed;

	test_cgroup(cg, sizeof(cg));
	test_pin_dir(pins, sizeof(pins));
	opts.pin_dir = pins;
	fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_OK(fd);
	test_defer(close_fd, (void *)(long)fd);
	ASSERT_EQ(enforcer_load(&e, &opts), 0);
	ASSERT_EQ(rules_apply(e, id, &none, &gen, &failed), 0);
	ASSERT_EQ(enforcer_add_cgroup(e, cg, id), 0);
	ASSERT_EQ(enforcer_attach_cgroup(e, fd), 0);
	/* The pins hold the links; a descriptor kept would hold them past their pins. */
	ASSERT_EQ(link_fds(), 0);
	ASSERT_EQ(run_in_cgroup(cg, make_udp_socket, NULL, NULL), EPERM);
	enforcer_destroy(e);

	snprintf(pin, sizeof(pin), "%s/agent_slots", pins);
	ASSERT_OK(unlink(pin));
	e = NULL;
	ASSERT_EQ(enforcer_load(&e, &opts), 0);
	ASSERT_EQ(rules_apply(e, id, &udp, &gen, &failed), 0);
	ASSERT_EQ(enforcer_attach_cgroup(e, fd), 0);
	ASSERT_EQ(run_in_cgroup(cg, make_udp_socket, NULL, NULL), 0);
	ASSERT_EQ(enforcer_detach_cgroup(e, fd), 0);
	enforcer_remove_cgroup(e, cg);
	enforcer_destroy(e);
}

/* Pins the format marker of format at pins' (enforcer.h): a frozen one-element array. */
static void pin_format(const char *pins, __u32 format)
{
	char pin[160];
	__u32 zero = 0;
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, ENFORCER_PIN_FORMAT_PIN, 4, 4, 1, NULL);

	ASSERT_OK(fd);
	ASSERT_OK(bpf_map_update_elem(fd, &zero, &format, BPF_ANY));
	snprintf(pin, sizeof(pin), "%s/" ENFORCER_PIN_FORMAT_PIN, pins);
	ASSERT_OK(bpf_obj_pin(fd, pin));
	close(fd);
}

/* The value size of the map pinned at pins/name. */
static __u32 pinned_value_size(const char *pins, const char *name)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char pin[160];
	int fd;

	snprintf(pin, sizeof(pin), "%s/%s", pins, name);
	fd = bpf_obj_get(pin);
	ASSERT_OK(fd);
	ASSERT_OK(bpf_obj_get_info_by_fd(fd, &info, &len));
	close(fd);
	return info.value_size;
}

/*
 * Pins agentd cannot reuse: agent_slots of another layout (24-byte configurations), in a
 * directory without a format marker, then with the marker of another format. Each load refuses
 * (-ESTALE, saying to tear down) and changes nothing; teardown clears the directory, and a load
 * there starts afresh and marks it with this format.
 */
TEST(pins_of_another_format_refused_until_teardown)
{
	LIBBPF_OPTS(bpf_map_create_opts, mmapable, .map_flags = BPF_F_MMAPABLE);
	const __u32 old_size = sizeof(struct agentd_agent_slot) - 16;
	struct enforcer_opts opts = {};
	struct enforcer *e = NULL;
	char pins[128], pin[160];
	int fd;

	test_pin_dir(pins, sizeof(pins));
	ASSERT(!mkdir(pins, 0700) || errno == EEXIST);
	snprintf(pin, sizeof(pin), "%s/agent_slots", pins);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "agent_slots", sizeof(__u32), old_size,
			    AGENTD_MAX_AGENTS, &mmapable);
	ASSERT_OK(fd);
	ASSERT_OK(bpf_obj_pin(fd, pin));
	close(fd);
	opts.pin_dir = pins;
	ASSERT_EQ(enforcer_load(&e, &opts), -ESTALE);
	ASSERT(e == NULL);
	ASSERT_EQ(pinned_value_size(pins, "agent_slots"), old_size);
	snprintf(pin, sizeof(pin), "%s/" ENFORCER_PIN_FORMAT_PIN, pins);
	ASSERT(access(pin, F_OK) && errno == ENOENT);

	pin_format(pins, ENFORCER_PIN_FORMAT + 1);
	ASSERT_EQ(enforcer_load(&e, &opts), -ESTALE);
	ASSERT(e == NULL);
	ASSERT_EQ(pinned_value_size(pins, "agent_slots"), old_size);
	snprintf(pin, sizeof(pin), "%s/events", pins);
	ASSERT(access(pin, F_OK) && errno == ENOENT);

	ASSERT_EQ(enforcer_teardown(pins), 0);
	ASSERT(access(pins, F_OK) && errno == ENOENT);
	ASSERT_EQ(enforcer_load(&e, &opts), 0);
	ASSERT_EQ(pinned_value_size(pins, "agent_slots"), sizeof(struct agentd_agent_slot));
	ASSERT_EQ(pinned_value_size(pins, ENFORCER_PIN_FORMAT_PIN), sizeof(__u32));
	enforcer_destroy(e);
	/* Its own pins: reused. */
	ASSERT_EQ(enforcer_load(&e, &opts), 0);
	enforcer_destroy(e);
}

/*
 * A pin directory that is a bpffs mount of its own (as bench_broker and systemd units make
 * them): a kernel with BPF_PRELOAD puts its iterators (maps.debug, progs.debug) in every new
 * bpffs, which are no agentd's pins of another format. agentd loads there, and teardown leaves
 * them.
 */
TEST(pins_on_a_fresh_bpffs_mount_load)
{
	struct enforcer_opts opts = {};
	struct enforcer *e = NULL;
	char dir[64], pins[96], pin[160];

	test_tmpdir(dir, sizeof(dir), "bpffs");
	snprintf(pins, sizeof(pins), "%s/pins", dir);
	ASSERT_OK(mkdir(pins, 0700));
	test_mount_bpffs(pins);
	opts.pin_dir = pins;
	ASSERT_EQ(enforcer_load(&e, &opts), 0);
	enforcer_destroy(e);
	ASSERT_EQ(enforcer_load(&e, &opts), 0);
	enforcer_destroy(e);
	ASSERT_EQ(enforcer_teardown(pins), 0);
	snprintf(pin, sizeof(pin), "%s/" ENFORCER_PIN_FORMAT_PIN, pins);
	ASSERT(access(pin, F_OK) && errno == ENOENT);
}

/* The word of cgroup id's slot of the cgroup index. */
static __u64 index_slot(struct enforcer *e, __u64 id)
{
	return enforcer_shared(e)->cgroup_index[id & (AGENTD_CGROUP_INDEX_SLOTS - 1)];
}

/*
 * The cgroup index (abi.h): a slot names the one agent cgroup with its low bits, says
 * "several" while two share it (a second id 65,536 above), names the one left, and is emptied;
 * the kernel follows each state (a task of the registered cgroup is its agent's through its
 * slot or through agent_cgroups; once the slot names another cgroup, it is no agent's). A
 * restarted enforcer rebuilds the slots from pinned agent_cgroups.
 */
TEST(cgroup_index_names_one_cgroup_or_several_and_is_rebuilt_from_pins)
{
	const struct ruleset none = { 0 };
	struct agentd_agent_levels lv;
	char cg[PATH_MAX], pins[128];
	struct enforcer_opts opts = {};
	struct enforcer *e = NULL;
	__u64 id, other, c;
	__u32 agent = 9, gen;
	int fd, failed;

	test_cgroup(cg, sizeof(cg));
	ASSERT_EQ(cgroup_id(cg, &id), 0);
	other = id + AGENTD_CGROUP_INDEX_SLOTS;
	fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_OK(fd);
	test_defer(close_fd, (void *)(long)fd);
	ASSERT_EQ(enforcer_load(&e, &opts), 0);
	ASSERT_EQ(rules_apply(e, 9, &none, &gen, &failed), 0);
	ASSERT_EQ(enforcer_attach_cgroup(e, fd), 0);
	ASSERT_EQ(index_slot(e, id), 0);
	ASSERT_EQ(run_in_cgroup(cg, make_udp_socket, NULL, NULL), 0);

	ASSERT_EQ(enforcer_add_cgroup(e, cg, 9), 0);
	ASSERT_EQ(index_slot(e, id), agentd_cgroup_index_word(id, 9));
	ASSERT_EQ(run_in_cgroup(cg, make_udp_socket, NULL, NULL), EPERM);
	lv = enforcer_shared(e)->levels;
	ASSERT_EQ(lv.count, 1);
	ASSERT_EQ(enforcer_add_cgroup_id(e, other, lv.level[0], 10), 0);
	ASSERT_EQ(index_slot(e, id), AGENTD_CGROUP_INDEX_SEVERAL);
	ASSERT_EQ(run_in_cgroup(cg, make_udp_socket, NULL, NULL), EPERM);
	ASSERT_EQ(enforcer_remove_cgroup(e, cg), 0);
	ASSERT_EQ(index_slot(e, id), agentd_cgroup_index_word(other, 10));
	ASSERT_EQ(run_in_cgroup(cg, make_udp_socket, NULL, NULL), 0);
	ASSERT_EQ(enforcer_remove_cgroup_id(e, other), 0);
	ASSERT_EQ(index_slot(e, id), 0);
	ASSERT_EQ(run_in_cgroup(cg, make_udp_socket, NULL, NULL), 0);
	ASSERT_EQ(enforcer_detach_cgroup(e, fd), 0);
	enforcer_destroy(e);

	/* An agent cgroup in pinned maps with an empty slot. */
	c = id + 1;
	test_pin_dir(pins, sizeof(pins));
	opts.pin_dir = pins;
	e = NULL;
	ASSERT_EQ(enforcer_load(&e, &opts), 0);
	ASSERT_EQ(bpf_map_update_elem(enforcer_map_fd(e, "agent_cgroups"), &c, &agent, BPF_ANY), 0);
	ASSERT_EQ(index_slot(e, c), 0);
	enforcer_destroy(e);
	e = NULL;
	ASSERT_EQ(enforcer_load(&e, &opts), 0);
	ASSERT_EQ(index_slot(e, c), agentd_cgroup_index_word(c, 9));
	ASSERT_EQ(enforcer_remove_cgroup_id(e, c), 0);
	ASSERT_EQ(index_slot(e, c), 0);
	enforcer_destroy(e);
}

/* The event benchmark measures what it says: its load generator's tasks are an agent's and
 * their events reach the audit log: a benchmark sharing too few maps with the enforcer would
 * find no agent and print 0 events written; it must fail instead. One second at 50,000
 * events/s. */
TEST(bench_events_makes_and_writes_events)
{
	char *argv[] = { "selftests/bench_events", "1", "64", "1", "50000", NULL };
	const char *want[] = { "BENCH events", NULL };
	struct proc *p = proc_start(argv);
	const char *l = proc_wait_line(p, 60000, want), *w;
	int status;

	if (!l)
		FAIL("bench_events printed no result: \"%s\"", p->buf);
	w = strstr(l, " written ");
	ASSERT(w);
	ASSERT(strtod(w + strlen(" written "), NULL) > 0);
	status = proc_stop(p, 0);
	ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
