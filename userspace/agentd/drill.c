// SPDX-License-Identifier: GPL-2.0
/*
 * agent.drill (docs/DRILL.md): a fresh cgroup beside the agent's (<parent>/.drill-NAME: no agent
 * name starts with a dot), registered under the agent's id and so under its policy and generation,
 * in which the drill program (agentd-drill, exec'd outside it) tries each boundary. agentd owns
 * everything the drill makes and removes it whatever happens to the drill or to agentctl: the
 * cgroup and every process in it, the System V segment it is shown, its scratch directory, the
 * file the files boundary creates where the policy grants writes. The drill runs while the
 * request waits (a few hundred milliseconds; DRILL_TIMEOUT_MS at most), so that nothing of it
 * outlives the reply.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "boundary.h"
#include "cgroup_kill.h"
#include "daemon.h"
#include "kernel/cgroup.h"
#include "log.h"
#include "policy/load.h"
#include "sandbox/gap_boundary.h"
#include "spawn.h"
#include "wire/drill_proto.h"

#define DRILL_TIMEOUT_MS 20000 /* below agentctl's wait for a reply (CLIENT_TIMEOUT_MS) */
#define DRILL_KILL_WAIT_MS 5000
#define DRILL_IPC_KEY 0x61640000U /* | the agent's id: the segment shown to the ipc boundary */

struct drill_run {
	struct daemon *d;
	struct agent *a;
	char cgroup[PATH_MAX + CONTROL_NAME_MAX + 16];
	__u64 cgroup_id;
	char scratch[PATH_MAX + CONTROL_NAME_MAX + 16];
	char unix_path[PATH_MAX + CONTROL_NAME_MAX + 32];
	char probe_name[64];
	int ipc_key, shm_id;
	uid_t uid; /* the agent's: of its first process, else 0 (the strongest it may be) */
	gid_t gid;
	pid_t pid;
	int chan;
	struct drill_result res[BOUNDARY_COUNT];
	bool have[BOUNDARY_COUNT];
	char layer[BOUNDARY_COUNT][16]; /* from the first denial recorded for its processes */
	unsigned int gap; /* 1 << boundary the layers do not claim to enforce */
	struct timespec started, ended;
	char why[256]; /* the drill failed as a whole */
};

static void dir_of(const struct daemon *d, char *out, size_t outsz)
{
	snprintf(out, outsz, "%s/drill", d->o->state_dir);
}

void drill_forget(struct daemon *d, const char *name)
{
	char path[PATH_MAX + CONTROL_NAME_MAX + 16];

	dir_of(d, path, sizeof(path));
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%s.json", name);
	if (unlink(path) && errno != ENOENT)
		log_warn("removing %s: %s, ignoring\n", path, strerror(errno));
}

static bool has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Files named prefix* directly in dir. */
static void unlink_prefixed(const char *dir, const char *prefix)
{
	char path[PATH_MAX + 300];
	struct dirent *e;
	DIR *d = opendir(dir);

	while (d && (e = readdir(d)))
		if (has_prefix(e->d_name, prefix)) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
	if (d)
		closedir(d);
}

