// SPDX-License-Identifier: GPL-2.0
/* The tools registry's checks, and the position locator the error messages rely on. */
#include <stdio.h>
#include "harness.h"
#include "policy/jsonpos.h"
#include "policy/policy.h"
#include "sandbox/tool_sandbox.h"
#include "policy/tools.h"

/* The registry text must be refused with an error line containing want. */
static void refused(const char *json, const char *want)
{
	struct policy_errors errs = { 0 };
	struct tools_registry *reg;
	char text[8192], line[1024];
	size_t i, n = 0;

	ASSERT_EQ(tools_load_buffer("t.json", json, strlen(json), &reg, &errs), -EINVAL);
	ASSERT(reg == NULL);
	text[0] = '\0';
	for (i = 0; i < errs.n; i++) {
		policy_error_format(&errs.v[i], line, sizeof(line));
		n += snprintf(text + n, n < sizeof(text) ? sizeof(text) - n : 0, "%s\n", line);
	}
	policy_errors_clear(&errs);
	if (!strstr(text, want))
		FAIL("expected an error containing\n  %s\ngot\n%s", want, text);
}

TEST(tools_registry_parsed)
{
	static const char json[] =
		"{\"tools\": [{\"name\": \"noop\", \"effect\": \"observe\", \"builtin\": "
		"\"noop\"},\n"
		" {\"name\": \"fs.read\", \"effect\": \"observe\", \"exec\": [\"/usr/bin/cat\", "
		"\"--\", \"{path}\"],\n"
		"  \"args\": {\"path\": {\"type\": \"string\", \"max_length\": 100, \"pattern\": "
		"\"^/\"}, \"n\": {\"type\": \"integer\"}},\n"
		"  \"timeout\": \"2m\", \"output_cap\": 1024, \"env\": {\"LC_ALL\": \"C\"}, "
		"\"secrets\": [\"TOKEN\"]}]}";
	struct policy_errors errs = { 0 };
	struct tools_registry *reg;
	const struct tool *t;

	ASSERT_EQ(tools_load_buffer("t.json", json, strlen(json), &reg, &errs), 0);
	ASSERT_EQ(reg->n, 2);
	t = tools_find(reg, "noop");
	ASSERT(t && t->builtin && !t->exec);
	ASSERT_EQ(t->timeout_sec, TOOL_TIMEOUT_DEFAULT);
	t = tools_find(reg, "fs.read");
	ASSERT(t && !t->builtin);
	ASSERT_EQ(t->n_exec, 3);
	ASSERT_STREQ(t->exec[2], "{path}");
	ASSERT_EQ(t->n_args, 2);
	ASSERT_EQ(t->args[0].max_length, 100);
	ASSERT_STREQ(t->args[0].pattern, "^/");
	ASSERT_EQ(t->args[1].type, TOOL_ARG_INTEGER);
	ASSERT_EQ(t->timeout_sec, 120);
	ASSERT_EQ(t->output_cap, 1024);
	ASSERT_STREQ(t->env[0], "LC_ALL=C");
	ASSERT_STREQ(t->secrets[0], "TOKEN");
	ASSERT(tools_find(reg, "fs") == NULL);
	tools_free(reg);
	tools_free(NULL);
}

