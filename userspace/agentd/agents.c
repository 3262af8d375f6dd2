// SPDX-License-Identifier: GPL-2.0
/*
 * The agents of daemon mode: added, removed, killed and reloaded over the control socket.
 *
 * Over 800 lines, kept whole: add, reload, re-adoption and removal each undo what they did when
 * a later step fails, over the same cgroup, rules, state file and services; together they show
 * that every path leaves an agent whole or gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "audit_hold.h"
#include "broker/broker.h"
#include "cgroup_kill.h"
#include "daemon.h"
#include "inspect.h"
#include "grants.h"
#include "layers_status.h"
#include "log.h"
#include "kernel/cglimits.h"
#include "kernel/cgroup.h"
#include "policy/jsondoc.h"
#include "kernel/rules.h"
#include "kernel/ruletab.h"
#include "mode.h"
#include "services.h"
#include "stream.h"

#define KILL_WAIT_MS 5000

/* Why a request failed, for the reply: bounded, truncation is fine. */
__attribute__((format(printf, 3, 4))) static void say(char *why, size_t whysz, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whysz, fmt, ap);
	va_end(ap);
}

/* A policy loaded and compiled, not yet applied, and the files it was made from. */
struct loaded {
	struct policy *p;
	struct tools_registry *reg;
	struct compiled c;
	struct jdoc_files files;
};

static void loaded_free(struct loaded *l)
{
	compiled_free(&l->c);
	policy_free(l->p);
	tools_free(l->reg);
	jdoc_files_free(&l->files);
	memset(l, 0, sizeof(*l));
}

/* The agent keeps the policy it now enforces (the services read it). */
static void keep_policy(struct agent *a, struct loaded *l)
{
	policy_free(a->policy);
	tools_free(a->tools);
	a->policy = l->p;
	a->tools = l->reg;
	l->p = NULL;
	l->reg = NULL;
}

static void agent_free(struct agent *a)
{
	if (!a)
		return;
	policy_free(a->policy);
	tools_free(a->tools);
	free(a);
}

/* From the files on disk, or from pinned ones (pinned_load()) when pinned is not NULL. */
static int load(struct daemon *d, const struct agent_state *st, struct loaded *l,
		const struct jdoc_files *pinned, char *why, size_t whysz)
{
	struct policy_var vars[CONTROL_VARS_MAX];
	struct policy_vars pv = { vars, st->nvars };
	struct policy_errors errs = {};
	size_t i;
	int err;

	for (i = 0; i < st->nvars; i++)
		vars[i] = (struct policy_var){ st->vars[i].name, st->vars[i].value };
	jdoc_files_use(&l->files, pinned);
	err = policy_rules_load(st->policy, st->tools, &pv, &l->p, &l->reg, &l->c, &errs, why,
				whysz);
	jdoc_files_use(NULL, NULL);
	policy_errors_clear(&errs);
	if (err) {
		loaded_free(l);
		return err;
	}
	/* Without BPF LSM there is no file-rule map: those rules are reported NOT ENFORCED. */
	if (!d->lsm)
		l->c.rs.nfiles = 0;
	return 0;
}

static __u64 clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static __u64 monotonic_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/*
 * The wall-clock deadline, counted from the agent's add (kept in its state, so that a restart of
 * agentd neither forgets it nor starts it again), kept on CLOCK_MONOTONIC from here on.
 */
static void set_deadline(struct agent *a, __u32 wall_clock_sec)
{
	__u64 now = clock_ns(CLOCK_REALTIME), end;

	if (!wall_clock_sec) {
		a->deadline_ns = 0;
		return;
	}
	if (!a->st.started_ns)
		a->st.started_ns = now;
	end = a->st.started_ns + wall_clock_sec * 1000000000ULL;
	a->deadline_ns = monotonic_ns() + (end > now ? end - now : 0);
}

/* The policy's limits on the agent's cgroup; the wall clock counts from the first apply. */
static int apply_limits(struct agent *a, const struct policy *p, char *why, size_t whysz)
{
	int err = limits_apply(a->cgroup, &p->limits, a->limits_missing, sizeof(a->limits_missing));

	if (err) {
		say(why, whysz, "limits on %s: %s", a->cgroup, strerror(-err));
		return err;
	}
	if (a->limits_missing[0])
		log_warn("agent %s: limits NOT ENFORCED (no cgroup v2 controller here): %s\n",
			 a->st.name, a->limits_missing);
	set_deadline(a, p->limits.wall_clock_sec);
	return 0;
}

