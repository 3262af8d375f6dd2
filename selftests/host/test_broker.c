// SPDX-License-Identifier: GPL-2.0
/*
 * Host tier: the tool broker end to end. A real agentd (--allow-partial) with two agents; calls
 * made from inside agent A by agentctl run and agent-tool, or by a process the test places in
 * A's cgroup and that speaks the protocol itself. Each check looks at the reply, and at the
 * audit log once agentd has stopped.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include "wire/broker_proto.h"
#include "kernel/cgroup.h"
#include "harness.h"
#include "testlib.h"
#include "wire/unixsock.h"

#define SECRET "s3cr3t-Value-42"

static const char tools_json[] =
	"{\"tools\": [\n"
	" {\"name\": \"noop\", \"effect\": \"observe\", \"builtin\": \"noop\"},\n"
	" {\"name\": \"report.submit\", \"effect\": \"report\", \"builtin\": \"report\",\n"
	"  \"args\": {\"title\": {\"type\": \"string\", \"max_length\": 20}}},\n"
	" {\"name\": \"echo\", \"effect\": \"observe\", \"exec\": [\"/bin/echo\", \"{msg}\", "
	"\"{n}\"],\n"
	"  \"args\": {\"msg\": {\"type\": \"string\", \"max_length\": 16, \"pattern\": "
	"\"^[a-z ]*$\"},\n"
	"           \"n\": {\"type\": \"integer\"}}},\n"
	" {\"name\": \"cat\", \"effect\": \"observe\", \"exec\": [\"/bin/cat\", \"--\", "
	"\"{path}\"],\n"
	"  \"args\": {\"path\": {\"type\": \"string\", \"pattern\": \"^/\"}},\n"
	"  \"secrets\": [\"TOKEN\"]},\n"
	" {\"name\": \"env\", \"effect\": \"observe\", \"exec\": [\"/bin/sh\", \"-c\", "
	"\"echo token=$TOKEN; echo mode=$MODE >&2; exit 3\"],\n"
	"  \"env\": {\"MODE\": \"quiet\"}, \"secrets\": [\"TOKEN\"]},\n"
	" {\"name\": \"slow\", \"effect\": \"observe\", \"exec\": [\"/bin/sh\", \"-c\", "
	"\"sleep 60 & sleep 60\"],\n"
	"  \"programs\": [\"/bin/sleep\"], \"timeout\": \"1s\"},\n"
	" {\"name\": \"big\", \"effect\": \"observe\", \"exec\": [\"/bin/sh\", \"-c\", "
	"\"yes | head -c 100000\"],\n"
	"  \"programs\": [\"/usr/bin/yes\", \"/usr/bin/head\"], \"output_cap\": 1000},\n"
	" {\"name\": \"nobody\", \"effect\": \"observe\", \"exec\": [\"/bin/sh\", \"-c\", "
	"\"id -u; id -G; cat /proc/self/status | grep ^CapEff\"], \"uid\": 65534,\n"
	"  \"programs\": [\"/usr/bin/id\", \"/usr/bin/cat\", \"/usr/bin/grep\"]},\n"
	" {\"name\": \"whoami\", \"effect\": \"observe\", \"exec\": [\"/usr/bin/cat\", "
	"\"/proc/self/status\"]},\n"
	" {\"name\": \"as-root\", \"effect\": \"observe\", \"exec\": [\"/usr/bin/cat\", "
	"\"/proc/self/status\"], \"user\": \"root\"},\n"
	" {\"name\": \"capped\", \"effect\": \"observe\", \"exec\": [\"/bin/sh\", \"-c\", "
	"\"for i in 1 2 3 4 5 6 7 8; do sleep 2 & done; wait\"],\n"
	"  \"programs\": [\"/bin/sleep\"], \"limits\": {\"pids\": 4}},\n"
	" {\"name\": \"flood\", \"effect\": \"observe\", \"exec\": [\"/bin/sh\", \"-c\", "
	"\"yes | head -c 600000\"],\n"
	"  \"programs\": [\"/usr/bin/yes\", \"/usr/bin/head\"], \"output_cap\": 600000},\n"
	" {\"name\": \"loose\", \"effect\": \"observe\", \"exec\": [\"/bin/true\"], "
	"\"secrets\": [\"LOOSE\"]},\n"
	" {\"name\": \"absent\", \"effect\": \"observe\", \"exec\": [\"/nonexistent/tool\"]},\n"
	" {\"name\": \"hold\", \"effect\": \"actuate\", \"exec\": [\"/bin/sh\", \"-c\", "
	"\"echo started > \\\"$0\\\"; exec sleep 60\", \"{fifo}\"],\n"
	"  \"args\": {\"fifo\": {\"type\": \"string\", \"pattern\": \"^/\"}}, \"timeout\": "
	"\"1s\",\n"
	"  \"programs\": [\"/bin/sleep\"]},\n"
	" {\"name\": \"deploy\", \"effect\": \"actuate\", \"exec\": [\"/bin/true\"]}\n"
	"]}\n";

struct env {
	char dir[256];
	char state[PATH_MAX], control[PATH_MAX], audit[PATH_MAX], pins[PATH_MAX];
	char cgroup[PATH_MAX], tools[PATH_MAX], policy_a[PATH_MAX], policy_b[PATH_MAX];
	char sock_a[PATH_MAX], sock_b[PATH_MAX], env_a[PATH_MAX + 32], env_b[PATH_MAX + 32];
	char agent_tool[PATH_MAX], rw[PATH_MAX];
	struct proc *agentd;
};

static void put(const char *path, const char *text, mode_t mode)
{
	test_write(path, text, mode);
}

static struct env the_env;

/* The files of the test: tools, policies, secrets; agentd not started. */
static struct env *setup_files(void)
{
	char root[PATH_MAX - 64], path[PATH_MAX + 32], policy[2 * PATH_MAX];

