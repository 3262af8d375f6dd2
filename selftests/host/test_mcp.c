// SPDX-License-Identifier: GPL-2.0
/*
 * Host tier: agent-tool mcp against the official MCP TypeScript SDK (selftests/mcp/client.mjs,
 * installed by make deps). A real agentd with two agents; the SDK's client launches
 * `agentctl run AGENT -- agent-tool mcp` as its stdio server, lists and calls tools; the audit
 * log is read once agentd has stopped.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "harness.h"
#include "testlib.h"

#define SECRET "s3cr3t-mcp-Value"

static const char tools_json[] =
	"{\"tools\": [\n"
	" {\"name\": \"noop\", \"effect\": \"observe\", \"builtin\": \"noop\"},\n"
	" {\"name\": \"echo\", \"effect\": \"observe\", \"description\": \"Prints msg and n.\",\n"
	"  \"exec\": [\"/bin/echo\", \"{msg}\", \"{n}\"],\n"
	"  \"args\": {\"msg\": {\"type\": \"string\", \"max_length\": 16, \"pattern\": "
	"\"^[a-z ]*$\"},\n"
	"           \"n\": {\"type\": \"integer\"}}},\n"
	" {\"name\": \"env\", \"effect\": \"observe\", \"exec\": [\"/bin/sh\", \"-c\", "
	"\"echo token=$TOKEN; echo mode=quiet >&2; exit 3\"], \"secrets\": [\"TOKEN\"]},\n"
	" {\"name\": \"hold\", \"effect\": \"observe\", \"exec\": [\"/bin/sh\", \"-c\", "
	"\"read x < \\\"$0\\\"\", \"{fifo}\"],\n"
	"  \"args\": {\"fifo\": {\"type\": \"string\", \"pattern\": \"^/\"}}},\n"
	" {\"name\": \"deploy\", \"effect\": \"actuate\", \"exec\": [\"/bin/true\"]}\n"
	"]}\n";

static const char policy_fmt[] =
	"{\"name\": \"%s\", \"files\": [{\"path\": \"/\", \"rights\": [\"read\", \"exec\"]},"
	" {\"path\": \"/dev/null\", \"rights\": [\"read\", \"write\"]}],"
	" \"network\": {\"sockets\": [\"inet\", \"unix\"]}, \"tools\": [%s]}\n";

struct mcp_env {
	struct test_daemon d;
	char top[PATH_MAX], node[PATH_MAX];
};

/* node and the SDK, or SKIP (FAIL under CI=true, where make deps installed them). */
static void find_node(struct mcp_env *e)
{
	char sdk[PATH_MAX + 96];
	const char *why = NULL;

	snprintf(e->top, sizeof(e->top), "%s/..", test_bin_dir());
	snprintf(e->node, sizeof(e->node), "/usr/bin/node");
	snprintf(sdk, sizeof(sdk),
		 "%s/selftests/mcp/node_modules/@modelcontextprotocol/sdk/package.json", e->top);
	if (access(e->node, X_OK))
		why = "no /usr/bin/node (Debian's nodejs)";
	else if (access(sdk, R_OK))
		why = "the MCP SDK is not installed in selftests/mcp/node_modules (make deps)";
	if (why && getenv("CI") && !strcmp(getenv("CI"), "true"))
		FAIL("%s", why);
	if (why)
		SKIP("%s", why);
}

static void add_agent(struct mcp_env *e, const char *name, const char *tools)
{
	char path[PATH_MAX + 32], policy[1024], tools_path[PATH_MAX + 32], out[4096];
	int status;

	snprintf(path, sizeof(path), "%s/%s.json", e->d.dir, name);
	snprintf(tools_path, sizeof(tools_path), "%s/tools.json", e->d.dir);
	snprintf(policy, sizeof(policy), policy_fmt, name, tools);
	test_write(path, policy, 0644);
	status = agentctl_run(out, sizeof(out), "agent", "add", name, "--policy", path, "--tools",
			      tools_path, NULL);
	if (status)
		FAIL("agent add %s: exit %d: %s", name, status, out);
}