/*
 * The files of the policy in force (its bases and tools registry too), pinned beside the agent's
 * state at each add and reload: a restarted agentd serves the agent from them (its tools, its
 * proxy allowlist), as the kernel keeps the rules made from them, until a policy reload. What
 * changed on disk meanwhile is recorded, not applied.
 */
static void pinned_path(const struct daemon *d, const char *name, char *buf, size_t bufsz)
{
	snprintf(buf, bufsz, "%s/pinned/%s.json", d->o->state_dir, name);
}

static int pinned_save(struct daemon *d, const struct agent *a, const struct jdoc_files *files,
		       char *why, size_t whysz)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	json_t *doc = jdoc_files_json(files);
	int err = doc ? 0 : -ENOMEM;

	snprintf(path, sizeof(path), "%s/pinned", d->o->state_dir);
	if (!err && mkdir(path, 0700) && errno != EEXIST)
		err = -errno;
	pinned_path(d, a->st.name, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (!err && !json_object_set_new(doc, "generation", json_integer(a->st.generation)) &&
	    json_dump_file(doc, tmp, JSON_COMPACT))
		err = -EIO;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		say(why, whysz, "saving %s: %s", path, strerror(-err));
	}
	json_decref(doc);
	return err;
}

/* The pinned files of agent name; -ENOENT when none were (an agentd from before they were). */
static int pinned_load(struct daemon *d, const char *name, struct jdoc_files *files)
{
	char path[PATH_MAX];
	json_t *doc;
	int err;

	pinned_path(d, name, path, sizeof(path));
	doc = json_load_file(path, JSON_REJECT_DUPLICATES, NULL);
	if (!doc)
		return access(path, F_OK) ? -errno : -EINVAL;
	err = jdoc_files_parse(doc, files);
	json_decref(doc);
	return err;
}

static void pinned_remove(struct daemon *d, const char *name)
{
	char path[PATH_MAX];

	pinned_path(d, name, path, sizeof(path));
	if (unlink(path) && errno != ENOENT)
		log_warn("removing %s: %s, ignoring\n", path, strerror(errno));
}

/* What differs between the pinned files and those on disk: logged and audited (policy-drift). */
static void pinned_drift(struct daemon *d, struct agent *a, const struct jdoc_files *pinned)
{
	struct loaded now = {};
	char why[1024] = "", diff[512];
	bool differ;

	if (load(d, &a->st, &now, NULL, why, sizeof(why)))
		snprintf(diff, sizeof(diff), "the files on disk no longer load: %.400s", why);
	differ = why[0] || jdoc_files_differ(pinned, &now.files, diff, sizeof(diff));
	loaded_free(&now);
	if (!differ)
		return;
	log_warn("agent %s: its policy files changed since generation %u was applied (%s): the "
		 "pinned policy stays in force until agentctl policy reload\n",
		 a->st.name, a->st.generation, diff);
	daemon_audit(d, AUDIT_KIND_POLICY, "policy-drift", a, "gen=%u %.400s", a->st.generation,
		     diff);
}

/* At adoption: the pinned policy when there is one (and what differs on disk), else the files. */
static int load_adopted(struct daemon *d, struct agent *a, struct loaded *l, char *why,
			size_t whysz)
{
	struct jdoc_files pinned = {};
	int err = pinned_load(d, a->st.name, &pinned);

	if (err) {
		log_warn("agent %s: no pinned policy (%s): its policy files are loaded as they are "
			 "now\n",
			 a->st.name, strerror(-err));
		return load(d, &a->st, l, NULL, why, whysz);
	}
	err = load(d, &a->st, l, &pinned, why, whysz);
	if (!err)
		pinned_drift(d, a, &pinned);
	jdoc_files_free(&pinned);
	return err;
}

/* Makes l the agent's rules (a new generation) and records it in the state directory. */
static int apply(struct daemon *d, struct agent *a, struct loaded *l, char *why, size_t whysz)
{
	int err, failed = -1;
	__u32 gen;

	err = apply_limits(a, l->p, why, whysz);
	if (err)
		return err;
	mode_flags(d, a, l->p, &l->c.rs);
	err = rules_apply(d->e, a->st.id, &l->c.rs, &gen, &failed);
	if (err) {
		say(why, whysz, "applying %s: %s%s%s", a->st.policy,
		    failed >= 0 ? l->c.files[failed].path : "", failed >= 0 ? ": " : "",
		    rules_strerror(err, failed));
		return err;
	}
	a->st.generation = gen;
	keep_policy(a, l);
	err = agent_state_save(d->o->state_dir, &a->st);
	if (err)
		say(why, whysz, "saving %s/agents/%s.json: %s", d->o->state_dir, a->st.name,
		    strerror(-err));
	if (!err)
		err = pinned_save(d, a, &l->files, why, whysz);
	return err;
}