TEST(tools_registry_errors_placed)
{
	refused("{\"tools\": [{\"name\": \"a\", \"effect\": \"observe\"}]}",
		"t.json:1:12: /tools/0: expected exactly one of exec, builtin; found neither");
	refused("{\"tools\": [{\"name\": \"a\", \"effect\": \"observe\", \"builtin\": \"noop\", "
		"\"exec\": [\"/bin/true\"]}]}",
		"expected exactly one of exec, builtin; found both");
	refused("{\"tools\": [{\"name\": \"a\", \"effect\": \"destroy\", \"builtin\": \"noop\"}]}",
		"t.json:1:36: /tools/0/effect: expected one of observe, report, actuate; found "
		"\"destroy\"");
	refused("{\"tools\": [{\"name\": \"a\", \"effect\": \"observe\", \"builtin\": \"shell\"}]}",
		"/tools/0/builtin: expected one of noop, report; found \"shell\"");
	refused("{\"tools\": [{\"name\": \"a\", \"effect\": \"observe\",\n \"exec\": "
		"[\"/bin/echo\", "
		"\"x{path}\"]}]}",
		"t.json:2:24: /tools/0/exec/1: expected a placeholder naming a declared argument; "
		"found \"{path}\"");
	refused("{\"tools\": [{\"name\": \"a\", \"effect\": \"observe\", \"exec\": [\"/bin/echo\", "
		"\"{x\"], \"args\": {\"x\": {\"type\": \"string\"}}}]}",
		"/tools/0/exec/1: expected {name} placeholders; found an unmatched '{'");
	refused("{\"tools\": [{\"name\": \"a\", \"effect\": \"observe\", \"exec\": [\"echo\"]}]}",
		"/tools/0/exec/0: expected an absolute program path without placeholders");
	refused("{\"tools\": [{\"name\": \"a\", \"effect\": \"observe\", \"builtin\": \"noop\"},\n"
		" {\"name\": \"a\", \"effect\": \"observe\", \"builtin\": \"noop\"}]}",
		"t.json:2:11: /tools/1/name: expected a unique name; found \"a\" again (first at "
		"/tools/0)");
	refused("{\"tools\": [{\"name\": \"a\", \"effect\": \"observe\", \"builtin\": \"noop\", "
		"\"args\": {\"x\": {\"type\": \"string\", \"pattern\": \"(\"}}}]}",
		"/tools/0/args/x/pattern: expected a POSIX extended regular expression; found "
		"\"(\"");
	/* Patterns whose automaton would explode in regcomp() (found by fuzz_tools). */
	refused("{\"tools\": [{\"name\": \"a\", \"effect\": \"observe\", \"builtin\": \"noop\", "
		"\"args\": {\"x\": {\"type\": \"string\", \"pattern\": \"^http+++s\"}}}]}",
		"/tools/0/args/x/pattern: expected a pattern of bounded size; found one a "
		"quantifier "
		"applied to a quantifier");
	refused("{\"tools\": [{\"name\": \"a\", \"effect\": \"observe\", \"builtin\": \"noop\", "
		"\"args\": {\"x\": {\"type\": \"string\", \"pattern\": \"((a{100}){100})\"}}}]}",
		"/tools/0/args/x/pattern: expected a pattern of bounded size; found one a repeated "
		"group that holds a repetition");
	/*
	 * Patterns glibc's matcher takes seconds on, in agentd's loop: nested repetition
	 * ("(a{1,255}){1,30}b$": past 20 s on 4 KiB of "a"), long runs of optional copies
	 * ("a{0,255}" 8 times: 16 s on 4 KiB).
	 */
	refused("{\"tools\": [{\"name\": \"a\", \"effect\": \"observe\", \"builtin\": \"noop\", "
		"\"args\": {\"x\": {\"type\": \"string\", \"pattern\": \"(a{1,255}){1,30}b$\"}}}]}",
		"/tools/0/args/x/pattern: expected a pattern of bounded size; found one a repeated "
		"group that holds a repetition");
	refused("{\"tools\": [{\"name\": \"a\", \"effect\": \"observe\", \"builtin\": \"noop\", "
		"\"args\": {\"x\": {\"type\": \"string\", \"pattern\": "
		"\"^a{0,255}a{0,255}a{0,255}a{0,255}a{0,255}a{0,255}a{0,255}a{0,255}$\"}}}]}",
		"/tools/0/args/x/pattern: expected a pattern of bounded size; found one too "
		"complex (more than 300 states once its repetitions are expanded)");
	refused("{\"tools\": [{\"name\": \"a\", \"effect\": \"observe\", \"builtin\": \"noop\", "
		"\"args\": {\"x\": {\"type\": \"string\", \"pattern\": \"a{1000}\"}}}]}",
		"/tools/0/args/x/pattern: expected a pattern of bounded size; found one a "
		"repetition "
		"count above 255");
	refused("{\"tools\": [{\"name\": \"a\", \"effect\": \"observe\", \"builtin\": \"noop\", "
		"\"args\": {\"x\": {\"type\": \"integer\", \"max_length\": 3}}}]}",
		"/tools/0/args/x: max_length, pattern and enum apply to string arguments only");
	refused("{\"tools\": [{\"name\": \"a\", \"effect\": \"observe\", \"builtin\": \"noop\", "
		"\"env\": {\"lower\": \"x\"}, \"secrets\": [\"ok\"], \"timeout\": \"2d\", "
		"\"output_cap\": 0, \"colour\": 1}]}",
		"/tools/0/colour: unknown field");
	refused("{\"tools\": [{\"name\": \"a\", \"effect\": \"observe\", \"builtin\": \"noop\", "
		"\"env\": {\"lower\": \"x\"}}]}",
		"/tools/0/env/lower: expected a variable name matching [A-Z_][A-Z0-9_]*");
	refused("{\"tools\": [{\"name\": \"a\", \"effect\": \"observe\", \"builtin\": \"noop\", "
		"\"timeout\": \"2d\"}]}",
		"/tools/0/timeout: expected a duration from 1s to 3600s");
	refused("{\"tools\": [{\"name\": \"A b\", \"effect\": \"observe\", \"builtin\": "
		"\"noop\"}]}",
		"/tools/0/name: expected a tool name matching");
	refused("{\"tools\": {}}",
		"t.json:1:11: /tools: expected an array of tools; found an object");
	refused("{}", "t.json:1:1: /tools: missing required field");
}

