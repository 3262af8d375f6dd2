// SPDX-License-Identifier: GPL-2.0
/*
 * agent.inspect: the boundary map of an agent (inspect.h, docs/INSPECT.md). Declared comes from
 * the policy agentd applied (compiled again here, as rules_apply() wrote it); observed from the
 * kernel now: the pinned links and the code they run, the effective cgroup programs, the agent's
 * configuration, rule entries and cgroup registration in the maps, the controllers' files;
 * proven from STATE_DIR/drill/NAME.json.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "inspect.h"
#include "kernel/cgroup.h"
#include "kernel/procfs.h"
#include "policy/load.h"

__attribute__((format(printf, 3, 4))) static void say(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len >= size - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

static json_t *rule_ids(size_t n)
{
	json_t *ids = json_array();
	size_t i;

	for (i = 1; ids && i <= n; i++)
		json_array_append_new(ids, json_integer(i));
	return ids;
}

/* The row's programs: how many run the build's code, attached (and, for cgroup programs,
 * effective for the agent's cgroup), with their link ids. True when all do. */
static bool programs_row(const struct inspection *in, enum boundary b, struct row *r)
{
	size_t i, want = 0, ok = 0;
	char links[160] = "";

	for (i = 0; i < in->nprogs; i++) {
		const struct observed_prog *p = &in->progs[i];

		if (p->boundary != b)
			continue;
		want++;
		if (p->same_code && p->attached && (p->lsm || p->effective)) {
			ok++;
			say(links, sizeof(links), "%s%u", links[0] ? "," : "", p->link_id);
		}
	}
	if (!want)
		return true;
	say(r->observed, sizeof(r->observed),
	    "programs %zu/%zu attached with the build's code "
	    "(links %s); ",
	    ok, want, links[0] ? links : "none");
	return ok == want;
}

/* Without BPF LSM: the boundary's LSM part is the gap agentd reports (status, policy check
 * --layers), not a difference between declared and observed. */
static void lsm_gap(struct inspection *in, enum boundary b, const char *by_run)
{
	char seen[256];

	if (in->d->lsm)
		return;
	say(in->rows[b].observed, sizeof(in->rows[b].observed),
	    "%sno BPF LSM on this kernel: NOT ENFORCED by the kernel%s%s",
	    in->rows[b].observed[0] ? "; " : "", by_run[0] ? "; " : "", by_run);
	snprintf(seen, sizeof(seen), "%s: declared, but this kernel runs no BPF LSM%s%s",
		 boundary_name(b), by_run[0] ? "; " : "", by_run);
	inspect_finding(in, SEV_MEDIUM, "high", b, 0, seen,
			"a process of the agent can do there what the policy denies (attached "
			"processes get no fallback layer at all)",
			"boot with lsm=...,bpf (docs/LAYERS.md), or keep the agent to what "
			"agentctl run's layers enforce");
}

static void entries_row(struct row *r, const char *what, int oerr,
			const struct observed_entries *seen, const struct observed_entries *want)
{
	if (oerr) {
		say(r->observed, sizeof(r->observed), "%s: unreadable (%s); ", what,
		    strerror(-oerr));
		r->match = false;
		return;
	}
	say(r->observed, sizeof(r->observed), "%s: %zu entries, digest %.12s", what, seen->n,
	    seen->digest);
	if (strcmp(seen->digest, want->digest)) {
		say(r->observed, sizeof(r->observed), " (the policy compiles to %zu, digest %.12s)",
		    want->n, want->digest);
		r->match = false;
	}
	say(r->observed, sizeof(r->observed), "; ");
}

static void row_files(struct inspection *in)
{
	struct row *r = &in->rows[BOUNDARY_FILES];
	struct observed_entries seen = {}, want = {};
	__u32 gen = in->a->st.generation;
	int err;

	snprintf(r->declared, sizeof(r->declared), "%zu file rules", in->c.rs.nfiles);
	r->rules = rule_ids(in->c.rs.nfiles);
	r->match = programs_row(in, BOUNDARY_FILES, r);
	if (!in->d->lsm)
		return lsm_gap(in, BOUNDARY_FILES, "Landlock for processes agentctl run starts");
	err = observe_file_rules(in->d->e, in->a->st.id, gen, &seen)
		      ?: expect_file_rules(&in->c.rs, in->a->st.id, gen, &want);
	entries_row(r, "rule_buckets", err, &seen, &want);
}

