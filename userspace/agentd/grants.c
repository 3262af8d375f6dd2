// SPDX-License-Identifier: GPL-2.0
/*
 * Time-limited grants, the daemon's half (grants.h). The kernel decides path, exec and connect
 * grants on its own, expiry included (bpf/grants.bpf.h): what is here is the list, kept in
 * <state_dir>/grants.json beside the pinned maps so that a restarted agentd knows what it
 * granted, and the records. A grant ends when its time passes on the boot clock, when a once
 * grant is used, at revoke, or when its agent goes; agentd notices the first two within a second
 * (or at its next start) and removes the grant, which the kernel has ignored since.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include "kernel/grants.h"
#include "daemon.h"
#include "grants.h"
#include "log.h"

#define BOOT_ID_LEN 36

struct grant {
	__u32 id;
	__u32 agent_id;
	char agent[CONTROL_NAME_MAX + 1];
	char kind[8]; /* path, exec, connect, host, tool */
	char target[CONTROL_PATH_MAX + 1];
	__u32 rights; /* path, exec: AGENTD_RIGHT_*; connect: AGENTD_PROTO_* */
	__u64 expires_ns; /* CLOCK_BOOTTIME; 0: until used */
	bool once;
	__u32 used; /* host and tool grants; the kernel counts the others */
	bool kernel; /* the kernel decides it: key names its entry */
	bool claim_seen; /* a once grant seen claimed by a process still there */
	struct grant_key key;
};

static struct {
	struct grant *v;
	size_t n;
	__u32 next_id;
	char boot_id[BOOT_ID_LEN + 1];
} G = { .next_id = 1 };

static const char *boot_id(void)
{
	FILE *f;

	if (G.boot_id[0])
		return G.boot_id;
	f = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (!f || !fgets(G.boot_id, sizeof(G.boot_id), f))
		snprintf(G.boot_id, sizeof(G.boot_id), "unknown");
	if (f)
		fclose(f);
	return G.boot_id;
}

static void state_path(const struct daemon *d, char *buf, size_t bufsz)
{
	snprintf(buf, bufsz, "%s/grants.json", d->o->state_dir);
}

static bool is_kernel(const char *kind)
{
	return !strcmp(kind, "path") || !strcmp(kind, "exec") || !strcmp(kind, "connect");
}

static json_t *grant_json(const struct grant *g)
{
	json_t *o = json_pack("{s:I, s:s, s:I, s:s, s:s, s:I, s:I, s:b}", "id", (json_int_t)g->id,
			      "agent", g->agent, "agent_id", (json_int_t)g->agent_id, "kind",
			      g->kind, "target", g->target, "rights", (json_int_t)g->rights,
			      "expires_boot_ns", (json_int_t)g->expires_ns, "once", g->once);

	if (o && g->kernel && !g->key.is_net) {
		json_object_set_new(o, "dev", json_integer((json_int_t)g->key.file.dev));
		json_object_set_new(o, "ino", json_integer((json_int_t)g->key.file.ino));
	}
	return o;
}

/* Writes the list whole, to a temporary file synced and renamed into place. */
static int save(const struct daemon *d)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	json_t *doc, *arr = json_array();
	FILE *f = NULL;
	size_t i;
	int err = 0;

	for (i = 0; arr && i < G.n; i++)
		json_array_append_new(arr, grant_json(&G.v[i]));
	doc = json_pack("{s:s, s:I, s:o}", "boot_id", boot_id(), "next_id", (json_int_t)G.next_id,
			"grants", arr);
	state_path(d, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (doc)
		f = fopen(tmp, "we");
	if (!doc || !f || json_dumpf(doc, f, JSON_INDENT(2)) || fflush(f) || fsync(fileno(f)))
		err = doc ? -errno ?: -EIO : -ENOMEM;
	if (f && fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		log_err("%s: %s\n", path, strerror(-err));
	}
	json_decref(doc);
	return err;
}

static void audit(struct daemon *d, const char *op, const struct grant *g, const char *why)
{
	char rights[128] = "";

	if (!strcmp(g->kind, "path") || !strcmp(g->kind, "exec"))
		policy_rights_format(g->rights, rights, sizeof(rights));
	daemon_audit(d, AUDIT_KIND_POLICY, op, d->agents[g->agent_id],
		     "grant=%u kind=%s target=%s%s%s expires_boot_ns=%llu once=%d%s%s", g->id,
		     g->kind, g->target, rights[0] ? " rights=" : "", rights,
		     (unsigned long long)g->expires_ns, g->once, why ? " why=" : "", why ?: "");
}

