// SPDX-License-Identifier: GPL-2.0
/*
 * Host tier: tool calls held for an operator's approval (docs/BROKER.md, "Approvals"). A real
 * agentd with two agents; calls made from inside agent t-a by agentctl run and agent-tool, the
 * held call seen live through agentctl attach (its approval-request line names the id), and
 * answered with agentctl approve or deny from outside, or by its timeout. The audit log is
 * read once agentd has stopped.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "harness.h"
#include "testlib.h"

#define HIDDEN "hunter2-not-shown"
#define WAIT_MS 30000 /* a bound on failure, not a timed assertion */

static const char tools_json[] =
	"{\"tools\": [\n"
	" {\"name\": \"greet\", \"effect\": \"actuate\", \"exec\": [\"/bin/echo\", \"hello\", "
	"\"{who}\"],\n"
	"  \"args\": {\"who\": {\"type\": \"string\", \"displayable\": true},\n"
	"           \"secret\": {\"type\": \"string\"}},\n"
	"  \"approval\": \"required\", \"approval_timeout\": \"10m\"},\n"
	" {\"name\": \"quick\", \"effect\": \"actuate\", \"exec\": [\"/bin/true\"],\n"
	"  \"approval\": \"required\", \"approval_timeout\": \"1s\"},\n"
	" {\"name\": \"plain\", \"effect\": \"observe\", \"exec\": [\"/bin/echo\", \"plain\"]}\n"
	"]}\n";

static const char policy_fmt[] =
	"{\"name\": \"%s\", \"files\": [{\"path\": \"/\", \"rights\": [\"read\", \"exec\"]},"
	" {\"path\": \"/dev/null\", \"rights\": [\"read\", \"write\"]}],"
	" \"network\": {\"sockets\": [\"inet\", \"unix\"]}, \"tools\": [%s]}\n";

struct env {
	struct test_daemon d;
	char cg_a[PATH_MAX + 8];
	char agent_tool[PATH_MAX];
	struct proc *view; /* agentctl attach t-a */
};

static void add_agent(struct env *e, const char *name, const char *tools)
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

/* agentd, agents t-a (its own grant of plain holds too) and t-b, and the live view of t-a. */
static struct env *setup(void)
{
	static struct env e;
	char *view[] = { "agentctl", "attach", "t-a", NULL };
	const char *live[] = { "live from", NULL };
	char path[PATH_MAX + 32];

	memset(&e, 0, sizeof(e));
	test_daemon_init(&e.d, "approval");
	snprintf(path, sizeof(path), "%s/tools.json", e.d.dir);
	test_write(path, tools_json, 0644);
	test_daemon_start(&e.d, "--allow-partial", NULL);
	add_agent(&e, "t-a",
		  "\"greet\", \"quick\", {\"name\": \"plain\", \"approval\": \"required\"}");
	add_agent(&e, "t-b", "\"plain\"");
	snprintf(e.cg_a, sizeof(e.cg_a), "%s/t-a", e.d.cgroup);
	test_bin_for_all("agent-tool", e.agent_tool, sizeof(e.agent_tool));
	e.view = proc_start(view);
	if (!proc_wait_line(e.view, WAIT_MS, live))
		FAIL("agentctl attach did not start: \"%s\"", e.view->buf);
	return &e;
}

/* agent-tool --json TOOL [ARGS] inside t-a, in the background: its output is the proc's. */
static struct proc *call_a(struct env *e, const char *tool, const char *a1, const char *a2)
{
	char *argv[] = { "agentctl", "run",	   "t-a",      "--",	   e->agent_tool,
			 "--json",   (char *)tool, (char *)a1, (char *)a2, NULL };

	return proc_start(argv);
}

/* The id of the next call of tool held for t-a, from the live view's pending line. */
static void next_pending(struct env *e, const char *tool, char *id, size_t idsz)
{
	const char *want[] = { "approval-request", tool, NULL }, *pending[] = { "waits for", NULL };
	const char *line, *p;

	if (!proc_wait_line(e->view, WAIT_MS, want))
		FAIL("no approval-request for %s in the live view: \"%s\"", tool, e->view->buf);
	line = proc_wait_line(e->view, WAIT_MS, pending);
	if (!line)
		FAIL("the live view shows no pending line: \"%s\"", e->view->buf);
	p = strstr(line, "approval ");
	ASSERT(p);
	snprintf(id, idsz, "%.*s", (int)strcspn(p + 9, ":"), p + 9);
	/* Consumed: the next wait finds the next call. */
	e->view->len = 0;
	e->view->buf[0] = '\0';
}