static void row_exec(struct inspection *in)
{
	struct row *r = &in->rows[BOUNDARY_EXEC];
	const struct policy *p = in->a->policy;

	snprintf(r->declared, sizeof(r->declared), "exec of %zu paths%s%s", p->exec.n_allow,
		 p->exec.allow_memfd ? ", memfd" : "", p->exec.allow_writable ? ", writable" : "");
	r->match = programs_row(in, BOUNDARY_EXEC, r);
	lsm_gap(in, BOUNDARY_EXEC, "Landlock for processes agentctl run starts");
}

static void row_egress(struct inspection *in)
{
	struct row *r = &in->rows[BOUNDARY_EGRESS];
	struct observed_entries seen = {}, want = {};
	size_t structural = 0;
	int err;

	snprintf(r->declared, sizeof(r->declared), "%zu connect rules; the structural deny list",
		 in->c.rs.nnet);
	r->rules = rule_ids(in->c.rs.nnet);
	r->match = programs_row(in, BOUNDARY_EGRESS, r);
	err = observe_net_rules(in->d->e, in->a->st.id, in->a->st.generation, &seen)
		      ?: expect_net_rules(&in->c.rs, in->a->st.id, in->a->st.generation, &want);
	entries_row(r, "net_rules", err, &seen, &want);
	err = observe_structural(in->d->e, &structural);
	say(r->observed, sizeof(r->observed), "structural_deny: %zu entries", structural);
	if (err || !structural)
		r->match = false;
}

static void row_loopback(struct inspection *in)
{
	struct row *r = &in->rows[BOUNDARY_LOOPBACK];
	size_t n = 0;
	int err;

	snprintf(r->declared, sizeof(r->declared),
		 "agentd's endpoints and its own listeners; bind %s",
		 in->a->policy->net.bind ? "allowed" : "denied");
	r->match = programs_row(in, BOUNDARY_LOOPBACK, r);
	err = observe_endpoints(in->d->e, in->a->st.id, &n);
	if (err)
		r->match = false;
	say(r->observed, sizeof(r->observed), "endpoints: %zu", n);
}

static void row_config(struct inspection *in, enum boundary b, const char *what, __u64 declared,
		       __u64 seen)
{
	struct row *r = &in->rows[b];

	snprintf(r->declared, sizeof(r->declared), "%s 0x%llx", what, (unsigned long long)declared);
	r->match = programs_row(in, b, r);
	if (in->cfg_err) {
		say(r->observed, sizeof(r->observed), "agent_slots: no configuration (%s)",
		    strerror(-in->cfg_err));
		r->match = false;
		return;
	}
	say(r->observed, sizeof(r->observed), "agent_slots: %s 0x%llx", what,
	    (unsigned long long)seen);
	if (declared != seen)
		r->match = false;
}

static void row_structural(struct inspection *in, enum boundary b, const char *declared)
{
	struct row *r = &in->rows[b];

	snprintf(r->declared, sizeof(r->declared), "%s", declared);
	r->match = programs_row(in, b, r);
	lsm_gap(in, b, b == BOUNDARY_SELF ? "seccomp for processes agentctl run starts" : "");
}

/* Whether the cgroup programs attached directly to an attached cgroup (agentctl attach
 * --cgroup) run the build's code there. */
static bool attached_programs_ok(const struct inspection *in, const char *path)
{
	struct observed_prog *progs = NULL;
	size_t n = 0, i;
	bool ok = true;
	__u64 id;
	int fd;

	if (cgroup_id(path, &id))
		return false;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (observe_programs(in->d->e, in->d->o->pin_dir, id, fd, &progs, &n))
		ok = false;
	close(fd);
	for (i = 0; i < n; i++)
		if (!progs[i].lsm &&
		    !(progs[i].same_code && progs[i].attached && progs[i].effective))
			ok = false;
	free(progs);
	return ok;
}

/* The agent's cgroup and those attached to it: registered for its id, at the generation its
 * policy compiled to. */
