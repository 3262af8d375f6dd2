// SPDX-License-Identifier: GPL-2.0
/*
 * agent.inspect, per process (inspect.h): every task of the agent's cgroups, launched or
 * attached, as /proc shows it now, and the findings each gives.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "inspect.h"
#include "kernel/kdev.h"

#define CGROUP_DEPTH_MAX 16

static const char *const severities[] = { "info", "low", "medium", "high", "critical" };

const char *inspect_severity_name(enum severity s)
{
	return (size_t)s < sizeof(severities) / sizeof(severities[0]) ? severities[s] : "?";
}

void inspect_finding(struct inspection *in, enum severity sev, const char *confidence,
		     enum boundary b, int pid, const char *seen, const char *why, const char *fix)
{
	json_t *f;

	if (json_array_size(in->findings) >= INSPECT_FINDINGS_MAX) {
		if (!in->findings_more++ || sev > in->findings_more_worst)
			in->findings_more_worst = sev;
		return;
	}
	f = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "severity", inspect_severity_name(sev),
		      "confidence", confidence, "boundary", boundary_name(b), "seen", seen, "why",
		      why, "fix", fix);

	if (f && pid)
		json_object_set_new(f, "pid", json_integer(pid));
	json_array_append_new(in->findings, f);
}

/* The policy's rights at an object: its compiled file rules (exec.allow merged in). */
static int rights_of(void *ctx, __u64 dev, __u64 ino, __u32 *rights)
{
	const struct ruleset *rs = ctx;
	size_t i;

	for (i = 0; rs->objects && i < rs->nfiles; i++)
		if (kernel_dev(rs->objects[i].dev) == dev && rs->objects[i].ino == ino) {
			*rights = rs->files[i].rights;
			return 1;
		}
	return 0;
}

/* What agentctl run leaves on what it starts: no_new_privs, its seccomp filter, IPC and UTS
 * namespaces of its own. An attached process can carry all three only by doing the same. */
static bool launched(const struct observed_task *t)
{
	return t->seccomp == 2 && t->no_new_privs == 1 && !strstr(t->ns_shared, "ipc") &&
	       !strstr(t->ns_shared, "uts");
}

static const char *landlock_of(const struct inspection *in, const struct observed_task *t)
{
	if (in->d->lsm)
		return "not used: BPF LSM enforces the file rules";
	if (in->d->probe.landlock_abi <= 0)
		return "no: this kernel has no Landlock";
	if (!launched(t))
		return "no: attached, not started by agentctl run";
	return "yes, inferred: agentctl run applies it before its seccomp filter and execs only "
	       "when both succeed, and this process carries that filter (Seccomp 2, NoNewPrivs "
	       "1, IPC and UTS namespaces of its own); the kernel shows no Landlock domain in "
	       "/proc";
}

static void fd_findings(struct inspection *in, const struct observed_task *t)
{
	char seen[512];
	unsigned i;

	for (i = 0; i < t->noutside && i < OBSERVE_FDS_MAX; i++) {
		const struct observed_fd *f = &t->outside[i];

		snprintf(seen, sizeof(seen),
			 "process %d (%s) holds descriptor %d on %s open for %s%s%s; the policy "
			 "grants %s there",
			 t->pid, t->comm, f->fd, f->path,
			 f->needs & AGENTD_RIGHT_READ ? "read" : "",
			 f->needs == (AGENTD_RIGHT_READ | AGENTD_RIGHT_WRITE) ? "+" : "",
			 f->needs & AGENTD_RIGHT_WRITE ? "write" : "",
			 f->rights & (AGENTD_RIGHT_READ | AGENTD_RIGHT_WRITE) ? "less" : "nothing");
		inspect_finding(in, f->fd > 2 ? SEV_HIGH : SEV_MEDIUM, "high", BOUNDARY_FILES,
				t->pid, seen,
				"rights are checked when a file is opened: a descriptor opened "
				"before the process became the agent's keeps its access",
				"close it before attaching, or start the work with agentctl run "
				"(descriptors above 2 close at its exec)");
	}
}

static void cap_findings(struct inspection *in, const struct observed_task *t)
{
	__u64 extra = t->cap_eff & ~in->c.rs.capabilities;
	char seen[256];

	if (!extra)
		return;
	snprintf(seen, sizeof(seen),
		 "process %d (%s) has CapEff 0x%llx, 0x%llx beyond the policy's", t->pid, t->comm,
		 (unsigned long long)t->cap_eff, (unsigned long long)extra);
	inspect_finding(in, in->d->lsm ? SEV_LOW : SEV_HIGH, "high", BOUNDARY_CAPABILITIES, t->pid,
			seen,
			in->d->lsm ? "BPF LSM's capable hook refuses their use, but they are held"
				   : "no layer refuses their use on this kernel",
			"attach work that runs without them (setpriv, capsh), or start it with "
			"agentctl run");
}

