// SPDX-License-Identifier: GPL-2.0
/* The policy language: every error path with its place, extends, vars, the shipped profiles. */
#include <arpa/inet.h>
#include <ftw.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "agentd/abi.h"
#include "harness.h"
#include "policy/policy.h"

static char dir[64];

static const char tools_json[] =
	"{\"tools\": [\n"
	"  {\"name\": \"noop\", \"effect\": \"observe\", \"builtin\": \"noop\"},\n"
	"  {\"name\": \"report.submit\", \"effect\": \"report\", \"builtin\": \"report\"},\n"
	"  {\"name\": \"deploy.trigger\", \"effect\": \"actuate\", \"exec\": [\"/bin/true\"]}\n"
	"]}\n";

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void rm_tree(void *arg)
{
	nftw(arg, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A fresh directory holding the test's files, removed at the end. */
static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/agentd-policy-XXXXXX");
	ASSERT(mkdtemp(dir));
	test_defer(rm_tree, dir);
}

static void put(const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ASSERT(f);
	ASSERT(fputs(text, f) >= 0);
	ASSERT(!fclose(f));
}

static struct tools_registry *registry(void)
{
	struct policy_errors errs = { 0 };
	struct tools_registry *reg;

	ASSERT_EQ(tools_load_buffer("tools.json", tools_json, strlen(tools_json), &reg, &errs), 0);
	return reg;
}

/* Loads dir/name; returns the errors, formatted one per line with the dir prefix removed. */
static int load(const char *name, const struct policy_vars *vars, struct policy **out, char *text,
		size_t textsz)
{
	struct policy_errors errs = { 0 };
	struct tools_registry *reg = registry();
	char path[PATH_MAX], line[2048];
	size_t i, n = 0;
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	err = policy_load(path, vars, reg, out, &errs);
	text[0] = '\0';
	for (i = 0; i < errs.n; i++) {
		policy_error_format(&errs.v[i], line, sizeof(line));
		n += snprintf(text + n, n < textsz ? textsz - n : 0, "%s\n",
			      !strncmp(line, dir, strlen(dir)) ? line + strlen(dir) + 1 : line);
	}
	if (errs.dropped)
		snprintf(text + n, n < textsz ? textsz - n : 0, "dropped %zu\n", errs.dropped);
	policy_errors_clear(&errs);
	tools_free(reg);
	return err;
}

/* The policy text must be refused with an error line containing want. */
static void refused(const char *json, const char *want)
{
	struct policy *p;
	char text[16384];

	put("p.json", json);
	ASSERT_EQ(load("p.json", NULL, &p, text, sizeof(text)), -EINVAL);
	ASSERT(p == NULL);
	if (!strstr(text, want))
		FAIL("expected an error containing\n  %s\ngot\n%s", want, text);
}

static struct policy *accepted(const char *name, const struct policy_vars *vars)
{
	struct policy *p;
	char text[16384];
	int err;

	err = load(name, vars, &p, text, sizeof(text));
	if (err)
		FAIL("%s refused (%d):\n%s", name, err, text);
	return p;
}

TEST(policy_syntax_error_has_jansson_position)
{
	setup();
	refused("{\"name\": \"x\",\n  \"files\": [}\n", "p.json:2:13: ");
	refused("", "p.json:1:1: ");
	refused("[]", "p.json:1:1: expected an object; found an array");
}

TEST(policy_duplicate_key_refused)
{
	setup();
	refused("{\"name\": \"x\",\n \"name\": \"y\"}", "p.json:2:");
	refused("{\"name\": \"x\",\n \"name\": \"y\"}", "duplicate object key");
}

TEST(policy_unknown_fields_refused_everywhere)
{
	setup();
	refused("{\"name\": \"x\", \"nmae\": 1}",
		"p.json:1:23: /nmae: unknown field; expected one of name, extends, mode, vars, "
		"files, exec, network, tools, limits, audit, io_uring, env");
	refused("{\"name\": \"x\",\n \"files\": [{\"path\": \"/tmp\", \"rights\": [], \"x~/\": "
		"0}]}",
		"p.json:2:50: /files/0/x~0~1: unknown field");
	refused("{\"name\": \"x\",\n \"network\": {\"proxy\": {\"hosts\": []}}}",
		"p.json:2:33: /network/proxy/hosts: unknown field; expected one of allow_hosts");
}

TEST(policy_wrong_types_refused)
{
	setup();
	refused("{\"name\": 3}", "p.json:1:10: /name: expected a policy name; found 3");
	refused("{\"name\": \"x\", \"files\": {}}",
		"p.json:1:24: /files: expected an array of file rules; found an object");
	refused("{\"name\": \"x\", \"exec\": {\"allow_memfd\": \"no\"}}",
		"p.json:1:39: /exec/allow_memfd: expected true or false; found \"no\"");
	refused("{\"name\": \"x\", \"io_uring\": \"yes\"}",
		"p.json:1:27: /io_uring: expected true or false; found \"yes\"");
	refused("{\"name\": \"x\", \"limits\": {\"pids\": 1.5}}",
		"p.json:1:34: /limits/pids: expected an integer from 1 to 4194304; found 1.5");
}

TEST(policy_missing_required_fields)
{
	setup();
	refused("{\"files\": []}", "p.json:1:1: /name: missing required field");
	refused("{\"name\": \"x\", \"files\": [\n  {\"rights\": []}]}",
		"p.json:2:3: /files/0/path: missing required field");
	refused("{\"name\": \"x\", \"files\": [\n  {\"path\": \"/tmp\"}]}",
		"p.json:2:3: /files/0/rights: missing required field");
}

TEST(policy_bad_name_and_mode)
{
	setup();
	refused("{\"name\": \"Coding\"}", "p.json:1:10: /name: expected a name matching "
					  "[a-z0-9][a-z0-9-]{0,62}; found \"Coding\"");
	refused("{\"name\": \"x\", \"mode\": \"audit\"}",
		"p.json:1:23: /mode: expected one of act, enforce, report-only, shadow; found "
		"\"audit\"");
}

TEST(policy_bad_right_names_pointer)
{
	setup();
	refused("{\"name\": \"x\",\n"
		" \"files\": [{\"path\": \"/tmp\", \"rights\": [\"read\"]},\n"
		"           {\"path\": \"/tmp\", \"rights\": [\"read\", \"wirte\"]}]}",
		"p.json:3:48: /files/1/rights/1: expected one of read, write, exec, create, "
		"remove, "
		"link, truncate, setattr; found \"wirte\"");
}

TEST(policy_rights_map_to_abi_bits)
{
	struct policy *p;

	setup();
	put("p.json", "{\"name\": \"x\", \"files\": [{\"path\": \"/tmp\", \"rights\": [\"read\", "
		      "\"write\", \"exec\", \"create\", \"remove\", \"link\", \"truncate\", "
		      "\"setattr\"]}, {\"path\": \"/dev/null\", \"rights\": []}]}");
	p = accepted("p.json", NULL);
	ASSERT_EQ(p->n_files, 2);
	ASSERT_EQ(p->files[0].rights, AGENTD_RIGHTS_ALL);
	ASSERT_EQ(p->files[1].rights, 0);
	ASSERT(p->files[0].exists && p->files[0].ino != 0);
	policy_free(p);
}

static const char *connect_json(const char *cidr)
{
	static char buf[512];

	snprintf(buf, sizeof(buf),
		 "{\"name\": \"x\",\n \"network\": {\"connect\": [{\"cidr\": \"%s\"}]}}", cidr);
	return buf;
}

TEST(policy_bad_cidrs)
{
	setup();
	refused(connect_json("10.0.0.256/8"),
		"p.json:2:35: /network/connect/0/cidr: expected an IPv4 or IPv6 network as "
		"ADDRESS/PREFIX; found \"10.0.0.256/8\" (not an IPv4 or IPv6 address)");
	refused(connect_json("fe80::1::2/64"), "(not an IPv4 or IPv6 address)");
	refused(connect_json("10.0.0.0/33"), "found \"10.0.0.0/33\" (prefix length not in 0-32)");
	refused(connect_json("10.0.0.0/"), "(prefix length not in 0-32)");
	refused(connect_json("10.0.0.0/08"), "(prefix length not in 0-32)");
	refused(connect_json("10.0.0.0/-1"), "(prefix length not in 0-32)");
	refused(connect_json("2001:db8::/129"), "(prefix length not in 0-128)");
	refused(connect_json("10.1.2.3/8"), "(host bits set; the network is 10.0.0.0/8)");
	refused(connect_json("2001:db8::1/32"), "(host bits set; the network is 2001:db8::/32)");
}

TEST(policy_connect_rules_expand_per_port_range)
{
	struct policy *p;

	setup();
	put("p.json",
	    "{\"name\": \"x\", \"network\": {\"connect\": [\n"
	    " {\"cidr\": \"192.0.2.0/24\", \"ports\": [443, \"8000-8080\"], \"protocol\": "
	    "\"tcp\"},\n {\"cidr\": \"2001:db8::/32\"}, {\"cidr\": \"192.0.2.7\", "
	    "\"protocol\": \"udp\", \"ports\": [\"53\"]}]}}");
	p = accepted("p.json", NULL);
	ASSERT_EQ(p->net.n_connect, 4);
	ASSERT_EQ(p->net.connect[0].family, AF_INET);
	ASSERT_EQ(p->net.connect[0].prefix_len, 24);
	ASSERT(!memcmp(p->net.connect[0].addr, "\xc0\x00\x02\x00", 4));
	ASSERT_EQ(p->net.connect[0].port_lo, 443);
	ASSERT_EQ(p->net.connect[0].port_hi, 443);
	ASSERT_EQ(p->net.connect[0].protocol, IPPROTO_TCP);
	ASSERT_EQ(p->net.connect[1].port_lo, 8000);
	ASSERT_EQ(p->net.connect[1].port_hi, 8080);
	ASSERT_EQ(p->net.connect[2].family, AF_INET6);
	ASSERT_EQ(p->net.connect[2].prefix_len, 32);
	ASSERT_EQ(p->net.connect[2].port_lo, 1);
	ASSERT_EQ(p->net.connect[2].port_hi, 65535);
	ASSERT_EQ(p->net.connect[2].protocol, 0);
	ASSERT_EQ(p->net.connect[3].prefix_len, 32);
	ASSERT_EQ(p->net.connect[3].protocol, IPPROTO_UDP);
	ASSERT_EQ(p->net.connect[3].port_lo, 53);
	policy_free(p);
}

TEST(policy_bad_ports)
{
	static const char *const bad[] = { "0",	       "65536",	  "\"8080-8000\"",
					   "\"80-\"",  "\"-80\"", "\"0443\"",
					   "\"http\"", "true",	  "\"1-2-3\"" };
	char json[256], want[128];
	size_t i;

	setup();
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(
			json, sizeof(json),
			"{\"name\": \"x\", \"network\": {\"connect\": [\n{\"cidr\": \"0.0.0.0/0\", "
			"\"ports\": [22, %s]}]}}",
			bad[i]);
		snprintf(want, sizeof(want),
			 "p.json:2:37: /network/connect/0/ports/1: expected a port from 1 to 65535 "
			 "or a range \"LOW-HIGH\" with LOW <= HIGH; found %s",
			 bad[i]);
		refused(json, want);
	}
	refused("{\"name\": \"x\", \"network\": {\"connect\": [{\"cidr\": \"0.0.0.0/0\", "
		"\"ports\": "
		"[]}]}}",
		"/network/connect/0/ports: expected at least one port");
	refused("{\"name\": \"x\", \"network\": {\"connect\": [{\"cidr\": \"0.0.0.0/0\", "
		"\"protocol\": "
		"\"sctp\"}]}}",
		"/network/connect/0/protocol: expected one of tcp, udp, any; found \"sctp\"");
}