static void row_cgroup(struct inspection *in)
{
	struct row *r = &in->rows[BOUNDARY_CGROUP];
	struct agent *a = in->a;
	__u32 id = 0;
	size_t i;
	int err;

	snprintf(r->declared, sizeof(r->declared), "cgroup %.180s, %zu attached; generation %u",
		 a->cgroup, a->st.ncgroups, a->st.generation);
	r->match = programs_row(in, BOUNDARY_CGROUP, r);
	err = observe_cgroup_agent(in->d->e, a->cgroup, &id);
	say(r->observed, sizeof(r->observed), "agent_cgroups: %s", err ? "not registered" : "");
	if (!err)
		say(r->observed, sizeof(r->observed), "agent %u", id);
	r->match = r->match && !err && id == a->st.id;
	for (i = 0; i < a->st.ncgroups; i++) {
		err = observe_cgroup_agent(in->d->e, a->st.cgroups[i], &id);
		if (err || id != a->st.id) {
			say(r->observed, sizeof(r->observed), "; %.200s not registered",
			    a->st.cgroups[i]);
			r->match = false;
		} else if (!attached_programs_ok(in, a->st.cgroups[i])) {
			say(r->observed, sizeof(r->observed),
			    "; %.200s lacks the build's cgroup programs", a->st.cgroups[i]);
			r->match = false;
		}
	}
	say(r->observed, sizeof(r->observed), "; generation in force %u",
	    in->cfg_err ? 0 : in->cfg.generation);
	if (in->cfg_err || in->cfg.generation != a->st.generation ||
	    in->cfg.flags != in->c.rs.flags || in->cfg.sock_types != in->c.rs.sock_types)
		r->match = false;
	lsm_gap(in, BOUNDARY_CGROUP, "");
}

/* A controller's file in the agent's cgroup: "max", a number, or "" when absent. */
static void controller(const struct agent *a, const char *file, char *out, size_t size)
{
	char path[sizeof(a->cgroup) + 32];

	snprintf(path, sizeof(path), "%s/%s", a->cgroup, file);
	if (procfs_read(path, out, size) < 0)
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
}

static void limit_one(struct inspection *in, const char *file, unsigned long long declared,
		      const char *want)
{
	struct row *r = &in->rows[BOUNDARY_LIMITS];
	char seen[64], msg[256];

	if (!declared)
		return;
	controller(in->a, file, seen, sizeof(seen));
	say(r->observed, sizeof(r->observed), "%s%s %s", r->observed[0] ? "; " : "", file,
	    seen[0] ? seen : "(no controller)");
	if (seen[0] && strcmp(seen, want))
		r->match = false;
	if (seen[0])
		return;
	snprintf(msg, sizeof(msg), "%s is declared, but cgroup v2 offers no controller for it here",
		 file);
	inspect_finding(in, SEV_MEDIUM, "high", BOUNDARY_LIMITS, 0, msg,
			"the agent can use as much of it as the host gives",
			"enable the controller in cgroup v2 (a host with unified cgroups)");
}

static void row_limits(struct inspection *in)
{
	const struct limits *l = &in->a->policy->limits;
	struct row *r = &in->rows[BOUNDARY_LIMITS];
	char want[64];

	snprintf(r->declared, sizeof(r->declared),
		 "cpu %u millicores, memory %llu, pids %u, "
		 "wall clock %u s",
		 l->cpu_millicores, (unsigned long long)l->memory_bytes, l->pids,
		 l->wall_clock_sec);
	r->match = true;
	snprintf(want, sizeof(want), "%llu 100000", (unsigned long long)l->cpu_millicores * 100);
	limit_one(in, "cpu.max", l->cpu_millicores, want);
	snprintf(want, sizeof(want), "%llu", (unsigned long long)l->memory_bytes);
	limit_one(in, "memory.max", l->memory_bytes, want);
	snprintf(want, sizeof(want), "%u", l->pids);
	limit_one(in, "pids.max", l->pids, want);
	if (!r->observed[0])
		say(r->observed, sizeof(r->observed), "none declared");
}