/* The held call's reply line, and agentctl run's exit status (agent-tool's). */
static int reply_of(struct proc *p, char *out, size_t outsz)
{
	const char *want[] = { "\"id\"", NULL }, *line = proc_wait_line(p, WAIT_MS, want);

	if (!line)
		FAIL("the held call never answered: \"%s\"", p->buf);
	snprintf(out, outsz, "%s", line);
	return proc_stop(p, 0);
}

static void stop_and_read_audit(struct env *e, char *buf, size_t bufsz)
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
		execl("/usr/bin/python3", "python3", script, e->d.audit, (char *)NULL);
		_exit(127);
	}
	ASSERT_OK(waitpid(pid, &status, 0));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		FAIL("the audit log does not match docs/audit.schema.json (status %d)",
		     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* Whether a line of the log holds every needle. */
static bool has_audit(const char *log, const char *const needles[])
{
	const char *p = log, *nl;
	char line[4096];
	size_t i;

	for (; (nl = strchr(p, '\n')); p = nl + 1) {
		snprintf(line, sizeof(line), "%.*s", (int)(nl - p), p);
		for (i = 0; needles[i] && strstr(line, needles[i]); i++)
			;
		if (!needles[i])
			return true;
	}
	return false;
}

static void expect_audit(const char *log, const char *const needles[])
{
	if (!has_audit(log, needles))
		FAIL("no audit record with \"%s\", \"%s\", \"%s\"...\n%s", needles[0], needles[1],
		     needles[2] ? needles[2] : "", log);
}

static void expect_in(const char *out, const char *want)
{
	if (!strstr(out, want))
		FAIL("expected \"%s\" in\n%s", want, out);
}

TEST(approval_approve_runs_the_call_and_lists_no_hidden_value)
{
	static char log[1 << 20];
	char id[64], out[4096], needle[96];
	struct env *e = setup();
	struct proc *p = call_a(e, "greet", "who=world", "secret=" HIDDEN);

	next_pending(e, "greet", id, sizeof(id));
	ASSERT_EQ(agentctl_run(out, sizeof(out), "approvals", NULL), 0);
	expect_in(out, id);
	expect_in(out, "who=\"world\"");
	if (strstr(out, HIDDEN))
		FAIL("agentctl approvals shows a value not marked displayable:\n%s", out);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "approvals", "--json", NULL), 0);
	expect_in(out, "\"args_sha256\"");
	if (strstr(out, HIDDEN) || strstr(out, "\"secret\""))
		FAIL("agentctl approvals --json shows a value not marked displayable:\n%s", out);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "approve", id, NULL), 0);
	ASSERT_EQ(reply_of(p, out, sizeof(out)), 0);
	expect_in(out, "hello world");
	/* Answered: the id is gone, and never given again. */
	ASSERT_EQ(agentctl_run(out, sizeof(out), "approve", id, "--json", NULL), 1);
	expect_in(out, "no-such-approval");
	stop_and_read_audit(e, log, sizeof(log));
	snprintf(needle, sizeof(needle), "approval=%s ", id);
	expect_audit(log, (const char *const[]){ "\"approval-request\"", "\"t-a\"", needle,
						 "\"greet\"", NULL });
	expect_audit(log, (const char *const[]){ "\"approval-decision\"", "\"allow\"", needle,
						 "decided=approve by_uid=0", NULL });
	expect_audit(log,
		     (const char *const[]){ "\"tool-call\"", "\"greet\"", "outcome=ok", NULL });
	if (strstr(log, HIDDEN) || strstr(log, "world"))
		FAIL("an argument's value reached the audit log");
	expect_schema_valid(e);
}