static void at(const char *doc, const char *ptr, int want_line, int want_col)
{
	int line = 0, col = 0;

	if (jsonpos_locate(doc, strlen(doc), ptr, &line, &col))
		FAIL("%s not found", ptr);
	if (line != want_line || col != want_col)
		FAIL("%s at %d:%d, expected %d:%d", ptr, line, col, want_line, want_col);
}

/* A tool's ids: gid defaults to the uid; root and builtins refused. */
TEST(tools_ids)
{
	static const char json[] =
		"{\"tools\": [{\"name\": \"a\", \"effect\": \"observe\", \"exec\": "
		"[\"/bin/true\"], "
		"\"uid\": 1000},\n"
		" {\"name\": \"b\", \"effect\": \"observe\", \"exec\": [\"/bin/true\"], \"uid\": "
		"7, "
		"\"gid\": 8},\n"
		" {\"name\": \"c\", \"effect\": \"observe\", \"exec\": [\"/bin/true\"]}]}";
	static const char head[] = "{\"tools\": [{\"name\": \"a\", \"effect\": \"observe\", "
				   "\"exec\": [\"/bin/true\"], ";
	struct policy_errors errs = { 0 };
	struct tools_registry *reg;
	char doc[512];

	ASSERT_EQ(tools_load_buffer("t.json", json, strlen(json), &reg, &errs), 0);
	ASSERT_EQ(tools_find(reg, "a")->uid, 1000);
	ASSERT_EQ(tools_find(reg, "a")->gid, 1000);
	ASSERT_EQ(tools_find(reg, "b")->uid, 7);
	ASSERT_EQ(tools_find(reg, "b")->gid, 8);
	ASSERT_EQ(tools_find(reg, "c")->uid, 0);
	tools_free(reg);
	snprintf(doc, sizeof(doc), "%s\"uid\": 0}]}", head);
	refused(doc, "/tools/0/uid: expected an id from 1 to 4294967294; found 0");
	snprintf(doc, sizeof(doc), "%s\"uid\": 4294967295}]}", head);
	refused(doc, "/tools/0/uid: expected an id from 1 to 4294967294");
	snprintf(doc, sizeof(doc), "%s\"uid\": \"nobody\"}]}", head);
	refused(doc, "/tools/0/uid: expected an integer id");
	snprintf(doc, sizeof(doc), "%s\"gid\": 5}]}", head);
	refused(doc, "/tools/0: a gid without a uid");
	refused("{\"tools\": [{\"name\": \"n\", \"effect\": \"observe\", \"builtin\": \"noop\", "
		"\"uid\": 4}]}",
		"/tools/0/uid: a builtin runs in agentd: it takes no uid");
}