TEST(policy_bad_host_patterns)
{
	static const char *const bad[] = { "*.org", "*",    "Pypi.org", "a..b",	 ".a.b", "a.b.",
					   "-a.b",  "a-.b", "*.*.b.c",	"a b.c", "",	 "a.*.c" };
	char json[256], want[160];
	size_t i;

	setup();
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(json, sizeof(json),
			 "{\"name\": \"x\", \"network\": {\"proxy\": {\"allow_hosts\": [\n"
			 "  \"pypi.org\", \"%s\"]}}}",
			 bad[i]);
		snprintf(want, sizeof(want),
			 "p.json:2:15: /network/proxy/allow_hosts/1: expected a lower-case host "
			 "name "
			 "or \"*.domain.suffix\"; found \"%s\"",
			 bad[i]);
		refused(json, want);
	}
}

TEST(policy_bad_sockets)
{
	setup();
	refused("{\"name\": \"x\", \"network\": {\"sockets\": [\"inet\", \"bluetooth\"]}}",
		"p.json:1:47: /network/sockets/1: expected one of inet, inet6, unix, netlink, "
		"packet, raw, icmp; found \"bluetooth\"");
}

TEST(policy_bad_env_names_refused_with_place)
{
	setup();
	refused("{\"name\": \"x\",\n \"env\": [\"GOOD\", \"1BAD\"]}",
		"p.json:2:18: /env/1: expected a variable name matching [A-Za-z_][A-Za-z0-9_]* (at "
		"most 128 characters); found \"1BAD\"");
	refused("{\"name\": \"x\", \"env\": [\"A=B\"]}",
		"p.json:1:23: /env/0: expected a variable name");
	refused("{\"name\": \"x\", \"env\": [\"\"]}",
		"p.json:1:23: /env/0: expected a variable name");
	refused("{\"name\": \"x\", \"env\": [\"A B\"]}", "/env/0: expected a variable name");
	refused("{\"name\": \"x\", \"env\": [3]}",
		"p.json:1:23: /env/0: expected a variable name; found 3");
	refused("{\"name\": \"x\", \"env\": \"HOME\"}",
		"p.json:1:22: /env: expected an array of variable names; found \"HOME\"");
	refused("{\"name\": \"x\", \"env\": [\"https_proxy\"]}",
		"p.json:1:23: /env/0: expected a variable agentctl run does not set itself");
}