static void row_services(struct inspection *in)
{
	struct row *b = &in->rows[BOUNDARY_BROKER], *p = &in->rows[BOUNDARY_PROXY];
	const struct policy *pol = in->a->policy;
	size_t n = 0, ep = 0;
	int err;

	snprintf(b->declared, sizeof(b->declared), "%zu tools", pol->n_tools);
	err = observe_broker_sockets(in->d->e, in->a->st.id, &n);
	say(b->observed, sizeof(b->observed), "%s", in->a->broker ? "broker up" : "broker down");
	if (in->d->lsm)
		say(b->observed, sizeof(b->observed), "; broker_sockets: %s%zu",
		    err ? "unreadable " : "", n);
	/* Its socket is in the map only where BPF LSM's unix hooks read it. */
	b->match = !in->d->lsm || !in->a->broker || (!err && n);
	snprintf(p->declared, sizeof(p->declared), "%zu proxy hosts", pol->net.n_proxy_hosts);
	err = observe_endpoints(in->d->e, in->a->st.id, &ep);
	say(p->observed, sizeof(p->observed), "%s; endpoints: %zu",
	    in->a->proxy ? "proxy up" : "proxy down", ep);
	p->match = !in->a->proxy || (!err && ep);
}

static void row_audit(struct inspection *in)
{
	struct row *r = &in->rows[BOUNDARY_AUDIT];
	bool want = in->c.rs.flags & AGENTD_AGENT_LOG_ALLOWS;
	__u64 drops = 0;

	snprintf(r->declared, sizeof(r->declared), "allows %s; on failure %s",
		 want ? "logged" : "not logged",
		 in->a->policy->audit.on_failure == POLICY_AUDIT_FREEZE ? "freeze" : "continue");
	r->match = enforcer_drops(in->d->e, in->a->st.id, &drops) == 0;
	say(r->observed, sizeof(r->observed), "events lost in the kernel: %llu; log allows %s",
	    (unsigned long long)drops,
	    in->cfg_err				      ? "?"
	    : in->cfg.flags & AGENTD_AGENT_LOG_ALLOWS ? "on"
						      : "off");
	if (drops)
		inspect_finding(in, SEV_MEDIUM, "high", BOUNDARY_AUDIT, 0,
				"the kernel could not record some of the agent's events",
				"decisions are missing from the audit log",
				"a larger ring buffer (agentd --ring-mb)");
}

static void rows_all(struct inspection *in)
{
	const struct ruleset *rs = &in->c.rs;

	row_files(in);
	row_exec(in);
	row_egress(in);
	row_loopback(in);
	row_config(in, BOUNDARY_SOCKETS, "socket families", rs->sock_families,
		   in->cfg.sock_families);
	row_structural(in, BOUNDARY_UNIX, "its broker socket and its own sockets only");
	row_structural(in, BOUNDARY_IPC, "System V IPC of its own only");
	row_structural(in, BOUNDARY_SIGNALS, "signals and ptrace within the agent only");
	row_config(in, BOUNDARY_CAPABILITIES, "capabilities", rs->capabilities,
		   in->cfg.capabilities);
	lsm_gap(in, BOUNDARY_CAPABILITIES,
		"the capability limit for processes agentctl run "
		"starts");
	row_structural(in, BOUNDARY_SELF,
		       "agentd's pins, maps, programs and processes untouchable");
	row_cgroup(in);
	row_limits(in);
	row_services(in);
	row_audit(in);
}

/* The proven column: the drill's verdict, its end and generation, stale when the generation
 * or the policy differ from those in force. */
static json_t *proven_json(struct inspection *in, enum boundary b)
{
	const struct drill_boundary *db = &in->drill.b[b];
	bool stale;

	if (in->drill_err == -ENOENT)
		return json_pack("{s:s}", "verdict", "never drilled");
	if (in->drill_err)
		return json_pack("{s:s, s:s}", "verdict", "unreadable", "why", in->drill_why);
	stale = in->drill.generation != in->a->st.generation ||
		strcmp(in->drill.policy_digest, in->digest);
	return json_pack("{s:s, s:s, s:I, s:b, s:s, s:s, s:s}", "verdict",
			 drill_verdict_name(db->verdict), "ended", in->drill.ended, "generation",
			 (json_int_t)in->drill.generation, "stale", stale, "layer", db->layer,
			 "errno", db->denied_errno, "why", db->why);
}