static struct agent *find(struct daemon *d, const char *name)
{
	int i;

	for (i = 1; i < AGENTD_MAX_AGENTS; i++)
		if (d->agents[i] && !strcmp(d->agents[i]->st.name, name))
			return d->agents[i];
	return NULL;
}

static int free_id(const struct daemon *d)
{
	int i;

	for (i = 1; i < AGENTD_MAX_AGENTS; i++)
		if (!d->agents[i] && sink_id_free(&d->sink, i))
			return i;
	return -ENOSPC;
}

static int cgroup_create(struct daemon *d, struct agent *a)
{
	snprintf(a->cgroup, sizeof(a->cgroup), "%s/%s", d->cgroup, a->st.name);
	if (mkdir(a->cgroup, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static json_t *agent_json(struct daemon *d, const struct agent *a)
{
	json_t *vars = json_object(), *obj;
	__u64 drops = 0;
	size_t i;

	for (i = 0; vars && i < a->st.nvars; i++)
		json_object_set_new(vars, a->st.vars[i].name, json_string(a->st.vars[i].value));
	enforcer_drops(d->e, a->st.id, &drops);
	obj = json_pack("{s:s, s:I, s:s, s:s, s:o, s:I, s:I, s:s, s:b}", "name", a->st.name, "id",
			(json_int_t)a->st.id, "cgroup", a->cgroup, "policy", a->st.policy, "vars",
			vars, "generation", (json_int_t)a->st.generation, "drops",
			(json_int_t)drops, "limits_not_enforced", a->limits_missing, "expired",
			a->expired);
	if (obj && a->st.ncgroups) {
		json_t *cgs = json_array();

		for (i = 0; cgs && i < a->st.ncgroups; i++)
			json_array_append_new(cgs, json_string(a->st.cgroups[i]));
		json_object_set_new(obj, "attached_cgroups", cgs);
	}
	if (obj)
		mode_json(d, a, obj);
	if (obj)
		services_agent_json(d, a, obj);
	return obj;
}

__attribute__((format(printf, 3, 4))) static json_t *error(const struct control_request *req,
							   const char *code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return control_reply_error(req->id, code, msg);
}

static json_t *ok_with(const struct control_request *req, const char *key, json_t *value)
{
	json_t *reply = control_reply_ok(req->id);

	if (reply && value)
		json_object_set_new(reply, key, value);
	else
		json_decref(value);
	return reply;
}

/* STATE/private/NAME: the agent's private temp directory and home (agentctl run mounts its tmp
 * on /tmp and /var/tmp; docs/POLICY.md, "vars"). */
static void private_path(const struct daemon *d, const char *name, char *buf, size_t bufsz)
{
	snprintf(buf, bufsz, "%s/private/%s", d->o->state_dir, name);
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	(void)f;
	return (type == FTW_DP ? rmdir(path) : unlink(path)) && errno != ENOENT ? -1 : 0;
}

/* The tree, symlinks not followed, nothing on another file system: no agent task is left to race
 * it (its cgroup is empty, or it never ran). */
static int private_remove(const struct daemon *d, const char *name)
{
	char path[CONTROL_PATH_MAX + 1];

	private_path(d, name, path, sizeof(path));
	if (nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) && errno != ENOENT)
		return -errno;
	return 0;
}

static int mkdir_mode(const char *path, mode_t mode)
{
	if (mkdir(path, mode) && errno != EEXIST)
		return -errno;
	/* Exactly mode, whatever the umask, and root's (a stale tree was removed before). */
	return chmod(path, mode) ? -errno : 0;
}

/* Sets var name to value in st; -ENOSPC when st has no room left. */
static int var_set(struct agent_state *st, const char *name, const char *value)
{
	if (st->nvars == CONTROL_VARS_MAX)
		return -ENOSPC;
	snprintf(st->vars[st->nvars].name, sizeof(st->vars[0].name), "%s", name);
	snprintf(st->vars[st->nvars++].value, sizeof(st->vars[0].value), "%s", value);
	return 0;
}

/*
 * The agent's private directories, empty, made before its policy loads (rules name objects, so
 * they must exist), and the builtin vars naming them: ${tmp} (01777) and ${home} (${tmp}/home,
 * 0700, given to the user of each run). The operator cannot set these two vars: a policy's ${tmp}
 * is always the directory agentctl run mounts.
 */
static int private_make(struct daemon *d, struct agent_state *st, char *why, size_t whysz)
{
	char top[CONTROL_PATH_MAX + 1], dir[CONTROL_PATH_MAX + 1], tmp[CONTROL_PATH_MAX + 1];
	char home[CONTROL_PATH_MAX + 1];
	size_t i;
	int err;

	for (i = 0; i < st->nvars; i++)
		if (!strcmp(st->vars[i].name, "tmp") || !strcmp(st->vars[i].name, "home")) {
			say(why, whysz, "--var %s: agentd sets ${%s} (the agent's private %s)",
			    st->vars[i].name, st->vars[i].name,
			    st->vars[i].name[0] == 't' ? "temp directory" : "home");
			return -EINVAL;
		}
	/* home is the longest: the others are its prefixes. */
	if ((size_t)snprintf(home, sizeof(home), "%s/private/%s/tmp/home", d->o->state_dir,
			     st->name) >= sizeof(home)) {
		say(why, whysz, "%s/private/%s/tmp/home: too long", d->o->state_dir, st->name);
		return -ENAMETOOLONG;
	}
	snprintf(tmp, strlen(home) - strlen("/home") + 1, "%s", home);
	snprintf(dir, strlen(tmp) - strlen("/tmp") + 1, "%s", tmp);
	snprintf(top, strlen(dir) - strlen(st->name), "%s", dir);
	err = mkdir_mode(top, 0700) ?: private_remove(d, st->name);
	err = err ?: mkdir_mode(dir, 0755) ?: mkdir_mode(tmp, 01777) ?: mkdir_mode(home, 0700);
	if (err) {
		say(why, whysz, "making %s: %s", home, strerror(-err));
		return err;
	}
	err = var_set(st, "tmp", tmp) ?: var_set(st, "home", home);
	if (err)
		say(why, whysz, "more than %d vars with agentd's tmp and home",
		    CONTROL_VARS_MAX - 2);
	return err;
}

/* Undoes a half-done add: unregistered first, so that no task runs without its rules. */
static void unwind_add(struct daemon *d, struct agent *a, bool registered)
{
	if (registered)
		enforcer_remove_cgroup(d->e, a->cgroup);
	rules_remove(d->e, a->st.id);
	rmdir(a->cgroup);
	agent_state_remove(d->o->state_dir, a->st.name);
}

/* Rules first, then the cgroup: none of its tasks ever sees a partial rule set. */
static int add(struct daemon *d, struct agent *a, char *why, size_t whysz, const char **code)
{
	bool registered = false;
	struct loaded l = {};
	int err;

	*code = CONTROL_E_POLICY;
	err = private_make(d, &a->st, why, whysz) ?: load(d, &a->st, &l, NULL, why, whysz);
	if (err)
		goto out;
	*code = CONTROL_E_FAILED;
	err = cgroup_create(d, a);
	if (err) {
		say(why, whysz, "creating cgroup %s: %s", a->cgroup, strerror(-err));
		goto out;
	}
	err = apply(d, a, &l, why, whysz);
	if (!err) {
		err = enforcer_add_cgroup(d->e, a->cgroup, a->st.id);
		if (err)
			say(why, whysz, "registering cgroup %s: %s", a->cgroup, strerror(-err));
		else
			registered = true;
	}
	if (!err)
		err = services_agent_up(d, a, why, whysz);
	if (err)
		unwind_add(d, a, registered);
out:
	if (err)
		private_remove(d, a->st.name);
	loaded_free(&l);
	return err;
}

static json_t *do_add(struct daemon *d, const struct control_request *req)
{
	const char *code;
	char why[1024];
	struct agent *a;
	int id = free_id(d);

	if (find(d, req->name))
		return error(req, CONTROL_E_EXISTS, "agent %s exists", req->name);
	/* --agent of the audit filters takes a name or an id: a name of digits alone would also
	 * find the records of every agent that had that id. (Agents of such names from before are
	 * still re-adopted.) */
	if (strspn(req->name, "0123456789") == strlen(req->name))
		return error(req, CONTROL_E_REQUEST,
			     "agent name %s is digits alone, which audit filters read as an agent "
			     "id: add a letter",
			     req->name);
	if (id < 0)
		return error(req, CONTROL_E_LIMIT, "no agent id left (at most %d agents)",
			     AGENTD_MAX_AGENTS - 1);
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->st.id = id;
	memcpy(a->st.name, req->name, sizeof(a->st.name));
	memcpy(a->st.policy, req->policy, sizeof(a->st.policy));
	memcpy(a->st.tools, req->tools, sizeof(a->st.tools));
	memcpy(a->st.vars, req->vars, sizeof(a->st.vars));
	a->st.nvars = req->nvars;
	if (add(d, a, why, sizeof(why), &code)) {
		log_info("agent %s not added: %s\n", req->name, why);
		agent_free(a);
		return error(req, code, "%s", why);
	}
	d->agents[id] = a;
	sink_name(&d->sink, id, a->st.name);
	log_info("agent %s added: id %d, cgroup %s, policy %s generation %u\n", a->st.name, id,
		 a->cgroup, a->st.policy, a->st.generation);
	daemon_audit(d, AUDIT_KIND_LIFECYCLE, "agent-add", a, "cgroup=%s", a->cgroup);
	daemon_audit(d, AUDIT_KIND_POLICY, "policy-load", a, "gen=%u policy=%s", a->st.generation,
		     a->st.policy);
	return ok_with(req, "agent", agent_json(d, a));
}

static void forget(struct daemon *d, struct agent *a)
{
	services_agent_down(d, a);
	d->agents[a->st.id] = NULL;
	sink_retire(&d->sink, a->st.id);
	agent_free(a);
}

static json_t *do_rm(struct daemon *d, const struct control_request *req)
{
	struct agent *a = find(d, req->name);
	int err;

	if (!a)
		return error(req, CONTROL_E_NOENT, "no agent %s", req->name);
	err = cgroup_kill(a->cgroup);
	if (!err || err == -ENOENT)
		err = cgroup_wait_empty(a->cgroup, KILL_WAIT_MS);
	if (err)
		return error(req, CONTROL_E_FAILED, "killing the processes of %s: %s", a->cgroup,
			     strerror(-err));
	/* Empty now: the order of what follows no longer matters to any task. */
	enforcer_remove_cgroup(d->e, a->cgroup);
	attach_release(d, a);
	rules_remove(d->e, a->st.id);
	grants_agent_removed(d, a);
	if (rmdir(a->cgroup) && errno != ENOENT)
		log_warn("removing cgroup %s: %s, ignoring\n", a->cgroup, strerror(errno));
	err = agent_state_remove(d->o->state_dir, a->st.name);
	if (err)
		log_warn("removing the state of agent %s: %s, ignoring\n", a->st.name,
			 strerror(-err));
	pinned_remove(d, a->st.name);
	audit_hold_forget(d, a);
	drill_forget(d, a->st.name);
	err = private_remove(d, a->st.name);
	if (err)
		log_warn("removing the private directories of agent %s: %s, ignoring\n", a->st.name,
			 strerror(-err));
	log_info("agent %s removed\n", a->st.name);
	daemon_audit(d, AUDIT_KIND_LIFECYCLE, "agent-remove", a, "cgroup=%s", a->cgroup);
	forget(d, a);
	return ok_with(req, "name", json_string(req->name));
}

static json_t *agents_json(struct daemon *d)
{
	json_t *arr = json_array();
	int i;

	for (i = 1; arr && i < AGENTD_MAX_AGENTS; i++)
		if (d->agents[i])
			json_array_append_new(arr, agent_json(d, d->agents[i]));
	return arr;
}

static json_t *do_info(struct daemon *d, const struct control_request *req)
{
	struct agent *a = find(d, req->name);

	if (!a)
		return error(req, CONTROL_E_NOENT, "no agent %s", req->name);
	return ok_with(req, "agent", agent_json(d, a));
}

static json_t *do_kill(struct daemon *d, const struct control_request *req)
{
	struct agent *a = find(d, req->name);
	int err;

	if (!a)
		return error(req, CONTROL_E_NOENT, "no agent %s", req->name);
	err = cgroup_kill(a->cgroup);
	if (err)
		return error(req, CONTROL_E_FAILED, "killing the processes of %s: %s", a->cgroup,
			     strerror(-err));
	daemon_audit(d, AUDIT_KIND_LIFECYCLE, "agent-kill", a, "cgroup=%s", a->cgroup);
	return ok_with(req, "name", json_string(req->name));
}

/* Every policy compiled before any is applied: one that does not compile changes nothing. */
static int reload(struct daemon *d, struct agent **list, int n, char *why, size_t whysz,
		  const char **code)
{
	struct loaded *l = calloc(n ? n : 1, sizeof(*l));
	int i, err = 0;

	if (!l)
		return -ENOMEM;
	*code = CONTROL_E_POLICY;
	for (i = 0; !err && i < n; i++)
		err = load(d, &list[i]->st, &l[i], NULL, why, whysz);
	if (!err)
		*code = CONTROL_E_FAILED;
	for (i = 0; !err && i < n; i++) {
		err = apply(d, list[i], &l[i], why, whysz);
		if (!err)
			services_agent_reloaded(d, list[i]);
		if (!err)
			daemon_audit(d, AUDIT_KIND_POLICY, "policy-reload", list[i],
				     "gen=%u policy=%s", list[i]->st.generation,
				     list[i]->st.policy);
	}
	for (i = 0; i < n; i++)
		loaded_free(&l[i]);
	free(l);
	return err;
}

/*
 * agentctl agent mode: the pinned policy (not the files on disk, which only a reload takes)
 * applied again under the new mode, a new generation in one switch like a reload. The mode is
 * kept in the agent's state: a restarted agentd keeps it.
 */
static json_t *do_mode(struct daemon *d, const struct control_request *req)
{
	struct agent *a = find(d, req->name);
	struct jdoc_files pinned = {};
	struct loaded l = {};
	char why[1024] = "", old[sizeof(a->st.mode)];
	int err;

	if (!a)
		return error(req, CONTROL_E_NOENT, "no agent %s", req->name);
	memcpy(old, a->st.mode, sizeof(old));
	snprintf(a->st.mode, sizeof(a->st.mode), "%s", req->mode);
	err = pinned_load(d, a->st.name, &pinned);
	if (err)
		say(why, sizeof(why), "agent %s has no pinned policy (%s): reload it first",
		    a->st.name, strerror(-err));
	if (!err)
		err = load(d, &a->st, &l, &pinned, why, sizeof(why));
	jdoc_files_free(&pinned);
	if (!err)
		err = apply(d, a, &l, why, sizeof(why));
	loaded_free(&l);
	if (err) {
		memcpy(a->st.mode, old, sizeof(old));
		daemon_audit(d, AUDIT_KIND_POLICY, "agent-mode-refused", a, "mode=%s %.200s",
			     req->mode, why);
		return error(req, CONTROL_E_FAILED, "%s", why);
	}
	services_agent_reloaded(d, a);
	daemon_audit(d, AUDIT_KIND_POLICY, "agent-mode", a, "mode=%s gen=%u", mode_name(a),
		     a->st.generation);
	return ok_with(req, "agent", agent_json(d, a));
}

/* The agents a reload names: one, or all. Returns how many, or -ENOENT. */
static int select_agents(struct daemon *d, const char *name, struct agent **list)
{
	int i, n = 0;

	if (name[0]) {
		list[0] = find(d, name);
		return list[0] ? 1 : -ENOENT;
	}
	for (i = 1; i < AGENTD_MAX_AGENTS; i++)
		if (d->agents[i])
			list[n++] = d->agents[i];
	return n;
}

static json_t *reloaded_json(struct agent **list, int n)
{
	json_t *arr = json_array();
	int i;

	for (i = 0; arr && i < n; i++)
		json_array_append_new(arr,
				      json_pack("{s:s, s:I}", "name", list[i]->st.name,
						"generation", (json_int_t)list[i]->st.generation));
	return arr;
}

static json_t *do_reload(struct daemon *d, const struct control_request *req)
{
	struct agent **list = calloc(AGENTD_MAX_AGENTS, sizeof(*list));
	const char *code = CONTROL_E_FAILED;
	char why[1024];
	json_t *reply;
	int n;

	if (!list)
		return NULL;
	n = select_agents(d, req->name, list);
	if (n < 0)
		reply = error(req, CONTROL_E_NOENT, "no agent %s", req->name);
	else if (reload(d, list, n, why, sizeof(why), &code)) {
		log_info("policy reload refused: %s\n", why);
		daemon_audit(d, AUDIT_KIND_POLICY, "policy-reload-refused", n == 1 ? list[0] : NULL,
			     "%.200s", why);
		reply = error(req, code, "%s", why);
	} else {
		reply = ok_with(req, "agents", reloaded_json(list, n));
	}
	free(list);
	return reply;
}

void agents_reload_all(struct daemon *d)
{
	struct control_request req = { .id = -1, .cmd = CONTROL_POLICY_RELOAD };
	json_t *reply = do_reload(d, &req);

	if (json_is_true(json_object_get(reply, "ok")))
		log_info("SIGHUP: every agent's policy reloaded\n");
	json_decref(reply);
}

/* The file rule table's occupancy (null without it: no BPF LSM): a policy whose object finds
 * both its buckets full is refused, so full buckets say how near that is. */
static json_t *file_rules_json(const struct daemon *d)
{
	const struct agentd_rule_bucket *t = d->e ? enforcer_rules(d->e) : NULL;
	size_t used, full;

	if (!t)
		return json_null();
	ruletab_usage(t, &used, &full);
	return json_pack("{s:I, s:I, s:I, s:I}", "used", (json_int_t)used, "slots",
			 (json_int_t)AGENTD_RULE_BUCKETS * AGENTD_RULE_BUCKET_SLOTS, "full_buckets",
			 (json_int_t)full, "buckets", (json_int_t)AGENTD_RULE_BUCKETS);
}

static json_t *kernel_json(const struct daemon *d)
{
	const char *const *m;
	json_t *missing = json_array();

	for (m = d->lsm ? enforcer_missing_hooks(d->e) : NULL; m && *m; m++)
		json_array_append_new(missing, json_string(*m));
	return json_pack("{s:s, s:b, s:i, s:b, s:s, s:o, s:o}", "lsm", d->probe.lsm_list,
			 "bpf_lsm_listed", d->probe.bpf_lsm_listed, "bpf_lsm_load_error",
			 d->probe.bpf_lsm_load_err, "btf", d->probe.btf, "cgroup2",
			 d->probe.cgroup2, "missing_hooks", missing, "file_rules",
			 file_rules_json(d));
}

static json_t *do_status(struct daemon *d, const struct control_request *req)
{
	json_t *reply = control_reply_ok(req->id);

	if (!reply)
		return NULL;
	json_object_set_new(reply, "daemon",
			    json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:b}", "pid",
				      (int)getpid(), "version", AGENTD_VERSION, "control",
				      d->o->control, "state_dir", d->o->state_dir, "pin_dir",
				      d->o->pin_dir, "audit_dir", d->audit_dir, "cgroup", d->cgroup,
				      "partial", !d->lsm));
	json_object_set_new(json_object_get(reply, "daemon"), "stream",
			    json_string(stream_path(d)));
	json_object_set_new(reply, "kernel", kernel_json(d));
	/* For processes agentctl run starts (attached ones get cgroup-BPF alone). */
	json_object_set_new(reply, "layers", layers_status_parts(d));
	json_object_set_new(reply, "agents", agents_json(d));
	inspect_status_json(d, reply);
	services_status_json(d, reply);
	return reply;
}

