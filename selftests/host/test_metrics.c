// SPDX-License-Identifier: GPL-2.0
/*
 * Host tier: agentctl metrics. The counters match a known sequence: three loopback connects the
 * structural deny list refuses (cgroup-BPF), four broker calls (two run, one of a tool the
 * policy does not grant, one of a tool no registry has), one request the egress proxy refuses,
 * and the audit log's commits, checked against the log's bytes. The exposition passes
 * Prometheus's own checker, promtool check metrics.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kernel/cgroup.h"
#include "harness.h"
#include "testlib.h"

static int promtool_check(const char *text, char *out, size_t outsz)
{
	char path[PATH_MAX], cmd[PATH_MAX + 64];
	FILE *p;
	size_t n;
	int status;

	test_file(path, sizeof(path), "metrics.txt", text);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < '%s' 2>&1", path);
	p = popen(cmd, "r");
	ASSERT(p);
	n = fread(out, 1, outsz - 1, p);
	out[n] = '\0';
	status = pclose(p);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The value of the sample whose line starts with prefix (name and labels); -1: none. */
static double sample_of(const char *text, const char *prefix)
{
	const char *p = text;
	size_t n = strlen(prefix);

	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, prefix, n) && p[n] == ' ')
			return strtod(p + n + 1, NULL);
	return -1;
}

static void expect_sample(const char *text, const char *prefix, double want)
{
	double v = sample_of(text, prefix);

	if (v != want)
		FAIL("%s is %g, not %g:\n%s", prefix, v, want, text);
}

/* The first bytes of the log, as committed: whole lines, as many as records. */
static void expect_log_prefix(const char *audit, double bytes, double records)
{
	char path[PATH_MAX + 16];
	size_t n = (size_t)bytes, i, lines = 0;
	char *buf = malloc(n + 1);
	FILE *f;

	ASSERT(buf && bytes > 0);
	snprintf(path, sizeof(path), "%s/audit.log", audit);
	f = fopen(path, "re");
	ASSERT(f);
	ASSERT_EQ(fread(buf, 1, n, f), n);
	fclose(f);
	for (i = 0; i < n; i++)
		lines += buf[i] == '\n';
	if (buf[n - 1] != '\n' || lines != (size_t)records)
		FAIL("the log's first %zu bytes hold %zu lines (last byte %#x), not %g records", n,
		     lines, buf[n - 1], records);
	free(buf);
}

/* Calls tool from inside agent m through its tool socket; agent-tool's exit status. */
static int tool_call(const char *dir, const char *tool)
{
	char out[4096], env[PATH_MAX], bin[PATH_MAX];

	snprintf(env, sizeof(env), "AGENTD_TOOL_SOCKET=%s/agents/m/tool.sock", dir);
	/* A copy the agent sees (its /tmp is private) and reaches (the checkout may be 0700). */
	test_bin_for_all("agent-tool", bin, sizeof(bin));
	return agentctl_run(out, sizeof(out), "run", "m", "--", "env", env, bin, tool, NULL);
}