static void drill_findings(struct inspection *in)
{
	char seen[256];
	size_t b;

	if (in->drill_err && in->drill_err != -ENOENT)
		inspect_finding(in, SEV_LOW, "high", BOUNDARY_AUDIT, 0, in->drill_why,
				"the proven column cannot be shown", "agentctl drill again");
	if (in->drill_err)
		return;
	if (in->drill.generation != in->a->st.generation ||
	    strcmp(in->drill.policy_digest, in->digest)) {
		snprintf(seen, sizeof(seen),
			 "the last drill tried generation %u, generation %u "
			 "is in force",
			 in->drill.generation, in->a->st.generation);
		inspect_finding(in, SEV_LOW, "high", BOUNDARY_AUDIT, 0, seen,
				"what the drill proved was about other rules",
				"agentctl drill NAME");
	}
	for (b = 0; b < BOUNDARY_COUNT; b++) {
		if (in->drill.b[b].verdict != DRILL_ESCAPED &&
		    in->drill.b[b].verdict != DRILL_ALLOW_FAILED)
			continue;
		snprintf(seen, sizeof(seen), "the last drill found %s %s", boundary_name(b),
			 drill_verdict_name(in->drill.b[b].verdict));
		inspect_finding(in, in->drill.b[b].verdict == DRILL_ESCAPED ? SEV_HIGH : SEV_MEDIUM,
				"high", b, 0, seen,
				"a process under this policy did what the policy denies, or could "
				"not do what it allows",
				"agentctl drill NAME --json for the operation and layer");
	}
}