	ASSERT_EQ(cgroup2_mount(root, sizeof(root)), 0);
	test_tmpdir(the_env.dir, sizeof(the_env.dir), "broker");
	/* Agents that run as nobody go through it to their sockets. */
	ASSERT_OK(chmod(the_env.dir, 0711));
	snprintf(the_env.state, sizeof(the_env.state), "%s/state", the_env.dir);
	snprintf(the_env.control, sizeof(the_env.control), "%s/run/control.sock", the_env.dir);
	snprintf(the_env.audit, sizeof(the_env.audit), "%s/audit", the_env.dir);
	snprintf(the_env.tools, sizeof(the_env.tools), "%s/tools.json", the_env.dir);
	snprintf(the_env.policy_a, sizeof(the_env.policy_a), "%s/a.json", the_env.dir);
	snprintf(the_env.policy_b, sizeof(the_env.policy_b), "%s/b.json", the_env.dir);
	snprintf(the_env.cgroup, sizeof(the_env.cgroup), "%s/agentd-broker-%d", root, getpid());
	snprintf(the_env.sock_a, sizeof(the_env.sock_a), "%s/run/agents/t-a/tool.sock",
		 the_env.dir);
	snprintf(the_env.sock_b, sizeof(the_env.sock_b), "%s/run/agents/t-b/tool.sock",
		 the_env.dir);
	snprintf(the_env.env_a, sizeof(the_env.env_a), "AGENTD_TOOL_SOCKET=%s", the_env.sock_a);
	snprintf(the_env.env_b, sizeof(the_env.env_b), "AGENTD_TOOL_SOCKET=%s", the_env.sock_b);
	/* Run as nobody too: a copy any user may reach. */
	test_bin_for_all("agent-tool", the_env.agent_tool, sizeof(the_env.agent_tool));
	test_pin_dir(the_env.pins, sizeof(the_env.pins));
	test_cgroup_tree_at_end(the_env.cgroup);
	put(the_env.tools, tools_json, 0644);
	/* Where agent A (and its actuating tools) may write. */
	snprintf(the_env.rw, sizeof(the_env.rw), "%s/rw", the_env.dir);
	ASSERT_OK(mkdir(the_env.rw, 0777));
	ASSERT_OK(chmod(the_env.rw, 0777));
	snprintf(
		policy, sizeof(policy),
		"{\"name\": \"a\", \"files\": [{\"path\": \"/\", \"rights\": [\"read\", \"exec\"]},"
		" {\"path\": \"/dev/null\", \"rights\": [\"read\", \"write\"]},"
		" {\"path\": \"%s\", \"rights\": [\"read\", \"write\", \"create\"]}],"
		" \"network\": {\"sockets\": [\"inet\", \"unix\"]},"
		" \"tools\": [\"noop\", \"report.submit\", \"echo\", \"cat\", \"env\", \"slow\", "
		"\"big\", \"loose\", \"absent\", \"hold\", \"flood\", \"capped\", \"nobody\", "
		"\"whoami\", \"as-root\"]}\n",
		the_env.rw);
	put(the_env.policy_a, policy, 0644);
	put(the_env.policy_b,
	    "{\"name\": \"b\", \"files\": [{\"path\": \"/\", \"rights\": [\"read\", \"exec\"]},"
	    " {\"path\": \"/dev/null\", \"rights\": [\"read\", \"write\"]}],"
	    " \"network\": {\"sockets\": [\"inet\", \"unix\"]}, \"tools\": [\"noop\"]}\n",
	    0644);
	/* The secret the broker injects: root's, mode 0600, in the state directory. */
	ASSERT_OK(mkdir(the_env.state, 0700));
	snprintf(path, sizeof(path), "%s/secrets", the_env.state);
	ASSERT_OK(mkdir(path, 0700));
	snprintf(path, sizeof(path), "%s/secrets/TOKEN", the_env.state);
	put(path, SECRET "\n", 0600);
	/* Readable by others: refused. */
	snprintf(path, sizeof(path), "%s/secrets/LOOSE", the_env.state);
	put(path, "loose-secret\n", 0644);
	ASSERT_OK(chmod(path, 0644));
	setenv("AGENTD_CONTROL", the_env.control, 1);
	return &the_env;
}

/* agentd started, agents t-a and t-b added. */
static struct env *start(void)
{
	const char *ready[] = { "agentd: ready", NULL };
	char out[4096];

	char *argv[] = { "agentd",	"--control",   the_env.control, "--state-dir",
			 the_env.state, "--audit-dir", the_env.audit,	"--pin-dir",
			 the_env.pins,	"--cgroup",    the_env.cgroup,	"--allow-partial",
			 NULL };
	the_env.agentd = proc_start(argv);
	if (!proc_wait_line(the_env.agentd, 20000, ready))
		FAIL("agentd did not get ready: \"%s\"", the_env.agentd->buf);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "add", "t-a", "--policy",
			       the_env.policy_a, "--tools", the_env.tools, NULL),
		  0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "add", "t-b", "--policy",
			       the_env.policy_b, "--tools", the_env.tools, NULL),
		  0);
	return &the_env;
}

static struct env *setup(void)
{
	setup_files();
	return start();
}

/* agent-tool --json inside agent (through sock_env), up to three arguments; its exit status. */
static int call(struct env *e, char *out, size_t outsz, const char *agent, const char *sock_env,
		const char *tool, const char *a1, const char *a2, const char *a3)
{
	return agentctl_run(out, outsz, "run", agent, "--", "env", sock_env, e->agent_tool,
			    "--json", tool, a1, a2, a3, NULL);
}

static void expect_in(const char *out, const char *want)
{
	if (!strstr(out, want))
		FAIL("expected \"%s\" in\n%s", want, out);
}

/* Stops agentd (the audit log is then committed) and returns the log in buf. */
static void stop_and_read_audit(struct env *e, char *buf, size_t bufsz)
{
	char path[PATH_MAX + 16];
	size_t n;
	FILE *f;

	proc_stop(e->agentd, SIGTERM);
	snprintf(path, sizeof(path), "%s/audit.log", e->audit);
	f = fopen(path, "re");
	ASSERT(f);
	n = fread(buf, 1, bufsz - 1, f);
	fclose(f);
	buf[n] = '\0';
}