/* Removes G.v[i]: its kernel entry, then the record of why (revoke, time, used, agent gone). */
static void end(struct daemon *d, size_t i, const char *op, const char *why)
{
	struct grant g = G.v[i];

	if (g.kernel) {
		int err = grant_map_del(d->e, &g.key);

		if (err && err != -ENOENT)
			log_err("grant %u: removing its kernel entry: %s\n", g.id, strerror(-err));
	}
	G.v[i] = G.v[--G.n];
	log_info("grant %u (agent %s, %s %s): %s%s%s\n", g.id, g.agent, g.kind, g.target, op,
		 why ? ": " : "", why ?: "");
	audit(d, op, &g, why);
}

/* Whether a once grant the kernel saw claimed by process pid may go: the process is gone, or
 * it was claimed a tick ago already. Not at once: an exec claims it, then the kernel's loader
 * maps the binary, a use of the same grant (bpf/grants.bpf.h). */
static bool claim_done(struct grant *g, __u32 pid)
{
	if (kill((pid_t)pid, 0) && errno == ESRCH)
		return true;
	if (g->claim_seen)
		return true;
	g->claim_seen = true;
	return false;
}

/* Why g is over now, or NULL: the kernel's entry, when it has one, says whether a once grant
 * was used and whether it is still there. */
static const char *over(struct daemon *d, struct grant *g, __u64 now)
{
	struct agentd_grant k;

	if (g->expires_ns && now >= g->expires_ns)
		return "time";
	if (!g->kernel)
		return g->once && g->used ? "used" : NULL;
	if (grant_map_get(d->e, &g->key, &k) || k.id != g->id)
		return "gone"; /* the pins were torn down, or the system restarted */
	return g->once && k.claimed_by && claim_done(g, k.claimed_by) ? "used" : NULL;
}

void grants_tick(struct daemon *d)
{
	__u64 now = grant_boot_ns();
	bool changed = false;
	const char *why;
	size_t i = 0;

	while (i < G.n) {
		why = over(d, &G.v[i], now);
		if (!why) {
			i++;
			continue;
		}
		end(d, i, "grant-end", why);
		changed = true;
	}
	if (changed)
		save(d);
}

static struct agent *find_agent(struct daemon *d, const char *name)
{
	int i;

	for (i = 1; i < AGENTD_MAX_AGENTS; i++)
		if (d->agents[i] && !strcmp(d->agents[i]->st.name, name))
			return d->agents[i];
	return NULL;
}