static json_t *do_attach(struct daemon *d, const struct control_request *req)
{
	struct agent *a = find(d, req->name);

	if (!a)
		return error(req, CONTROL_E_NOENT, "no agent %s", req->name);
	return attach_handle(d, a, req);
}

json_t *agents_handle(void *ctx, const struct control_request *req)
{
	struct daemon *d = ctx;

	switch (req->cmd) {
	case CONTROL_AGENT_ADD:
		return do_add(d, req);
	case CONTROL_AGENT_RM:
		return do_rm(d, req);
	case CONTROL_AGENT_LS:
		return ok_with(req, "agents", agents_json(d));
	case CONTROL_AGENT_INFO:
		return do_info(d, req);
	case CONTROL_AGENT_KILL:
		return do_kill(d, req);
	case CONTROL_POLICY_RELOAD:
		return do_reload(d, req);
	case CONTROL_AGENT_ATTACH:
	case CONTROL_AGENT_DETACH:
		return do_attach(d, req);
	case CONTROL_AGENT_MODE:
		return do_mode(d, req);
	case CONTROL_AGENT_INSPECT:
		return find(d, req->name) ? inspect_handle(d, find(d, req->name), req)
					  : error(req, CONTROL_E_NOENT, "no agent %s", req->name);
	case CONTROL_APPROVAL_LS:
	case CONTROL_APPROVAL_APPROVE:
	case CONTROL_APPROVAL_DENY:
		return approval_handle(d, req);
	case CONTROL_TOOLS_ACCEPT:
		return broker_tools_accept(d, req);
	case CONTROL_GRANT_ADD:
	case CONTROL_GRANT_LS:
	case CONTROL_GRANT_RM:
		return grants_handle(d, req);
	case CONTROL_AGENT_DRILL:
		return find(d, req->name) ? drill_handle(d, find(d, req->name), req)
					  : error(req, CONTROL_E_NOENT, "no agent %s", req->name);
	default:
		return do_status(d, req);
	}
}