/* The audit line holding every needle, or NULL. */
static const char *audit_line(const char *log, const char *const needles[])
{
	static char line[4096];
	const char *p = log, *nl;
	size_t i;

	for (; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			break;
		snprintf(line, sizeof(line), "%.*s", (int)(nl - p), p);
		for (i = 0; needles[i] && strstr(line, needles[i]); i++)
			;
		if (!needles[i])
			return line;
	}
	return NULL;
}

/* Every record in the log matches docs/audit.schema.json (selftests/audit/validate_schema.py). */
static void expect_schema_valid(struct env *e)
{
	char script[PATH_MAX + 64];
	int status;
	pid_t pid;

	snprintf(script, sizeof(script), "%s/../selftests/audit/validate_schema.py",
		 test_bin_dir());
	pid = fork();
	ASSERT_OK(pid);
	if (pid == 0) {
		execl("/usr/bin/python3", "python3", script, e->audit, (char *)NULL);
		_exit(127);
	}
	ASSERT_OK(waitpid(pid, &status, 0));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		FAIL("the audit log does not match docs/audit.schema.json (status %d)",
		     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

static void expect_audit(const char *log, const char *const needles[])
{
	if (!audit_line(log, needles))
		FAIL("no audit record with \"%s\", \"%s\"...", needles[0], needles[1]);
}

static bool dir_has_children(const char *path)
{
	struct dirent *de;
	bool any = false;
	DIR *d = opendir(path);

	ASSERT(d);
	while ((de = readdir(d)))
		if (de->d_type == DT_DIR && de->d_name[0] != '.')
			any = true;
	closedir(d);
	return any;
}

TEST(broker_tools_policy_schema_output)
{
	static char log[1 << 20];
	struct env *e = setup();
	char out[16384], tools_cg[PATH_MAX + 16], arg[64];

	/* An allowed builtin, an allowed exec tool, its exit status and stderr. */
	ASSERT_EQ(call(e, out, sizeof(out), "t-a", e->env_a, "noop", NULL, NULL, NULL), 0);
	expect_in(out, "\"ok\":true");
	ASSERT_EQ(call(e, out, sizeof(out), "t-a", e->env_a, "echo", "msg=hello world", "n:=42",
		       NULL),
		  0);
	expect_in(out, "\"stdout\":\"hello world 42\\n\"");
	ASSERT_EQ(call(e, out, sizeof(out), "t-a", e->env_a, "report.submit", "title=weekly", NULL,
		       NULL),
		  0);
	/* An agent that is not root reaches its socket too. */
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "t-a", "--user", "nobody", "--", "env",
			       e->env_a, e->agent_tool, "--json", "noop", NULL),
		  0);
	expect_in(out, "\"ok\":true");
	/* Default deny: not in B's policy; not in the registry at all. */
	ASSERT_EQ(call(e, out, sizeof(out), "t-b", e->env_b, "echo", "msg=hi", "n:=1", NULL), 125);
	expect_in(out, "\"code\":\"denied\"");
	ASSERT_EQ(call(e, out, sizeof(out), "t-a", e->env_a, "deploy", NULL, NULL, NULL), 125);
	expect_in(out, "\"code\":\"denied\"");
	/* Schema violations. */
	ASSERT_EQ(call(e, out, sizeof(out), "t-a", e->env_a, "echo", "msg=Hello", "n:=1", NULL),
		  125);
	expect_in(out, "does not match the pattern");
	ASSERT_EQ(call(e, out, sizeof(out), "t-a", e->env_a, "echo",
		       "msg=a much longer string than allowed", "n:=1", NULL),
		  125);
	expect_in(out, "longer than 16 bytes");
	ASSERT_EQ(call(e, out, sizeof(out), "t-a", e->env_a, "echo", "msg=hi", "n=1", NULL), 125);
	expect_in(out, "n\\\": expected an integer");
	ASSERT_EQ(call(e, out, sizeof(out), "t-a", e->env_a, "echo", "msg=hi", NULL, NULL), 125);
	expect_in(out, "n\\\": missing");
	ASSERT_EQ(call(e, out, sizeof(out), "t-a", e->env_a, "echo", "msg=hi", "n:=1", "x=y"), 125);
	expect_in(out, "x\\\": echo takes no such argument");
	/* The secret reaches the tool's environment, and not the reply; env too. */
	ASSERT_EQ(call(e, out, sizeof(out), "t-a", e->env_a, "env", NULL, NULL, NULL), 3);
	expect_in(out, "\"stdout\":\"token=[REDACTED:secret]\\n\"");
	expect_in(out, "\"stderr\":\"mode=quiet\\n\"");
	expect_in(out, "\"redacted\":1");
	ASSERT(!strstr(out, SECRET));
	/* A secret others may read is not used: the call fails, naming it. */
	ASSERT_EQ(call(e, out, sizeof(out), "t-a", e->env_a, "loose", NULL, NULL, NULL), 125);
	expect_in(out, "\"code\":\"failed\"");
	expect_in(out, "secret LOOSE unavailable");
	/* A tool that cannot be executed: 127 and why, on its stderr. */
	ASSERT_EQ(call(e, out, sizeof(out), "t-a", e->env_a, "absent", NULL, NULL, NULL), 127);
	expect_in(out, "executing /nonexistent/tool: No such file or directory");
	/* The output cap. */
	ASSERT_EQ(call(e, out, sizeof(out), "t-a", e->env_a, "big", NULL, NULL, NULL), 0);
	expect_in(out, "\"truncated\":true");
	{
		char *s = strstr(out, "\"stdout\":\""), *end = s ? strchr(s + 10, '"') : NULL;

		ASSERT(end);
		/* "y\n" is 3 bytes escaped: 1000 bytes are 500 of them. */
		ASSERT_EQ(end - (s + 10), 1500);
	}
	/* The timeout kills the whole tool cgroup (the background sleep too). */
	snprintf(tools_cg, sizeof(tools_cg), "%s/tools.broker", e->cgroup);
	ASSERT_EQ(call(e, out, sizeof(out), "t-a", e->env_a, "slow", NULL, NULL, NULL), 124);
	expect_in(out, "\"code\":\"timeout\"");
	ASSERT(!dir_has_children(tools_cg));
	(void)arg;

	stop_and_read_audit(e, log, sizeof(log));
	expect_audit(log, (const char *[]){ "\"op\":\"tool-call\"", "\"agent_name\":\"t-a\"",
					    "\"name\":\"echo\"", "outcome=ok exit=0", NULL });
	expect_audit(log, (const char *[]){ "\"op\":\"tool-refused\"", "\"agent_name\":\"t-b\"",
					    "\"decision\":\"deny\"", "outcome=denied", NULL });
	expect_audit(log, (const char *[]){ "\"name\":\"slow\"", "outcome=timeout", NULL });
	expect_audit(log, (const char *[]){ "\"name\":\"env\"", "exit=3", "redacted=1", NULL });
	if (strstr(log, SECRET) || strstr(log, "hello world"))
		FAIL("a secret or an argument value is in the audit log");
	expect_schema_valid(e);
}

