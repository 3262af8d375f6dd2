// SPDX-License-Identifier: GPL-2.0
#include <linux/capability.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "policy/compile.h"
#include "harness.h"

static struct policy *load(const char *json)
{
	struct policy_errors errs = {};
	struct policy *p = NULL;
	char msg[512];

	if (policy_load_buffer("test.json", json, strlen(json), NULL, NULL, &p, &errs)) {
		if (errs.n)
			policy_error_format(&errs.v[0], msg, sizeof(msg));
		FAIL("policy does not load: %s", errs.n ? msg : "?");
	}
	policy_errors_clear(&errs);
	return p;
}

static const struct file_rule *rule_for(const struct compiled *c, const char *path)
{
	struct stat want, st;
	size_t i;

	ASSERT_OK(stat(path, &want));
	for (i = 0; i < c->rs.nfiles; i++)
		if (!stat(c->files[i].path, &st) && st.st_dev == want.st_dev &&
		    st.st_ino == want.st_ino)
			return &c->files[i];
	return NULL;
}

TEST(compile_merges_files_and_exec_by_object)
{
	struct policy *p =
		load("{\"name\":\"t\",\"files\":[{\"path\":\"/tmp\",\"rights\":[\"read\","
		     "\"write\"]},{\"path\":\"/nonexistent-x\",\"rights\":[\"read\"],"
		     "\"optional\":true}],\"exec\":{\"allow\":[\"/tmp\",\"/bin/sh\"],"
		     "\"allow_memfd\":true},\"network\":{\"bind\":true,\"sockets\":"
		     "[\"inet\",\"unix\",\"raw\"]},\"audit\":{\"log_allows\":true}}");
	const struct file_rule *r;
	struct compiled c;

	ASSERT_EQ(policy_compile(p, &c), 0);
	ASSERT_EQ(c.rs.nfiles, 2); /* /tmp once, /bin/sh; the absent optional path left out */
	r = rule_for(&c, "/tmp");
	ASSERT(r);
	ASSERT_EQ(r->rights, AGENTD_RIGHT_READ | AGENTD_RIGHT_WRITE | AGENTD_RIGHT_EXEC);
	r = rule_for(&c, "/bin/sh");
	ASSERT(r);
	ASSERT_EQ(r->rights, AGENTD_RIGHT_READ | AGENTD_RIGHT_EXEC);
	ASSERT_EQ(c.rs.flags, AGENTD_AGENT_ALLOW_MEMFD_EXEC | AGENTD_AGENT_ALLOW_BIND |
				      AGENTD_AGENT_LOG_ALLOWS);
	ASSERT_EQ(c.rs.sock_families, (1ULL << AF_INET) | (1ULL << AF_UNIX));
	ASSERT(c.rs.sock_types & (1U << SOCK_RAW));
	compiled_free(&c);
	policy_free(p);
}

/* "icmp" is ICMP echo sockets, a flag the programs read beside the inet families; without it,
 * and with "raw" alone, the flag is clear. */
TEST(compile_icmp_grants_echo_sockets_only)
{
	struct policy *p = load("{\"name\":\"t\",\"network\":{\"sockets\":[\"inet\",\"icmp\"]}}");
	struct compiled c;

	ASSERT_EQ(p->net.sockets, POLICY_SOCK_INET | POLICY_SOCK_ICMP);
	ASSERT_EQ(policy_compile(p, &c), 0);
	ASSERT_EQ(c.rs.flags, AGENTD_AGENT_ALLOW_ICMP);
	ASSERT_EQ(c.rs.sock_families, 1ULL << AF_INET);
	ASSERT(!(c.rs.sock_types & (1U << SOCK_RAW)));
	compiled_free(&c);
	policy_free(p);
	p = load("{\"name\":\"t\",\"network\":{\"sockets\":[\"inet\",\"raw\"]}}");
	ASSERT_EQ(policy_compile(p, &c), 0);
	ASSERT(!(c.rs.flags & AGENTD_AGENT_ALLOW_ICMP));
	compiled_free(&c);
	policy_free(p);
}