TEST(approval_deny_refuses_the_call)
{
	static char log[1 << 20];
	char id[64], out[4096], needle[96];
	struct env *e = setup();
	struct proc *p = call_a(e, "greet", "who=deny", "secret=x");

	next_pending(e, "greet", id, sizeof(id));
	ASSERT_EQ(agentctl_run(out, sizeof(out), "deny", id, NULL), 0);
	ASSERT_EQ(reply_of(p, out, sizeof(out)), 125 << 8);
	expect_in(out, "\"denied\"");
	expect_in(out, "an operator denied this call");
	if (strstr(out, "hello"))
		FAIL("a denied call ran: %s", out);
	stop_and_read_audit(e, log, sizeof(log));
	snprintf(needle, sizeof(needle), "approval=%s ", id);
	expect_audit(log, (const char *const[]){ "\"approval-decision\"", "\"deny\"", needle,
						 "decided=deny by_uid=0", NULL });
	expect_audit(log, (const char *const[]){ "\"tool-refused\"", "\"greet\"",
						 "an operator denied", NULL });
}

TEST(approval_timeout_denies_the_call)
{
	static char log[1 << 20];
	char id[64], out[4096];
	struct env *e = setup();
	struct proc *p = call_a(e, "quick", NULL, NULL);

	next_pending(e, "quick", id, sizeof(id));
	ASSERT_EQ(reply_of(p, out, sizeof(out)), 125 << 8);
	expect_in(out, "no operator approved this call within 1 s");
	ASSERT_EQ(agentctl_run(out, sizeof(out), "approve", id, NULL), 1);
	stop_and_read_audit(e, log, sizeof(log));
	expect_audit(log, (const char *const[]){ "\"approval-decision\"", "\"deny\"",
						 "decided=timeout", NULL });
}

/* t-a's call waits; t-b's calls, and t-a's own grant of the same tool (held by its policy
 * alone), are answered meanwhile. */
TEST(approval_other_calls_proceed_while_one_waits)
{
	char id[64], id2[64], out[4096];
	struct env *e = setup();
	struct proc *p = call_a(e, "greet", "who=first", "secret=x"), *q;

	next_pending(e, "greet", id, sizeof(id));
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "t-b", "--", e->agent_tool, "plain", NULL),
		  0);
	expect_in(out, "plain");
	/* The registry holds no plain call; t-a's policy does. */
	q = call_a(e, "plain", NULL, NULL);
	next_pending(e, "plain", id2, sizeof(id2));
	ASSERT(strcmp(id, id2));
	ASSERT_EQ(agentctl_run(out, sizeof(out), "approve", id2, NULL), 0);
	ASSERT_EQ(reply_of(q, out, sizeof(out)), 0);
	expect_in(out, "plain");
	ASSERT_EQ(agentctl_run(out, sizeof(out), "approvals", NULL), 0);
	expect_in(out, id);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "approve", id, NULL), 0);
	ASSERT_EQ(reply_of(p, out, sizeof(out)), 0);
	expect_in(out, "hello first");
}

static const char *the_id;

/* Inside t-a's cgroup, as root: agentctl approve of its own held call. */
static int approve_from_inside(void *arg)
{
	char prog[PATH_MAX];

	(void)arg;
	snprintf(prog, sizeof(prog), "%s/agentctl", test_bin_dir());
	execl(prog, "agentctl", "approve", the_id, (char *)NULL);
	return 127;
}

TEST(approval_agent_cannot_approve_its_own_call)
{
	static char log[1 << 20];
	char id[64], out[4096];
	struct env *e = setup();
	struct proc *p = call_a(e, "greet", "who=self", "secret=x");
	int status;

	next_pending(e, "greet", id, sizeof(id));
	the_id = id;
	status = run_in_cgroup(e->cg_a, approve_from_inside, NULL, NULL);
	if (status != 1)
		FAIL("agentctl approve inside the agent: status %d, expected a refusal (1)",
		     status);
	/* Still held: the refusal changed nothing. */
	ASSERT_EQ(agentctl_run(out, sizeof(out), "approvals", NULL), 0);
	expect_in(out, id);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "deny", id, NULL), 0);
	ASSERT_EQ(reply_of(p, out, sizeof(out)), 125 << 8);
	stop_and_read_audit(e, log, sizeof(log));
	expect_audit(log, (const char *const[]){ "\"approval-decision\"", "decided=deny", NULL });
	if (strstr(log, "decided=approve"))
		FAIL("a decision to approve was recorded:\n%s", log);
}