TEST(broker_redacts_each_pattern_class)
{
	static const char text[] =
		"-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n"
		"AKIAIOSFODNN7EXAMPLE\n"
		"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
		"AIzaSyA1234567890abcdefghijklmnopqrstuv\n"
		"ya29.a0AfH6SMBx1234567890abcdefgh\n"
		"AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq==\n"
		"sig=abcdefghijklmnopqrstuvwxyz0123456789%2B\n"
		"ghp_abcdefghijklmnopqrstuvwxyz0123456789\n"
		"glpat-abcdefghij0123456789\n"
		"xoxb-1234567890-abcdefghij\n"
		"https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX\n"
		"sk_live_abcdefghijklmnop0123\n"
		"Authorization: Bearer abc.def-ghi_jkl~mno\n"
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk\n"
		"https://alice:pa55word@example.com/x\n"
		"token " SECRET "\n";
	static const char *const classes[] = {
		"private-key",		 "aws-access-key-id",
		"aws-secret-access-key", "gcp-api-key",
		"gcp-oauth-token",	 "azure-storage-key",
		"azure-sas-signature",	 "github-token",
		"gitlab-token",		 "slack-token",
		"slack-webhook",	 "stripe-key",
		"bearer-token",		 "jwt",
		"url-password",		 "secret",
	};
	struct env *e = setup();
	char out[16384], file[PATH_MAX], arg[PATH_MAX + 8], want[64];
	size_t i;

	snprintf(file, sizeof(file), "%s/leak.txt", e->dir);
	put(file, text, 0644);
	snprintf(arg, sizeof(arg), "path=%s", file);
	ASSERT_EQ(call(e, out, sizeof(out), "t-a", e->env_a, "cat", arg, NULL, NULL), 0);
	for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		snprintf(want, sizeof(want), "[REDACTED:%s]", classes[i]);
		expect_in(out, want);
	}
	expect_in(out, "\"redacted\":16");
	ASSERT(!strstr(out, SECRET));
	ASSERT(!strstr(out, "AKIAIOSFODNN7EXAMPLE"));
	ASSERT(!strstr(out, "pa55word"));
}

/* ---- speaking the protocol from inside agent A ---- */

static bool send_raw(int fd, const void *buf, size_t n)
{
	return send(fd, buf, n, MSG_NOSIGNAL) == (ssize_t)n;
}

static bool send_json(int fd, const char *json)
{
	size_t n = strlen(json);
	char hdr[4] = { (char)(n >> 24), (char)(n >> 16), (char)(n >> 8), (char)n };

	return send_raw(fd, hdr, 4) && send_raw(fd, json, n);
}

/* One reply within 10 s: "ok", its error code, or "EOF". */
static const char *reply_code(int fd, char *code, size_t codesz)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct broker_reply r = { 0 };
	char buf[65536];
	size_t len = 0, n = 0;
	ssize_t got;

	while (broker_frame_check(buf, len, sizeof(buf) - 4, &n) != 1) {
		if (poll(&pfd, 1, 10000) <= 0)
			return "no reply";
		got = recv(fd, buf + len, sizeof(buf) - len, 0);
		if (got <= 0)
			return "EOF";
		len += got;
	}
	if (broker_reply_parse(buf + 4, n, &r))
		return "malformed";
	snprintf(code, codesz, "%s", r.ok ? "ok" : r.error.code);
	broker_reply_free(&r);
	return code;
}

struct raw {
	const char *sock_a, *sock_b;
};

#define CHECK(step, cond)                                                                          \
	do {                                                                                       \
		if (!(cond))                                                                       \
			return step;                                                               \
	} while (0)

/* Runs in agent A's cgroup; returns 0, or the number of the step that went wrong. */
static int raw_calls(void *arg)
{
	const struct raw *r = arg;
	char code[64];
	int fd;

	/* B's socket: the connection is refused by identity, before anything is read. */
	fd = unix_connect(r->sock_b);
	CHECK(1, fd >= 0);
	send_json(fd, "{\"id\": 1, \"tool\": \"noop\"}");
	CHECK(2, !strcmp(reply_code(fd, code, sizeof(code)), BROKER_E_IDENTITY));
	close(fd);
	/* A's socket: a claim to be B is refused, the connection goes on. */
	fd = unix_connect(r->sock_a);
	CHECK(3, fd >= 0);
	CHECK(4, send_json(fd, "{\"id\": 1, \"tool\": \"noop\", \"agent\": \"t-b\"}"));
	CHECK(5, !strcmp(reply_code(fd, code, sizeof(code)), BROKER_E_REQUEST));
	/* Malformed JSON, a non-object: error replies, and the connection still serves. */
	CHECK(6, send_json(fd, "{\"id\": 2, \"tool\": "));
	CHECK(7, !strcmp(reply_code(fd, code, sizeof(code)), BROKER_E_JSON));
	CHECK(8, send_json(fd, "[1, 2]"));
	CHECK(9, !strcmp(reply_code(fd, code, sizeof(code)), BROKER_E_JSON));
	CHECK(10, send_json(fd, "{\"id\": 3, \"tool\": \"noop\"}"));
	CHECK(11, !strcmp(reply_code(fd, code, sizeof(code)), "ok"));
	/* An oversized frame: an error reply, then the connection ends (framing is lost). */
	CHECK(12, send_raw(fd, "\x7f\xff\xff\xff{}", 6));
	CHECK(13, !strcmp(reply_code(fd, code, sizeof(code)), BROKER_E_FRAME));
	CHECK(14, !strcmp(reply_code(fd, code, sizeof(code)), "EOF"));
	close(fd);
	/* A frame of length 0. */
	fd = unix_connect(r->sock_a);
	CHECK(15, fd >= 0 && send_raw(fd, "\0\0\0\0", 4));
	CHECK(16, !strcmp(reply_code(fd, code, sizeof(code)), BROKER_E_FRAME));
	close(fd);
	/* Half a frame, then gone: nothing to answer, nothing breaks. */
	fd = unix_connect(r->sock_a);
	CHECK(17, fd >= 0 && send_raw(fd, "\0\0\0\x20{\"id\"", 9));
	close(fd);
	/* Still served, by the same daemon. */
	fd = unix_connect(r->sock_a);
	CHECK(18, fd >= 0 && send_json(fd, "{\"id\": 4, \"tool\": \"noop\"}"));
	CHECK(19, !strcmp(reply_code(fd, code, sizeof(code)), "ok"));
	close(fd);
	return 0;
}

