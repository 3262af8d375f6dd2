// SPDX-License-Identifier: GPL-2.0
/*
 * What a run of a tool or of an upstream MCP server gets before it starts: its secrets, read
 * from the state directory, and the Landlock ruleset of the policy that holds it (broker_int.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker/broker_int.h"
#include "policy/policy.h"
#include "sandbox/landlock.h"
#include "sandbox/tool_sandbox.h"

#define SECRETS_DIR "secrets" /* in the state directory */

int broker_secret_read(const char *state_dir, const char *name, char *buf, size_t bufsz,
		       size_t *len)
{
	char path[PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s/%s", state_dir, SECRETS_DIR, name);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 077) ||
	    (size_t)st.st_size >= bufsz)
		err = -EPERM;
	n = err ? 0 : read(fd, buf, bufsz - 1);
	close(fd);
	if (!err && n < 0)
		err = -errno;
	if (err)
		return err;
	if (n && buf[n - 1] == '\n')
		n--;
	*len = n;
	return 0;
}

/*
 * What the run may reach: the caller's file rights (read-only unless the tool actuates), its own
 * programs, as a Landlock ruleset. Without Landlock nothing would hold a tool to its caller's
 * files: the call is refused (fail closed). Returns the ruleset fd, or -errno with why.
 */
int broker_tool_ruleset(int abi, const struct policy *p, const struct tool *t, char *why,
			size_t whysz)
{
	struct landlock_plan *plan = NULL;
	const char *bad = "?";
	int fd;

	if (abi < 1) {
		snprintf(why, whysz,
			 "Landlock is not available here (%s): nothing would hold the tool to the "
			 "agent's files: not run",
			 strerror(-abi));
		return -EOPNOTSUPP;
	}
	fd = tool_sandbox_plan(p, t, abi, &plan, why, whysz);
	if (!fd) {
		fd = landlock_open(plan, &bad);
		if (fd)
			snprintf(why, whysz, "the tool's sandbox: %s: %s", bad,
				 landlock_strerror(fd));
	} else if (fd != -EPERM) {
		snprintf(why, whysz, "the tool's sandbox: %s", strerror(-fd));
	}
	if (!fd) {
		fd = landlock_ruleset(plan);
		if (fd < 0)
			snprintf(why, whysz, "the tool's Landlock ruleset: %s", strerror(-fd));
	}
	landlock_plan_free(plan);
	return fd;
}
