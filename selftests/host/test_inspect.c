// SPDX-License-Identifier: GPL-2.0
/*
 * Host tier: agentctl inspect on this kernel (no BPF LSM; cgroup-BPF holds). A launched agent's
 * map is whole (exit 0); an attached process shows the layers it lacks; one attached while it
 * held a descriptor to a file outside its rights is a finding (exit 1); a network rule deleted
 * from net_rules and a cgroup link detached behind agentd's back make observed differ from
 * declared (exit 1). Everything is removed on every exit (test_daemon).
 */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <jansson.h>
#include "agentd/abi.h"
#include "harness.h"
#include "kernel/cgroup.h"
#include "testlib.h"

struct env {
	struct test_daemon d;
	char policy[PATH_MAX], secret[PATH_MAX];
};

static struct env *setup(void)
{
	static struct env e;
	char text[PATH_MAX + 512];

	test_daemon_init(&e.d, "insp");
	snprintf(e.policy, sizeof(e.policy), "%s/policy.json", e.d.dir);
	snprintf(e.secret, sizeof(e.secret), "%s/secret", e.d.dir);
	test_write(e.secret, "hush\n", 0644);
	snprintf(text, sizeof(text),
		 "{\"name\": \"t\", \"files\": [{\"path\": \"/\", \"rights\": [\"read\", "
		 "\"exec\"]}, {\"path\": \"%s\", \"rights\": []}],"
		 " \"network\": {\"sockets\": [\"inet\", \"unix\"], \"connect\": [{\"cidr\": "
		 "\"10.0.0.0/8\", \"ports\": [443]}]}}\n",
		 e.secret);
	test_write(e.policy, text, 0644);
	test_daemon_start(&e.d, "--allow-partial", NULL);
	return &e;
}

/* agentctl inspect NAME --json: its exit status, and the inspection in *in. */
static int inspect(const char *name, json_t **in)
{
	static char out[1 << 20];
	json_error_t jerr;
	json_t *doc;
	int status = agentctl_run(out, sizeof(out), "inspect", name, "--json", NULL);

	doc = json_loads(out, 0, &jerr);
	if (!doc)
		FAIL("inspect %s: exit %d, not JSON: %s", name, status, out);
	*in = json_incref(json_object_get(doc, "inspect"));
	json_decref(doc);
	if (!*in)
		FAIL("inspect %s: exit %d: %s", name, status, out);
	return status;
}

static const json_t *row(const json_t *rows, const char *boundary)
{
	const json_t *r;
	size_t i;

	json_array_foreach(rows, i, r)
	{
		if (!strcmp(json_string_value(json_object_get(r, "boundary")), boundary))
			return r;
	}
	FAIL("no row %s", boundary);
	return NULL;
}

static bool matches(const json_t *in, const char *boundary)
{
	return json_is_true(
		json_object_get(row(json_object_get(in, "boundaries"), boundary), "match"));
}

/* Whether a finding of that severity and boundary names needle. */
static bool finding(const json_t *in, const char *severity, const char *boundary,
		    const char *needle)
{
	const json_t *f;
	size_t i;

	json_array_foreach(json_object_get(in, "findings"), i, f)
	{
		if (!strcmp(json_string_value(json_object_get(f, "severity")), severity) &&
		    !strcmp(json_string_value(json_object_get(f, "boundary")), boundary) &&
		    strstr(json_string_value(json_object_get(f, "seen")), needle))
			return true;
	}
	return false;
}

/* Waits until the cgroup has a process: cgroup.events signals POLLPRI on every change. */
static void wait_populated(const char *cg)
{
	char path[PATH_MAX + 16], buf[256];
	struct pollfd pfd = { .events = POLLPRI };
	ssize_t n;

	snprintf(path, sizeof(path), "%s/cgroup.events", cg);
	pfd.fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_OK(pfd.fd);
	for (;;) {
		n = pread(pfd.fd, buf, sizeof(buf) - 1, 0);
		ASSERT(n > 0);
		buf[n] = '\0';
		if (strstr(buf, "populated 1"))
			break;
		ASSERT_EQ(poll(&pfd, 1, TEST_READY_MS), 1);
	}
	close(pfd.fd);
}

static void kill_pid(void *arg)
{
	kill((pid_t)(long)arg, SIGKILL);
}

/* A process outside every agent that holds the secret open (when hold) and has dropped to
 * nobody, with no capability left; it waits to be killed. */