TEST(policy_env_merges_through_extends)
{
	struct policy *p;

	setup();
	put("base.json", "{\"name\": \"base\", \"env\": [\"GOPATH\", \"LC_ALL\"]}");
	put("p.json", "{\"name\": \"x\", \"extends\": [\"base.json\"],"
		      " \"env\": [\"LC_ALL\", \"_X9\"]}");
	p = accepted("p.json", NULL);
	ASSERT_EQ(p->n_env, 3);
	ASSERT_STREQ(p->env[0], "GOPATH");
	ASSERT_STREQ(p->env[1], "LC_ALL");
	ASSERT_STREQ(p->env[2], "_X9");
	policy_free(p);
}

TEST(policy_capabilities_parsed)
{
	struct policy *p;

	setup();
	put("caps.json",
	    "{\"name\": \"x\", \"capabilities\": [\"net_bind_service\", "
	    "\"CAP_SYS_NICE\", \"checkpoint_restore\"], \"devices\": {\"create\": true}}");
	p = accepted("caps.json", NULL);
	ASSERT_EQ(p->capabilities, (1ULL << 10) | (1ULL << 23) | (1ULL << 40));
	ASSERT(p->devices.create);
	policy_free(p);
	put("none.json", "{\"name\": \"x\"}");
	p = accepted("none.json", NULL);
	ASSERT_EQ(p->capabilities, 0);
	ASSERT(!p->devices.create);
	policy_free(p);
}