TEST(metrics_count_decisions_and_pass_promtool)
{
	static char out[1 << 16];
	char dir[256], state[PATH_MAX], control[PATH_MAX], audit[PATH_MAX], pins[PATH_MAX],
		cgroup[PATH_MAX], policy[PATH_MAX], tools[PATH_MAX], agent_cg[PATH_MAX + 8],
		lint[4096], metrics[PATH_MAX];
	char root[PATH_MAX - 64];
	const char *ready[] = { "agentd: ready", NULL };
	const char *deny[] = { "\"kind\":\"net\"", "\"decision\":\"deny\"", NULL };
	const char *proxied[] = { "\"op\":\"proxy\"", "why=host-not-allowed", NULL };
	double batches, bytes, records;
	struct proc *agentd, *follow;
	int i, port, lfd;

	ASSERT_EQ(cgroup2_mount(root, sizeof(root)), 0);
	test_tmpdir(dir, sizeof(dir), "metrics");
	snprintf(state, sizeof(state), "%s/state", dir);
	snprintf(audit, sizeof(audit), "%s/audit", dir);
	snprintf(control, sizeof(control), "%s/control.sock", dir);
	snprintf(cgroup, sizeof(cgroup), "%s/agentd-test-%d", root, getpid());
	snprintf(agent_cg, sizeof(agent_cg), "%s/m", cgroup);
	test_pin_dir(pins, sizeof(pins));
	test_cgroup_tree_at_end(cgroup);
	test_file(
		policy, sizeof(policy), "metrics-policy.json",
		"{\"name\": \"m\", \"files\": [{\"path\": \"/\", \"rights\": [\"read\", \"exec\"]},"
		" {\"path\": \"/dev/null\", \"rights\": [\"read\", \"write\"]}],"
		" \"network\": {\"sockets\": [\"inet\", \"unix\"],"
		" \"proxy\": {\"allow_hosts\": [\"allowed.test\"], \"ports\": [8080]}},"
		" \"tools\": [\"noop\"]}\n");
	test_file(
		tools, sizeof(tools), "metrics-tools.json",
		"{\"tools\": [{\"name\": \"noop\", \"effect\": \"observe\", \"builtin\": \"noop\"},"
		" {\"name\": \"spare\", \"effect\": \"observe\", \"builtin\": \"noop\"}]}\n");
	setenv("AGENTD_CONTROL", control, 1);
	char *argv[] = { "agentd", "--control", control, "--state-dir", state,	"--audit-dir",
			 audit,	   "--pin-dir", pins,	 "--cgroup",	cgroup, "--allow-partial",
			 NULL };
	agentd = proc_start(argv);
	if (!proc_wait_line(agentd, TEST_READY_MS, ready))
		FAIL("agentd did not get ready: \"%s\"", agentd->buf);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "add", "m", "--policy", policy, "--tools",
			       tools, NULL),
		  0);
	char *fargv[] = { "agentctl",	"audit", "follow", "--kind", "net",
			  "--decision", "deny",	 "--json", NULL };
	follow = proc_start(fargv);

	lfd = test_loopback_listener(&port);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(run_in_cgroup(agent_cg, test_loopback_connect, &port, NULL), EPERM);
	close(lfd);
	/* Counted when appended, before the record is committed and streamed. */
	for (i = 0; i < 3; i++)
		if (!proc_wait_line(follow, 20000, deny))
			FAIL("deny record %d did not come: \"%s\"", i + 1, follow->buf);

	ASSERT_EQ(tool_call(dir, "noop"), 0);
	ASSERT_EQ(tool_call(dir, "noop"), 0);
	ASSERT_EQ(tool_call(dir, "spare"), 125);
	ASSERT_EQ(tool_call(dir, "no.such.tool"), 125);
	/* The agent's own proxy (agentctl run sets http_proxy); the worker's report is audited
	 * and counted together. */
	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "m", "--", "curl", "-sS", "--max-time",
			       "20", "http://denied.test:8080/", NULL),
		  0);
	if (!strstr(out, "host-not-allowed"))
		FAIL("the proxy did not refuse denied.test: %s", out);
	if (!proc_wait_line(follow, 20000, proxied))
		FAIL("no proxy deny record: \"%s\"", follow->buf);

	ASSERT_EQ(agentctl_run(out, sizeof(out), "metrics", NULL), 0);
	expect_sample(out, "agentd_decisions_total{agent=\"m\",kind=\"net\",decision=\"deny\"}", 3);
	expect_sample(out, "agentd_broker_calls_total{tool=\"noop\",outcome=\"ok\"}", 2);
	expect_sample(out, "agentd_broker_calls_total{tool=\"spare\",outcome=\"denied\"}", 1);
	expect_sample(out, "agentd_broker_calls_total{tool=\"?\",outcome=\"denied\"}", 1);
	expect_sample(out, "agentd_broker_call_duration_seconds_count{tool=\"noop\"}", 2);
	expect_sample(out, "agentd_broker_call_duration_seconds_bucket{tool=\"noop\",le=\"+Inf\"}",
		      2);
	if (sample_of(out, "agentd_broker_call_duration_seconds_count{tool=\"spare\"}") != -1)
		FAIL("a refused call has a duration:\n%s", out);
	expect_sample(out, "agentd_proxy_connections_total{agent=\"m\",outcome=\"refused\"}", 1);
	expect_sample(out, "agentd_proxy_connections_total{agent=\"m\",outcome=\"relayed\"}", 0);
	expect_sample(out, "agentd_proxy_refusals_total{agent=\"m\",reason=\"host-not-allowed\"}",
		      1);
	if (sample_of(out,
		      "agentd_proxy_relayed_bytes_total{agent=\"m\",direction=\"to_origin\"}") < 0)
		FAIL("no proxy bytes:\n%s", out);
	batches = sample_of(out, "agentd_audit_batches_total");
	bytes = sample_of(out, "agentd_audit_written_bytes_total");
	records = sample_of(out, "agentd_audit_records_total");
	/* At least one batch for the agent's add, the denies, the calls and the proxy. */
	if (batches < 1 || records < 3 + 4 + 1)
		FAIL("%g batches, %g records committed:\n%s", batches, records, out);
	expect_sample(out, "agentd_audit_commit_duration_seconds_count", batches);
	expect_sample(out, "agentd_audit_write_errors_total", 0);
	expect_log_prefix(audit, bytes, records);
	if (!strstr(out, "agentd_agents 1\n") || !strstr(out, "agentd_build_info{version=\""))
		FAIL("agents or build info missing:\n%s", out);
	if (promtool_check(out, lint, sizeof(lint)))
		FAIL("promtool check metrics: %s", lint);
	/* $AGENTD_METRICS names the socket itself, wherever the control socket is said to be. */
	snprintf(metrics, sizeof(metrics), "%s/metrics.sock", dir);
	setenv("AGENTD_METRICS", metrics, 1);
	ASSERT_EQ(
		agentctl_run(out, sizeof(out), "metrics", "--control", "/nonexistent/c.sock", NULL),
		0);
	if (!strstr(out, "agentd_agents 1\n"))
		FAIL("$AGENTD_METRICS: %s", out);
}

