// SPDX-License-Identifier: GPL-2.0
/*
 * Agents while the audit log cannot be written. The log is one for all agents, but each does
 * what its own policy says: freeze stops the agent's cgroups (cgroup v2 cgroup.freeze: its
 * processes stop, in the kernel, wherever they are) and the broker refuses its tool calls;
 * continue lets it run. Kernel decisions go on being made either way; only recording them waits.
 * A freeze is also a file of the state directory (audit-frozen/NAME), so that an agentd started
 * after one killed while agents were frozen thaws them when the log takes writes again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "audit_hold.h"
#include "kernel/cgroup.h"
#include "daemon.h"
#include "log.h"

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* An agent whose policy no longer loads keeps the default: freeze. */
static bool freezes(const struct agent *a)
{
	return !a->policy || a->policy->audit.on_failure == POLICY_AUDIT_FREEZE;
}

bool audit_hold_records(void *ctx, __u32 agent)
{
	struct daemon *d = ctx;
	const struct agent *a = agent < AGENTD_MAX_AGENTS ? d->agents[agent] : NULL;

	return !a || freezes(a);
}

static int set_freeze(const char *cgroup, const char *value)
{
	char path[PATH_MAX + 32];
	int err;

	snprintf(path, sizeof(path), "%s/cgroup.freeze", cgroup);
	err = cgroup_write(path, value);
	if (err)
		log_err("%s %s: %s\n", *value == '1' ? "freezing" : "thawing", cgroup,
			strerror(-err));
	return err;
}

#define FROZEN_DIR "audit-frozen"

static void marker_path(const struct daemon *d, const struct agent *a, char *buf, size_t bufsz)
{
	snprintf(buf, bufsz, "%s/" FROZEN_DIR "/%s", d->o->state_dir, a->st.name);
}

/* Before the cgroups freeze: a marker that cannot be made is said, and the freeze goes on. */
static void mark(const struct daemon *d, const struct agent *a)
{
	char path[PATH_MAX + 96];
	int fd;

	snprintf(path, sizeof(path), "%s/" FROZEN_DIR, d->o->state_dir);
	if (mkdir(path, 0700) && errno != EEXIST)
		fd = -1;
	else {
		marker_path(d, a, path, sizeof(path));
		fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	}
	if (fd < 0)
		log_warn("agent %s: recording its freeze in %s: %s (an agentd after this one would "
			 "not thaw it)\n",
			 a->st.name, path, strerror(errno));
	else
		close(fd);
}

static void unmark(const struct daemon *d, const struct agent *a)
{
	char path[PATH_MAX + 96];

	marker_path(d, a, path, sizeof(path));
	if (unlink(path) && errno != ENOENT)
		log_warn("agent %s: removing %s: %s\n", a->st.name, path, strerror(errno));
}

/* The agent's own cgroup and every attached one; returns how many took the value. */
static unsigned set_freeze_all(const struct agent *a, const char *value)
{
	unsigned n = !set_freeze(a->cgroup, value);
	size_t i;

	for (i = 0; i < a->st.ncgroups; i++)
		n += !set_freeze(a->st.cgroups[i], value);
	return n;
}

static void freeze(struct daemon *d, struct agent *a, int err)
{
	unsigned n;

	/* Refused tool calls do not wait for the cgroups: a failed freeze still refuses them. */
	a->audit_frozen_ns = mono_ns();
	mark(d, a);
	n = set_freeze_all(a, "1");
	log_warn("agent %s frozen (%u of %zu cgroups): the audit log cannot be written (%s)\n",
		 a->st.name, n, a->st.ncgroups + 1, strerror(-err));
	daemon_audit(d, AUDIT_KIND_LIFECYCLE, "agent-freeze", a,
		     "reason=audit-log-unwritable error=%s cgroups=%u",
		     strerrorname_np(-err) ? strerrorname_np(-err) : "?", n);
}

static void thaw(struct daemon *d, struct agent *a, const char *why)
{
	__u64 ms = (mono_ns() - a->audit_frozen_ns) / 1000000;
	unsigned n = set_freeze_all(a, "0");

	a->audit_frozen_ns = 0;
	unmark(d, a);
	log_info("agent %s thawed after %llu ms (%s)\n", a->st.name, (unsigned long long)ms, why);
	daemon_audit(d, AUDIT_KIND_LIFECYCLE, "agent-thaw", a,
		     "frozen_ms=%llu reason=%s cgroups=%u", (unsigned long long)ms, why, n);
}

void audit_hold_update(struct daemon *d, bool refreeze)
{
	int err = d->sink.audit ? audit_writer_failing(d->sink.audit, NULL) : 0;
	struct agent *a;
	bool want;
	int i;

	for (i = 1; i < AGENTD_MAX_AGENTS; i++) {
		a = d->agents[i];
		if (!a)
			continue;
		want = err && freezes(a);
		if (want && !a->audit_frozen_ns)
			freeze(d, a, err);
		else if (want && refreeze)
			set_freeze_all(a, "1");
		else if (!want && a->audit_frozen_ns)
			thaw(d, a, err ? "policy-continue" : "audit-log-writable");
	}
}

void audit_hold_release(struct daemon *d)
{
	int i;

	for (i = 1; i < AGENTD_MAX_AGENTS; i++)
		if (d->agents[i] && d->agents[i]->audit_frozen_ns)
			thaw(d, d->agents[i], "agentd-stopping");
}

void audit_hold_adopt(struct daemon *d, struct agent *a)
{
	char path[PATH_MAX + 96];

	marker_path(d, a, path, sizeof(path));
	if (access(path, F_OK))
		return;
	/* Frozen since an agentd before this one froze it; the next update thaws it, or keeps
	 * it frozen while the log still fails. */
	a->audit_frozen_ns = mono_ns();
	log_warn("agent %s: frozen for the audit log by an agentd before this one\n", a->st.name);
}

void audit_hold_forget(struct daemon *d, struct agent *a)
{
	unmark(d, a);
}

bool audit_blocked(const struct agent *a)
{
	return a->audit_frozen_ns;
}
