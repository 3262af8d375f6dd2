// SPDX-License-Identifier: GPL-2.0
/*
 * agentctl policy generate's first half: audit records into grants (generate_doc.c folds them
 * and writes the policy). Records are read as the verified reader parsed them; untrusted, so
 * every field is checked for type and form before use. The rules are documented in
 * docs/POLICY.md ("Writing a policy").
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agentd/abi.h"
#include "policy/generate_int.h"
#include "policy/netdeny.h"

const char *const gen_right_names[GEN_RIGHTS] = { "read",   "write", "exec",	 "create",
						  "remove", "link",  "truncate", "setattr" };
/* Families sock_create records name (family=N), with their policy name. */
const struct gen_family gen_families[GEN_FAMILIES] = {
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

bool gen_under(const char *path, const char *dir)
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

const char *gen_str_at(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

int gen_add_file(struct gen *g, const char *path, __u32 rights)
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

void gen_parent_of(const char *p, char *buf, size_t bufsz)
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
	const char *path = gen_str_at(obj, "path");
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
		gen_parent_of(path, dir, sizeof(dir));
		path = dir;
	}
	return gen_add_file(g, path, need | have);
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
	const char *addr = gen_str_at(obj, "addr");
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
	for (i = 0; i < NAMES(gen_families); i++)
		if (gen_families[i].family == family) {
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
	const char *decision = gen_str_at(rec, "decision"), *kind = gen_str_at(rec, "kind");
	const char *op = gen_str_at(rec, "op"), *detail = gen_str_at(rec, "detail");
	const json_t *obj = json_object_get(rec, "object");
	char reason[64] = "";

	if (strcmp(decision, "deny") && strcmp(decision, "would-deny"))
		return 0;
	detail_get(detail, "reason", reason, sizeof(reason));
	if (!strcmp(reason, "self-protection"))
		return skip(g, op, kind, "self-protection: never granted");
	if (!strcmp(reason, "structural-deny"))
		return skip(g, op, gen_str_at(obj, "addr"),
			    "a structural destination: never granted");
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