static json_t *boundaries_json(struct inspection *in)
{
	json_t *arr = json_array(), *o;
	size_t b;

	for (b = 0; arr && b < BOUNDARY_COUNT; b++) {
		struct row *r = &in->rows[b];

		o = json_pack("{s:s, s:s, s:o, s:s, s:b, s:o}", "boundary", boundary_name(b),
			      "declared", r->declared, "rules", r->rules ? r->rules : json_array(),
			      "observed", r->observed, "match", r->match, "proven",
			      proven_json(in, b));
		r->rules = NULL;
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *programs_json(const struct inspection *in)
{
	json_t *arr = json_array();
	char tag[17];
	size_t i, k;

	for (i = 0; arr && i < in->nprogs; i++) {
		const struct observed_prog *p = &in->progs[i];

		for (k = 0; k < 8; k++)
			snprintf(tag + 2 * k, 3, "%02x", p->tag[k]);
		json_array_append_new(
			arr, json_pack("{s:s, s:s, s:s, s:I, s:s, s:b, s:b, s:b}", "boundary",
				       boundary_name(p->boundary), "object", p->object, "hook",
				       p->hook, "link", (json_int_t)p->link_id, "tag", tag,
				       "same_code", p->same_code, "attached", p->attached,
				       "effective", p->lsm || p->effective));
	}
	return arr;
}

static bool consistent(const struct inspection *in)
{
	size_t b;

	for (b = 0; b < BOUNDARY_COUNT; b++)
		if (!in->rows[b].match)
			return false;
	return true;
}

static void mismatch_findings(struct inspection *in)
{
	char seen[600];
	size_t b;

	for (b = 0; b < BOUNDARY_COUNT; b++) {
		if (in->rows[b].match)
			continue;
		snprintf(seen, sizeof(seen), "observed differs from declared: %s",
			 in->rows[b].observed);
		inspect_finding(
			in, SEV_CRITICAL, "high", b, 0, seen,
			"the kernel does not hold what agentd applied: a program was "
			"detached or a map entry changed behind agentd's back",
			"agentctl policy reload NAME writes the rules again; restart agentd "
			"to attach its programs again; find who did it (audit log, bpftool)");
	}
}

/* Findings past the frame's room, in one of the worst severity among them: the exit status
 * stays what it would be with all of them. */
static void more_findings(struct inspection *in)
{
	char seen[128];
	json_t *f;

	if (!in->findings_more)
		return;
	snprintf(seen, sizeof(seen), "%u more findings, the worst %s", in->findings_more,
		 inspect_severity_name(in->findings_more_worst));
	f = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "severity",
		      inspect_severity_name(in->findings_more_worst), "confidence", "high",
		      "boundary", "audit", "seen", seen, "why", "the reply holds one frame", "fix",
		      "deal with those shown, then inspect again");
	json_array_append_new(in->findings, f);
}

/* The cgroup programs of a launched agent hang on agentd's parent cgroup. */
static int observe_all(struct inspection *in)
{
	__u64 parent = 0;
	int fd, err;

	err = cgroup_id(in->d->cgroup, &parent);
	if (err)
		return err;
	fd = open(in->a->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = observe_programs(in->d->e, in->d->o->pin_dir, parent, fd, &in->progs, &in->nprogs);
	close(fd);
	return err;
}

static int inspect_run(struct inspection *in)
{
	int err;

	if (!in->a->policy)
		return -ENOENT;
	err = policy_compile(in->a->policy, &in->c);
	if (err)
		return err;
	in->compiled = true;
	in->cfg_err = enforcer_agent_config(in->d->e, in->a->st.id, &in->cfg);
	if (policy_digest(in->a->policy, in->digest))
		snprintf(in->digest, sizeof(in->digest), "?");
	in->drill_err = drill_record_load(in->d->o->state_dir, in->a->st.name, &in->drill,
					  in->drill_why, sizeof(in->drill_why));
	if (!in->drill_err && strcmp(in->drill.agent, in->a->st.name)) {
		snprintf(in->drill_why, sizeof(in->drill_why), "the drill record of %s names %s",
			 in->a->st.name, in->drill.agent);
		in->drill_err = -EINVAL;
	}
	in->findings = json_array();
	in->tasks = json_array();
	if (!in->findings || !in->tasks)
		return -ENOMEM;
	err = observe_all(in);
	if (err)
		return err;
	rows_all(in);
	inspect_tasks(in);
	drill_findings(in);
	mismatch_findings(in);
	more_findings(in);
	return 0;
}

static void inspect_free(struct inspection *in)
{
	size_t b;

	for (b = 0; b < BOUNDARY_COUNT; b++)
		json_decref(in->rows[b].rules);
	if (in->compiled)
		compiled_free(&in->c);
	free(in->progs);
	json_decref(in->findings);
	json_decref(in->tasks);
	free(in);
}

static json_t *inspection_json(struct inspection *in)
{
	return json_pack("{s:s, s:I, s:I, s:s, s:b, s:b, s:O, s:o, s:O, s:I, s:o}", "name",
			 in->a->st.name, "id", (json_int_t)in->a->st.id, "generation",
			 (json_int_t)in->a->st.generation, "policy_digest", in->digest, "bpf_lsm",
			 in->d->lsm, "consistent", consistent(in), "findings", in->findings,
			 "boundaries", boundaries_json(in), "processes", in->tasks,
			 "processes_total", (json_int_t)in->ntasks, "programs", programs_json(in));
}

json_t *inspect_handle(struct daemon *d, struct agent *a, const struct control_request *req)
{
	struct inspection *in = calloc(1, sizeof(*in));
	json_t *reply;
	int err;

	if (!in)
		return NULL;
	in->d = d;
	in->a = a;
	err = inspect_run(in);
	if (err) {
		inspect_free(in);
		return control_reply_error(req->id, CONTROL_E_FAILED,
					   err == -ENOENT ? "agentd has no loaded policy for this "
							    "agent (its pinned rules hold): "
							    "nothing to compare with"
							  : strerror(-err));
	}
	reply = control_reply_ok(req->id);
	if (reply)
		json_object_set_new(reply, "inspect", inspection_json(in));
	inspect_free(in);
	return reply;
}

void inspect_status_json(struct daemon *d, json_t *reply)
{
	json_t *agents = json_object_get(reply, "agents"), *o;
	struct inspection *in;
	struct agent *a;
	size_t i;

	json_array_foreach(agents, i, o)
	{
		const char *name = json_string_value(json_object_get(o, "name"));
		int id = (int)json_integer_value(json_object_get(o, "id"));

		a = id > 0 && id < AGENTD_MAX_AGENTS ? d->agents[id] : NULL;
		in = a && name && !strcmp(a->st.name, name) ? calloc(1, sizeof(*in)) : NULL;
		if (!in)
			continue;
		in->d = d;
		in->a = a;
		if (!inspect_run(in))
			json_object_set_new(
				o, "inspect",
				json_pack("{s:b, s:s, s:I, s:I}", "consistent", consistent(in),
					  "drill_ended", in->drill_err ? "" : in->drill.ended,
					  "drill_ended_sec",
					  (json_int_t)(in->drill_err ? 0 : in->drill.ended_sec),
					  "findings", (json_int_t)json_array_size(in->findings)));
		inspect_free(in);
	}
}