TEST(policy_bad_capabilities)
{
	setup();
	refused("{\"name\": \"x\",\n \"capabilities\": [\"chown\", \"sys_admn\"]}",
		"p.json:2:28: /capabilities/1: expected a capability of capabilities(7)");
	refused("{\"name\": \"x\", \"capabilities\": [7]}",
		"/capabilities/0: expected a capability");
	refused("{\"name\": \"x\", \"devices\": {\"create\": 1}}",
		"/devices/create: expected true or false");
	refused("{\"name\": \"x\", \"devices\": {\"open\": true}}", "/devices/open");
}

TEST(policy_missing_and_optional_paths)
{
	struct policy *p;

	setup();
	refused("{\"name\": \"x\", \"files\": [\n  {\"path\": \"/nonexistent/agentd\", \"rights\": "
		"[]}]}",
		"p.json:2:12: /files/0/path: expected an existing path (or \"optional\": true); "
		"found \"/nonexistent/agentd\": No such file or directory");
	refused("{\"name\": \"x\", \"exec\": {\"allow\": [\"/nonexistent/sh\"]}}",
		"p.json:1:34: /exec/allow/0: expected an existing path");
	put("p.json",
	    "{\"name\": \"x\", \"files\": [{\"path\": \"/nonexistent/agentd\", \"rights\": "
	    "[\"read\"], \"optional\": true}],\n \"exec\": {\"allow\": [{\"path\": "
	    "\"/nonexistent/sh\", \"optional\": true}]}}");
	p = accepted("p.json", NULL);
	ASSERT_EQ(p->n_files, 1);
	ASSERT(p->files[0].optional && !p->files[0].exists);
	ASSERT_EQ(p->files[0].ino, 0);
	ASSERT_EQ(p->exec.n_allow, 1);
	ASSERT(!p->exec.allow[0].exists);
	policy_free(p);
}

TEST(policy_paths_must_be_normalised)
{
	static const char *const bad[] = { "tmp",      "/tmp/",	  "//tmp", "/tmp/../etc",
					   "/tmp/./x", "/tmp//x", "" };
	char json[256], want[256];
	size_t i;

	setup();
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(json, sizeof(json),
			 "{\"name\": \"x\", \"files\": [{\"path\": \"%s\", \"rights\": []}]}",
			 bad[i]);
		snprintf(want, sizeof(want),
			 "p.json:1:34: /files/0/path: expected an absolute, normalised path (no "
			 "\"..\", \".\", \"//\" or trailing \"/\"); found \"%s\"",
			 bad[i]);
		refused(json, want);
	}
}

TEST(policy_unresolved_var_names_it)
{
	setup();
	refused("{\"name\": \"x\", \"vars\": {\"a\": \"/tmp\"},\n \"files\": [{\"path\": "
		"\"${a}/${workspace}\", \"rights\": []}]}",
		"p.json:2:21: /files/0/path: unresolved variable ${workspace}: expected it in "
		"\"vars\" or given with --var workspace=VALUE");
	refused("{\"name\": \"x\", \"files\": [{\"path\": \"${a\", \"rights\": []}]}",
		"p.json:1:34: /files/0/path: expected ${name}");
	refused("{\"name\": \"x\", \"vars\": {\"a\": 1}}",
		"p.json:1:29: /vars/a: expected a string; found 1");
	refused("{\"name\": \"x\", \"vars\": {\"a-b\": \"/\"}}",
		"/vars/a-b: expected a variable name");
}

