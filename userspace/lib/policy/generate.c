// SPDX-License-Identifier: GPL-2.0
/*
 * agentctl policy generate's logic. Records are read as the verified reader parsed them
 * (untrusted: every field is checked for type and form before use); the output is the current
 * policy document with grants added or widened, so extends, vars and comments-free formatting
 * stay the operator's. The folding rules are documented in docs/POLICY.md ("Writing a policy").
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include "agentd/abi.h"
#include "policy/generate.h"
#include "policy/netdeny.h"

struct cand {
	char *path; /* the agent's view: absolute, normalised */
	__u32 rights;
};

struct conn {
	char cidr[INET6_ADDRSTRLEN + 5];
	const char *proto; /* "tcp", "udp", "any" */
	__u16 port;
};

struct gen {
	json_t *current; /* the policy as written */
	json_t *doc; /* the output being built */
	struct gen_opts opts;
	struct policy_var *vars; /* the policy's, --var, then tmp and home */
	size_t nvars;
	struct cand *files;
	size_t nfiles;
	char **exec;
	size_t nexec;
	struct conn *conns;
	size_t nconns;
	unsigned int sockets; /* bit per sock_names[] */
	__u64 caps;
	bool bind;
	struct gen_skip *skips;
	size_t nskips;
};

static const char *const right_names[] = { "read",   "write", "exec",	  "create",
					   "remove", "link",  "truncate", "setattr" };
/* Families sock_create records name (family=N), with their policy name. */
static const struct {
	unsigned int family;
	const char *name;
} sock_families[] = {
	{ 2, "inet" }, { 10, "inet6" }, { 1, "unix" }, { 16, "netlink" }, { 17, "packet" }
};

#define NAMES(a) (sizeof(a) / sizeof((a)[0]))