static struct mcp_env *setup(void)
{
	static struct mcp_env e;
	char path[PATH_MAX + 32];

	memset(&e, 0, sizeof(e));
	find_node(&e);
	test_daemon_init(&e.d, "mcp");
	snprintf(path, sizeof(path), "%s/tools.json", e.d.dir);
	test_write(path, tools_json, 0644);
	ASSERT_OK(mkdir(e.d.state, 0700));
	snprintf(path, sizeof(path), "%s/secrets", e.d.state);
	ASSERT_OK(mkdir(path, 0700));
	snprintf(path, sizeof(path), "%s/secrets/TOKEN", e.d.state);
	test_write(path, SECRET "\n", 0600);
	test_daemon_start(&e.d, "--allow-partial", NULL);
	add_agent(&e, "t-a", "\"noop\", \"echo\", \"env\", \"hold\"");
	add_agent(&e, "t-b", "\"noop\"");
	return &e;
}

/* node client.mjs MODE AGENT TOOLS [MORE...]: its output (stdout and stderr) in out, its exit
 * status. */
static int client(struct mcp_env *e, const char *const args[], char *out, size_t outsz)
{
	char *argv[10] = { "node" };
	const char *mode = args[0];
	size_t i;

	char script[PATH_MAX + 32], log[PATH_MAX + 32], prog[PATH_MAX + 16], tool[PATH_MAX];
	int status, fd;
	ssize_t n;
	pid_t pid;

	/* Run inside the agent: a copy it sees (its /tmp is private) and reaches (the checkout
	 * may be 0700). */
	test_bin_for_all("agent-tool", tool, sizeof(tool));
	snprintf(script, sizeof(script), "%s/selftests/mcp/client.mjs", e->top);
	snprintf(log, sizeof(log), "%s/client-%s.log", e->d.dir, mode);
	pid = fork();
	ASSERT_OK(pid);
	if (pid == 0) {
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(127);
		snprintf(prog, sizeof(prog), "%s/agentctl", test_bin_dir());
		setenv("MCP_AGENTCTL", prog, 1);
		setenv("MCP_AGENT_TOOL", tool, 1);
		argv[1] = script;
		for (i = 0; args[i] && i < 7; i++)
			argv[i + 2] = (char *)args[i];
		execv(e->node, argv);
		_exit(127);
	}
	ASSERT_OK(waitpid(pid, &status, 0));
	fd = open(log, O_RDONLY | O_CLOEXEC);
	ASSERT_OK(fd);
	n = read(fd, out, outsz - 1);
	close(fd);
	out[n > 0 ? n : 0] = '\0';
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void expect_client_ok(struct mcp_env *e, const char *const args[])
{
	char out[16384];

	if (client(e, args, out, sizeof(out)) || !strstr(out, "ok "))
		FAIL("client.mjs %s %s:\n%s", args[0], args[1], out);
}

static void stop_and_read_audit(struct mcp_env *e, char *buf, size_t bufsz)
{
	char path[PATH_MAX + 16];
	size_t n;
	FILE *f;

	proc_stop(e->d.agentd, SIGTERM);
	snprintf(path, sizeof(path), "%s/audit.log", e->d.audit);
	f = fopen(path, "re");
	ASSERT(f);
	n = fread(buf, 1, bufsz - 1, f);
	fclose(f);
	buf[n] = '\0';
}

/* Every record matches docs/audit.schema.json (selftests/audit/validate_schema.py). */
static void expect_schema_valid(struct mcp_env *e)
{
	char script[PATH_MAX + 64];
	int status;
	pid_t pid;

	snprintf(script, sizeof(script), "%s/selftests/audit/validate_schema.py", e->top);
	pid = fork();
	ASSERT_OK(pid);
	if (pid == 0) {
		execl("/usr/bin/python3", "python3", script, e->d.audit, (char *)NULL);
		_exit(127);
	}
	ASSERT_OK(waitpid(pid, &status, 0));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		FAIL("the audit log does not match docs/audit.schema.json");
}

/* Whether a line of log holds every needle. */
static bool audit_has(const char *log, const char *const needles[])
{
	const char *p, *nl;
	size_t i;

	for (p = log; (nl = strchr(p, '\n')); p = nl + 1) {
		for (i = 0; needles[i] && memmem(p, nl - p, needles[i], strlen(needles[i])); i++)
			;
		if (!needles[i])
			return true;
	}
	return false;
}

static void expect_audit(const char *log, const char *const needles[])
{
	if (!audit_has(log, needles))
		FAIL("no audit record with \"%s\", \"%s\", \"%s\"...", needles[0], needles[1],
		     needles[2]);
}

TEST(mcp_sdk_client_lists_and_calls_the_granted_tools)
{
	static char log[1 << 20];
	struct mcp_env *e = setup();

	expect_client_ok(e, (const char *[]){ "granted", "t-a", "echo,env,hold,noop", NULL });
	expect_client_ok(e, (const char *[]){ "raw", "t-a", "", NULL });
	stop_and_read_audit(e, log, sizeof(log));
	expect_audit(log, (const char *[]){ "\"op\":\"tool-call\"", "\"agent_name\":\"t-a\"",
					    "\"name\":\"agentd.tools\"", "builtin=list", NULL });
	expect_audit(log, (const char *[]){ "\"op\":\"tool-call\"", "\"agent_name\":\"t-a\"",
					    "\"name\":\"echo\"", "outcome=ok exit=0", NULL });
	expect_audit(log, (const char *[]){ "\"op\":\"tool-refused\"", "\"agent_name\":\"t-a\"",
					    "\"name\":\"deploy\"", "outcome=denied", NULL });
	expect_audit(log, (const char *[]){ "\"op\":\"tool-refused\"", "\"agent_name\":\"t-a\"",
					    "\"name\":\"echo\"", "outcome=bad-args", NULL });
	expect_audit(log, (const char *[]){ "\"agent_name\":\"t-a\"", "\"name\":\"env\"", "exit=3",
					    "redacted=1", NULL });
	if (strstr(log, SECRET) || strstr(log, "hello world"))
		FAIL("a secret or an argument value is in the audit log");
	expect_schema_valid(e);
}

TEST(mcp_payload_cannot_name_the_caller)
{
	static char log[1 << 20];
	struct mcp_env *e = setup();

	expect_client_ok(e, (const char *[]){ "identity", "t-b", "noop", NULL });
	stop_and_read_audit(e, log, sizeof(log));
	expect_audit(log, (const char *[]){ "\"op\":\"tool-refused\"", "\"agent_name\":\"t-b\"",
					    "\"name\":\"echo\"", "outcome=denied", NULL });
	if (audit_has(log, (const char *[]){ "\"agent_name\":\"t-a\"", "\"op\":\"tool-", NULL }))
		FAIL("a tool record names t-a, whose name only the payload carried");
}

TEST(mcp_policy_reload_notifies_list_changed)
{
	struct mcp_env *e = setup();
	char policy[PATH_MAX + 32], next[PATH_MAX + 32], text[1024];

	snprintf(policy, sizeof(policy), "%s/t-b.json", e->d.dir);
	snprintf(next, sizeof(next), "%s/t-b.next.json", e->d.dir);
	snprintf(text, sizeof(text), policy_fmt, "t-b", "\"noop\", \"echo\"");
	test_write(next, text, 0644);
	expect_client_ok(
		e, (const char *[]){ "reload", "t-b", "noop", policy, next, "echo,noop", NULL });
}

TEST(mcp_another_agents_socket_is_refused)
{
	static char log[1 << 20];
	struct mcp_env *e = setup();
	char sock[PATH_MAX + 32];

	snprintf(sock, sizeof(sock), "%s/agents/t-a/tool.sock", e->d.dir);
	expect_client_ok(e, (const char *[]){ "cross", "t-b", sock, NULL });
	stop_and_read_audit(e, log, sizeof(log));
	expect_audit(log, (const char *[]){ "\"op\":\"tool-refused\"", "\"agent_name\":\"t-a\"",
					    "outcome=identity", NULL });
	if (audit_has(log, (const char *[]){ "\"op\":\"tool-call\"", NULL }))
		FAIL("a tool was called");
}

TEST(mcp_cancelled_call_runs_but_is_not_answered)
{
	static char log[1 << 20];
	struct mcp_env *e = setup();
	char fifo[PATH_MAX + 16];

	snprintf(fifo, sizeof(fifo), "%s/fifo", e->d.dir);
	expect_client_ok(e, (const char *[]){ "cancel", "t-a", fifo, NULL });
	stop_and_read_audit(e, log, sizeof(log));
	expect_audit(log, (const char *[]){ "\"op\":\"tool-call\"", "\"agent_name\":\"t-a\"",
					    "\"name\":\"hold\"", "outcome=ok exit=0", NULL });
}

/* ---- upstream MCP servers: selftests/mcp/upstream-server.mjs as the registry's "up" ---- */

#define UP_SECRET "up-Secret-7f3a9c2e"

static const char up_tools_fmt[] =
	"{\"tools\": [\n"
	" {\"name\": \"noop\", \"effect\": \"observe\", \"builtin\": \"noop\"},\n"
	" {\"name\": \"up\", \"kind\": \"mcp\",\n"
	"  \"exec\": [\"/usr/bin/node\", \"%s/selftests/mcp/upstream-server.mjs\"],\n"
	"  \"env\": {\"DESC_FILE\": \"%s/up/desc.txt\"}, \"secrets\": [\"UP_TOKEN\"],\n"
	"  \"policy\": \"%s/up/policy.json\",\n"
	"  \"tools\": {\"echo\": {\"effect\": \"observe\"}, \"env\": {\"effect\": \"observe\"},\n"
	"            \"crash\": {\"effect\": \"observe\"}, \"self\": {\"effect\": \"observe\"},\n"
	"            \"write\": {\"effect\": \"actuate\"}}}\n"
	"]}\n";

/* The server's own policy: it reads the system and its code, writes nothing. */
static const char up_policy[] =
	"{\"name\": \"up-server\", \"files\": [{\"path\": \"/\", \"rights\": [\"read\", \"exec\"]},"
	" {\"path\": \"/dev/null\", \"rights\": [\"read\", \"write\"]}],"
	" \"network\": {\"sockets\": [\"unix\"]}}\n";

static void write_up_registry(struct mcp_env *e, char *tools_path, size_t sz)
{
	char text[4 * PATH_MAX], path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/up", e->d.dir);
	ASSERT_OK(mkdir(path, 0755));
	snprintf(path, sizeof(path), "%s/up/desc.txt", e->d.dir);
	test_write(path, "The echo tool.\n", 0666);
	snprintf(path, sizeof(path), "%s/up/policy.json", e->d.dir);
	test_write(path, up_policy, 0644);
	snprintf(text, sizeof(text), up_tools_fmt, e->top, e->d.dir, e->d.dir);
	snprintf(tools_path, sz, "%s/tools.json", e->d.dir);
	test_write(tools_path, text, 0644);
}

static struct mcp_env *setup_upstream(void)
{
	static struct mcp_env e;
	char path[sizeof(e.d.state) + 32];

	memset(&e, 0, sizeof(e));
	find_node(&e);
	test_daemon_init(&e.d, "mcpup");
	/* The server runs as an id of its own: it reaches its description, not the rest. */
	ASSERT_OK(chmod(e.d.dir, 0711));
	write_up_registry(&e, path, sizeof(path));
	ASSERT_OK(mkdir(e.d.state, 0700));
	snprintf(path, sizeof(path), "%s/secrets", e.d.state);
	ASSERT_OK(mkdir(path, 0700));
	snprintf(path, sizeof(path), "%s/secrets/UP_TOKEN", e.d.state);
	test_write(path, UP_SECRET "\n", 0600);
	test_daemon_start(&e.d, "--allow-partial", NULL);
	add_agent(&e, "t-up", "\"noop\", \"up.echo\", \"up.env\", \"up.crash\", \"up.self\"");
	return &e;
}

TEST(mcp_upstream_server_tools_served_under_policy)
{
	static char log[1 << 20];
	struct mcp_env *e = setup_upstream();
	char desc[sizeof(e->d.dir) + 32], out[16384];
	int status;

	snprintf(desc, sizeof(desc), "%.255s/up/desc.txt", e->d.dir);
	expect_client_ok(e, (const char *[]){ "upstream", "t-up", desc, NULL });
	/* The secret is the server's: the agent's environment does not have it. */
	status = agentctl_run(out, sizeof(out), "run", "t-up", "--", "/usr/bin/env", NULL);
	if (status || !strstr(out, "PATH=") || strstr(out, UP_SECRET) || strstr(out, "UP_TOKEN"))
		FAIL("agentctl run t-up -- env: exit %d:\n%s", status, out);
	stop_and_read_audit(e, log, sizeof(log));
	expect_audit(log, (const char *[]){ "\"op\":\"tool-call\"", "\"agent_name\":\"t-up\"",
					    "\"name\":\"up.echo\"", "outcome=ok", NULL });
	expect_audit(log, (const char *[]){ "\"agent_name\":\"t-up\"", "\"name\":\"up.env\"",
					    "redacted=1", NULL });
	expect_audit(log, (const char *[]){ "\"op\":\"tool-refused\"", "\"name\":\"up.echo\"",
					    "outcome=denied", "changed", NULL });
	expect_audit(log, (const char *[]){ "\"op\":\"tool-refused\"", "\"name\":\"up.echo\"",
					    "outcome=bad-args", NULL });
	expect_audit(log, (const char *[]){ "\"name\":\"up.crash\"", "outcome=failed",
					    "server ended", NULL });
	if (strstr(log, UP_SECRET))
		FAIL("the upstream server's secret is in the audit log");
	expect_schema_valid(e);
}

/* A report-only agent cannot be granted an upstream tool that actuates: policy check says so. */
TEST(mcp_upstream_actuate_tool_refused_to_report_only)
{
	struct mcp_env e;
	char tools[PATH_MAX + 32], policy[PATH_MAX + 32], out[4096];
	int status;

	memset(&e, 0, sizeof(e));
	snprintf(e.top, sizeof(e.top), "%s/..", test_bin_dir());
	test_tmpdir(e.d.dir, sizeof(e.d.dir), "mcpup-check");
	write_up_registry(&e, tools, sizeof(tools));
	snprintf(policy, sizeof(policy), "%s/r.json", e.d.dir);
	test_write(policy,
		   "{\"name\": \"r\", \"mode\": \"report-only\", \"tools\": [\"up.echo\", "
		   "\"up.write\"]}\n",
		   0644);
	status = agentctl_run(out, sizeof(out), "policy", "check", "--tools", tools, policy, NULL);
	if (!status || !strstr(out, "found \"up.write\", which actuates"))
		FAIL("policy check of a report-only policy granting up.write: exit %d: %s", status,
		     out);
	test_write(policy,
		   "{\"name\": \"r\", \"mode\": \"report-only\", \"tools\": [\"up.echo\"]}\n",
		   0644);
	status = agentctl_run(out, sizeof(out), "policy", "check", "--tools", tools, policy, NULL);
	if (status)
		FAIL("policy check of a report-only policy granting up.echo: exit %d: %s", status,
		     out);
}