/* A connection to 127.0.0.1:port that gives up after 20 s (a bound on failure). */
static int scrape_connect(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { .tv_sec = 20 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ASSERT(fd >= 0);
	ASSERT_OK(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	ASSERT_OK(connect(fd, (struct sockaddr *)&sa, sizeof(sa)));
	return fd;
}

/* Everything the server sends until it closes, in out. */
static size_t read_all(int fd, char *out, size_t outsz)
{
	size_t len = 0;
	ssize_t n;

	while (len + 1 < outsz && (n = read(fd, out + len, outsz - 1 - len)) > 0)
		len += n;
	ASSERT(n >= 0);
	out[len] = '\0';
	return len;
}

/* One request on a connection of its own; the whole response in out. */
static size_t http_exchange(int port, const char *request, char *out, size_t outsz)
{
	int fd = scrape_connect(port);
	size_t len;

	ASSERT_EQ(write(fd, request, strlen(request)), (ssize_t)strlen(request));
	len = read_all(fd, out, outsz);
	close(fd);
	return len;
}

TEST(metrics_listen_serves_get_metrics_on_loopback_only)
{
	static char resp[1 << 17], unix_out[1 << 17];
	struct test_daemon d;
	char listen_at[32], lint[4096], cg[PATH_MAX], policy[PATH_MAX], cmd[PATH_MAX + 64];
	const char *body;
	int port, lfd, silent[4], busy, i;
	FILE *p;

	/* A free port: bound once by the test, then left for agentd. */
	lfd = test_loopback_listener(&port);
	close(lfd);
	snprintf(listen_at, sizeof(listen_at), "127.0.0.1:%d", port);
	test_daemon_init(&d, "mlisten");
	test_file(policy, sizeof(policy), "mlisten-policy.json",
		  "{\"name\": \"m\", \"files\": [{\"path\": \"/\", \"rights\": [\"read\"]}],"
		  " \"network\": {\"sockets\": [\"inet\"]}}\n");
	test_daemon_start(&d, "--allow-partial", "--metrics-listen", listen_at, NULL);
	test_daemon_add(&d, "m", policy, cg, sizeof(cg));

	http_exchange(port, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", resp, sizeof(resp));
	body = strstr(resp, "\r\n\r\n");
	if (strncmp(resp, "HTTP/1.1 200 OK\r\n", 17) || !body ||
	    !strstr(resp, "Content-Type: text/plain; version=0.0.4"))
		FAIL("GET /metrics:\n%s", resp);
	body += 4;
	if (strtoul(strstr(resp, "Content-Length: ") + 16, NULL, 10) != strlen(body))
		FAIL("Content-Length is not the body's %zu bytes:\n%s", strlen(body), resp);
	expect_sample(body, "agentd_agents", 1);
	if (promtool_check(body, lint, sizeof(lint)))
		FAIL("promtool check metrics: %s", lint);

	http_exchange(port, "GET / HTTP/1.1\r\n\r\n", resp, sizeof(resp));
	if (strncmp(resp, "HTTP/1.1 404 Not Found\r\n", 24))
		FAIL("GET /: %s", resp);
	http_exchange(port, "POST /metrics HTTP/1.1\r\n\r\n", resp, sizeof(resp));
	if (strncmp(resp, "HTTP/1.1 405 ", 13))
		FAIL("POST /metrics: %s", resp);

	/* The agent cannot reach the listener: loopback is no agent's but for its own endpoints. */
	ASSERT_EQ(run_in_cgroup(cg, test_loopback_connect, &port, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, test_loopback_connect, &port, NULL), 0);

	/* Scrapers that send nothing hold the slots, not the daemon: one more is told 503, the
	 * Unix socket still answers, and each silent one is closed at its deadline. */
	for (i = 0; i < 4; i++)
		silent[i] = scrape_connect(port);
	busy = scrape_connect(port);
	read_all(busy, resp, sizeof(resp));
	close(busy);
	if (strncmp(resp, "HTTP/1.1 503 ", 13))
		FAIL("a fifth scrape at once: %s", resp);
	ASSERT_EQ(agentctl_run(unix_out, sizeof(unix_out), "metrics", NULL), 0);
	expect_sample(unix_out, "agentd_agents", 1);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(read_all(silent[i], resp, sizeof(resp)), 0);
		close(silent[i]);
	}
	http_exchange(port, "GET /metrics HTTP/1.0\r\n\r\n", resp, sizeof(resp));
	if (strncmp(resp, "HTTP/1.1 200 OK\r\n", 17))
		FAIL("GET /metrics after the silent scrapes: %s", resp);

	/* Another address is refused when the option is read. */
	snprintf(cmd, sizeof(cmd), "'%s/agentd' --metrics-listen 0.0.0.0:%d 2>&1", test_bin_dir(),
		 port);
	p = popen(cmd, "r");
	ASSERT(p);
	resp[fread(resp, 1, sizeof(resp) - 1, p)] = '\0';
	ASSERT_EQ(WEXITSTATUS(pclose(p)), 2);
	if (!strstr(resp, "--metrics-listen \"0.0.0.0:") || !strstr(resp, "not a loopback address"))
		FAIL("agentd --metrics-listen 0.0.0.0: %s", resp);
}

/* An exposition larger than a Unix socket's send buffer (net.core.wmem_default, 208 KiB here)
 * arrives whole: the daemon sends what the socket takes and the rest as the reader drains it. */
TEST(metrics_socket_sends_a_large_exposition_whole)
{
	static char out[1 << 20];
	struct test_daemon d;
	char policy[PATH_MAX], cmd[2 * PATH_MAX + 128], lint[4096];

	test_daemon_init(&d, "mlarge");
	test_file(policy, sizeof(policy), "mlarge-policy.json",
		  "{\"name\": \"l\", \"files\": [{\"path\": \"/\", \"rights\": [\"read\"]}]}\n");
	test_daemon_start(&d, "--allow-partial", NULL);
	/* One shell for the 200 adds (each agentctl_run() would be a cleanup of its own). */
	snprintf(cmd, sizeof(cmd),
		 "for i in $(seq 1 200); do '%s/agentctl' agent add l$i --policy '%s' >/dev/null "
		 "|| exit 1; done",
		 test_bin_dir(), policy);
	ASSERT_EQ(system(cmd), 0);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "metrics", NULL), 0);
	if (strlen(out) <= 212992)
		FAIL("an exposition of %zu bytes does not test a full socket buffer", strlen(out));
	expect_sample(out, "agentd_agents", 200);
	expect_sample(out,
		      "agentd_proxy_relayed_bytes_total{agent=\"l200\",direction=\"to_agent\"}", 0);
	if (promtool_check(out, lint, sizeof(lint)))
		FAIL("promtool check metrics: %s", lint);
}