static int add_var(struct gen *g, const char *name, const char *value)
{
	struct policy_var *v = realloc(g->vars, (g->nvars + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	g->vars = v;
	v[g->nvars].name = name;
	v[g->nvars++].value = value;
	return 0;
}

/* The document's vars (absolute values only), the caller's, then agentctl run's views. */
static int collect_vars(struct gen *g)
{
	json_t *vars = json_object_get(g->current, "vars"), *v;
	const char *k;
	size_t i;
	int err = 0;

	json_object_foreach(vars, k, v)
	{
		if (json_is_string(v) && json_string_value(v)[0] == '/')
			err = err ?: add_var(g, k, json_string_value(v));
	}
	for (i = 0; g->opts.vars && i < g->opts.vars->n; i++)
		err = err ?: add_var(g, g->opts.vars->v[i].name, g->opts.vars->v[i].value);
	err = err ?: add_var(g, "home", "/tmp/home");
	err = err ?: add_var(g, "tmp", "/tmp");
	return err ?: add_var(g, "tmp", "/var/tmp");
}

struct gen *gen_new(const json_t *current, const char *name, const struct gen_opts *o)
{
	struct gen *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->opts = *o;
	g->current = current ? json_deep_copy(current) : json_pack("{s:s}", "name", name);
	if (!g->current || !json_is_object(g->current) || collect_vars(g)) {
		gen_free(g);
		return NULL;
	}
	return g;
}

void gen_free(struct gen *g)
{
	size_t i;

	if (!g)
		return;
	json_decref(g->current);
	json_decref(g->doc);
	for (i = 0; i < g->nfiles; i++)
		free(g->files[i].path);
	for (i = 0; i < g->nexec; i++)
		free(g->exec[i]);
	for (i = 0; i < g->nskips; i++)
		free(g->skips[i].what);
	free(g->files);
	free(g->exec);
	free(g->conns);
	free(g->skips);
	free(g->vars);
	free(g);
}

const struct gen_skip *gen_skips(const struct gen *g, size_t *n)
{
	*n = g->nskips;
	return g->skips;
}

static int skip(struct gen *g, const char *op, const char *object, const char *why)
{
	struct gen_skip *s;
	char what[1024];
	size_t i;

	snprintf(what, sizeof(what), "%s %s", op, object);
	for (i = 0; i < g->nskips; i++)
		if (g->skips[i].why == why && !strcmp(g->skips[i].what, what)) {
			g->skips[i].count++;
			return 0;
		}
	s = realloc(g->skips, (g->nskips + 1) * sizeof(*s));
	if (!s)
		return -ENOMEM;
	g->skips = s;
	s[g->nskips].what = strdup(what);
	s[g->nskips].why = why;
	s[g->nskips].count = 1;
	return s[g->nskips++].what ? 0 : -ENOMEM;
}

/* "/a/b": absolute, no empty, "." or ".." component, no trailing '/' ("/" itself is fine). */
static bool path_normal(const char *p)
{
	const char *c = p;

	if (p[0] != '/')
		return false;
	if (!p[1])
		return true;
	while (*c == '/') {
		size_t n = strcspn(c + 1, "/");

		if (!n || (n == 1 && c[1] == '.') || (n == 2 && c[1] == '.' && c[2] == '.'))
			return false;
		c += 1 + n;
	}
	return !*c;
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

bool gen_path_broad(const char *path)
{
	const char *second;

	if (!strcmp(path, "/tmp") || !strcmp(path, "/var/tmp"))
		return false;
	second = strchr(path + 1, '/');
	if (!second)
		return true; /* "/" or "/top" */
	if (!strcmp(path, "/root") || !strcmp(path, "/tmp/home"))
		return true;
	return !strncmp(path, "/home/", 6) && !strchr(path + 6, '/');
}

/* The value after "key=" in a detail ("reason=rule need=0x1 ..."), into buf; false if absent. */
static bool detail_get(const char *detail, const char *key, char *buf, size_t bufsz)
{
	size_t klen = strlen(key), n;
	const char *p = detail;

	while (p && *p) {
		if (!strncmp(p, key, klen) && p[klen] == '=') {
			p += klen + 1;
			n = strcspn(p, " ");
			if (n >= bufsz)
				return false;
			memcpy(buf, p, n);
			buf[n] = '\0';
			return true;
		}
		p = strchr(p, ' ');
		p = p ? p + 1 : NULL;
	}
	return false;
}

static bool detail_has(const char *detail, const char *word)
{
	size_t n = strlen(word);
	const char *p = detail;

	while ((p = strstr(p, word))) {
		if ((p == detail || p[-1] == ' ') && (!p[n] || p[n] == ' '))
			return true;
		p += n;
	}
	return false;
}

static bool detail_num(const char *detail, const char *key, int base, unsigned long *out)
{
	char buf[32], *end;

	if (!detail_get(detail, key, buf, sizeof(buf)) || !buf[0])
		return false;
	errno = 0;
	*out = strtoul(buf, &end, base);
	return !errno && !*end && buf[0] != '-';
}

static const char *str_at(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static int add_file(struct gen *g, const char *path, __u32 rights)
{
	struct cand *c;
	size_t i;

	for (i = 0; i < g->nfiles; i++)
		if (!strcmp(g->files[i].path, path)) {
			if ((g->files[i].rights | rights) == g->files[i].rights)
				return 0;
			g->files[i].rights |= rights;
			return 1;
		}
	c = realloc(g->files, (g->nfiles + 1) * sizeof(*c));
	if (!c)
		return -ENOMEM;
	g->files = c;
	c[g->nfiles].path = strdup(path);
	c[g->nfiles].rights = rights;
	return c[g->nfiles++].path ? 1 : -ENOMEM;
}

static int add_exec(struct gen *g, const char *path)
{
	char **e;
	size_t i;

	for (i = 0; i < g->nexec; i++)
		if (!strcmp(g->exec[i], path))
			return 0;
	e = realloc(g->exec, (g->nexec + 1) * sizeof(*e));
	if (!e)
		return -ENOMEM;
	g->exec = e;
	e[g->nexec] = strdup(path);
	return e[g->nexec++] ? 1 : -ENOMEM;
}

static void parent_of(const char *p, char *buf, size_t bufsz)
{
	const char *slash = strrchr(p, '/');
	size_t n = slash == p ? 1 : (size_t)(slash - p);

	snprintf(buf, bufsz, "%.*s", (int)n, p);
}

/* A record of a new name is the new name's: the right it needs is its directory's. */
static bool creates(const char *op)
{
	return !strcmp(op, "path_mknod") || !strcmp(op, "path_mkdir") ||
	       !strcmp(op, "path_symlink");
}

/* Reasons a grant answers: a rule gave too little, or none covered the object. */
static bool reason_grantable(const char *reason)
{
	return !strcmp(reason, "rule") || !strcmp(reason, "no-rule") || !strcmp(reason, "device");
}

static const char *file_reason_why(const char *reason)
{
	if (!strcmp(reason, "exec-from-writable-tree"))
		return "exec from a tree the agent can write: exec.allow_writable is the "
		       "operator's "
		       "choice";
	if (!strcmp(reason, "anonymous-file-exec"))
		return "exec of an anonymous file: exec.allow_memfd is the operator's choice";
	if (!strcmp(reason, "link-widens-rights"))
		return "a link or rename that would widen the object's rights: never granted";
	return "not a missing grant (the reason in the record's detail)";
}

static int file_record(struct gen *g, const char *op, const json_t *obj, const char *detail,
		       const char *reason)
{
	const char *path = str_at(obj, "path");
	unsigned long need = 0, have = 0;
	char dir[4096];

	if (json_is_true(json_object_get(obj, "path_truncated")))
		return skip(g, op, path, "path truncated in the record: name it by hand");
	if (detail_has(detail, "internal"))
		return skip(g, op, path,
			    "internal object (pipe, socket, memfd): no path reaches it");
	if (!reason_grantable(reason))
		return skip(g, op, path, file_reason_why(reason));
	if (!path_normal(path))
		return skip(g, op, path, "not an absolute, normalised path");
	if (!detail_num(detail, "need", 16, &need) || !need || need > 0xff ||
	    !detail_num(detail, "have", 16, &have) || have > 0xff)
		return skip(g, op, path, "no rights needed in the record");
	if (!strcmp(reason, "rule") && !have)
		return skip(g, op, path,
			    "an explicit deny of the policy (rights []): not overridden");
	if (!g->opts.allow_broad && gen_path_broad(path))
		return skip(g, op, path,
			    "grants the tree of /, a top-level directory or a home: "
			    "--allow-broad");
	if (!strcmp(op, "bprm_check_security"))
		return add_exec(g, path);
	if (creates(op)) {
		parent_of(path, dir, sizeof(dir));
		path = dir;
	}
	return add_file(g, path, need | have);
}

static int add_conn(struct gen *g, const char *cidr, const char *proto, __u16 port)
{
	struct conn *c;
	size_t i;

	for (i = 0; i < g->nconns; i++)
		if (!strcmp(g->conns[i].cidr, cidr) && g->conns[i].proto == proto &&
		    g->conns[i].port == port)
			return 0;
	c = realloc(g->conns, (g->nconns + 1) * sizeof(*c));
	if (!c)
		return -ENOMEM;
	g->conns = c;
	snprintf(c[g->nconns].cidr, sizeof(c[g->nconns].cidr), "%s", cidr);
	c[g->nconns].proto = proto;
	c[g->nconns++].port = port;
	return 1;
}

/* A datagram's record is UDP; a connect record does not say which protocol connected. */
static const char *conn_proto(const char *op)
{
	return strncmp(op, "sendmsg", 7) ? "any" : "udp";
}

static int net_record(struct gen *g, const char *op, const json_t *obj, const char *reason)
{
	const char *addr = str_at(obj, "addr");
	json_int_t port = json_integer_value(json_object_get(obj, "port"));
	char what[INET6_ADDRSTRLEN + 16], cidr[INET6_ADDRSTRLEN + 5];
	__u8 key[16] = { 0 };
	bool v4;

	snprintf(what, sizeof(what), "%s:%lld", addr, (long long)port);
	if (!reason_grantable(reason))
		return skip(g, op, what, "not a missing grant (the reason in the record's detail)");
	if (!strcmp(op, "bind4") || !strcmp(op, "bind6")) {
		if (g->bind)
			return 0;
		g->bind = true;
		return 1;
	}
	if (strncmp(op, "connect", 7) && strncmp(op, "sendmsg", 7))
		return skip(g, op, what,
			    "ICMP echo and raw sockets: write the connect rule by hand");
	v4 = inet_pton(AF_INET, addr, key + 12) == 1;
	if (v4)
		key[10] = key[11] = 0xff;
	else if (inet_pton(AF_INET6, addr, key) != 1)
		return skip(g, op, what, "not an IP address");
	if (netdeny_addr_denied(key))
		return skip(g, op, what, "a structural destination: never granted");
	if (port < 1 || port > 65535)
		return skip(g, op, what, "no port in the record");
	snprintf(cidr, sizeof(cidr), "%s/%d", addr, v4 ? 32 : 128);
	return add_conn(g, cidr, conn_proto(op), port);
}

static int sock_record(struct gen *g, const char *op, const char *detail, const char *reason)
{
	unsigned long family = 0;
	char what[32];
	size_t i;

	if (!detail_num(detail, "family", 10, &family))
		family = 0;
	snprintf(what, sizeof(what), "family=%lu", family);
	if (strcmp(op, "sock_create") || !reason_grantable(reason))
		return skip(g, op, what, "not a policy choice (the reason in the record's detail)");
	for (i = 0; i < NAMES(sock_families); i++)
		if (sock_families[i].family == family) {
			if (g->sockets & (1U << i))
				return 0;
			g->sockets |= 1U << i;
			return 1;
		}
	return skip(g, op, what, "a socket family no policy grants");
}

static int self_record(struct gen *g, const char *op, const char *detail, const char *reason)
{
	unsigned long cap;

	if (!strcmp(reason, "capability-not-granted") && detail_num(detail, "arg", 10, &cap) &&
	    policy_capability_name(cap)) {
		if (g->caps & (1ULL << cap))
			return 0;
		g->caps |= 1ULL << cap;
		return 1;
	}
	return skip(g, op, reason, "self-protection and containment: never granted");
}

int gen_record(struct gen *g, const json_t *rec)
{
	const char *decision = str_at(rec, "decision"), *kind = str_at(rec, "kind");
	const char *op = str_at(rec, "op"), *detail = str_at(rec, "detail");
	const json_t *obj = json_object_get(rec, "object");
	char reason[64] = "";

	if (strcmp(decision, "deny") && strcmp(decision, "would-deny"))
		return 0;
	detail_get(detail, "reason", reason, sizeof(reason));
	if (!strcmp(reason, "self-protection"))
		return skip(g, op, kind, "self-protection: never granted");
	if (!strcmp(reason, "structural-deny"))
		return skip(g, op, str_at(obj, "addr"), "a structural destination: never granted");
	if ((!strcmp(kind, "file") || !strcmp(kind, "exec")) && json_is_object(obj))
		return file_record(g, op, obj, detail, reason);
	if (!strcmp(kind, "net") && json_is_object(obj))
		return net_record(g, op, obj, reason);
	if (!strcmp(kind, "sock"))
		return sock_record(g, op, detail, reason);
	if (!strcmp(kind, "self"))
		return self_record(g, op, detail, reason);
	return skip(g, op, kind, "not a decision a policy grants");
}

/* ---- folding ---- */

static size_t depth(const char *p)
{
	size_t n = 0;

	for (; *p; p++)
		n += *p == '/';
	return p[-1] == '/' ? 0 : n;
}

static void drop_file(struct gen *g, size_t i)
{
	free(g->files[i].path);
	g->files[i] = g->files[--g->nfiles];
}

static size_t children(const struct gen *g, const char *dir)
{
	char parent[4096];
	size_t i, n = 0;

	for (i = 0; i < g->nfiles; i++) {
		parent_of(g->files[i].path, parent, sizeof(parent));
		n += strcmp(g->files[i].path, "/") && !strcmp(parent, dir);
	}
	return n;
}

/* The deepest directory holding GEN_FOLD_MIN candidates becomes one: 1 folded, 0 none left. */
static int fold_once(struct gen *g)
{
	char best[4096] = "", dir[4096];
	size_t i, best_depth = 0;
	__u32 rights = 0;

	for (i = 0; i < g->nfiles; i++) {
		if (!strcmp(g->files[i].path, "/"))
			continue;
		parent_of(g->files[i].path, dir, sizeof(dir));
		if ((best[0] && depth(dir) <= best_depth) || children(g, dir) < GEN_FOLD_MIN ||
		    (!g->opts.allow_broad && gen_path_broad(dir)))
			continue;
		strcpy(best, dir);
		best_depth = depth(dir);
	}
	if (!best[0])
		return 0;
	for (i = g->nfiles; i-- > 0;) {
		parent_of(g->files[i].path, dir, sizeof(dir));
		if (!strcmp(g->files[i].path, best) ||
		    (strcmp(g->files[i].path, "/") && !strcmp(dir, best))) {
			rights |= g->files[i].rights;
			drop_file(g, i);
		}
	}
	return add_file(g, best, rights) < 0 ? -ENOMEM : 1;
}

/* A candidate inside another whose rights hold all of its own adds nothing. */
static void drop_covered(struct gen *g)
{
	size_t i, j;

	for (i = g->nfiles; i-- > 0;)
		for (j = 0; j < g->nfiles; j++)
			if (j != i && strcmp(g->files[i].path, g->files[j].path) &&
			    under(g->files[i].path, g->files[j].path) &&
			    !(g->files[i].rights & ~g->files[j].rights)) {
				drop_file(g, i);
				break;
			}
}

static int cmp_cand(const void *a, const void *b)
{
	return strcmp(((const struct cand *)a)->path, ((const struct cand *)b)->path);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int fold(struct gen *g)
{
	int r;

	while ((r = fold_once(g)) > 0)
		;
	if (r < 0)
		return r;
	drop_covered(g);
	if (g->nfiles)
		qsort(g->files, g->nfiles, sizeof(*g->files), cmp_cand);
	if (g->nexec)
		qsort(g->exec, g->nexec, sizeof(*g->exec), cmp_str);
	return 0;
}

/* ---- the document ---- */

/* path written with the var whose value is the longest prefix; *run_view when that var is one
 * of agentctl run's (tmp, home), whose host path is not the record's. */
static void render(const struct gen *g, const char *path, char *buf, size_t bufsz, bool *run_view)
{
	const struct policy_var *best = NULL;
	size_t i;

	for (i = 0; i < g->nvars; i++)
		if (strlen(g->vars[i].value) > 1 && under(path, g->vars[i].value) &&
		    (!best || strlen(g->vars[i].value) > strlen(best->value)))
			best = &g->vars[i];
	*run_view = best && (!strcmp(best->name, "tmp") || !strcmp(best->name, "home"));
	if (best)
		snprintf(buf, bufsz, "${%s}%s", best->name, path + strlen(best->value));
	else
		snprintf(buf, bufsz, "%s", path);
}

/* Absent here: the rule is written optional, so that the policy still loads. */
static bool absent(const char *path, bool run_view)
{
	struct stat st;

	return !run_view && stat(path, &st) && errno == ENOENT;
}

static json_t *child(json_t *parent, const char *key, json_type type)
{
	json_t *c = json_object_get(parent, key);

	if (json_is_object(c) || json_is_array(c))
		return c;
	c = type == JSON_ARRAY ? json_array() : json_object();
	if (json_object_set_new(parent, key, c))
		return NULL;
	return c;
}

static json_t *rights_json(__u32 rights)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < NAMES(right_names); i++)
		if (rights & (1U << i))
			json_array_append_new(a, json_string(right_names[i]));
	return a;
}

static __u32 rights_of(const json_t *arr)
{
	__u32 r = 0;
	json_t *e;
	size_t i, k;

	json_array_foreach(arr, i, e)
	{
		for (k = 0; k < NAMES(right_names); k++)
			if (json_is_string(e) && !strcmp(json_string_value(e), right_names[k]))
				r |= 1U << k;
	}
	return r;
}

static void rights_text(__u32 rights, char *buf, size_t bufsz)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < NAMES(right_names); i++)
		if (rights & (1U << i))
			used += snprintf(buf + used, bufsz - used, "%s%s", used ? "," : "",
					 right_names[i]);
}

static void change(json_t *changes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void change(json_t *changes, const char *fmt, ...)
{
	char line[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	json_array_append_new(changes, json_string(line));
}

static json_t *find_path(json_t *arr, const char *path)
{
	json_t *e;
	size_t i;

	json_array_foreach(arr, i, e)
	{
		json_t *p = json_is_object(e) ? json_object_get(e, "path") : e;

		if (json_is_string(p) && !strcmp(json_string_value(p), path))
			return e;
	}
	return NULL;
}

static int files_out(struct gen *g, json_t *changes)
{
	json_t *files = child(g->doc, "files", JSON_ARRAY), *rule;
	char path[8192], was[128], now[128];
	bool run_view;
	__u32 old;
	size_t i;

	for (i = 0; files && i < g->nfiles; i++) {
		render(g, g->files[i].path, path, sizeof(path), &run_view);
		rights_text(g->files[i].rights, now, sizeof(now));
		rule = find_path(files, path);
		if (json_is_object(rule)) {
			old = rights_of(json_object_get(rule, "rights"));
			if (!(g->files[i].rights & ~old))
				continue;
			rights_text(old, was, sizeof(was));
			rights_text(old | g->files[i].rights, now, sizeof(now));
			json_object_set_new(rule, "rights", rights_json(old | g->files[i].rights));
			change(changes, "~ files %s: %s -> %s", path, was[0] ? was : "none", now);
			continue;
		}
		rule = json_pack("{s:s, s:o}", "path", path, "rights",
				 rights_json(g->files[i].rights));
		if (rule && absent(g->files[i].path, run_view))
			json_object_set_new(rule, "optional", json_true());
		if (json_array_append_new(files, rule))
			return -ENOMEM;
		change(changes, "+ files %s: %s", path, now);
	}
	return files ? 0 : -ENOMEM;
}

static int exec_out(struct gen *g, json_t *changes)
{
	json_t *exec, *allow, *e;
	char path[8192];
	bool run_view;
	size_t i;

	if (!g->nexec)
		return 0;
	exec = child(g->doc, "exec", JSON_OBJECT);
	allow = exec ? child(exec, "allow", JSON_ARRAY) : NULL;
	for (i = 0; allow && i < g->nexec; i++) {
		render(g, g->exec[i], path, sizeof(path), &run_view);
		if (find_path(allow, path))
			continue;
		e = absent(g->exec[i], run_view)
			    ? json_pack("{s:s, s:b}", "path", path, "optional", 1)
			    : json_string(path);
		if (json_array_append_new(allow, e))
			return -ENOMEM;
		change(changes, "+ exec %s", path);
	}
	return allow ? 0 : -ENOMEM;
}

static bool port_in(const json_t *ports, __u16 port)
{
	unsigned int lo, hi;
	json_t *e;
	size_t i;
	char end;

	if (!ports)
		return true;
	json_array_foreach(ports, i, e)
	{
		if (json_is_integer(e) && json_integer_value(e) == port)
			return true;
		if (!json_is_string(e))
			continue;
		if (sscanf(json_string_value(e), "%u-%u%c", &lo, &hi, &end) == 2 && lo <= port &&
		    port <= hi)
			return true;
		if (sscanf(json_string_value(e), "%u%c", &lo, &end) == 1 && lo == port)
			return true;
	}
	return false;
}

/* A rule of the document for this address (as /32, /128 or bare) already lets the port in. */
static bool conn_covered(const json_t *connect, const struct conn *c)
{
	size_t i, alen = strcspn(c->cidr, "/");
	const char *cidr, *proto;
	json_t *r;

	json_array_foreach(connect, i, r)
	{
		cidr = str_at(r, "cidr");
		proto = json_object_get(r, "protocol") ? str_at(r, "protocol") : "any";
		if (strcmp(cidr, c->cidr) && (strlen(cidr) != alen || strncmp(cidr, c->cidr, alen)))
			continue;
		if ((!strcmp(proto, "any") || !strcmp(proto, c->proto)) &&
		    port_in(json_object_get(r, "ports"), c->port))
			return true;
	}
	return false;
}

static int cmp_conn(const void *a, const void *b)
{
	const struct conn *x = a, *y = b;
	int r = strcmp(x->cidr, y->cidr);

	r = r ?: strcmp(x->proto, y->proto);
	return r ?: (int)x->port - (int)y->port;
}

static int connect_out(struct gen *g, json_t *net, json_t *changes)
{
	json_t *connect = child(net, "connect", JSON_ARRAY), *rule = NULL, *ports = NULL;
	size_t i;

	if (!connect)
		return -ENOMEM;
	if (g->nconns)
		qsort(g->conns, g->nconns, sizeof(*g->conns), cmp_conn);
	for (i = 0; i < g->nconns; i++) {
		const struct conn *c = &g->conns[i];

		if (conn_covered(connect, c))
			continue;
		if (!rule || strcmp(str_at(rule, "cidr"), c->cidr) ||
		    strcmp(str_at(rule, "protocol"), c->proto)) {
			rule = json_pack("{s:s, s:[], s:s}", "cidr", c->cidr, "ports", "protocol",
					 c->proto);
			if (json_array_append_new(connect, rule))
				return -ENOMEM;
			ports = json_object_get(rule, "ports");
		}
		json_array_append_new(ports, json_integer(c->port));
		change(changes, "+ connect %s %s port %u", c->cidr, c->proto, c->port);
	}
	return 0;
}

static int names_out(json_t *arr, const char *name, const char *what, json_t *changes)
{
	json_t *e;
	size_t i;

	json_array_foreach(arr, i, e)
	{
		if (json_is_string(e) && !strcasecmp(json_string_value(e), name))
			return 0;
	}
	change(changes, "+ %s %s", what, name);
	return json_array_append_new(arr, json_string(name)) ? -ENOMEM : 0;
}

static int net_out(struct gen *g, json_t *changes)
{
	json_t *net, *sockets;
	size_t i;
	int err = 0;

	if (!g->nconns && !g->sockets && !g->bind)
		return 0;
	net = child(g->doc, "network", JSON_OBJECT);
	if (!net)
		return -ENOMEM;
	if (g->nconns)
		err = connect_out(g, net, changes);
	if (g->bind && !json_is_true(json_object_get(net, "bind"))) {
		json_object_set_new(net, "bind", json_true());
		change(changes, "~ network.bind: true");
	}
	sockets = g->sockets ? child(net, "sockets", JSON_ARRAY) : NULL;
	for (i = 0; sockets && !err && i < NAMES(sock_families); i++)
		if (g->sockets & (1U << i))
			err = names_out(sockets, sock_families[i].name, "sockets", changes);
	return g->sockets && !sockets ? -ENOMEM : err;
}

static int caps_out(struct gen *g, json_t *changes)
{
	json_t *caps;
	int c, err = 0;

	if (!g->caps)
		return 0;
	caps = child(g->doc, "capabilities", JSON_ARRAY);
	for (c = 0; caps && !err && c < 64; c++)
		if (g->caps & (1ULL << c))
			err = names_out(caps, policy_capability_name(c), "capabilities", changes);
	return caps ? err : -ENOMEM;
}

json_t *gen_policy(struct gen *g, json_t **changes)
{
	json_t *ch = json_array(), *doc = json_deep_copy(g->current);
	int err;

	json_decref(g->doc);
	g->doc = doc;
	err = ch && doc ? fold(g) : -ENOMEM;
	err = err ?: files_out(g, ch);
	err = err ?: exec_out(g, ch);
	err = err ?: net_out(g, ch);
	err = err ?: caps_out(g, ch);
	if (err) {
		json_decref(ch);
		return NULL;
	}
	if (changes)
		*changes = ch;
	else
		json_decref(ch);
	return json_incref(g->doc);
}