/* One reply frame of up to cap bytes, parsed into r; false on EOF, a silence of 10 s, or junk. */
static bool read_reply(int fd, char *buf, size_t cap, struct broker_reply *r)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t len = 0, n = 0;
	ssize_t got;

	/* One frame at a time: never read past it (the next one stays in the socket). */
	while (broker_frame_check(buf, len, cap - 4, &n) != 1) {
		size_t want = len < 4 ? 4 - len : 4 + n - len;

		if (poll(&pfd, 1, 10000) <= 0)
			return false;
		got = recv(fd, buf + len, want, 0);
		if (got <= 0)
			return false;
		len += got;
	}
	return !broker_reply_parse(buf + 4, n, r);
}

/*
 * Replies larger than the socket takes at once (agentd writes what fits, its worker the rest),
 * several in flight on one connection with a small one among them: every frame arrives whole.
 */
static int slow_reader(void *arg)
{
	static char buf[2 << 20];
	const struct raw *rw = arg;
	struct broker_reply r;
	unsigned seen = 0;
	int fd = unix_connect(rw->sock_a), i;

	CHECK(1, fd >= 0);
	CHECK(2, send_json(fd, "{\"id\": 1, \"tool\": \"flood\"}"));
	CHECK(3, send_json(fd, "{\"id\": 2, \"tool\": \"flood\"}"));
	CHECK(4, send_json(fd, "{\"id\": 3, \"tool\": \"noop\"}"));
	CHECK(5, send_json(fd, "{\"id\": 4, \"tool\": \"flood\"}"));
	for (i = 0; i < 4; i++) {
		CHECK(10 + i, read_reply(fd, buf, sizeof(buf), &r));
		CHECK(20 + i, r.ok && r.id >= 1 && r.id <= 4 && !(seen & (1U << r.id)));
		seen |= 1U << r.id;
		CHECK(30 + i, r.out_len == (r.id == 3 ? 0 : 600000) && !r.truncated);
		broker_reply_free(&r);
	}
	/* After the backlog, the connection still serves. */
	CHECK(40, send_json(fd, "{\"id\": 5, \"tool\": \"noop\"}"));
	CHECK(41, read_reply(fd, buf, sizeof(buf), &r) && r.ok && r.id == 5);
	broker_reply_free(&r);
	close(fd);
	return 0;
}

TEST(broker_large_replies_in_flight_arrive_whole)
{
	struct env *e = setup();
	struct raw r = { e->sock_a, e->sock_b };
	char cg_a[PATH_MAX + 8];
	int step;

	snprintf(cg_a, sizeof(cg_a), "%s/t-a", e->cgroup);
	step = run_in_cgroup(cg_a, slow_reader, &r, NULL);
	if (step)
		FAIL("large replies, step %d", step);
}

/* The worker: ids of its own, no capabilities, no new privileges, seccomp filtering. */
static void expect_worker_confined(void)
{
	char out[16384], path[64], status[4096], want[128], *p;
	int pid, fd;
	ssize_t n;

	ASSERT_EQ(agentctl_run(out, sizeof(out), "status", "--json", NULL), 0);
	p = strstr(out, "\"worker_pid\"");
	ASSERT(p);
	pid = atoi(strchr(p, ':') + 1);
	ASSERT(pid > 0);
	/* One worker per agent. */
	p = strstr(p + 1, "\"worker_pid\"");
	ASSERT(p);
	ASSERT(atoi(strchr(p, ':') + 1) > 0);
	ASSERT(atoi(strchr(p, ':') + 1) != pid);
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_OK(fd);
	n = read(fd, status, sizeof(status) - 1);
	close(fd);
	ASSERT(n > 0);
	status[n] = '\0';
	/* t-a is agent 1: its worker's ids are its own. */
	snprintf(want, sizeof(want), "Uid:\t%u\t%u\t%u\t%u", BMSG_WORKER_ID_BASE + 1,
		 BMSG_WORKER_ID_BASE + 1, BMSG_WORKER_ID_BASE + 1, BMSG_WORKER_ID_BASE + 1);
	expect_in(status, want);
	snprintf(want, sizeof(want), "Gid:\t%u\t%u\t%u\t%u", BMSG_WORKER_ID_BASE + 1,
		 BMSG_WORKER_ID_BASE + 1, BMSG_WORKER_ID_BASE + 1, BMSG_WORKER_ID_BASE + 1);
	expect_in(status, want);
	expect_in(status, "Groups:\t2147352577 \n");
	expect_in(status, "CapEff:\t0000000000000000");
	expect_in(status, "CapPrm:\t0000000000000000");
	expect_in(status, "NoNewPrivs:\t1");
	expect_in(status, "Seccomp:\t2");
}

