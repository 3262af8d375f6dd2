// SPDX-License-Identifier: GPL-2.0
/* Shadow mode's userspace (docs/SHADOW.md): the policy's mode, the kernel flag it compiles to,
 * agent.mode on the wire and in the state file, the would-deny record, and the layers' view. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agentd/abi.h"
#include "audit/audit.h"
#include "harness.h"
#include "kernel/state.h"
#include "policy/compile.h"
#include "policy/policy.h"
#include "sandbox/layers.h"
#include "sandbox/shadow.h"
#include "wire/control.h"

static struct policy *load(const char *json)
{
	struct policy_errors errs = { 0 };
	struct policy *p = NULL;

	if (policy_load_buffer("p.json", json, strlen(json), NULL, NULL, &p, &errs)) {
		char line[512];

		policy_error_format(&errs.v[0], line, sizeof(line));
		FAIL("policy: %s", line);
	}
	return p;
}

static __u32 flags_of(const char *json)
{
	struct policy *p = load(json);
	struct compiled c;
	__u32 flags;

	ASSERT_EQ(policy_compile(p, &c), 0);
	flags = c.rs.flags;
	compiled_free(&c);
	policy_free(p);
	return flags;
}

TEST(shadow_policy_mode_compiles_to_the_agent_flag)
{
	ASSERT(flags_of("{\"name\": \"s\", \"mode\": \"shadow\"}") & AGENTD_AGENT_SHADOW);
	ASSERT(!(flags_of("{\"name\": \"s\", \"mode\": \"enforce\"}") & AGENTD_AGENT_SHADOW));
	ASSERT(!(flags_of("{\"name\": \"s\"}") & AGENTD_AGENT_SHADOW));
	ASSERT(!(flags_of("{\"name\": \"s\", \"mode\": \"act\"}") & AGENTD_AGENT_SHADOW));
	ASSERT_STREQ(policy_mode_name(POLICY_MODE_SHADOW), "shadow");
}

TEST(shadow_agent_mode_request_is_checked)
{
	struct control_request req;
	struct control_error err = { "", "" };
	const char *ok =
		"{\"id\": 1, \"cmd\": \"agent.mode\", \"name\": \"t\", \"mode\": \"shadow\"}";
	const char *bad =
		"{\"id\": 1, \"cmd\": \"agent.mode\", \"name\": \"t\", \"mode\": \"off\"}";
	const char *none = "{\"id\": 1, \"cmd\": \"agent.mode\", \"name\": \"t\"}";
	const char *other =
		"{\"id\": 1, \"cmd\": \"agent.info\", \"name\": \"t\", \"mode\": \"shadow\"}";

	ASSERT_EQ(control_request_parse(ok, strlen(ok), &req, &err), 0);
	ASSERT_EQ(req.cmd, CONTROL_AGENT_MODE);
	ASSERT_STREQ(req.mode, "shadow");
	ASSERT_EQ(control_request_parse(bad, strlen(bad), &req, &err), -EINVAL);
	ASSERT_STREQ(err.message, "\"mode\" must be \"shadow\" or \"enforce\"");
	ASSERT_EQ(control_request_parse(none, strlen(none), &req, &err), -EINVAL);
	ASSERT_STREQ(err.message, "agent.mode needs \"mode\"");
	ASSERT_EQ(control_request_parse(other, strlen(other), &req, &err), -EINVAL);
}

TEST(shadow_mode_kept_in_the_agent_state)
{
	const char *bad = "{\"name\": \"t\", \"id\": 3, \"policy\": \"/p.json\", \"tools\": \"\", "
			  "\"vars\": {}, \"generation\": 1, \"mode\": \"off\"}";
	struct agent_state s = { .id = 3 }, again;
	json_t *doc;
	char *text;

	snprintf(s.name, sizeof(s.name), "t");
	snprintf(s.policy, sizeof(s.policy), "/p.json");
	snprintf(s.mode, sizeof(s.mode), "shadow");
	doc = agent_state_json(&s);
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	ASSERT(text);
	ASSERT_EQ(agent_state_parse(text, strlen(text), &again), 0);
	ASSERT_STREQ(again.mode, "shadow");
	free(text);
	ASSERT_EQ(agent_state_parse(bad, strlen(bad), &again), -EINVAL);
}

TEST(shadow_would_deny_record)
{
	ASSERT_STREQ(audit_decision_name(AUDIT_DECISION_WOULD_DENY), "would-deny");
	ASSERT_EQ(audit_decision_parse("would-deny"), AUDIT_DECISION_WOULD_DENY);
}

/* Without BPF LSM, shadow mode applies no Landlock and says what is then not enforced. */
TEST(shadow_layers_say_landlock_is_not_applied)
{
	struct policy *p = load("{\"name\": \"s\", \"mode\": \"shadow\", \"files\": "
				"[{\"path\": \"/\", \"rights\": [\"read\"]}]}");
	char buf[256], line[1024];
	struct layers l;
	struct gap g;

	ASSERT_EQ(layers_parse("cgroup,landlock:4,seccomp", 4, &l), 0);
	ASSERT(layers_use_landlock(&l));
	l.shadow = true;
	ASSERT(!layers_use_landlock(&l));
	layers_enforcer(&l, PART_FILES, buf, sizeof(buf));
	ASSERT_STREQ(buf, "NOT ENFORCED (shadow mode: Landlock NOT APPLIED, it cannot record and "
			  "allow)");
	layers_enforcer(&l, PART_NETWORK, buf, sizeof(buf));
	ASSERT_STREQ(buf,
		     "cgroup-BPF (shadow mode: the agent's rules record would-deny and allow)");
	ASSERT_EQ(layers_gap(p, &l, &g), 0);
	gap_format_line(&g, line, sizeof(line));
	if (strncmp(line, "files; network.sockets: shadow; ", 32))
		FAIL("gap of a shadow policy without BPF LSM: %s", line);
	gap_free(&g);
	ASSERT_EQ(layers_parse("bpf-lsm,cgroup,seccomp", 0, &l), 0);
	l.shadow = true;
	ASSERT_EQ(layers_gap(p, &l, &g), 0);
	ASSERT_EQ(g.n, 0);
	gap_free(&g);
	policy_free(p);
}

TEST(shadow_seccomp_leaves_socket_families_to_the_record)
{
	struct sandbox_seccomp s = { .families = 1ULL << 2, .types = 1U << 1, .icmp = false };

	shadow_seccomp(&s);
	ASSERT_EQ(s.families & (1ULL << 16), 1ULL << 16); /* AF_NETLINK */
	ASSERT_EQ(s.types & (1U << 3), 1U << 3); /* SOCK_RAW */
	ASSERT(!s.icmp);
}
