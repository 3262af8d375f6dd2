// SPDX-License-Identifier: GPL-2.0
/*
 * policy generate's second half: the grants gathered from records folded into the narrowest
 * trees (docs/POLICY.md, "Writing a policy") and written into a copy of the current policy.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include "policy/generate_int.h"

#define NAMES(a) (sizeof(a) / sizeof((a)[0]))

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
		gen_parent_of(g->files[i].path, parent, sizeof(parent));
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
		gen_parent_of(g->files[i].path, dir, sizeof(dir));
		if ((best[0] && depth(dir) <= best_depth) || children(g, dir) < GEN_FOLD_MIN ||
		    (!g->opts.allow_broad && gen_path_broad(dir)))
			continue;
		strcpy(best, dir);
		best_depth = depth(dir);
	}
	if (!best[0])
		return 0;
	for (i = g->nfiles; i-- > 0;) {
		gen_parent_of(g->files[i].path, dir, sizeof(dir));
		if (!strcmp(g->files[i].path, best) ||
		    (strcmp(g->files[i].path, "/") && !strcmp(dir, best))) {
			rights |= g->files[i].rights;
			drop_file(g, i);
		}
	}
	return gen_add_file(g, best, rights) < 0 ? -ENOMEM : 1;
}

/* A candidate inside another whose rights hold all of its own adds nothing. */
static void drop_covered(struct gen *g)
{
	size_t i, j;

	for (i = g->nfiles; i-- > 0;)
		for (j = 0; j < g->nfiles; j++)
			if (j != i && strcmp(g->files[i].path, g->files[j].path) &&
			    gen_under(g->files[i].path, g->files[j].path) &&
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
		if (strlen(g->vars[i].value) > 1 && gen_under(path, g->vars[i].value) &&
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

	for (i = 0; a && i < NAMES(gen_right_names); i++)
		if (rights & (1U << i))
			json_array_append_new(a, json_string(gen_right_names[i]));
	return a;
}

static __u32 rights_of(const json_t *arr)
{
	__u32 r = 0;
	json_t *e;
	size_t i, k;

	json_array_foreach(arr, i, e)
	{
		for (k = 0; k < NAMES(gen_right_names); k++)
			if (json_is_string(e) && !strcmp(json_string_value(e), gen_right_names[k]))
				r |= 1U << k;
	}
	return r;
}

static void rights_text(__u32 rights, char *buf, size_t bufsz)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < NAMES(gen_right_names); i++)
		if (rights & (1U << i))
			used += snprintf(buf + used, bufsz - used, "%s%s", used ? "," : "",
					 gen_right_names[i]);
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
	json_t *files, *rule;
	char path[8192], was[128], now[128];
	bool run_view;
	__u32 old;
	size_t i;

	if (!g->nfiles)
		return 0;
	files = child(g->doc, "files", JSON_ARRAY);
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
		cidr = gen_str_at(r, "cidr");
		proto = json_object_get(r, "protocol") ? gen_str_at(r, "protocol") : "any";
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
		if (!rule || strcmp(gen_str_at(rule, "cidr"), c->cidr) ||
		    strcmp(gen_str_at(rule, "protocol"), c->proto)) {
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
	for (i = 0; sockets && !err && i < NAMES(gen_families); i++)
		if (g->sockets & (1U << i))
			err = names_out(sockets, gen_families[i].name, "sockets", changes);
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