TEST(compile_groups_port_ranges_by_network)
{
	struct policy *p = load("{\"name\":\"t\",\"network\":{\"connect\":["
				"{\"cidr\":\"198.51.100.0/24\",\"ports\":[443,\"8000-8080\"],"
				"\"protocol\":\"tcp\"},"
				"{\"cidr\":\"2001:db8::/32\"},"
				"{\"cidr\":\"203.0.113.0/24\",\"ports\":[53],\"protocol\":\"udp\"},"
				"{\"cidr\":\"203.0.113.0/24\",\"protocol\":\"udp\"}]}}");
	struct compiled c;

	ASSERT_EQ(policy_compile(p, &c), 0);
	ASSERT_EQ(c.rs.nnet, 3);
	ASSERT_EQ(c.net[0].cidr.prefixlen, 96 + 24);
	ASSERT_EQ(c.net[0].cidr.addr[10], 0xff);
	ASSERT_EQ(c.net[0].cidr.addr[12], 198);
	ASSERT_EQ(c.net[0].protocols, AGENTD_PROTO_TCP);
	ASSERT_EQ(c.net[0].nranges, 2);
	ASSERT_EQ(c.net[0].port_lo[1], 8000);
	ASSERT_EQ(c.net[0].port_hi[1], 8080);
	ASSERT_EQ(c.net[1].cidr.prefixlen, 32);
	ASSERT_EQ(c.net[1].protocols, AGENTD_PROTO_TCP | AGENTD_PROTO_UDP);
	ASSERT_EQ(c.net[1].nranges, 0); /* every port */
	ASSERT_EQ(c.net[2].nranges, 0); /* the second rule widened it to every port */
	compiled_free(&c);
	policy_free(p);
}

TEST(compile_refuses_what_one_rule_cannot_hold)
{
	struct policy *p =
		load("{\"name\":\"t\",\"network\":{\"connect\":["
		     "{\"cidr\":\"198.51.100.0/24\",\"ports\":[443],\"protocol\":\"tcp\"},"
		     "{\"cidr\":\"198.51.100.0/24\",\"ports\":[53],\"protocol\":\"udp\"}]}}");
	struct compiled c;

	ASSERT_EQ(policy_compile(p, &c), -EINVAL);
	ASSERT(strstr(c.error, "network.connect[1]"));
	compiled_free(&c);
	policy_free(p);

	p = load("{\"name\":\"t\",\"network\":{\"connect\":[{\"cidr\":\"198.51.100.0/24\","
		 "\"ports\":[1,2,3,4,5,6,7,8,9]}]}}");
	ASSERT_EQ(policy_compile(p, &c), -EINVAL);
	ASSERT(strstr(c.error, "more than 8 port ranges"));
	compiled_free(&c);
	policy_free(p);
}

TEST(shipped_profiles_compile)
{
	static const char *const files[] = { "policies/coding-agent.json",
					     "policies/research-agent.json",
					     "policies/report-agent.json" };
	const struct policy_var v[] = { { "workspace", "/tmp" }, { "dropbox", "/tmp" } };
	const struct policy_vars vars = { v, 2 };
	struct tools_registry *reg = NULL;
	struct policy_errors errs = {};
	struct policy *p;
	struct compiled c;
	size_t i;

	ASSERT_EQ(tools_load("policies/tools.json", &reg, &errs), 0);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (policy_load(files[i], &vars, reg, &p, &errs))
			FAIL("%s does not load", files[i]);
		if (policy_compile(p, &c))
			FAIL("%s: %s", files[i], c.error);
		ASSERT(c.rs.nfiles > 0);
		compiled_free(&c);
		policy_free(p);
	}
	tools_free(reg);
	policy_errors_clear(&errs);
}

/* devices.create is the grant and CAP_MKNOD both: the kernel checks the capability too. */
TEST(compile_capabilities_and_devices)
{
	struct policy *p = load("{\"name\":\"t\",\"capabilities\":[\"sys_nice\"],"
				"\"devices\":{\"create\":true}}");
	struct compiled c;

	ASSERT_EQ(policy_compile(p, &c), 0);
	ASSERT_EQ(c.rs.capabilities, (1ULL << CAP_SYS_NICE) | (1ULL << CAP_MKNOD));
	ASSERT(c.rs.flags & AGENTD_AGENT_ALLOW_DEVICES);
	compiled_free(&c);
	policy_free(p);
}