TEST(policy_vars_child_overrides_base_cli_overrides_both)
{
	struct policy_var cli[] = { { "c", "/dev" } };
	struct policy_vars vars = { cli, 1 };
	struct policy *p;

	setup();
	put("base.json",
	    "{\"name\": \"base\", \"vars\": {\"a\": \"/nonexistent\", \"b\": \"/tmp\", "
	    "\"c\": \"/nonexistent\"},\n \"files\": [{\"path\": \"${a}\", \"rights\": "
	    "[\"read\"]}]}");
	put("p.json", "{\"name\": \"child\", \"extends\": [\"base.json\"], \"vars\": {\"a\": "
		      "\"/usr\"},\n \"files\": [{\"path\": \"${b}\", \"rights\": []}, {\"path\": "
		      "\"${c}/null\", \"rights\": [\"read\"]}]}");
	p = accepted("p.json", &vars);
	ASSERT_EQ(p->n_files, 3);
	ASSERT_STREQ(p->files[0].path, "/usr");
	ASSERT_STREQ(p->files[1].path, "/tmp");
	ASSERT_STREQ(p->files[2].path, "/dev/null");
	policy_free(p);
}

TEST(policy_extends_merges_lists_and_overrides_scalars)
{
	struct policy *p;

	setup();
	put("base.json", "{\"name\": \"base\", \"mode\": \"report-only\",\n"
			 " \"files\": [{\"path\": \"/tmp\", \"rights\": [\"read\"]}, {\"path\": "
			 "\"/dev/null\", \"rights\": [\"read\"]}],\n"
			 " \"exec\": {\"allow\": [\"/bin/sh\"], \"allow_memfd\": true},\n"
			 " \"network\": {\"sockets\": [\"unix\"], \"bind\": true},\n"
			 " \"tools\": [\"noop\"], \"limits\": {\"pids\": 10, \"memory\": \"1G\"},\n"
			 " \"audit\": {\"log_allows\": true}, \"io_uring\": true}");
	put("p.json",
	    "{\"name\": \"child\", \"extends\": [\"base.json\"], \"mode\": \"act\",\n"
	    " \"files\": [{\"path\": \"/dev\", \"rights\": [\"read\"]}, {\"path\": "
	    "\"/tmp\", \"rights\": [\"read\", \"write\"]}],\n"
	    " \"exec\": {\"allow\": [\"/bin/sh\", \"/usr/bin/env\"]},\n"
	    " \"network\": {\"sockets\": [\"inet\"], \"connect\": [{\"cidr\": \"::/0\"}],\n"
	    "   \"proxy\": {\"allow_hosts\": [\"example.org\"]}},\n"
	    " \"tools\": [\"report.submit\", \"noop\", \"deploy.trigger\"],\n"
	    " \"limits\": {\"pids\": 20, \"cpu\": 0.5, \"wall_clock\": \"30m\"}}");
	p = accepted("p.json", NULL);
	ASSERT_STREQ(p->name, "child");
	ASSERT_EQ(p->mode, POLICY_MODE_ACT);
	/* Base rules first; the child's rule for /tmp replaced the base's in place. */
	ASSERT_EQ(p->n_files, 3);
	ASSERT_STREQ(p->files[0].path, "/tmp");
	ASSERT_EQ(p->files[0].rights, AGENTD_RIGHT_READ | AGENTD_RIGHT_WRITE);
	ASSERT_STREQ(p->files[1].path, "/dev/null");
	ASSERT_STREQ(p->files[2].path, "/dev");
	ASSERT_EQ(p->exec.n_allow, 2);
	ASSERT_STREQ(p->exec.allow[1].path, "/usr/bin/env");
	ASSERT(p->exec.allow_memfd && !p->exec.allow_writable);
	ASSERT_EQ(p->net.sockets, POLICY_SOCK_UNIX | POLICY_SOCK_INET);
	ASSERT(p->net.bind);
	ASSERT_EQ(p->net.n_connect, 1);
	ASSERT_EQ(p->net.n_proxy_hosts, 1);
	ASSERT_EQ(p->n_tools, 3);
	ASSERT_STREQ(p->tools[0].name, "noop");
	ASSERT_STREQ(p->tools[1].name, "report.submit");
	ASSERT_STREQ(p->tools[2].name, "deploy.trigger");
	ASSERT_EQ(p->limits.pids, 20);
	ASSERT_EQ(p->limits.memory_bytes, 1ULL << 30);
	ASSERT_EQ(p->limits.cpu_millicores, 500);
	ASSERT_EQ(p->limits.wall_clock_sec, 1800);
	ASSERT(p->audit.log_allows);
	ASSERT(p->io_uring); /* a scalar: the base's stands where the child says nothing */
	policy_free(p);
}

TEST(policy_one_rule_per_object_in_a_file)
{
	setup();
	refused("{\"name\": \"x\", \"files\": [{\"path\": \"/tmp\", \"rights\": [\"read\"]},\n"
		" {\"path\": \"/tmp\", \"rights\": []}]}",
		"p.json:2:11: /files/1/path: expected one rule per object; found \"/tmp\" (none), "
		"the same object as \"/tmp\" (read)");
}