/* approve --for: the same call (same arguments) of the same agent goes on without asking; one
 * with other arguments waits. */
TEST(approval_for_covers_the_same_call_only)
{
	char id[64], id2[64], out[4096];
	struct env *e = setup();
	struct proc *p = call_a(e, "greet", "who=again", "secret=x");

	next_pending(e, "greet", id, sizeof(id));
	ASSERT_EQ(agentctl_run(out, sizeof(out), "approve", id, "--for", "10m", NULL), 0);
	ASSERT_EQ(reply_of(p, out, sizeof(out)), 0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "t-a", "--", e->agent_tool, "greet",
			       "who=again", "secret=x", NULL),
		  0);
	expect_in(out, "hello again");
	p = call_a(e, "greet", "who=other", "secret=x");
	next_pending(e, "greet", id2, sizeof(id2));
	ASSERT_EQ(agentctl_run(out, sizeof(out), "deny", id2, NULL), 0);
	ASSERT_EQ(reply_of(p, out, sizeof(out)), 125 << 8);
}

/* The agent removed while its call waits: the call is withdrawn (audited), never run, and its
 * id answers no more. */
TEST(approval_held_call_of_a_removed_agent_is_withdrawn)
{
	static char log[1 << 20];
	char id[64], out[4096], needle[96];
	struct env *e = setup();

	call_a(e, "greet", "who=gone", "secret=x");
	next_pending(e, "greet", id, sizeof(id));
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "rm", "t-a", NULL), 0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "approvals", NULL), 0);
	if (strstr(out, id))
		FAIL("the removed agent's call still waits:\n%s", out);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "approve", id, "--json", NULL), 1);
	expect_in(out, "no-such-approval");
	stop_and_read_audit(e, log, sizeof(log));
	snprintf(needle, sizeof(needle), "approval=%s ", id);
	expect_audit(log, (const char *const[]){ "\"approval-decision\"", needle,
						 "decided=withdrawn reason=the agent was removed",
						 NULL });
	if (has_audit(log, (const char *const[]){ "\"tool-call\"", "\"greet\"", NULL }))
		FAIL("the withdrawn call ran:\n%s", log);
}

/*
 * A call let through by a time-limited tool grant (agentctl grant --tool) and held for approval
 * runs when approved only while the grant still holds: approved with the grant in force, it
 * runs; revoked while the call waits, the approval does not bring the grant back.
 */
TEST(approval_of_a_call_a_grant_let_through_needs_the_grant_still)
{
	char *view_argv[] = { "agentctl", "attach", "t-b", NULL };
	const char *live[] = { "live from", NULL };
	char id[64], out[4096], gid[32];
	struct env *e = setup();
	char *call[] = { "agentctl", "run",   "t-b",	     "--",	 e->agent_tool,
			 "--json",   "greet", "who=granted", "secret=x", NULL };
	struct proc *p;

	/* t-b's policy grants only plain; greet is in its registry, and needs approval. */
	ASSERT_EQ(agentctl_run(out, sizeof(out), "grant", "t-b", "--tool", "greet", "--for", "10m",
			       NULL),
		  0);
	ASSERT_EQ(sscanf(out, "grant %31[0-9]", gid), 1);
	proc_stop(e->view, SIGTERM);
	e->view = proc_start(view_argv);
	if (!proc_wait_line(e->view, WAIT_MS, live))
		FAIL("agentctl attach t-b did not start: \"%s\"", e->view->buf);

	p = proc_start(call);
	next_pending(e, "greet", id, sizeof(id));
	ASSERT_EQ(agentctl_run(out, sizeof(out), "approve", id, NULL), 0);
	ASSERT_EQ(reply_of(p, out, sizeof(out)), 0);
	expect_in(out, "hello granted");

	p = proc_start(call);
	next_pending(e, "greet", id, sizeof(id));
	ASSERT_EQ(agentctl_run(out, sizeof(out), "revoke", gid, NULL), 0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "approve", id, NULL), 0);
	ASSERT_EQ(reply_of(p, out, sizeof(out)), 125 << 8);
	expect_in(out, "does not grant this tool");
	if (strstr(out, "hello"))
		FAIL("a call whose grant was revoked ran once approved: %s", out);
}