TEST(broker_identity_and_malformed_frames)
{
	static char log[1 << 20];
	struct env *e = setup();
	struct raw r = { e->sock_a, e->sock_b };
	char cg_a[PATH_MAX + 8], out[4096];
	struct stat st;
	int step;

	ASSERT_OK(stat(e->sock_a, &st));
	ASSERT(S_ISSOCK(st.st_mode));
	expect_worker_confined();
	/* A process of A through agent-tool on B's socket. */
	ASSERT_EQ(call(e, out, sizeof(out), "t-a", e->env_b, "noop", NULL, NULL, NULL), 125);
	expect_in(out, "\"code\":\"identity\"");
	/* Outside every agent: refused too. */
	snprintf(cg_a, sizeof(cg_a), "%s/t-a", e->cgroup);
	step = run_in_cgroup(cg_a, raw_calls, &r, NULL);
	if (step)
		FAIL("raw protocol check, step %d", step);
	/* The agents' sockets go with them. */
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "rm", "t-b", NULL), 0);
	ASSERT_EQ(access(e->sock_b, F_OK), -1);
	stop_and_read_audit(e, log, sizeof(log));
	expect_audit(log, (const char *[]){ "\"op\":\"tool-refused\"", "\"agent_name\":\"t-b\"",
					    "outcome=identity", "not agent t-b's", NULL });
	expect_audit(log, (const char *[]){ "\"agent_name\":\"t-a\"", "outcome=bad-request",
					    "unknown key", NULL });
	expect_audit(log, (const char *[]){ "\"agent_name\":\"t-a\"", "outcome=bad-frame", NULL });
	if (audit_line(log, (const char *[]){ "\"agent_name\":\"t-b\"", "outcome=ok", NULL }))
		FAIL("a call was recorded as agent t-b's");
	expect_schema_valid(e);
}

/*
 * A tool's limits hold on its cgroup, or the tool does not run: where cgroup v2 has the pids
 * controller, the tool's forks past pids.max fail; where it does not (this kind of hybrid host),
 * the call is refused, naming the limit, and the refusal is audited.
 */
TEST(broker_tool_limits_hold_or_the_tool_is_refused)
{
	static char log[1 << 20];
	struct env *e = setup();
	char out[16384];
	const char *p;
	bool have_pids;

	ASSERT_EQ(agentctl_run(out, sizeof(out), "status", "--json", NULL), 0);
	p = strstr(out, "\"tool_limits_unavailable\"");
	ASSERT(p);
	have_pids = !strstr(p, "pids");
	if (have_pids) {
		ASSERT(call(e, out, sizeof(out), "t-a", e->env_a, "capped", NULL, NULL, NULL) !=
		       125);
		expect_in(out, "fork");
	} else {
		ASSERT_EQ(call(e, out, sizeof(out), "t-a", e->env_a, "capped", NULL, NULL, NULL),
			  125);
		expect_in(out, "\"code\":\"failed\"");
		expect_in(out, "pids limit cannot be enforced here");
	}
	stop_and_read_audit(e, log, sizeof(log));
	expect_audit(log, (const char *[]){ "\"name\":\"capped\"",
					    have_pids ? "outcome=ok" : "outcome=failed", NULL });
}

/* A tool with a uid runs as that uid, its gid and no other group, without capabilities. */
TEST(broker_tool_runs_as_its_uid)
{
	struct env *e = setup();
	char out[16384];

	ASSERT_EQ(call(e, out, sizeof(out), "t-a", e->env_a, "nobody", NULL, NULL, NULL), 0);
	expect_in(out, "\"stdout\":\"65534\\n65534\\nCapEff:\\t0000000000000000\\n\"");
}

/* agentd answers while a tool runs: a call made once another's tool is running comes back first. */
TEST(broker_answers_while_a_tool_runs)
{
	char out[4096], fifo[PATH_MAX + 16], script[6 * PATH_MAX + 64];
	struct env *e = setup();

	/* Where A and its actuating tool may write. */
	snprintf(fifo, sizeof(fifo), "%s/started", e->rw);
	ASSERT_OK(mkfifo(fifo, 0666));
	ASSERT_OK(chmod(fifo, 0666));
	snprintf(script, sizeof(script),
		 "export %s; (%s hold fifo=%s 2>/dev/null; echo hold-done $?) & read line < %s; "
		 "%s noop && echo noop-done; wait",
		 e->env_a, e->agent_tool, fifo, fifo, e->agent_tool);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "t-a", "--", "/bin/sh", "-c", script, NULL),
		  0);
	if (!strstr(out, "noop-done\nhold-done 124\n"))
		FAIL("expected the noop answered before the held call ended, got\n%s", out);
}

static int exec_sleep(void *arg)
{
	(void)arg;
	execl("/bin/sleep", "sleep", "600", (char *)NULL);
	return 127;
}

/* A tool an agentd killed mid-call left running is killed by the next agentd. */
TEST(broker_restart_reaps_tools_left_running)
{
	char cg[PATH_MAX + 64], procs[PATH_MAX + 80];
	struct env *env = setup_files();
	int cgfd, status;
	pid_t pid;

	snprintf(cg, sizeof(cg), "%s/tools.broker/t-a-1-1", env->cgroup);
	ASSERT_OK(mkdir(env->cgroup, 0755));
	snprintf(procs, sizeof(procs), "%s/tools.broker", env->cgroup);
	ASSERT_OK(mkdir(procs, 0755));
	ASSERT_OK(mkdir(cg, 0755));
	cgfd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_OK(cgfd);
	pid = cgroup_fork_into(cgfd);
	if (pid == 0)
		_exit(exec_sleep(NULL));
	close(cgfd);
	ASSERT(pid > 0);
	start();
	ASSERT_OK(waitpid(pid, &status, 0));
	ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	ASSERT_EQ(access(cg, F_OK), -1);
}

TEST(broker_policy_check_refuses_actuate_tools_in_report_only)
{
	char dir[256], tools[PATH_MAX], policy[PATH_MAX], out[4096];

	test_tmpdir(dir, sizeof(dir), "brokerpol");
	snprintf(tools, sizeof(tools), "%s/tools.json", dir);
	snprintf(policy, sizeof(policy), "%s/report.json", dir);
	put(tools, tools_json, 0644);
	put(policy,
	    "{\"name\": \"r\", \"mode\": \"report-only\", \"tools\": [\"report.submit\", "
	    "\"deploy\"]}\n",
	    0644);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "policy", "check", "--tools", tools, policy, NULL),
		  1);
	expect_in(out, "\"deploy\", which actuates");
	put(policy,
	    "{\"name\": \"r\", \"mode\": \"report-only\", \"tools\": [\"report.submit\"]}\n", 0644);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "policy", "check", "--tools", tools, policy, NULL),
		  0);
}