TEST(policy_errors_in_a_base_name_the_base)
{
	setup();
	ASSERT(!mkdir(strcat(strcpy((char[PATH_MAX]){ 0 }, dir), "/base"), 0700));
	put("base/b.json", "{\"name\": \"b\",\n \"files\": [{\"path\": \"/tmp\", \"rights\": "
			   "[\"rd\"]}]}");
	refused("{\"name\": \"x\", \"extends\": [\"base/b.json\"]}",
		"base/b.json:2:40: /files/0/rights/0: expected one of read");
	refused("{\"name\": \"x\", \"extends\": [\"base/none.json\"]}",
		"base/none.json: No such file or directory");
	put("base/bad.json", "{\"name\": \"b\",,}");
	refused("{\"name\": \"x\", \"extends\": [\"base/bad.json\"]}", "base/bad.json:1:");
}

TEST(policy_extends_cycle_refused)
{
	setup();
	put("a.json", "{\"name\": \"a\", \"extends\": [\"b.json\"]}");
	put("b.json", "{\"name\": \"b\",\n \"extends\": [\"a.json\"]}");
	refused("{\"name\": \"x\", \"extends\": [\"a.json\"]}",
		"b.json:2:14: /extends/0: expected no extends cycle; found ");
	refused("{\"name\": \"x\", \"extends\": [\"a.json\"]}", "/a.json -> ");
	refused("{\"name\": \"x\",\n \"extends\": [\"p.json\"]}",
		"p.json:2:14: /extends/0: expected no extends cycle");
}

TEST(policy_extends_diamond_included_once)
{
	struct policy *p;

	setup();
	put("d.json",
	    "{\"name\": \"d\", \"files\": [{\"path\": \"/tmp\", \"rights\": [\"read\"]}], "
	    "\"tools\": [\"noop\"]}");
	put("b.json", "{\"name\": \"b\", \"extends\": [\"d.json\"]}");
	put("c.json", "{\"name\": \"c\", \"extends\": [\"d.json\"]}");
	put("p.json", "{\"name\": \"x\", \"extends\": [\"b.json\", \"c.json\"]}");
	p = accepted("p.json", NULL);
	ASSERT_EQ(p->n_files, 1);
	ASSERT_EQ(p->n_tools, 1);
	policy_free(p);
}

TEST(policy_extends_depth_limited)
{
	char name[32], json[128];
	int i;

	setup();
	/* p.json -> l1 -> ... -> l9: nine levels of bases, one too many. */
	for (i = 1; i <= 9; i++) {
		snprintf(name, sizeof(name), "l%d.json", i);
		if (i < 9)
			snprintf(json, sizeof(json),
				 "{\"name\": \"l%d\",\n \"extends\": [\"l%d.json\"]}", i, i + 1);
		else
			snprintf(json, sizeof(json), "{\"name\": \"l%d\"}", i);
		put(name, json);
	}
	refused("{\"name\": \"x\", \"extends\": [\"l1.json\"]}",
		"l8.json:2:14: /extends/0: expected extends at most 8 levels deep");
	put("l8.json", "{\"name\": \"l8\"}");
	put("p.json", "{\"name\": \"x\", \"extends\": [\"l1.json\"]}");
	policy_free(accepted("p.json", NULL));
}

TEST(policy_report_only_refuses_actuate_tools_and_egress)
{
	setup();
	refused("{\"name\": \"x\", \"mode\": \"report-only\",\n \"tools\": [\"noop\", "
		"\"deploy.trigger\"]}",
		"p.json:2:20: /tools/1: expected a tool whose effect is observe or report in a "
		"report-only policy (");
	refused("{\"name\": \"x\", \"mode\": \"report-only\",\n \"tools\": [\"noop\", "
		"\"deploy.trigger\"]}",
		"found \"deploy.trigger\", which actuates");
	refused("{\"name\": \"x\", \"mode\": \"report-only\",\n \"network\": {\"connect\": "
		"[{\"cidr\": \"10.0.0.0/8\"}]}}",
		"p.json:2:26: /network/connect/0: expected no network.connect rule in a "
		"report-only policy");
	refused("{\"name\": \"x\", \"mode\": \"report-only\",\n \"network\": {\"proxy\": "
		"{\"allow_hosts\": [\"example.org\"]}}}",
		"p.json:2:40: /network/proxy/allow_hosts/0: expected no proxy host in a "
		"report-only "
		"policy");
	/* A base's egress is refused when the child makes the policy report-only. */
	put("b.json", "{\"name\": \"b\",\n \"network\": {\"connect\": [{\"cidr\": \"::/0\"}]}}");
	refused("{\"name\": \"x\", \"extends\": [\"b.json\"], \"mode\": \"report-only\"}",
		"b.json:2:26: /network/connect/0: expected no network.connect rule");
}

