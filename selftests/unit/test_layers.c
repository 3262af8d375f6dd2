// SPDX-License-Identifier: GPL-2.0
/* The gap, exactly: for crafted policies and layer sets, every item and nothing else. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "agentd/abi.h"
#include "harness.h"
#include "sandbox/layers.h"
#include "policy/load.h"
#include "policy/policy.h"
#include "testlib.h"

static char dir[128];

/* Loads a policy whose ${d} is a fresh directory holding ws/, ws/secret/, ws/ro/, bin/tool. */
static struct policy *load(const char *json)
{
	struct policy_var var = { "d", dir };
	struct policy_vars vars = { &var, 1 };
	struct policy_errors errs = { 0 };
	char path[PATH_MAX + 32];
	struct policy *p = NULL;

	test_tmpdir(dir, sizeof(dir), "layers");
	snprintf(path, sizeof(path), "%s/ws", dir);
	ASSERT_OK(mkdir(path, 0755));
	snprintf(path, sizeof(path), "%s/ws/secret", dir);
	ASSERT_OK(mkdir(path, 0755));
	snprintf(path, sizeof(path), "%s/ws/ro", dir);
	ASSERT_OK(mkdir(path, 0755));
	snprintf(path, sizeof(path), "%s/bin", dir);
	ASSERT_OK(mkdir(path, 0755));
	snprintf(path, sizeof(path), "%s/bin/tool", dir);
	test_write(path, "#!/bin/sh\n", 0755);
	if (policy_load_buffer("p.json", json, strlen(json), &vars, NULL, &p, &errs)) {
		char line[512];

		policy_error_format(&errs.v[0], line, sizeof(line));
		FAIL("policy: %s", line);
	}
	return p;
}

static void free_policy(void *p)
{
	policy_free(p);
}

/* The gap's rules, "|"-separated, with ${d} written as "D". */
static const char *rules(const struct policy *p, const char *layers, int abi, char *buf,
			 size_t bufsz)
{
	struct layers l;
	struct gap g;
	size_t i, n = strlen(dir);
	const char *r;

	ASSERT_EQ(layers_parse(layers, abi, &l), 0);
	ASSERT_EQ(layers_gap(p, &l, &g), 0);
	buf[0] = '\0';
	for (i = 0; i < g.n; i++) {
		r = g.v[i].rule;
		ASSERT(g.v[i].why[0]);
		snprintf(buf + strlen(buf), bufsz - strlen(buf), "%s%s%s", i ? "|" : "",
			 strncmp(r, dir, n) ? "" : "D", strncmp(r, dir, n) ? r : r + n);
	}
	gap_free(&g);
	return buf;
}

static const char policy_ws[] = "{\"name\": \"t\", \"files\": ["
				"{\"path\": \"${d}/ws\", \"rights\": [\"read\", \"write\", "
				"\"create\", \"remove\", \"link\", \"truncate\"]},"
				"{\"path\": \"${d}/ws/secret\", \"rights\": []},"
				"{\"path\": \"${d}/ws/ro\", \"rights\": [\"read\"]}],"
				" \"exec\": {\"allow\": [\"${d}/bin/tool\"]},"
				" \"network\": {\"sockets\": [\"inet\", \"unix\"]}}";

TEST(gap_landlock_seccomp_cgroup)
{
	struct policy *p = load(policy_ws);
	char buf[2048];

	test_defer(free_policy, p);
	ASSERT_STREQ(
		rules(p, "landlock,seccomp,cgroup", 7, buf, sizeof(buf)),
		"D/ws/secret|D/ws/ro|files: other names|files: setattr|exec: executable mappings|"
		"exec.allow_memfd|self: module autoload|self: ptrace_traceme|self: inotify|"
		"self: tasks by pid|agentctl attach|network.sockets: unix");
}