/* ---- a tool reaches no more than its caller ---- */

struct shipped {
	const char *sock, *hello, *secret, *outside, *repo;
};

/* One call on fd, its reply in r (buf holds the frame). */
static bool call_raw(int fd, int id, const char *tool, const char *key, const char *val, char *buf,
		     size_t cap, struct broker_reply *r)
{
	char json[PATH_MAX + 256];

	snprintf(json, sizeof(json), "{\"id\": %d, \"tool\": \"%s\", \"args\": {\"%s\": \"%s\"}}",
		 id, tool, key, val);
	return send_json(fd, json) && read_reply(fd, buf, cap, r) && r->id == id;
}

/* From inside agent C, through the shipped registry's fs.read and git.status. */
static int shipped_calls(void *arg)
{
	static char buf[1 << 20];
	const struct shipped *s = arg;
	struct broker_reply r;
	int fd = unix_connect(s->sock);

	CHECK(1, fd >= 0);
	/* What the agent may read, the tool reads. */
	CHECK(2, call_raw(fd, 1, "fs.read", "path", s->hello, buf, sizeof(buf), &r));
	CHECK(3, r.ok && r.exit_code == 0 && !strcmp(r.out, "hello\n"));
	broker_reply_free(&r);
	/* agentd's secrets, /etc/shadow, a world-readable file outside the agent's policy: not. */
	CHECK(4, call_raw(fd, 2, "fs.read", "path", s->secret, buf, sizeof(buf), &r));
	CHECK(5, r.ok && r.exit_code != 0 && !strstr(r.out, SECRET) && r.out_len == 0);
	broker_reply_free(&r);
	CHECK(6, call_raw(fd, 3, "fs.read", "path", "/etc/shadow", buf, sizeof(buf), &r));
	CHECK(7, r.ok && r.exit_code != 0 && r.out_len == 0);
	broker_reply_free(&r);
	CHECK(8, call_raw(fd, 4, "fs.read", "path", s->outside, buf, sizeof(buf), &r));
	CHECK(9, r.ok && r.exit_code != 0 && r.out_len == 0 && strstr(r.err, "Permission denied"));
	broker_reply_free(&r);
	/*
	 * git status works on the agent's repository; the programs that repository configures
	 * (fsmonitor and hooks, which the registry's git options turn off; a clean filter, which no
	 * option turns off and Landlock's exec rights stop) do not run.
	 */
	CHECK(10, call_raw(fd, 5, "git.status", "repo", s->repo, buf, sizeof(buf), &r));
	CHECK(11, r.ok && r.exit_code == 0 && strstr(r.out, "? untracked.txt"));
	CHECK(12, !strstr(r.err, "PLANTED-RAN"));
	broker_reply_free(&r);
	close(fd);
	return 0;
}

static void sh(const char *cmd)
{
	int status;
	pid_t pid = fork();

	ASSERT_OK(pid);
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	ASSERT_OK(waitpid(pid, &status, 0));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		FAIL("%s: status %d", cmd, status);
}

/*
 * The shipped registry with a policy shaped like the shipped ones: fs.read reads the agent's
 * workspace and nothing the agent could not (agentd's secrets, /etc/shadow, a world-readable file
 * outside its policy); git.status reports on a repository the agent wrote whose .git/config names
 * an fsmonitor program and a hooks directory, and neither runs.
 */
TEST(broker_shipped_tools_reach_no_more_than_the_agent)
{
	char ws[PATH_MAX], policy[PATH_MAX], tools[PATH_MAX], text[12 * PATH_MAX];
	char hello[PATH_MAX + 16], secret[PATH_MAX + 16], outside[PATH_MAX + 16];
	char repo[PATH_MAX + 16], marker[PATH_MAX + 32], cg[PATH_MAX + 8], out[4096];
	struct env *e = setup();
	struct shipped s = { .hello = hello, .secret = secret, .outside = outside, .repo = repo };
	char sock[PATH_MAX + 32];
	int step;

	snprintf(tools, sizeof(tools), "%s/../policies/tools.json", test_bin_dir());
	snprintf(ws, sizeof(ws), "%s/ws", e->dir);
	ASSERT_OK(mkdir(ws, 0755));
	snprintf(hello, sizeof(hello), "%s/hello.txt", ws);
	put(hello, "hello\n", 0644);
	snprintf(secret, sizeof(secret), "%s/secrets/TOKEN", e->state);
	snprintf(outside, sizeof(outside), "%s/outside.txt", e->dir);
	put(outside, "outside-text\n", 0644);
	/* Where anyone could write, but for Landlock. */
	snprintf(marker, sizeof(marker), "%s/planted-code-ran", e->rw);
	snprintf(repo, sizeof(repo), "%s/repo", ws);
	/* The agent's repository: an fsmonitor program and a hook that would leave a marker. */
	snprintf(text, sizeof(text),
		 "set -e; git init -q %s; cd %s; echo x > tracked.txt; git add tracked.txt;"
		 " echo y > untracked.txt;"
		 " printf '#!/bin/sh\\necho PLANTED-RAN >&2; touch %s; cat\\n' > evil.sh;"
		 " chmod 755 evil.sh; mkdir hooks; cp evil.sh hooks/post-index-change;"
		 " git config core.fsmonitor %s/evil.sh; git config core.hooksPath %s/hooks;"
		 " echo 'tracked.txt filter=evil' > .gitattributes;"
		 " git config filter.evil.clean %s/evil.sh; touch -d '+1 hour' tracked.txt",
		 repo, repo, marker, repo, repo, repo);
	sh(text);
	snprintf(policy, sizeof(policy), "%s/c.json", e->dir);
	snprintf(text, sizeof(text),
		 "{\"name\": \"c\", \"extends\": [\"%s/../policies/base/linux-userland.json\"],"
		 " \"files\": [{\"path\": \"%s\", \"rights\": [\"read\", \"write\", \"create\","
		 " \"remove\"]}, {\"path\": \"/usr/bin\", \"rights\": [\"read\"]}],"
		 " \"exec\": {\"allow\": [\"/usr/bin/git\"]},"
		 " \"network\": {\"sockets\": [\"unix\"]}, \"tools\": [\"fs.read\", "
		 "\"git.status\"]}\n",
		 test_bin_dir(), ws);
	put(policy, text, 0644);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "add", "t-c", "--policy", policy,
			       "--tools", tools, NULL),
		  0);
	snprintf(sock, sizeof(sock), "%s/run/agents/t-c/tool.sock", e->dir);
	s.sock = sock;
	snprintf(cg, sizeof(cg), "%s/t-c", e->cgroup);
	step = run_in_cgroup(cg, shipped_calls, &s, NULL);
	if (step)
		FAIL("shipped tools, step %d", step);
	if (!access(marker, F_OK))
		FAIL("the repository's fsmonitor or hook ran under git.status");
}