TEST(policy_unknown_tool_refused)
{
	setup();
	refused("{\"name\": \"x\",\n \"tools\": [\"noop\", \"fs.raed\"]}",
		"p.json:2:20: /tools/1: expected a tool of the registry tools.json; found "
		"\"fs.raed\"");
}

TEST(policy_limits_parsed_and_checked)
{
	struct policy *p;

	setup();
	refused("{\"name\": \"x\", \"limits\": {\"cpu\": 0}}",
		"p.json:1:33: /limits/cpu: expected a number of cores from 0.001 to 1024; found 0");
	refused("{\"name\": \"x\", \"limits\": {\"memory\": \"512MB\"}}",
		"/limits/memory: expected a size as bytes or \"512M\"");
	refused("{\"name\": \"x\", \"limits\": {\"memory\": \"99999999999999999999G\"}}",
		"/limits/memory: expected a size");
	refused("{\"name\": \"x\", \"limits\": {\"wall_clock\": \"30d\"}}",
		"/limits/wall_clock: expected a duration");
	refused("{\"name\": \"x\", \"limits\": {\"wall_clock\": \"0s\"}}",
		"/limits/wall_clock: expected a duration");
	put("p.json",
	    "{\"name\": \"x\", \"limits\": {\"cpu\": 2, \"memory\": 4096, \"wall_clock\": "
	    "\"2h\", \"pids\": 1}}");
	p = accepted("p.json", NULL);
	ASSERT_EQ(p->limits.cpu_millicores, 2000);
	ASSERT_EQ(p->limits.memory_bytes, 4096);
	ASSERT_EQ(p->limits.wall_clock_sec, 7200);
	ASSERT_EQ(p->limits.pids, 1);
	policy_free(p);
}

TEST(policy_collects_every_error_bounded)
{
	struct policy *p;
	char json[8192], text[16384];
	size_t n, i;

	setup();
	n = snprintf(json, sizeof(json), "{\"name\": \"x\", \"files\": [");
	for (i = 0; i < 60; i++)
		n += snprintf(json + n, sizeof(json) - n,
			      "%s{\"path\": \"/tmp\", \"rights\": [\"x\"]}", i ? ", " : "");
	snprintf(json + n, sizeof(json) - n, "]}");
	put("p.json", json);
	ASSERT_EQ(load("p.json", NULL, &p, text, sizeof(text)), -EINVAL);
	ASSERT(strstr(text, "/files/0/rights/0"));
	ASSERT(strstr(text, "/files/49/rights/0"));
	ASSERT(!strstr(text, "/files/50/"));
	ASSERT(strstr(text, "dropped 10\n"));
}

TEST(policy_not_a_regular_file_refused)
{
	struct policy_errors errs = { 0 };
	struct policy *p;

	ASSERT_EQ(policy_load("/dev/null", NULL, NULL, &p, &errs), -EINVAL);
	ASSERT_EQ(errs.n, 1);
	ASSERT_STREQ(errs.v[0].msg, "cannot read: not a regular file");
	policy_errors_clear(&errs);
	ASSERT_EQ(policy_load("/nonexistent.json", NULL, NULL, &p, &errs), -ENOENT);
	ASSERT_EQ(errs.n, 1);
	policy_errors_clear(&errs);
	policy_free(NULL);
}

TEST(policy_shipped_profiles_pass)
{
	static const char *const files[] = { "base/linux-userland.json", "coding-agent.json",
					     "research-agent.json", "report-agent.json",
					     "demo-agent.json" };
	struct policy_var v[] = { { "workspace", "/tmp" }, { "dropbox", "/tmp" } };
	struct policy_vars vars = { v, 2 };
	struct policy_errors errs = { 0 };
	struct tools_registry *reg;
	char path[PATH_MAX], line[1024];
	struct policy *p;
	size_t i;

	snprintf(path, sizeof(path), "%s/../policies/tools.json", test_bin_dir());
	ASSERT_EQ(tools_load(path, &reg, &errs), 0);
	ASSERT(tools_find(reg, "deploy.trigger")->effect == TOOL_ACTUATE);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/../policies/%s", test_bin_dir(), files[i]);
		if (policy_load(path, &vars, reg, &p, &errs)) {
			policy_error_format(&errs.v[0], line, sizeof(line));
			FAIL("%s: %s", files[i], line);
		}
		if (!strcmp(files[i], "report-agent.json"))
			ASSERT_EQ(p->mode, POLICY_MODE_REPORT_ONLY);
		policy_free(p);
	}
	tools_free(reg);
}