/* Root only when said, and never with a uid; programs are absolute paths. */
TEST(tools_user_root_and_programs)
{
	static const char json[] =
		"{\"tools\": [{\"name\": \"r\", \"effect\": \"observe\", \"exec\": "
		"[\"/bin/true\"], \"user\": \"root\"},\n"
		" {\"name\": \"s\", \"effect\": \"observe\", \"exec\": [\"/bin/sh\", \"-c\", "
		"\"sleep 1\"], \"programs\": [\"/bin/sleep\"]}]}";
	static const char head[] = "{\"tools\": [{\"name\": \"a\", \"effect\": \"observe\", "
				   "\"exec\": [\"/bin/true\"], ";
	struct policy_errors errs = { 0 };
	struct tools_registry *reg;
	char doc[512];

	ASSERT_EQ(tools_load_buffer("t.json", json, strlen(json), &reg, &errs), 0);
	ASSERT(tools_find(reg, "r")->root);
	ASSERT(!tools_find(reg, "s")->root);
	ASSERT_EQ(tools_find(reg, "s")->n_programs, 1);
	ASSERT_STREQ(tools_find(reg, "s")->programs[0], "/bin/sleep");
	tools_free(reg);
	snprintf(doc, sizeof(doc), "%s\"user\": \"nobody\"}]}", head);
	refused(doc, "/tools/0/user: expected one of \"root\"");
	snprintf(doc, sizeof(doc), "%s\"user\": \"root\", \"uid\": 5}]}", head);
	refused(doc, "/tools/0/user: expected either user or uid; found both");
	snprintf(doc, sizeof(doc), "%s\"programs\": [\"sleep\"]}]}", head);
	refused(doc, "/tools/0/programs/0: expected an absolute path");
}

/* A run's rights: the caller's read rights (its write rights too for an actuating tool), never
 * its exec rights; exec only on the tool's programs and the loader; a deny inside a grant, which
 * Landlock cannot hold, refuses the run. */