TEST(gap_why_names_the_enclosing_rule_and_the_rights)
{
	struct policy *p = load(policy_ws);
	char want[PATH_MAX + 256];
	struct layers l;
	struct gap g;

	test_defer(free_policy, p);
	ASSERT_EQ(layers_parse("landlock:3,seccomp,cgroup", 0, &l), 0);
	ASSERT_EQ(layers_gap(p, &l, &g), 0);
	snprintf(want, sizeof(want),
		 "deny inside the allowed tree %s/ws: Landlock cannot take back what an "
		 "enclosing rule grants (read,write,create,remove,link,truncate stay allowed)",
		 dir);
	ASSERT_STREQ(g.v[0].why, want);
	snprintf(want, sizeof(want),
		 "narrower than the enclosing rule %s/ws: Landlock grants the union, so "
		 "write,create,remove,link,truncate stay allowed",
		 dir);
	ASSERT_STREQ(g.v[1].why, want);
	gap_free(&g);
}

/* ABI 1 has no truncate and no link right; without seccomp the syscalls and socket families
 * are lost too, and signals need ABI 6. */
TEST(gap_old_abi_without_seccomp)
{
	struct policy *p = load(policy_ws);
	char buf[2048];

	test_defer(free_policy, p);
	ASSERT_STREQ(rules(p, "cgroup,landlock:1", 0, buf, sizeof(buf)),
		     "D/ws/secret|D/ws/ro|files: other names|files: setattr|files: truncate|"
		     "exec: executable mappings|exec.allow_memfd|self: module autoload|"
		     "self: syscalls|self: ptrace_traceme|self: inotify|self: tasks by pid|"
		     "self: signals|agentctl attach|network.sockets|network.sockets: unix");
	ASSERT_STREQ(
		rules(p, "cgroup,landlock:5,seccomp", 0, buf, sizeof(buf)),
		"D/ws/secret|D/ws/ro|files: other names|files: setattr|exec: executable mappings|"
		"exec.allow_memfd|self: module autoload|self: ptrace_traceme|self: inotify|"
		"self: tasks by pid|self: signals|agentctl attach|network.sockets: unix");
}

TEST(gap_with_bpf_lsm_is_empty_unless_a_layer_is_missing)
{
	struct policy *p = load(policy_ws);
	char buf[2048];

	test_defer(free_policy, p);
	ASSERT_STREQ(rules(p, "bpf-lsm,cgroup,seccomp", 0, buf, sizeof(buf)), "");
	ASSERT_STREQ(rules(p, "bpf-lsm", 0, buf, sizeof(buf)), "network");
	ASSERT_STREQ(rules(p, "cgroup", 0, buf, sizeof(buf)),
		     "files|exec.allow|self: module autoload|self: syscalls|self: ptrace|"
		     "self: ptrace_traceme|self: tasks by pid|self: signals|network.sockets|"
		     "network.sockets: unix");
}

/* ICMP and raw sockets' unconnected sends: only BPF LSM checks their destinations. */
TEST(gap_icmp_and_raw_sends_need_bpf_lsm)
{
	struct policy *p = load("{\"name\": \"t\", \"network\": {\"sockets\": [\"inet\", "
				"\"icmp\"]}}");
	char buf[2048];

	test_defer(free_policy, p);
	ASSERT(strstr(rules(p, "landlock,seccomp,cgroup", 7, buf, sizeof(buf)),
		      "network.sockets: icmp, raw"));
	ASSERT_STREQ(rules(p, "bpf-lsm,cgroup,seccomp", 0, buf, sizeof(buf)), "");
}

/* A narrower exec rule inside a writable tree (both its own item and exec-from-writable),
 * create without link, setattr short of "/", io_uring, allows logged, cgroup writes. */