TEST(policy_proxy_ports_default_set_and_errors)
{
	static const struct {
		const char *ports, *want;
	} bad[] = {
		{ "[]", "p.json:2:11: /network/proxy/ports: expected 1 to 32 ports; found 0" },
		{ "[443, 0]",
		  "p.json:2:17: /network/proxy/ports/1: expected a port number from 1 to 65535, "
		  "once; found 0" },
		{ "[65536]",
		  "/network/proxy/ports/0: expected a port number from 1 to 65535, once; "
		  "found 65536" },
		{ "[\"443\"]", "/network/proxy/ports/0: expected a port number from 1 to 65535, "
			       "once; found \"443\"" },
		{ "[80, 443, 80]",
		  "/network/proxy/ports/2: expected a port number from 1 to 65535, "
		  "once; found 80" },
		{ "443", "/network/proxy/ports: expected an array of port numbers" },
	};
	char json[256];
	struct policy *p;
	size_t i;

	setup();
	put("d.json",
	    "{\"name\": \"x\", \"network\": {\"proxy\": {\"allow_hosts\": [\"a.org\"]}}}");
	p = accepted("d.json", NULL);
	ASSERT_EQ(p->net.n_proxy_ports, 2);
	ASSERT_EQ(p->net.proxy_ports[0], 443);
	ASSERT_EQ(p->net.proxy_ports[1], 80);
	policy_free(p);
	/* A child's list replaces its base's. */
	put("b.json", "{\"name\": \"b\", \"network\": {\"proxy\": {\"ports\": [8443, 80]}}}");
	put("c.json", "{\"name\": \"c\", \"extends\": [\"b.json\"], \"network\": {\"proxy\": "
		      "{\"ports\": [8080]}}}");
	p = accepted("c.json", NULL);
	ASSERT_EQ(p->net.n_proxy_ports, 1);
	ASSERT_EQ(p->net.proxy_ports[0], 8080);
	policy_free(p);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(json, sizeof(json),
			 "{\"name\": \"x\", \"network\": {\"proxy\": {\n \"ports\": %s}}}",
			 bad[i].ports);
		refused(json, bad[i].want);
	}
}

TEST(policy_audit_on_failure_freeze_by_default_continue_when_asked)
{
	struct policy *p;

	setup();
	put("p.json", "{\"name\": \"x\"}");
	p = accepted("p.json", NULL);
	ASSERT_EQ(p->audit.on_failure, POLICY_AUDIT_FREEZE);
	policy_free(p);
	put("p.json", "{\"name\": \"x\", \"audit\": {\"on_failure\": \"continue\"}}");
	p = accepted("p.json", NULL);
	ASSERT_EQ(p->audit.on_failure, POLICY_AUDIT_CONTINUE);
	policy_free(p);
	put("base.json", "{\"name\": \"b\", \"audit\": {\"on_failure\": \"continue\"}}");
	put("p.json", "{\"name\": \"x\", \"extends\": [\"base.json\"],\n"
		      " \"audit\": {\"on_failure\": \"freeze\"}}");
	p = accepted("p.json", NULL);
	ASSERT_EQ(p->audit.on_failure, POLICY_AUDIT_FREEZE);
	policy_free(p);
	refused("{\"name\": \"x\",\n \"audit\": {\"on_failure\": \"stop\"}}",
		"p.json:2:26: /audit/on_failure: expected one of freeze, continue; found \"stop\"");
	refused("{\"name\": \"x\", \"audit\": {\"on_failure\": true}}",
		"p.json:1:39: /audit/on_failure: expected freeze or continue; found true");
}

/* A grant as an object: its approval and timeout; a base's grant needs approval if either asks;
 * errors placed. */
TEST(policy_tool_grant_with_approval)
{
	struct policy *p;
	unsigned int timeout;
	size_t i;

	setup();
	put("base.json", "{\"name\": \"base\", \"tools\": [\"noop\", {\"name\": \"report.submit\", "
			 "\"approval\": \"required\"}]}");
	put("p.json",
	    "{\"name\": \"p\", \"extends\": [\"base.json\"], \"tools\": [\"report.submit\","
	    " {\"name\": \"noop\", \"approval\": \"required\", \"approval_timeout\": 90},"
	    " {\"name\": \"deploy.trigger\"}]}");
	p = accepted("p.json", NULL);
	ASSERT_EQ(p->n_tools, 3);
	for (i = 0; i < p->n_tools; i++) {
		p->tools[i].def = NULL; /* the registry is freed */
		ASSERT_EQ(policy_tool_approval(&p->tools[i], &timeout),
			  strcmp(p->tools[i].name, "deploy.trigger") != 0);
		ASSERT_EQ(timeout,
			  strcmp(p->tools[i].name, "noop") ? TOOL_APPROVAL_TIMEOUT_DEFAULT : 90);
	}
	policy_free(p);
	refused("{\"name\": \"p\", \"tools\": [{\"approval\": \"required\"}]}",
		"/tools/0/name: missing required field");
	refused("{\"name\": \"p\", \"tools\": [{\"name\": \"noop\", \"by\": 1}]}",
		"/tools/0/by: unknown field");
	refused("{\"name\": \"p\", \"tools\": [3]}", "/tools/0: expected a tool name or an object");
}