TEST(tool_sandbox_plan_is_at_most_the_callers)
{
	static const char reg_json[] =
		"{\"tools\": [{\"name\": \"ro\", \"effect\": \"observe\", \"exec\": "
		"[\"/bin/true\"]},\n"
		" {\"name\": \"act\", \"effect\": \"actuate\", \"exec\": [\"/bin/true\"]}]}";
	static const char pol_json[] =
		"{\"name\": \"p\", \"files\": [{\"path\": \"/tmp\", \"rights\": [\"read\", "
		"\"write\", \"create\"]}, {\"path\": \"/etc/hostname\", \"rights\": [\"write\"]}],"
		" \"exec\": {\"allow\": [\"/bin/sh\"]}, \"tools\": [\"ro\", \"act\"]}";
	static const char deny_json[] =
		"{\"name\": \"d\", \"files\": [{\"path\": \"/usr\", \"rights\": [\"read\"]},"
		" {\"path\": \"/usr/bin\", \"rights\": []}], \"tools\": [\"ro\"]}";
	struct policy_errors errs = { 0 };
	struct tools_registry *reg;
	struct landlock_plan *pl;
	struct policy *p;
	char why[256] = "";
	size_t i;
	__u64 tmp = 0, sh = 0, truebin = 0, host = 0;

	ASSERT_EQ(tools_load_buffer("t.json", reg_json, strlen(reg_json), &reg, &errs), 0);
	ASSERT_EQ(policy_load_buffer("p.json", pol_json, strlen(pol_json), NULL, reg, &p, &errs),
		  0);
	ASSERT_EQ(tool_sandbox_plan(p, tools_find(reg, "ro"), 3, &pl, why, sizeof(why)), 0);
	for (i = 0; i < pl->n; i++) {
		if (!strcmp(pl->rules[i].path, "/tmp"))
			tmp = pl->rules[i].access;
		if (!strcmp(pl->rules[i].path, "/bin/sh"))
			sh = pl->rules[i].access;
		if (!strcmp(pl->rules[i].path, "/bin/true"))
			truebin = pl->rules[i].access;
		if (!strcmp(pl->rules[i].path, "/etc/hostname"))
			host = pl->rules[i].access;
	}
	ASSERT_EQ(tmp, LL_FS_READ_FILE | LL_FS_READ_DIR); /* ABI 3: no ioctl right */
	ASSERT_EQ(sh & LL_FS_EXECUTE, 0); /* the agent may run it; the tool may only read it */
	ASSERT(sh & LL_FS_READ_FILE);
	ASSERT(truebin & LL_FS_EXECUTE);
	ASSERT_EQ(host, 0); /* write-only for the agent: nothing for a tool that observes */
	landlock_plan_free(pl);
	ASSERT_EQ(tool_sandbox_plan(p, tools_find(reg, "act"), 3, &pl, why, sizeof(why)), 0);
	for (i = 0; i < pl->n; i++)
		if (!strcmp(pl->rules[i].path, "/tmp"))
			tmp = pl->rules[i].access;
	ASSERT(tmp & LL_FS_WRITE_FILE);
	ASSERT(tmp & LL_FS_MAKE_REG);
	ASSERT_EQ(tmp & LL_FS_EXECUTE, 0);
	landlock_plan_free(pl);
	policy_free(p);
	ASSERT_EQ(policy_load_buffer("d.json", deny_json, strlen(deny_json), NULL, reg, &p, &errs),
		  0);
	ASSERT_EQ(tool_sandbox_plan(p, tools_find(reg, "ro"), 3, &pl, why, sizeof(why)), -EPERM);
	ASSERT(strstr(why, "takes rights away at /usr/bin inside a tree it grants"));
	policy_free(p);
	tools_free(reg);
}

/* Per-tool limits: parsed as a policy's, refused with their place when wrong. */
TEST(tools_limits)
{
	static const char json[] =
		"{\"tools\": [{\"name\": \"a\", \"effect\": \"observe\", \"exec\": "
		"[\"/bin/true\"], "
		"\"limits\": {\"cpu\": 0.5, \"memory\": \"64M\", \"pids\": 16}},\n"
		" {\"name\": \"b\", \"effect\": \"observe\", \"exec\": [\"/bin/true\"]}]}";
	static const char head[] = "{\"tools\": [{\"name\": \"a\", \"effect\": \"observe\", "
				   "\"exec\": [\"/bin/true\"], "
				   "\"limits\": ";
	struct policy_errors errs = { 0 };
	struct tools_registry *reg;
	const struct tool *t;
	char doc[512];

	ASSERT_EQ(tools_load_buffer("t.json", json, strlen(json), &reg, &errs), 0);
	t = tools_find(reg, "a");
	ASSERT_EQ(t->limits.cpu_millicores, 500);
	ASSERT_EQ(t->limits.memory_bytes, 64ULL << 20);
	ASSERT_EQ(t->limits.pids, 16);
	t = tools_find(reg, "b");
	ASSERT(!t->limits.cpu_millicores && !t->limits.memory_bytes && !t->limits.pids);
	tools_free(reg);
	snprintf(doc, sizeof(doc), "%s{\"pids\": 0}}]}", head);
	refused(doc, "/tools/0/limits/pids: expected an integer from 1 to 4194304; found 0");
	snprintf(doc, sizeof(doc), "%s{\"memory\": \"64X\"}}]}", head);
	refused(doc, "/tools/0/limits/memory: expected a size as bytes or \"512M\"");
	snprintf(doc, sizeof(doc), "%s{\"cpu\": 0}}]}", head);
	refused(doc, "/tools/0/limits/cpu: expected a number of cores from 0.001 to 1024");
	snprintf(doc, sizeof(doc), "%s{\"wall_clock\": \"1m\"}}]}", head);
	refused(doc, "/tools/0/limits/wall_clock");
	snprintf(doc, sizeof(doc), "%s[]}]}", head);
	refused(doc, "/tools/0/limits: expected an object");
	refused("{\"tools\": [{\"name\": \"n\", \"effect\": \"observe\", \"builtin\": \"noop\", "
		"\"limits\": {\"pids\": 4}}]}",
		"/tools/0/limits: a builtin runs in agentd: it takes no limits");
}