static void listen_findings(struct inspection *in, const struct observed_task *t)
{
	char seen[256];

	if (!t->nlistening || in->a->policy->net.bind)
		return;
	snprintf(seen, sizeof(seen), "process %d (%s) listens (%s) though the policy denies bind",
		 t->pid, t->comm, t->listening[0]);
	inspect_finding(in, SEV_MEDIUM, "high", BOUNDARY_LOOPBACK, t->pid, seen,
			"a socket bound before the process was attached takes connections",
			"close it before attaching, or allow bind in the policy");
}

#define ROW(b, ...)                                                                                \
	do {                                                                                       \
		snprintf(text, sizeof(text), __VA_ARGS__);                                         \
		json_array_append_new(rows, json_pack("{s:s, s:s}", "boundary", boundary_name(b),  \
						      "observed", text));                          \
	} while (0)

static json_t *task_rows(const struct inspection *in, const struct observed_task *t)
{
	json_t *rows = json_array();
	char text[512];

	ROW(BOUNDARY_FILES, "%u descriptors, %u outside its rights; Landlock %s", t->nfds,
	    t->noutside, landlock_of(in, t));
	ROW(BOUNDARY_EXEC, "%s", in->d->lsm ? "BPF LSM" : landlock_of(in, t));
	ROW(BOUNDARY_EGRESS, "network namespace %s",
	    strstr(t->ns_shared, "net") ? "the host's" : "its own");
	ROW(BOUNDARY_LOOPBACK, "listening: %s%s%s", t->nlistening ? t->listening[0] : "none",
	    t->nlistening > 1 ? ", " : "", t->nlistening > 1 ? t->listening[1] : "");
	ROW(BOUNDARY_SOCKETS, "%u sockets", t->nsockets);
	ROW(BOUNDARY_UNIX, "%u sockets", t->nsockets);
	ROW(BOUNDARY_IPC, "IPC namespace %s",
	    strstr(t->ns_shared, "ipc") ? "the host's" : "its own");
	ROW(BOUNDARY_SIGNALS, "uid %u/%u/%u/%u gid %u/%u/%u/%u; PID namespace %s", t->uid[0],
	    t->uid[1], t->uid[2], t->uid[3], t->gid[0], t->gid[1], t->gid[2], t->gid[3],
	    strstr(t->ns_shared, "pid") ? "the host's" : "its own");
	ROW(BOUNDARY_CAPABILITIES, "CapEff 0x%llx CapPrm 0x%llx CapBnd 0x%llx",
	    (unsigned long long)t->cap_eff, (unsigned long long)t->cap_prm,
	    (unsigned long long)t->cap_bnd);
	ROW(BOUNDARY_SELF, "Seccomp %d, NoNewPrivs %d; namespaces shared with agentd: %s",
	    t->seccomp, t->no_new_privs, t->ns_shared[0] ? t->ns_shared : "none");
	return rows;
}

static void one_task(struct inspection *in, int pid, const char *cgroup)
{
	struct observed_task t;

	if (observe_task(pid, rights_of, &in->c.rs, &t))
		return; /* gone meanwhile */
	in->ntasks++;
	fd_findings(in, &t);
	cap_findings(in, &t);
	listen_findings(in, &t);
	if (json_array_size(in->tasks) >= INSPECT_TASKS_MAX)
		return;
	json_array_append_new(in->tasks, json_pack("{s:i, s:s, s:s, s:s, s:o}", "pid", pid, "comm",
						   t.comm, "cgroup", cgroup, "origin",
						   launched(&t) ? "launched" : "attached",
						   "boundaries", task_rows(in, &t)));
}

/* Every process of the cgroup at path and of its descendants. */
static void walk(struct inspection *in, const char *path, int depth)
{
	char sub[PATH_MAX + 256];
	struct dirent *de;
	FILE *f;
	DIR *d;
	int pid;

	snprintf(sub, sizeof(sub), "%s/cgroup.procs", path);
	f = fopen(sub, "re");
	while (f && fscanf(f, "%d", &pid) == 1)
		one_task(in, pid, path);
	if (f)
		fclose(f);
	d = depth < CGROUP_DEPTH_MAX ? opendir(path) : NULL;
	while (d && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		walk(in, sub, depth + 1);
	}
	if (d)
		closedir(d);
}

void inspect_tasks(struct inspection *in)
{
	size_t i;

	walk(in, in->a->cgroup, 0);
	for (i = 0; i < in->a->st.ncgroups; i++)
		walk(in, in->a->st.cgroups[i], 0);
}