/* A tool with neither uid nor user runs as the caller's tool id, without capabilities, confined;
 * "user": "root" is root, and policy check says so. */
TEST(broker_tool_runs_unprivileged_by_default)
{
	char out[16384], want[160], tools[PATH_MAX + 16], policy[PATH_MAX + 16];
	struct env *e = setup();
	unsigned id = BROKER_TOOL_ID_BASE + 1; /* t-a is agent 1 */

	ASSERT_EQ(call(e, out, sizeof(out), "t-a", e->env_a, "whoami", NULL, NULL, NULL), 0);
	snprintf(want, sizeof(want), "Uid:\\t%u\\t%u\\t%u\\t%u", id, id, id, id);
	expect_in(out, want);
	snprintf(want, sizeof(want), "Gid:\\t%u\\t%u\\t%u\\t%u", id, id, id, id);
	expect_in(out, want);
	expect_in(out, "Groups:\\t \\n");
	expect_in(out, "CapEff:\\t0000000000000000");
	expect_in(out, "CapPrm:\\t0000000000000000");
	expect_in(out, "NoNewPrivs:\\t1");
	expect_in(out, "Seccomp:\\t2");
	ASSERT_EQ(call(e, out, sizeof(out), "t-a", e->env_a, "as-root", NULL, NULL, NULL), 0);
	expect_in(out, "Uid:\\t0\\t0\\t0\\t0");
	snprintf(tools, sizeof(tools), "%s", e->tools);
	snprintf(policy, sizeof(policy), "%s", e->policy_a);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "policy", "check", "--tools", tools, policy, NULL),
		  0);
	expect_in(out, "\"as-root\" runs as root");
}

/* ---- an agent that never reads ---- */

#define FLOOD_CALLS 60 /* replies of ~900 KB each: 54 MB, past the agent's 32 MiB of unread */

/*
 * Sends FLOOD_CALLS calls of "flood" and reads nothing; agentd must end the connection once the
 * agent's unread replies pass its bound (the socket then reports the hang-up, the unread replies
 * still in it). Within 30 s, else the step fails.
 */
static int never_reads(void *arg)
{
	const struct raw *rw = arg;
	struct pollfd pfd = { .events = POLLRDHUP };
	char json[64];
	int i;

	pfd.fd = unix_connect(rw->sock_a);
	CHECK(1, pfd.fd >= 0);
	for (i = 0; i < FLOOD_CALLS; i++) {
		snprintf(json, sizeof(json), "{\"id\": %d, \"tool\": \"flood\"}", i);
		CHECK(2, send_json(pfd.fd, json));
	}
	CHECK(3, poll(&pfd, 1, 30000) == 1 && (pfd.revents & (POLLRDHUP | POLLHUP)));
	close(pfd.fd);
	/* The agent is still served once it let go. */
	pfd.fd = unix_connect(rw->sock_a);
	CHECK(4, pfd.fd >= 0 && send_json(pfd.fd, "{\"id\": 1, \"tool\": \"noop\"}"));
	CHECK(5, !strcmp(reply_code(pfd.fd, json, sizeof(json)), "ok"));
	close(pfd.fd);
	return 0;
}

static long worker_hwm_kib(void)
{
	char out[16384], path[64], status[4096], *p;
	ssize_t n;
	int fd;

	ASSERT_EQ(agentctl_run(out, sizeof(out), "status", "--json", NULL), 0);
	p = strstr(out, "\"worker_pid\"");
	ASSERT(p);
	snprintf(path, sizeof(path), "/proc/%d/status", atoi(strchr(p, ':') + 1));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_OK(fd);
	n = read(fd, status, sizeof(status) - 1);
	close(fd);
	ASSERT(n > 0);
	status[n] = '\0';
	p = strstr(status, "VmHWM:");
	ASSERT(p);
	return atol(p + 6);
}

/*
 * The broker holds a bounded amount for an agent that pipelines calls and never reads: past
 * 32 MiB of unread replies, the connection is ended (its held replies dropped) and the refusal
 * audited; the worker's peak memory stays near the bound; the agent is served again after.
 */
TEST(broker_unread_replies_are_bounded)
{
	static char log[1 << 20];
	struct env *e = setup();
	struct raw r = { e->sock_a, e->sock_b };
	char cg_a[PATH_MAX + 8];
	long hwm;
	int step;

	snprintf(cg_a, sizeof(cg_a), "%s/t-a", e->cgroup);
	step = run_in_cgroup(cg_a, never_reads, &r, NULL);
	if (step)
		FAIL("an agent that never reads, step %d", step);
	hwm = worker_hwm_kib();
	if (hwm > 48 * 1024)
		FAIL("the worker peaked at %ld KiB holding unread replies", hwm);
	stop_and_read_audit(e, log, sizeof(log));
	expect_audit(log, (const char *[]){ "\"op\":\"tool-refused\"", "\"agent_name\":\"t-a\"",
					    "outcome=busy", "has not read", NULL });
}