/* "network": none by default, public when said; anything else, or on a builtin, refused. */
TEST(tools_network_is_none_unless_public)
{
	static const char json[] =
		"{\"tools\": [{\"name\": \"a\", \"effect\": \"observe\", \"exec\": "
		"[\"/bin/true\"]},"
		" {\"name\": \"b\", \"effect\": \"observe\", \"exec\": [\"/bin/true\"],"
		" \"network\": \"public\"}]}";
	struct policy_errors errs = { 0 };
	struct tools_registry *reg;

	ASSERT_EQ(tools_load_buffer("t.json", json, strlen(json), &reg, &errs), 0);
	ASSERT(!tools_find(reg, "a")->network_public);
	ASSERT(tools_find(reg, "b")->network_public);
	tools_free(reg);
	refused("{\"tools\": [{\"name\": \"n\", \"effect\": \"observe\", \"exec\": "
		"[\"/bin/true\"], "
		"\"network\": \"private\"}]}",
		"/tools/0/network: expected one of none, public; found \"private\"");
	refused("{\"tools\": [{\"name\": \"n\", \"effect\": \"observe\", \"builtin\": \"noop\", "
		"\"network\": \"public\"}]}",
		"/tools/0/network: a builtin runs in agentd: it takes no network");
}

TEST(jsonpos_locates_values)
{
	static const char doc[] = "{\"a\": 1,\n"
				  "  \"b\": [true, {\"c/d\": \"x\", \"e~\": [ ]}],\n"
				  "\t\"\\u00e9\\\"\": \"\xc3\xa9\", \"f\": \"\xc3\xa9\"}";

	at(doc, "", 1, 1);
	at(doc, "/a", 1, 7);
	at(doc, "/b", 2, 8);
	at(doc, "/b/0", 2, 9);
	at(doc, "/b/1/c~1d", 2, 23);
	at(doc, "/b/1/e~0", 2, 34);
	at(doc, "/\xc3\xa9\"", 3, 14);
	/* Columns count characters, as jansson does: the two-byte é is one column. */
	at(doc, "/f", 3, 24);
}

TEST(jsonpos_absent_or_malformed)
{
	static const char *const bad[] = { "{\"a\": [1, 2",
					   "{\"a\" 1}",
					   "{\"a\": [1, 2}",
					   "{\"x\": \"\\u12",
					   "{\"x\": \"\\q\", \"a\": 1}",
					   "{\"x\": \"\\ud800\\u0041\", \"a\": 1}",
					   "",
					   "[",
					   "{",
					   "{\"x\": , \"a\": 1}" };
	int line, col;
	size_t i;

	ASSERT_EQ(jsonpos_locate("{\"a\": 1}", 8, "/b", &line, &col), -ENOENT);
	ASSERT_EQ(jsonpos_locate("{\"a\": 1}", 8, "/a/0", &line, &col), -ENOENT);
	ASSERT_EQ(jsonpos_locate("[1, 2]", 6, "/2", &line, &col), -ENOENT);
	ASSERT_EQ(jsonpos_locate("[1, 2]", 6, "/01", &line, &col), -ENOENT);
	ASSERT_EQ(jsonpos_locate("[1, 2]", 6, "/-", &line, &col), -ENOENT);
	ASSERT_EQ(jsonpos_locate("{\"a\": 1}", 8, "a", &line, &col), -ENOENT);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ASSERT_EQ(jsonpos_locate(bad[i], strlen(bad[i]), "/a/2", &line, &col), -ENOENT);
	/* The buffer's length, not a NUL, ends the document. */
	ASSERT_EQ(jsonpos_locate("{\"a\": 1}", 5, "/a", &line, &col), -ENOENT);
}