static json_t *error(const struct control_request *req, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static json_t *error(const struct control_request *req, const char *code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return control_reply_error(req->id, code, msg);
}

/* The kernel's key and rights of g's target: 0, or -errno with why. */
static int resolve(struct grant *g, const struct control_grant *cg, char *why, size_t whysz)
{
	if (!strcmp(g->kind, "connect")) {
		g->rights = AGENTD_PROTO_TCP | AGENTD_PROTO_UDP;
		return grant_key_net(&g->key, g->agent_id, g->target, why, whysz);
	}
	if (!strcmp(g->kind, "exec")) {
		g->rights = AGENTD_RIGHT_EXEC;
	} else if (policy_rights_parse(cg->rights, &g->rights)) {
		snprintf(why, whysz,
			 "rights \"%s\": want names as in policies, comma-separated "
			 "(read,write,exec,create,remove,link,truncate,setattr)",
			 cg->rights);
		return -EINVAL;
	}
	return grant_key_file(&g->key, g->agent_id, g->target, why, whysz);
}

static const struct grant *find_same(const struct grant *g)
{
	size_t i;

	for (i = 0; i < G.n; i++)
		if (G.v[i].agent_id == g->agent_id && !strcmp(G.v[i].kind, g->kind) &&
		    (g->kernel ? G.v[i].kernel && !memcmp(&G.v[i].key, &g->key, sizeof(g->key))
			       : !strcmp(G.v[i].target, g->target)))
			return &G.v[i];
	return NULL;
}

/* Adds g: to the kernel, then to the list on disk (undone in the kernel if that fails). */
static json_t *add(struct daemon *d, const struct control_request *req, struct grant *g)
{
	struct agentd_grant k = { .expires_ns = g->expires_ns,
				  .id = g->id,
				  .rights = g->rights,
				  .flags = g->once ? AGENTD_GRANT_ONCE : 0 };
	const struct grant *same = find_same(g);
	struct grant *more;
	int err;

	if (same)
		return error(req, CONTROL_E_EXISTS,
			     "grant %u already covers %s %s of agent %s: "
			     "revoke it first",
			     same->id, g->kind, g->target, g->agent);
	more = realloc(G.v, (G.n + 1) * sizeof(*G.v));
	if (!more || G.n >= AGENTD_MAX_GRANTS)
		return error(req, CONTROL_E_LIMIT, "at most %d grants", AGENTD_MAX_GRANTS);
	G.v = more;
	err = g->kernel ? grant_map_add(d->e, &g->key, &k) : 0;
	if (err)
		return error(req, err == -ENOSPC ? CONTROL_E_LIMIT : CONTROL_E_FAILED,
			     "adding grant to the kernel: %s", strerror(-err));
	G.v[G.n++] = *g;
	G.next_id++;
	if (save(d)) {
		end(d, G.n - 1, "grant-revoke", "state-not-saved");
		return error(req, CONTROL_E_FAILED, "saving %s/grants.json failed: grant undone",
			     d->o->state_dir);
	}
	log_info("grant %u (agent %s, %s %s) added\n", g->id, g->agent, g->kind, g->target);
	audit(d, "grant-add", g, NULL);
	return control_reply_ok(req->id);
}

static json_t *do_add(struct daemon *d, const struct control_request *req)
{
	const struct control_grant *cg = &req->grant;
	struct agent *a = find_agent(d, req->name);
	struct grant g = { .id = G.next_id, .once = cg->once };
	char why[512];
	json_t *reply;

	if (!a)
		return error(req, CONTROL_E_NOENT, "no agent %s", req->name);
	g.agent_id = a->st.id;
	snprintf(g.agent, sizeof(g.agent), "%s", a->st.name);
	snprintf(g.kind, sizeof(g.kind), "%s", cg->kind);
	snprintf(g.target, sizeof(g.target), "%s", cg->target);
	g.kernel = is_kernel(g.kind);
	if (g.kernel && resolve(&g, cg, why, sizeof(why)))
		return error(req, CONTROL_E_GRANT, "%s", why);
	if (g.kernel && !g.key.is_net && !d->lsm)
		return error(req, CONTROL_E_UNSUPPORTED,
			     "%s grants need BPF LSM, which this kernel does not run", g.kind);
	if (!strcmp(g.kind, "tool") && !(a->tools && tools_find(a->tools, g.target)))
		return error(req, CONTROL_E_GRANT, "agent %s has no tool %s in its registry",
			     a->st.name, g.target);
	if (!strcmp(g.kind, "host"))
		return error(req, CONTROL_E_UNSUPPORTED, "host grants are not implemented yet");
	if (cg->for_ms)
		g.expires_ns = grant_boot_ns() + (__u64)cg->for_ms * 1000000ULL;
	reply = add(d, req, &g);
	if (reply && json_is_true(json_object_get(reply, "ok")))
		json_object_set_new(reply, "grant", grant_json(&g));
	return reply;
}

static json_t *do_ls(struct daemon *d, const struct control_request *req)
{
	json_t *arr = json_array(), *o, *reply;
	struct agentd_grant k;
	size_t i;

	for (i = 0; arr && i < G.n; i++) {
		if (req->name[0] && strcmp(G.v[i].agent, req->name))
			continue;
		o = grant_json(&G.v[i]);
		if (o)
			json_object_set_new(o, "used",
					    json_integer(!G.v[i].kernel ? G.v[i].used
							 : grant_map_get(d->e, &G.v[i].key, &k)
								 ? 0
								 : k.used));
		json_array_append_new(arr, o);
	}
	reply = control_reply_ok(req->id);
	if (reply) {
		json_object_set_new(reply, "grants", arr);
		json_object_set_new(reply, "boot_ns", json_integer((json_int_t)grant_boot_ns()));
	} else {
		json_decref(arr);
	}
	return reply;
}

static json_t *do_rm(struct daemon *d, const struct control_request *req)
{
	size_t i;

	for (i = 0; i < G.n; i++)
		if (G.v[i].id == req->grant.id)
			break;
	if (i == G.n)
		return error(req, CONTROL_E_NOGRANT, "no grant %lld", req->grant.id);
	end(d, i, "grant-revoke", NULL);
	save(d);
	return control_reply_ok(req->id);
}

json_t *grants_handle(struct daemon *d, const struct control_request *req)
{
	grants_tick(d);
	if (req->cmd == CONTROL_GRANT_ADD)
		return do_add(d, req);
	if (req->cmd == CONTROL_GRANT_RM)
		return do_rm(d, req);
	return do_ls(d, req);
}

void grants_agent_removed(struct daemon *d, const struct agent *a)
{
	bool changed = false;
	size_t i = 0;

	while (i < G.n) {
		if (G.v[i].agent_id != a->st.id) {
			i++;
			continue;
		}
		end(d, i, "grant-revoke", "agent-removed");
		changed = true;
	}
	if (changed)
		save(d);
}

__u32 grants_tool_use(struct daemon *d, const struct agent *a, const char *tool, bool again)
{
	__u64 now = grant_boot_ns();
	struct grant *g;
	size_t i;

	for (i = 0; i < G.n; i++) {
		g = &G.v[i];
		if (g->agent_id != a->st.id || strcmp(g->kind, "tool") || strcmp(g->target, tool))
			continue;
		if ((g->expires_ns && now >= g->expires_ns) || (g->once && g->used && !again))
			return 0;
		if (again)
			return g->id;
		g->used++;
		audit(d, "grant-use", g, NULL);
		return g->id;
	}
	return 0;
}

/* One grant of the state file; false for one that does not parse. */
static bool parse_one(json_t *o, struct grant *g)
{
	const char *agent = NULL, *kind = NULL, *target = NULL;
	json_int_t id = 0, agent_id = 0, rights = 0, expires = 0, dev = 0, ino = 0;
	int once = 0;
	char why[512];

	memset(g, 0, sizeof(*g));
	if (json_unpack(o, "{s:I, s:s, s:I, s:s, s:s, s:I, s:I, s:b, s?I, s?I}", "id", &id, "agent",
			&agent, "agent_id", &agent_id, "kind", &kind, "target", &target, "rights",
			&rights, "expires_boot_ns", &expires, "once", &once, "dev", &dev, "ino",
			&ino) ||
	    id < 1 || id > UINT32_MAX || agent_id < 1 || agent_id >= AGENTD_MAX_AGENTS ||
	    strlen(kind) >= sizeof(g->kind) || strlen(target) >= sizeof(g->target) ||
	    strlen(agent) >= sizeof(g->agent))
		return false;
	g->id = id;
	g->agent_id = agent_id;
	strcpy(g->agent, agent);
	strcpy(g->kind, kind);
	strcpy(g->target, target);
	g->rights = rights;
	g->expires_ns = expires;
	g->once = once;
	g->kernel = is_kernel(kind);
	if (!g->kernel)
		return true;
	if (!strcmp(kind, "connect"))
		return !grant_key_net(&g->key, g->agent_id, target, why, sizeof(why));
	g->key.file.agent_id = agent_id;
	g->key.file.dev = dev;
	g->key.file.ino = ino;
	return true;
}

static int load(struct daemon *d, json_t *doc)
{
	json_t *arr = json_object_get(doc, "grants"), *o;
	json_int_t next = json_integer_value(json_object_get(doc, "next_id"));
	const char *boot = json_string_value(json_object_get(doc, "boot_id"));
	struct grant g;
	size_t i;

	if (!json_is_array(arr) || next < 1 || next > UINT32_MAX || !boot)
		return -EINVAL;
	G.v = calloc(json_array_size(arr) + 1, sizeof(*G.v));
	if (!G.v)
		return -ENOMEM;
	G.next_id = next;
	json_array_foreach(arr, i, o)
	{
		if (!parse_one(o, &g))
			return -EINVAL;
		G.v[G.n++] = g;
		/* Another boot: the boot clock restarted, and nothing kept survives it. */
		if (strcmp(boot, boot_id()))
			G.v[G.n - 1].expires_ns = 1;
	}
	(void)d;
	return 0;
}

int grants_start(struct daemon *d)
{
	char path[PATH_MAX];
	json_error_t jerr;
	json_t *doc;
	int err;

	state_path(d, path, sizeof(path));
	doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		if (access(path, F_OK))
			return 0;
		log_err("%s: %s at line %d; no grant is kept\n", path, jerr.text, jerr.line);
		return 0;
	}
	err = load(d, doc);
	json_decref(doc);
	if (err) {
		log_err("%s: not a grants file of this agentd (%s); no grant is kept\n", path,
			strerror(-err));
		G.n = 0;
		return 0;
	}
	grants_tick(d);
	return 0;
}