/* Whether the pinned maps still hold this agent's rules (a restart after kill -9). */
static bool rules_pinned(struct daemon *d, __u32 id, __u32 *gen)
{
	struct agentd_agent_config cfg;

	if (enforcer_agent_config(d->e, id, &cfg))
		return false;
	*gen = cfg.generation;
	return true;
}

static int adopt_one(void *ctx, const struct agent_state *st)
{
	struct daemon *d = ctx;
	struct loaded l = {};
	char why[1024] = "";
	struct agent *a;
	int err;

	if (d->agents[st->id] || find(d, st->name)) {
		log_warn("state of agent %s: id %u taken, ignoring\n", st->name, st->id);
		return 0;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->st = *st;
	err = cgroup_create(d, a);
	if (!err && !rules_pinned(d, a->st.id, &a->st.generation)) {
		/* The pins were torn down: the agent's rules are compiled and applied again. */
		err = load_adopted(d, a, &l, why, sizeof(why));
		if (!err)
			err = apply(d, a, &l, why, sizeof(why));
	} else if (!err && !load_adopted(d, a, &l, why, sizeof(why))) {
		/* Pinned rules hold; the services need the policy they came from, the wall clock
		 * its limit. */
		keep_policy(a, &l);
		set_deadline(a, a->policy->limits.wall_clock_sec);
	} else if (!err) {
		log_warn("agent %s: its policy no longer loads (%s); its pinned rules still hold, "
			 "its services (broker, proxy) do not run\n",
			 a->st.name, why);
		why[0] = '\0';
	}
	loaded_free(&l);
	if (!err)
		err = enforcer_add_cgroup(d->e, a->cgroup, a->st.id);
	if (!err && services_agent_up(d, a, why, sizeof(why)))
		log_warn("agent %s: its services (broker, proxy) do not run: %s; its rules hold\n",
			 a->st.name, why);
	if (err) {
		log_err("re-adopting agent %s (cgroup %s): %s\n", a->st.name, a->cgroup,
			why[0] ? why : strerror(-err));
		agent_free(a);
		return 0;
	}
	d->agents[a->st.id] = a;
	sink_name(&d->sink, a->st.id, a->st.name);
	attach_adopt(d, a);
	audit_hold_adopt(d, a);
	log_info("agent %s re-adopted: id %u, cgroup %s, generation %u\n", a->st.name, a->st.id,
		 a->cgroup, a->st.generation);
	daemon_audit(d, AUDIT_KIND_LIFECYCLE, "agent-adopt", a, "cgroup=%s gen=%u", a->cgroup,
		     a->st.generation);
	return 0;
}

int agents_adopt(struct daemon *d)
{
	int bad, err = agent_state_each(d->o->state_dir, adopt_one, d, &bad);

	if (bad)
		log_warn("%d unreadable agent state files in %s/agents, ignoring them\n", bad,
			 d->o->state_dir);
	if (err)
		log_err("reading agent state in %s: %s\n", d->o->state_dir, strerror(-err));
	return err;
}

void agents_free(struct daemon *d)
{
	int i;

	for (i = 1; i < AGENTD_MAX_AGENTS; i++) {
		if (!d->agents[i])
			continue;
		services_agent_down(d, d->agents[i]);
		agent_free(d->agents[i]);
		d->agents[i] = NULL;
	}
}

void agents_enforce_deadlines(struct daemon *d)
{
	__u64 now = monotonic_ns();
	struct agent *a;
	int i;

	for (i = 1; i < AGENTD_MAX_AGENTS; i++) {
		a = d->agents[i];
		if (!a || !a->deadline_ns || now < a->deadline_ns)
			continue;
		if (!a->expired) {
			a->expired = true;
			log_info("agent %s: wall-clock limit reached, killing its processes\n",
				 a->st.name);
			daemon_audit(d, AUDIT_KIND_LIFECYCLE, "agent-expired", a, "cgroup=%s",
				     a->cgroup);
		}
		/* Expired for good: whatever starts in it later is killed too. */
		cgroup_kill(a->cgroup);
	}
}
