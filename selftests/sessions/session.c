// SPDX-License-Identifier: GPL-2.0
/* What the host tier's and the VM tier's agent sessions share (session.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "harness.h"
#include "kernel/probe.h"
#include "sessions/session.h"

void path_in(char *out, size_t outsz, const char *dir, const char *name)
{
	if ((size_t)snprintf(out, outsz, "%s/%s", dir, name) >= outsz)
		FAIL("path too long: %s/%s", dir, name);
}

void dir_in(char *out, size_t outsz, const char *dir, const char *name)
{
	path_in(out, outsz, dir, name);
	ASSERT_OK(mkdir(out, 0755));
}

/* Reads fd to its end into out (FAILs when out is too small); closes it. No bound of its own: a
 * session's step may be silent for minutes under software emulation (the test's deadline ends a
 * hung one). */
static void read_all(int fd, char *out, size_t outsz)
{
	size_t len = 0;
	ssize_t n;

	while (len + 1 < outsz) {
		n = read(fd, out + len, outsz - 1 - len);
		if (n <= 0)
			break;
		len += n;
	}
	out[len] = '\0';
	close(fd);
	if (len + 1 == outsz)
		FAIL("more than %zu bytes of output: %s", outsz - 1, out);
}

int agent_exec(const char *name, const char *user, const char *cwd, char *const cmd[], char *out,
	       size_t outsz)
{
	char bin[PATH_MAX], *argv[32] = { "agentctl", "run", (char *)name };
	int pipefd[2], status, fd, n = 3, i;
	pid_t pid;

	if (user) {
		argv[n++] = "--user";
		argv[n++] = (char *)user;
	}
	if (cwd) {
		argv[n++] = "--cwd";
		argv[n++] = (char *)cwd;
	}
	argv[n++] = "--";
	for (i = 0; cmd[i] && n < 31; i++)
		argv[n++] = cmd[i];
	snprintf(bin, sizeof(bin), "%s/agentctl", test_bin_dir());
	ASSERT_OK(pipe(pipefd));
	pid = fork();
	ASSERT_OK(pid);
	if (pid == 0) {
		fd = open("/dev/null", O_RDONLY);
		if (fd < 0 || dup2(fd, 0) < 0 || dup2(pipefd[1], 1) < 0 || dup2(pipefd[1], 2) < 0)
			_exit(99);
		close(pipefd[0]);
		execv(bin, argv);
		_exit(98);
	}
	close(pipefd[1]);
	read_all(pipefd[0], out, outsz);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void expect(const char *out, const char *key, const char *want)
{
	size_t k = strlen(key), w = strlen(want);
	const char *l;

	for (l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, key, k) && l[k] == ' ') {
			if (strncmp(l + k + 1, want, w) || (l[k + 1 + w] != '\n' && l[k + 1 + w]))
				FAIL("%s: expected \"%s\" in:\n%s", key, want, out);
			return;
		}
	FAIL("the agent said nothing of %s:\n%s", key, out);
}

bool session_lsm(void)
{
	struct probe p;

	probe_kernel(&p);
	return probe_bpf_lsm_ok(&p);
}

void session_needs(const char *what)
{
	if (session_lsm())
		FAIL("needs %s, which vm.sh stages (selftests/vm/stage_sessions.sh)", what);
	SKIP("needs %s", what);
}

void session_daemon_start(struct test_daemon *d)
{
	if (session_lsm())
		test_daemon_start(d, NULL);
	else
		test_daemon_start(d, "--allow-partial", NULL);
}

const char *session_deny(void)
{
	return session_lsm() ? "EPERM" : "EACCES";
}

void session_add(const char *name, const char *profile, const char *ws)
{
	char policy[PATH_MAX], tools[PATH_MAX], var[PATH_MAX + 16], out[4096];

	snprintf(policy, sizeof(policy), "%s/../policies/%s", test_bin_dir(), profile);
	snprintf(tools, sizeof(tools), "%s/../policies/tools.json", test_bin_dir());
	snprintf(var, sizeof(var), "workspace=%s", ws);
	if (agentctl_run(out, sizeof(out), "agent", "add", name, "--policy", policy, "--tools",
			 tools, "--var", var, NULL))
		FAIL("agent add %s: %s", name, out);
}

void session_stop(struct test_daemon *d)
{
	ASSERT_EQ(proc_stop(d->agentd, SIGTERM), 0);
}

void session_denied(const struct test_daemon *d, const char *name, const char *kind, const char *op,
		    const char *needle)
{
	static char out[1 << 20];
	char k[64], o[64], *line, *nl;

	snprintf(k, sizeof(k), "\"kind\":\"%s\"", kind);
	snprintf(o, sizeof(o), "\"op\":\"%s\"", op);
	ASSERT_EQ(agentctl_run(out, sizeof(out), "audit", "query", "--dir", d->audit, "--agent",
			       name, "--decision", "deny", NULL),
		  0);
	for (line = out; (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		if (strstr(line, k) && strstr(line, o) && strstr(line, needle))
			return;
	}
	/* The denials there were, each from its kind on (the failure's line is short). */
	for (line = out; *line; line += strlen(line) + 1)
		fprintf(stderr, "denial: %.200s\n", strstr(line, "\"kind\"") ?: line);
	FAIL("no %s %s denial of %s by %s in the audit log (its denials above)", kind, op, needle,
	     name);
}