TEST(gap_exec_writable_link_io_uring_cgroup)
{
	struct policy *p =
		load("{\"name\": \"t\", \"files\": ["
		     "{\"path\": \"${d}\", \"rights\": [\"read\", \"write\", "
		     "\"create\", \"setattr\"]}],"
		     " \"exec\": {\"allow\": [\"${d}/bin/tool\"], \"allow_memfd\": true},"
		     " \"io_uring\": true, \"audit\": {\"log_allows\": true}}");
	struct layers l;
	char buf[2048];
	struct gap g;

	test_defer(free_policy, p);
	ASSERT_STREQ(rules(p, "landlock,seccomp,cgroup", 7, buf, sizeof(buf)),
		     "D/bin/tool|files: other names|files: setattr|D|D/bin/tool|"
		     "exec: executable mappings|"
		     "self: module autoload|self: ptrace_traceme|self: inotify|"
		     "self: tasks by pid|agentctl attach|io_uring|audit.log_allows");
	/* The same tree as the cgroup mount: writes to cgroup files are lost. */
	ASSERT_EQ(layers_parse("landlock,seccomp,cgroup", 7, &l), 0);
	snprintf(l.cgroup_root, sizeof(l.cgroup_root), "%s/ws", dir);
	ASSERT_EQ(layers_gap(p, &l, &g), 0);
	ASSERT_STREQ(g.v[6].rule, "self: cgroup files");
	gap_free(&g);
}

TEST(layers_parse_and_enforcers)
{
	struct layers l;
	char buf[128];

	ASSERT_EQ(layers_parse("seccomp,landlock:3,cgroup-bpf", 0, &l), 0);
	ASSERT_EQ(l.set, LAYER_SECCOMP | LAYER_LANDLOCK | LAYER_CGROUP);
	ASSERT_EQ(l.landlock_abi, 3);
	layers_format(&l, buf, sizeof(buf));
	ASSERT_STREQ(buf, "cgroup-BPF, Landlock ABI 3, seccomp");
	layers_enforcer(&l, PART_FILES, buf, sizeof(buf));
	ASSERT_STREQ(buf, "Landlock ABI 3");
	layers_enforcer(&l, PART_SELF, buf, sizeof(buf));
	ASSERT_STREQ(buf, "seccomp, Landlock ABI 3");
	layers_enforcer(&l, PART_SOCKETS, buf, sizeof(buf));
	ASSERT_STREQ(buf, "seccomp, cgroup-BPF");
	layers_for_run(true, 7, true, NULL, &l);
	layers_enforcer(&l, PART_FILES, buf, sizeof(buf));
	ASSERT_STREQ(buf, "BPF LSM");
	ASSERT(!layers_use_landlock(&l));
	layers_for_run(false, 0, false, NULL, &l);
	layers_enforcer(&l, PART_EXEC, buf, sizeof(buf));
	ASSERT_STREQ(buf, "NOT ENFORCED");
	layers_enforcer(&l, PART_SELF, buf, sizeof(buf));
	ASSERT_STREQ(buf, "NOT ENFORCED");
	ASSERT_EQ(layers_parse("landlock:0", 0, &l), -EINVAL);
	ASSERT_EQ(layers_parse("landlock:x", 0, &l), -EINVAL);
	ASSERT_EQ(layers_parse("apparmor", 0, &l), -EINVAL);
	ASSERT_EQ(layers_parse("", 0, &l), -EINVAL);
}

/* agentctl run builds the capability limit and the environment from the policy too: a change
 * to either is a different digest (run refuses a policy changed since agentd loaded it). */
TEST(digest_covers_capabilities_and_env)
{
	char a[POLICY_DIGEST_HEX], b[POLICY_DIGEST_HEX], c[POLICY_DIGEST_HEX];
	struct policy *p = load("{\"name\": \"t\", \"env\": [\"LC_ALL\"]}");
	struct policy *q = load("{\"name\": \"t\", \"env\": [\"LC_ALL\", \"GOPATH\"]}");

	test_defer(free_policy, p);
	test_defer(free_policy, q);
	ASSERT_EQ(policy_digest(p, a), 0);
	ASSERT_EQ(policy_digest(q, b), 0);
	ASSERT(strcmp(a, b));
	p->capabilities = 1ULL << 10;
	ASSERT_EQ(policy_digest(p, c), 0);
	ASSERT(strcmp(a, c));
}