static pid_t holder_of(const char *secret, bool hold, int children)
{
	char other[PATH_MAX], procs[PATH_MAX + 16], pid_s[16];
	int ready[2], fd;
	pid_t pid;
	char c;

	test_cgroup(other, sizeof(other));
	ASSERT_OK(pipe(ready));
	pid = fork();
	ASSERT_OK(pid);
	if (!pid) {
		fd = hold ? open(secret, O_RDONLY) : 0;
		if (fd < 0 || setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(1);
		/* Children that inherit the descriptor and die with their parent. */
		while (children-- > 0)
			if (!fork()) {
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				pause();
				_exit(0);
			}
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	test_defer(kill_pid, (void *)(long)pid);
	close(ready[1]);
	ASSERT_EQ(read(ready[0], &c, 1), 1);
	close(ready[0]);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", other);
	snprintf(pid_s, sizeof(pid_s), "%d", pid);
	test_write(procs, pid_s, 0644);
	return pid;
}

static pid_t holder(const char *secret, bool hold)
{
	return holder_of(secret, hold, 0);
}

static void attach(const char *name, pid_t pid)
{
	char out[8192], pid_s[16];

	snprintf(pid_s, sizeof(pid_s), "%d", pid);
	if (agentctl_run(out, sizeof(out), "attach", name, "--pid", pid_s, "--allow-partial", NULL))
		FAIL("attach %s --pid %s: %s", name, pid_s, out);
}

TEST(inspect_launched_agent_declared_equals_observed)
{
	struct env *e = setup();
	char cg[PATH_MAX], out[65536];
	const json_t *p;
	json_t *in;

	test_daemon_add(&e->d, "t-run", e->policy, cg, sizeof(cg));
	proc_start((char *[]){ "agentctl", "run", "t-run", "--", "sleep", "600", NULL });
	wait_populated(cg);
	ASSERT_EQ(inspect("t-run", &in), 0);
	ASSERT(json_is_true(json_object_get(in, "consistent")));
	ASSERT_EQ(json_integer_value(json_object_get(in, "processes_total")), 1);
	p = json_array_get(json_object_get(in, "processes"), 0);
	ASSERT_STREQ(json_string_value(json_object_get(p, "origin")), "launched");
	ASSERT(matches(in, "egress") && matches(in, "cgroup") && matches(in, "sockets"));
	/* What this kernel lacks is said, below the default severity. */
	ASSERT(finding(in, "medium", "files", "this kernel runs no BPF LSM"));
	ASSERT(strstr(json_string_value(json_object_get(
			      row(json_object_get(p, "boundaries"), "files"), "observed")),
		      "Landlock yes, inferred"));
	json_decref(in);
	/* Human output: the table, then exit 0; and status says declared == observed. */
	ASSERT_EQ(agentctl_run(out, sizeof(out), "inspect", "t-run", NULL), 0);
	ASSERT(strstr(out, "declared == observed") && strstr(out, "egress        ok"));
	ASSERT_EQ(agentctl_run(out, sizeof(out), "status", NULL), 0);
	ASSERT(strstr(out, "declared == observed, never drilled"));
	/* Medium findings fail a stricter bar. */
	ASSERT_EQ(agentctl_run(out, sizeof(out), "inspect", "t-run", "--fail-on", "medium", NULL),
		  1);
}

TEST(inspect_attached_process_shows_the_layers_it_lacks)
{
	struct env *e = setup();
	const json_t *p, *files;
	json_t *in;
	pid_t pid;

	test_daemon_add(&e->d, "t-att", e->policy, NULL, 0);
	pid = holder(e->secret, false);
	attach("t-att", pid);
	ASSERT_EQ(inspect("t-att", &in), 0);
	p = json_array_get(json_object_get(in, "processes"), 0);
	ASSERT_EQ(json_integer_value(json_object_get(p, "pid")), pid);
	ASSERT_STREQ(json_string_value(json_object_get(p, "origin")), "attached");
	files = row(json_object_get(p, "boundaries"), "files");
	ASSERT(strstr(json_string_value(json_object_get(files, "observed")),
		      "Landlock no: attached"));
	ASSERT(strstr(json_string_value(json_object_get(
			      row(json_object_get(p, "boundaries"), "self"), "observed")),
		      "Seccomp 0, NoNewPrivs 0"));
	ASSERT(finding(in, "medium", "ipc", "this kernel runs no BPF LSM"));
	ASSERT(!finding(in, "high", "files", "holds descriptor"));
	json_decref(in);
}

TEST(inspect_finds_a_descriptor_held_from_before_the_attach)
{
	struct env *e = setup();
	char needle[PATH_MAX + 64];
	json_t *in;
	pid_t pid;

	test_daemon_add(&e->d, "t-fd", e->policy, NULL, 0);
	pid = holder(e->secret, true);
	attach("t-fd", pid);
	ASSERT_EQ(inspect("t-fd", &in), 1);
	/* declared == observed: the finding alone fails it. */
	ASSERT(json_is_true(json_object_get(in, "consistent")));
	snprintf(needle, sizeof(needle), "on %s open for read", e->secret);
	if (!finding(in, "high", "files", needle))
		FAIL("no finding of the held descriptor: %s", json_dumps(in, 0));
	json_decref(in);
}

/* The agent's entries in the pinned net_rules, deleted as any root process could. */
static int delete_net_rules(const char *pins, __u32 agent_id)
{
	char path[PATH_MAX + 16];
	struct agentd_net_key key, next;
	void *prev = NULL;
	int fd, n = 0;

	snprintf(path, sizeof(path), "%s/net_rules", pins);
	fd = bpf_obj_get(path);
	ASSERT_OK(fd);
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (key.agent_id == agent_id && !bpf_map_delete_elem(fd, &key)) {
			n++;
			prev = NULL;
		}
	}
	close(fd);
	return n;
}

TEST(inspect_sees_a_network_rule_deleted_behind_agentds_back)
{
	struct env *e = setup();
	json_t *in;
	__u32 id;

	test_daemon_add(&e->d, "t-map", e->policy, NULL, 0);
	ASSERT_EQ(inspect("t-map", &in), 0);
	ASSERT(matches(in, "egress"));
	id = json_integer_value(json_object_get(in, "id"));
	json_decref(in);
	ASSERT_EQ(delete_net_rules(e->d.pins, id), 1);
	ASSERT_EQ(inspect("t-map", &in), 1);
	ASSERT(!json_is_true(json_object_get(in, "consistent")));
	ASSERT(!matches(in, "egress"));
	ASSERT(finding(in, "critical", "egress", "net_rules: 0 entries"));
	json_decref(in);
}

TEST(inspect_sees_a_cgroup_link_detached_behind_agentds_back)
{
	struct env *e = setup();
	char path[PATH_MAX + 64];
	json_t *in;
	__u64 parent;
	int fd;

	test_daemon_add(&e->d, "t-link", e->policy, NULL, 0);
	ASSERT_EQ(inspect("t-link", &in), 0);
	json_decref(in);
	ASSERT_OK(cgroup_id(e->d.cgroup, &parent));
	snprintf(path, sizeof(path), "%s/link-net-connect4-%llu", e->d.pins,
		 (unsigned long long)parent);
	fd = bpf_obj_get(path);
	ASSERT_OK(fd);
	ASSERT_OK(bpf_link_detach(fd));
	close(fd);
	ASSERT_EQ(inspect("t-link", &in), 1);
	ASSERT(!matches(in, "egress"));
	ASSERT(matches(in, "loopback"));
	ASSERT(finding(in, "critical", "egress", "programs 3/4 attached"));
	json_decref(in);
}

static const json_t *proven(const json_t *in, const char *boundary)
{
	return json_object_get(row(json_object_get(in, "boundaries"), boundary), "proven");
}

/* STATE/drill/NAME.json, as agentctl drill leaves it (docs/INSPECT.md, "proven"). */
static void write_drill(const struct env *e, const char *name, long long gen, const char *digest,
			const char *egress)
{
	char dir[PATH_MAX + 8], path[PATH_MAX + 80], text[1024];

	snprintf(dir, sizeof(dir), "%s/drill", e->d.state);
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/%s.json", dir, name);
	snprintf(
		text, sizeof(text),
		"{\"agent\": \"%s\", \"generation\": %lld, \"policy_digest\": \"%s\",\n"
		" \"started\": \"2026-12-03T15:00:00.0Z\", \"ended\": \"2026-12-03T15:00:02.1Z\",\n"
		" \"boundaries\": [{\"boundary\": \"files\", \"verdict\": \"blocked\", \"denied\": "
		"{\"op\": \"open\", \"errno\": \"EACCES\", \"layer\": \"Landlock\"}},\n"
		"  {\"boundary\": \"egress\", \"verdict\": \"%s\"}]}\n",
		name, gen, digest, egress);
	test_write(path, text, 0600);
}

TEST(inspect_shows_the_last_drill_and_when_it_is_stale)
{
	struct env *e = setup();
	char digest[128];
	long long gen;
	json_t *in;

	test_daemon_add(&e->d, "t-pr", e->policy, NULL, 0);
	ASSERT_EQ(inspect("t-pr", &in), 0);
	ASSERT_STREQ(json_string_value(json_object_get(proven(in, "files"), "verdict")),
		     "never drilled");
	gen = json_integer_value(json_object_get(in, "generation"));
	snprintf(digest, sizeof(digest), "%s",
		 json_string_value(json_object_get(in, "policy_digest")));
	json_decref(in);

	write_drill(e, "t-pr", gen, digest, "blocked");
	ASSERT_EQ(inspect("t-pr", &in), 0);
	ASSERT_STREQ(json_string_value(json_object_get(proven(in, "files"), "verdict")), "blocked");
	ASSERT_STREQ(json_string_value(json_object_get(proven(in, "files"), "layer")), "Landlock");
	ASSERT(!json_is_true(json_object_get(proven(in, "files"), "stale")));
	ASSERT_STREQ(json_string_value(json_object_get(proven(in, "exec"), "verdict")),
		     "never drilled");
	json_decref(in);

	/* Another generation was drilled: stale. An escape fails the inspection. */
	write_drill(e, "t-pr", gen + 1, digest, "escaped");
	ASSERT_EQ(inspect("t-pr", &in), 1);
	ASSERT(json_is_true(json_object_get(proven(in, "files"), "stale")));
	ASSERT(finding(in, "high", "egress", "the last drill found egress escaped"));
	ASSERT(finding(in, "low", "audit", "the last drill tried generation"));
	json_decref(in);

	/* A malformed record is said, with its place, and nothing is proven from it. */
	write_drill(e, "t-pr", gen, digest, "perhaps");
	ASSERT_EQ(inspect("t-pr", &in), 0);
	ASSERT_STREQ(json_string_value(json_object_get(proven(in, "files"), "verdict")),
		     "unreadable");
	ASSERT(finding(in, "low", "audit", "/drill/t-pr.json:4:3: /boundaries/1: verdict"));
	json_decref(in);
}

/* A cgroup attached to the agent (agentctl attach --cgroup) gets the cgroup programs directly:
 * one of their links detached there makes the cgroup row differ. */
TEST(inspect_sees_an_attached_cgroups_link_detached)
{
	struct env *e = setup();
	char other[PATH_MAX], out[8192], path[PATH_MAX + 64];
	json_t *in;
	__u64 id;
	int fd;

	test_daemon_add(&e->d, "t-acg", e->policy, NULL, 0);
	test_cgroup(other, sizeof(other));
	if (agentctl_run(out, sizeof(out), "attach", "t-acg", "--cgroup", other, "--allow-partial",
			 NULL))
		FAIL("attach --cgroup %s: %s", other, out);
	ASSERT_EQ(inspect("t-acg", &in), 0);
	ASSERT(matches(in, "cgroup"));
	json_decref(in);
	ASSERT_OK(cgroup_id(other, &id));
	snprintf(path, sizeof(path), "%s/link-net-sendmsg4-%llu", e->d.pins,
		 (unsigned long long)id);
	fd = bpf_obj_get(path);
	ASSERT_OK(fd);
	ASSERT_OK(bpf_link_detach(fd));
	close(fd);
	ASSERT_EQ(inspect("t-acg", &in), 1);
	ASSERT(!matches(in, "cgroup"));
	ASSERT(matches(in, "egress"));
	json_decref(in);
	agentctl_run(out, sizeof(out), "detach", "t-acg", "--cgroup", other, NULL);
}

/* More findings than one reply holds: those past the room are summed up in one finding of their
 * worst severity, so that the reply still fits and the exit status does not change. */
TEST(inspect_sums_up_findings_past_the_replys_room)
{
	struct env *e = setup();
	const json_t *f;
	json_t *in;
	pid_t pid;

	test_daemon_add(&e->d, "t-many", e->policy, NULL, 0);
	pid = holder_of(e->secret, true, 60);
	attach("t-many", pid);
	ASSERT_EQ(inspect("t-many", &in), 1);
	ASSERT_EQ(json_integer_value(json_object_get(in, "processes_total")), 61);
	ASSERT_EQ(json_array_size(json_object_get(in, "processes")), 16);
	ASSERT_EQ(json_array_size(json_object_get(in, "findings")), 41);
	f = json_array_get(json_object_get(in, "findings"), 40);
	ASSERT_STREQ(json_string_value(json_object_get(f, "severity")), "high");
	ASSERT(strstr(json_string_value(json_object_get(f, "seen")), "more findings"));
	json_decref(in);
}