void drill_sweep(struct daemon *d)
{
	char path[PATH_MAX + 300], dir[PATH_MAX];
	const struct policy *p;
	struct dirent *e;
	DIR *cg = opendir(d->cgroup);
	size_t i, id;
	int shm;

	while (cg && (e = readdir(cg))) {
		if (!has_prefix(e->d_name, ".drill-"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", d->cgroup, e->d_name);
		cgroup_kill(path);
		cgroup_wait_empty(path, DRILL_KILL_WAIT_MS);
		enforcer_remove_cgroup(d->e, path);
		if (rmdir(path))
			log_warn("drill: removing %s, left by an agentd that ended during a drill: "
				 "%s\n",
				 path, strerror(errno));
		else
			log_info("drill: removed %s, left by an agentd that ended during a drill\n",
				 path);
	}
	if (cg)
		closedir(cg);
	dir_of(d, dir, sizeof(dir));
	cg = opendir(dir);
	while (cg && (e = readdir(cg)))
		if (has_prefix(e->d_name, ".scratch-")) {
			snprintf(path, sizeof(path), "%s/%s/host.sock", dir, e->d_name);
			unlink(path);
			*strrchr(path, '/') = '\0';
			rmdir(path);
		}
	if (cg)
		closedir(cg);
	for (id = 1; id < AGENTD_MAX_AGENTS; id++) {
		p = d->agents[id] ? d->agents[id]->policy : NULL;
		for (i = 0; p && i < p->n_files; i++)
			if (p->files[i].rights & AGENTD_RIGHT_CREATE)
				unlink_prefixed(p->files[i].path, ".agentd-drill-");
		shm = shmget((int)(DRILL_IPC_KEY | id), 0, 0);
		if (shm >= 0)
			shmctl(shm, IPC_RMID, NULL);
	}
}

/* The layer that wrote a denial record: cgroup-BPF's hooks, or BPF LSM's. */
static const char *layer_of(const char *op)
{
	static const char *const cgroup_hooks[] = { "connect4",	   "connect6", "sendmsg4",
						    "sendmsg6",	   "bind4",    "bind6",
						    "sock_create", NULL };
	size_t i;

	for (i = 0; cgroup_hooks[i]; i++)
		if (!strcmp(op, cgroup_hooks[i]))
			return "cgroup-BPF";
	return "BPF LSM";
}

static void tap(void *ctx, const struct audit_record *r)
{
	struct drill_run *run = ctx;
	size_t i;
	int b;

	if (r->cgroup != run->cgroup_id || r->decision != AUDIT_DECISION_DENY)
		return;
	for (b = 0; b < BOUNDARY_COUNT; b++)
		for (i = 0; run->have[b] && i < run->res[b].n_pids; i++)
			if ((__u32)run->res[b].pids[i] == r->pid && !run->layer[b][0])
				snprintf(run->layer[b], sizeof(run->layer[b]), "%s",
					 layer_of(r->op));
}

/* The cgroup, registered as the agent's before any process enters it. */
static int make_cgroup(struct drill_run *run)
{
	int err;

	snprintf(run->cgroup, sizeof(run->cgroup), "%s/.drill-%s", run->d->cgroup, run->a->st.name);
	if (mkdir(run->cgroup, 0755)) {
		if (errno != EEXIST)
			return -errno;
		/* A drill's left by an agentd that ended during it. */
		cgroup_kill(run->cgroup);
		cgroup_wait_empty(run->cgroup, DRILL_KILL_WAIT_MS);
		enforcer_remove_cgroup(run->d->e, run->cgroup);
		if (rmdir(run->cgroup) || mkdir(run->cgroup, 0755))
			return -errno;
	}
	err = cgroup_id(run->cgroup, &run->cgroup_id);
	if (!err)
		err = enforcer_add_cgroup(run->d->e, run->cgroup, run->a->st.id);
	return err;
}

/* A segment of the host's IPC namespace for the ipc boundary to look for by key. */
static void make_ipc(struct drill_run *run)
{
	run->ipc_key = (int)(DRILL_IPC_KEY | run->a->st.id);
	run->shm_id = shmget(run->ipc_key, 4096, IPC_CREAT | IPC_EXCL | 0600);
	if (run->shm_id < 0 && errno == EEXIST) {
		run->shm_id = shmget(run->ipc_key, 0, 0);
		if (run->shm_id >= 0)
			shmctl(run->shm_id, IPC_RMID, NULL);
		run->shm_id = shmget(run->ipc_key, 4096, IPC_CREAT | IPC_EXCL | 0600);
	}
}

static int make_scratch(struct drill_run *run)
{
	unsigned char rnd[8];
	char dir[PATH_MAX];
	size_t i;

	/* Searchable, so that an agent's uid other than root reaches the drill's unix socket
	 * (records are 0600). */
	dir_of(run->d, dir, sizeof(dir));
	if ((mkdir(dir, 0711) && errno != EEXIST) || chmod(dir, 0711))
		return -errno;
	snprintf(run->scratch, sizeof(run->scratch), "%s/.scratch-%s", dir, run->a->st.name);
	if ((mkdir(run->scratch, 0711) && errno != EEXIST) || chmod(run->scratch, 0711))
		return -errno;
	snprintf(run->unix_path, sizeof(run->unix_path), "%s/host.sock", run->scratch);
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		return -EIO;
	strcpy(run->probe_name, ".agentd-drill-");
	for (i = 0; i < sizeof(rnd); i++)
		sprintf(run->probe_name + strlen(run->probe_name), "%02x", rnd[i]);
	return 0;
}

/* Whom the agent's processes run as: the owner of the first one's /proc entry. */
static void agent_uid(struct drill_run *run)
{
	char path[PATH_MAX + CONTROL_NAME_MAX + 32];
	struct stat st;
	int pid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", run->a->cgroup);
	f = fopen(path, "re");
	if (f && fscanf(f, "%d", &pid) == 1) {
		snprintf(path, sizeof(path), "/proc/%d", pid);
		if (!stat(path, &st)) {
			run->uid = st.st_uid;
			run->gid = st.st_gid;
		}
	}
	if (f)
		fclose(f);
}

static json_t *request_json(const struct drill_run *run, unsigned int boundaries)
{
	char digest[POLICY_DIGEST_HEX] = "";
	json_t *vars = json_object(), *names = json_array(), *agent;
	size_t i;

	for (i = 0; i < run->a->st.nvars; i++)
		json_object_set_new(vars, run->a->st.vars[i].name,
				    json_string(run->a->st.vars[i].value));
	for (i = 0; i < BOUNDARY_COUNT; i++)
		if (boundaries & (1U << i))
			json_array_append_new(names, json_string(boundary_name(i)));
	policy_digest(run->a->policy, digest);
	agent = json_pack("{s:s, s:s, s:o, s:s}", "policy", run->a->st.policy, "tools",
			  run->a->st.tools, "vars", vars, "policy_digest", digest);
	return json_pack("{s:o, s:s, s:s, s:s, s:s, s:s, s:i, s:b, s:o}", "agent", agent, "cgroup",
			 run->cgroup, "cgroup_root", run->d->probe.cgroup2, "pin_dir",
			 run->d->o->pin_dir, "unix_path", run->unix_path, "probe_name",
			 run->probe_name, "ipc_key", run->ipc_key, "lsm", run->d->lsm, "boundaries",
			 names);
}

static int start(struct drill_run *run, unsigned int boundaries)
{
	char *argv[] = { "agentd-drill", NULL }, path[PATH_MAX];
	json_t *req = request_json(run, boundaries);
	char *s = req ? json_dumps(req, JSON_COMPACT) : NULL;
	size_t len = s ? strlen(s) : 0, off = 0;
	ssize_t n;
	int err = s ? spawn_path("agentd-drill", path, sizeof(path)) : -ENOMEM;

	if (!err)
		err = spawn_worker(run->d->loop, "drill", path, argv, SOCK_STREAM, &run->pid,
				   &run->chan);
	while (!err && off < len) {
		n = write(run->chan, s + off, len - off);
		if (n < 0 && errno != EINTR && errno != EAGAIN)
			err = -errno;
		off += n > 0 ? (size_t)n : 0;
	}
	if (!err)
		shutdown(run->chan, SHUT_WR);
	free(s);
	json_decref(req);
	return err;
}

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void take_line(struct drill_run *run, const char *line, size_t len)
{
	struct drill_result r;
	char err[256];

	if (drill_result_parse(line, len, &r, err, sizeof(err))) {
		log_warn("agent %s: drill: a result line: %s, ignoring\n", run->a->st.name, err);
		return;
	}
	run->res[r.boundary] = r;
	run->have[r.boundary] = true;
}

/* The drill's lines until it closes its channel, or the deadline. */
static int collect(struct drill_run *run)
{
	static char buf[DRILL_LINE_MAX * 2];
	long long deadline = mono_ms() + DRILL_TIMEOUT_MS;
	struct pollfd pfd = { .fd = run->chan, .events = POLLIN };
	size_t len = 0;
	char *nl;
	ssize_t n;

	for (;;) {
		if (mono_ms() >= deadline)
			return -ETIMEDOUT;
		n = poll(&pfd, 1, (int)(deadline - mono_ms()));
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n <= 0)
			continue;
		n = read(run->chan, buf + len, sizeof(buf) - len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return n < 0 ? -errno : 0;
		len += n;
		while ((nl = memchr(buf, '\n', len))) {
			take_line(run, buf, nl - buf);
			len -= nl + 1 - buf;
			memmove(buf, nl + 1, len);
		}
		if (len == sizeof(buf))
			return -E2BIG;
	}
}

static void remove_probe_files(const struct drill_run *run)
{
	const struct policy *p = run->a->policy;
	char path[PATH_MAX + 80];
	size_t i;

	for (i = 0; p && i < p->n_files; i++) {
		if (!(p->files[i].rights & AGENTD_RIGHT_CREATE))
			continue;
		snprintf(path, sizeof(path), "%s/%s", p->files[i].path, run->probe_name);
		if (unlink(path) && errno != ENOENT && errno != ENOTDIR)
			log_warn("drill: removing %s: %s, ignoring\n", path, strerror(errno));
	}
}

/* Everything the drill made, whatever state it ended in (killed is a failure: killed). */
static int cleanup(struct drill_run *run, bool killed)
{
	int status = 0, err = 0;

	if (run->pid > 0) {
		if (killed)
			kill(run->pid, SIGKILL);
		while (waitpid(run->pid, &status, 0) < 0 && errno == EINTR)
			;
		if (!killed && (!WIFEXITED(status) || WEXITSTATUS(status))) {
			snprintf(run->why, sizeof(run->why),
				 "agentd-drill %s %d; its cgroup, processes and files are removed",
				 WIFSIGNALED(status) ? "was killed by signal"
						     : "exited with status",
				 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
			err = -ECHILD;
		}
	}
	if (run->chan >= 0)
		close(run->chan);
	if (run->cgroup_id) {
		cgroup_kill(run->cgroup);
		if (cgroup_wait_empty(run->cgroup, DRILL_KILL_WAIT_MS))
			log_warn("drill: %s did not empty\n", run->cgroup);
		enforcer_remove_cgroup(run->d->e, run->cgroup);
	}
	if (run->cgroup[0] && rmdir(run->cgroup) && errno != ENOENT)
		log_warn("drill: removing %s: %s, ignoring\n", run->cgroup, strerror(errno));
	if (run->shm_id >= 0)
		shmctl(run->shm_id, IPC_RMID, NULL);
	if (run->unix_path[0])
		unlink(run->unix_path);
	if (run->scratch[0] && rmdir(run->scratch) && errno != ENOENT)
		log_warn("drill: removing %s: %s, ignoring\n", run->scratch, strerror(errno));
	if (run->probe_name[0])
		remove_probe_files(run);
	return err;
}

/* The denials still in the ring buffer, through the tap. */
static void drain_events(struct drill_run *run)
{
	struct sink *s = &run->d->sink;
	int r;

	s->tap = tap;
	s->tap_ctx = run;
	do {
		s->used = 0;
		r = enforcer_consume(run->d->e, 0);
	} while (r == -EAGAIN || r > 0);
	s->tap = NULL;
	s->tap_ctx = NULL;
}

static const char *verdict(const struct drill_run *run, int b)
{
	const struct drill_result *r = &run->res[b];
	size_t i;

	if (!run->have[b])
		return "not-drilled";
	for (i = 0; i < r->n_denied; i++)
		if (r->denied[i].escaped)
			return "escaped";
	if (r->has_allowed && r->allowed.err[0])
		return "allow-failed";
	return r->n_denied ? "blocked" : "not-drilled";
}

/* The denied operation shown: the first that escaped, else the first. */
static const struct drill_op *shown(const struct drill_result *r)
{
	size_t i;

	for (i = 0; i < r->n_denied; i++)
		if (r->denied[i].escaped)
			return &r->denied[i];
	return r->n_denied ? &r->denied[0] : NULL;
}

static json_t *boundary_json(const struct drill_run *run, int b, bool full)
{
	const struct drill_result *r = &run->res[b];
	const struct drill_op *op = shown(r);
	json_t *o, *all;
	size_t i;

	o = json_pack("{s:s, s:s}", "boundary", boundary_name(b), "verdict", verdict(run, b));
	json_object_set_new(o, "denied",
			    op ? json_pack("{s:s, s:s, s:s}", "op", op->op, "errno", op->err,
					   "layer", op->escaped ? "" : run->layer[b])
			       : json_null());
	json_object_set_new(
		o, "allowed",
		run->have[b] && r->has_allowed
			? json_pack("{s:s, s:b}", "op", r->allowed.op, "ok", !r->allowed.err[0])
			: json_null());
	json_object_set_new(o, "why",
			    json_string(run->have[b] ? r->why : "the drill gave no result"));
	if (!full)
		return o;
	all = json_array();
	for (i = 0; all && i < r->n_denied; i++)
		json_array_append_new(all,
				      json_pack("{s:s, s:s, s:b}", "op", r->denied[i].op, "errno",
						r->denied[i].err, "escaped", r->denied[i].escaped));
	json_object_set_new(o, "tried", all);
	json_object_set_new(o, "claimed", json_boolean(!(run->gap & (1U << b))));
	if (r->has_allowed && r->allowed.err[0])
		json_object_set_new(o, "allowed_errno", json_string(r->allowed.err));
	return o;
}

static void iso(const struct timespec *t, char *out, size_t outsz)
{
	struct tm tm;
	char s[64];

	gmtime_r(&t->tv_sec, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, outsz, "%.20s.%09ldZ", s, t->tv_nsec % 1000000000L);
}

static json_t *record_json(const struct drill_run *run, unsigned int boundaries, bool full)
{
	char digest[POLICY_DIGEST_HEX] = "", started[64], ended[64];
	json_t *o, *arr = json_array();
	int b;

	policy_digest(run->a->policy, digest);
	iso(&run->started, started, sizeof(started));
	iso(&run->ended, ended, sizeof(ended));
	for (b = 0; arr && b < BOUNDARY_COUNT; b++)
		if (boundaries & (1U << b))
			json_array_append_new(arr, boundary_json(run, b, full));
	o = json_pack("{s:s, s:I, s:s, s:s, s:s, s:o}", "agent", run->a->st.name, "generation",
		      (json_int_t)run->a->st.generation, "policy_digest", digest, "started",
		      started, "ended", ended, "boundaries", arr);
	return o;
}

/* STATE/drill/NAME.json, whole: a temporary file, synced, renamed. */
static int write_record(const struct drill_run *run, unsigned int boundaries)
{
	char dir[PATH_MAX], tmp[PATH_MAX + 80], path[PATH_MAX + 80];
	json_t *o = record_json(run, boundaries, false);
	int fd, err = 0;

	dir_of(run->d, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s.json", dir, run->a->st.name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.json.tmp", dir, run->a->st.name);
	fd = o ? open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600) : -1;
	if (fd < 0 || json_dumpfd(o, fd, JSON_INDENT(1)) || write(fd, "\n", 1) != 1 || fsync(fd))
		err = o ? -errno : -ENOMEM;
	if (fd >= 0)
		close(fd);
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	json_decref(o);
	return err;
}

static void audit_results(struct drill_run *run, unsigned int boundaries)
{
	const struct drill_op *op;
	int b;

	for (b = 0; b < BOUNDARY_COUNT; b++) {
		if (!(boundaries & (1U << b)))
			continue;
		op = run->have[b] ? shown(&run->res[b]) : NULL;
		daemon_audit(run->d, AUDIT_KIND_POLICY, "drill", run->a,
			     "gen=%u boundary=%s verdict=%s claimed=%s errno=%s layer=%s op=%s",
			     run->a->st.generation, boundary_name(b), verdict(run, b),
			     run->gap & (1U << b) ? "no" : "yes", op ? op->err : "",
			     op && !op->escaped ? run->layer[b] : "", op ? op->op : "");
	}
}

static void compute_gap(struct drill_run *run)
{
	struct layers l;
	struct gap g;

	layers_for_run(run->d->lsm, run->d->probe.landlock_abi, !run->d->probe.seccomp_err,
		       run->d->probe.cgroup2, &l);
	/* Without a policy loaded nothing is claimed, and so nothing can pass. */
	run->gap = ~0U;
	if (run->a->policy && !layers_gap(run->a->policy, &l, &g)) {
		run->gap = gap_boundaries(&g);
		gap_free(&g);
	}
}

/* Whether the drill passed: nothing the layers claim escaped, no allowed operation failed. */
static bool passed(const struct drill_run *run, unsigned int boundaries)
{
	const char *v;
	int b;

	for (b = 0; b < BOUNDARY_COUNT; b++) {
		if (!(boundaries & (1U << b)))
			continue;
		v = verdict(run, b);
		if (!run->have[b] ||
		    !strncmp(run->res[b].why, DRILL_WHY_BROKEN, strlen(DRILL_WHY_BROKEN)))
			return false;
		if (!strcmp(v, "allow-failed") ||
		    (!strcmp(v, "escaped") && !(run->gap & (1U << b))))
			return false;
	}
	return true;
}

static int drill(struct drill_run *run, unsigned int boundaries)
{
	int err;

	err = make_scratch(run);
	if (!err)
		err = make_cgroup(run);
	if (err) {
		snprintf(run->why, sizeof(run->why), "the drill's cgroup %.160s: %s", run->cgroup,
			 strerror(-err));
		return err;
	}
	make_ipc(run);
	err = start(run, boundaries);
	if (err) {
		snprintf(run->why, sizeof(run->why), "starting agentd-drill: %s", strerror(-err));
		return err;
	}
	err = collect(run);
	if (err)
		snprintf(run->why, sizeof(run->why), "reading agentd-drill: %s", strerror(-err));
	return err;
}

json_t *drill_handle(struct daemon *d, struct agent *a, const struct control_request *req)
{
	unsigned int boundaries = req->boundaries ?: (1U << BOUNDARY_COUNT) - 1;
	struct drill_run *run = calloc(1, sizeof(*run));
	json_t *reply, *rec;
	int err, cerr;

	if (!run)
		return control_reply_error(req->id, CONTROL_E_FAILED, "out of memory");
	if (!a->policy) {
		free(run);
		return control_reply_error(req->id, CONTROL_E_POLICY,
					   "the agent's policy does not load: reload it first");
	}
	*run = (struct drill_run){ .d = d, .a = a, .shm_id = -1, .chan = -1 };
	clock_gettime(CLOCK_REALTIME, &run->started);
	agent_uid(run);
	compute_gap(run);
	err = drill(run, boundaries);
	cerr = cleanup(run, err != 0);
	if (!err)
		err = cerr;
	drain_events(run);
	clock_gettime(CLOCK_REALTIME, &run->ended);
	if (err) {
		reply = control_reply_error(req->id, CONTROL_E_FAILED, run->why);
		free(run);
		return reply;
	}
	audit_results(run, boundaries);
	err = write_record(run, boundaries);
	if (err)
		log_warn("agent %s: writing its drill record: %s\n", a->st.name, strerror(-err));
	reply = control_reply_ok(req->id);
	rec = record_json(run, boundaries, true);
	json_object_set_new(rec, "passed", json_boolean(passed(run, boundaries)));
	json_object_set_new(reply, "drill", rec);
	free(run);
	return reply;
}
