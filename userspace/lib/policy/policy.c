// SPDX-License-Identifier: GPL-2.0
/*
 * Policy loading in three steps: read the file and its bases (depth first, each file once, bases
 * before the files extending them), merge "vars", then apply each file in that order: lists
 * append, scalars override. Errors are collected, never printed.
 *
 * Over 800 lines, kept whole: every section's parser uses the one loader state (its documents,
 * merged vars and error placement by file:line:column and JSON pointer), which a split would have
 * to export to every part; the sections are in the order docs/POLICY.md gives them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "agentd/abi.h"
#include "policy/policy.h"

/* Files one policy may be built from, bases included. */
#define POLICY_DOCS_MAX 64
#define WALL_CLOCK_MAX (30 * 24 * 3600)

/* Where a list entry came from, to place errors found after merging. */
struct origin {
	const struct jdoc *d;
	char ptr[JPTR_MAX];
};

struct var {
	const char *name, *value;
	bool given; /* by --var, not a policy's default */
};

struct loader {
	struct policy_errors *errs;
	const struct policy_vars *cli;
	const struct tools_registry *reg;
	struct jdoc *docs[POLICY_DOCS_MAX]; /* bases first */
	size_t ndocs;
	const struct jdoc *chain[POLICY_EXTENDS_DEPTH_MAX + 1]; /* the extends being followed */
	struct var *vars;
	size_t nvars;
	size_t *file_doc; /* per policy.files entry: index of the doc that set it */
	struct origin *tool_at, *connect_at, *host_at;
	struct origin mode_at;
	struct policy *p;
	int err; /* -ENOMEM */
};

static const char *const top_keys[] = { "name",	    "extends", "mode",	       "vars",	  "files",
					"exec",	    "network", "tools",	       "limits",  "audit",
					"io_uring", "env",     "capabilities", "devices", NULL };
static const char *const file_keys[] = { "path", "rights", "optional", NULL };
static const char *const exec_keys[] = { "allow", "allow_memfd", "allow_writable", NULL };
static const char *const exec_allow_keys[] = { "path", "optional", NULL };
static const char *const net_keys[] = { "connect", "bind", "sockets", "proxy", NULL };
static const char *const connect_keys[] = { "cidr", "ports", "protocol", NULL };
static const char *const proxy_keys[] = { "allow_hosts", "ports", NULL };
static const char *const audit_keys[] = { "log_allows", "on_failure", NULL };
static const char *const device_keys[] = { "create", NULL };

/* capabilities(7), by number (linux/capability.h); AGENTD_CAP_COUNT of them. */
static const char *const cap_names[] = {
	"chown",
	"dac_override",
	"dac_read_search",
	"fowner",
	"fsetid",
	"kill",
	"setgid",
	"setuid",
	"setpcap",
	"linux_immutable",
	"net_bind_service",
	"net_broadcast",
	"net_admin",
	"net_raw",
	"ipc_lock",
	"ipc_owner",
	"sys_module",
	"sys_rawio",
	"sys_chroot",
	"sys_ptrace",
	"sys_pacct",
	"sys_admin",
	"sys_boot",
	"sys_nice",
	"sys_resource",
	"sys_time",
	"sys_tty_config",
	"mknod",
	"lease",
	"audit_write",
	"audit_control",
	"setfcap",
	"mac_override",
	"mac_admin",
	"syslog",
	"wake_alarm",
	"block_suspend",
	"audit_read",
	"perfmon",
	"bpf",
	"checkpoint_restore",
};
_Static_assert(sizeof(cap_names) / sizeof(cap_names[0]) == AGENTD_CAP_COUNT, "capability names");

static const char *const right_names[] = { "read",   "write", "exec",	  "create",
					   "remove", "link",  "truncate", "setattr" };
static const char *const sock_names[] = { "inet",   "inet6", "unix", "netlink",
					  "packet", "raw",   "icmp" };

#define NAMES(a) (sizeof(a) / sizeof((a)[0]))

int policy_mode_parse(const char *s, enum policy_mode *mode)
{
	if (!strcmp(s, "act") || !strcmp(s, "enforce"))
		*mode = POLICY_MODE_ACT;
	else if (!strcmp(s, "report-only"))
		*mode = POLICY_MODE_REPORT_ONLY;
	else if (!strcmp(s, "shadow"))
		*mode = POLICY_MODE_SHADOW;
	else
		return -EINVAL;
	return 0;
}

const char *policy_mode_name(enum policy_mode mode)
{
	/* How each mode is shown ("enforce" is read as "act"): not a key list of the parser. */
	static const char *const shown[] = { "act", "report-only", "shadow" };

	return mode <= POLICY_MODE_SHADOW ? shown[mode] : "?";
}

int policy_rights_format(__u32 rights, char *buf, size_t bufsz)
{
	size_t i, n = 0;

	if (bufsz)
		buf[0] = '\0';
	if (!rights)
		return snprintf(buf, bufsz, "none");
	for (i = 0; i < NAMES(right_names); i++)
		if (rights & (1U << i))
			n += snprintf(buf + (n < bufsz ? n : bufsz), n < bufsz ? bufsz - n : 0,
				      "%s%s", n ? "," : "", right_names[i]);
	return n;
}

int policy_rights_parse(const char *names, __u32 *rights)
{
	const char *p = names, *end;
	size_t i, n;

	*rights = 0;
	do {
		end = strchrnul(p, ',');
		n = end - p;
		for (i = 0; i < NAMES(right_names); i++)
			if (strlen(right_names[i]) == n && !strncmp(p, right_names[i], n))
				break;
		if (i == NAMES(right_names))
			return -EINVAL;
		*rights |= 1U << i;
		p = end + 1;
	} while (*end);
	return 0;
}

static void err_at(struct loader *L, const struct jdoc *d, const char *ptr, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void err_at(struct loader *L, const struct jdoc *d, const char *ptr, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	jdoc_err(L->errs, d, ptr, "%s", msg);
}

static const char *found(const json_t *v, char *buf, size_t bufsz)
{
	return jdoc_found(v, buf, bufsz);
}

/* Grows *arr to hold n + 1 elements; false (and L->err) when memory runs out. */
static bool grow(struct loader *L, void *arr, size_t n, size_t size)
{
	void *p = realloc(*(void **)arr, (n + 1) * size);

	if (!p) {
		L->err = -ENOMEM;
		return false;
	}
	*(void **)arr = p;
	memset((char *)p + n * size, 0, size);
	return true;
}

static char *dup_str(struct loader *L, const char *s)
{
	char *r = strdup(s);

	if (!r)
		L->err = -ENOMEM;
	return r;
}

static json_t *field(struct loader *L, const struct jdoc *d, const char *ptr, const json_t *obj,
		     const char *key, json_type type, const char *what, char *at)
{
	json_t *v = json_object_get(obj, key);

	jptr_key(at, ptr, key);
	if (!v || !jdoc_expect(L->errs, d, at, v, type, what))
		return NULL;
	return v;
}

static int one_of(const char *s, const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

/* "a, b, c" */
static const char *list_names(const char *const *names, size_t n, char *buf, size_t bufsz)
{
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < n && len < bufsz; i++)
		len += snprintf(buf + len, bufsz - len, "%s%s", i ? ", " : "", names[i]);
	return buf;
}

int policy_capability(const char *name)
{
	size_t i;

	if (!strncasecmp(name, "cap_", 4))
		name += 4;
	for (i = 0; i < NAMES(cap_names); i++)
		if (!strcasecmp(name, cap_names[i]))
			return i;
	return -1;
}

const char *policy_capability_name(int cap)
{
	return cap >= 0 && (size_t)cap < NAMES(cap_names) ? cap_names[cap] : NULL;
}

/* ---- reading the file and its bases ---- */

static bool same_file(const struct jdoc *a, const struct jdoc *b)
{
	return (a->dev || a->ino) && a->dev == b->dev && a->ino == b->ino;
}

static void add_doc(struct loader *L, struct jdoc *d, int depth);

static void follow_extends(struct loader *L, struct jdoc *d, int depth)
{
	char at[JPTR_MAX], el[JPTR_MAX], path[PATH_MAX], cycle[1024];
	const char *ref;
	struct jdoc *b;
	json_t *ext, *e;
	size_t i, j;
	int err, n;

	ext = field(L, d, "", d->root, "extends", JSON_ARRAY, "an array of file names", at);
	json_array_foreach(ext, i, e)
	{
		jptr_idx(el, at, i);
		if (!jdoc_expect(L->errs, d, el, e, JSON_STRING, "a file name"))
			continue;
		ref = json_string_value(e);
		if (!*ref) {
			err_at(L, d, el, "expected a file name; found \"\"");
			continue;
		}
		if (ref[0] == '/')
			n = snprintf(path, sizeof(path), "%s", ref);
		else
			n = snprintf(path, sizeof(path), "%s/%s", d->dir, ref);
		if (n >= (int)sizeof(path)) {
			err_at(L, d, el, "expected a file name; found one too long");
			continue;
		}
		err = jdoc_load_file(path, &b, L->errs);
		if (err == -ENOMEM)
			L->err = err;
		if (err)
			continue;
		for (j = 0; j <= (size_t)depth && !same_file(L->chain[j], b); j++)
			;
		if (j <= (size_t)depth) {
			cycle[0] = '\0';
			for (; j <= (size_t)depth; j++)
				snprintf(cycle + strlen(cycle), sizeof(cycle) - strlen(cycle),
					 "%s -> ", L->chain[j]->path);
			err_at(L, d, el, "expected no extends cycle; found %s%s", cycle, b->path);
			jdoc_free(b);
			continue;
		}
		if (depth + 1 > POLICY_EXTENDS_DEPTH_MAX) {
			err_at(L, d, el, "expected extends at most %d levels deep; found %s deeper",
			       POLICY_EXTENDS_DEPTH_MAX, b->path);
			jdoc_free(b);
			continue;
		}
		for (j = 0; j < L->ndocs && !same_file(L->docs[j], b); j++)
			;
		if (j < L->ndocs) {
			/* Reached twice through different bases: included once, where first met. */
			jdoc_free(b);
			continue;
		}
		L->chain[depth + 1] = b;
		add_doc(L, b, depth + 1);
	}
}

/* Takes d: follows its bases, then appends it to L->docs (or frees it). */
static void add_doc(struct loader *L, struct jdoc *d, int depth)
{
	L->chain[depth] = d;
	follow_extends(L, d, depth);
	if (L->ndocs == POLICY_DOCS_MAX) {
		err_at(L, d, "", "expected a policy built from at most %d files; found more",
		       POLICY_DOCS_MAX);
		jdoc_free(d);
		return;
	}
	L->docs[L->ndocs++] = d;
}

/* ---- vars ---- */

static bool var_name_ok(const char *s, size_t len)
{
	size_t i;

	if (!len || len > 64 || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

static void set_var(struct loader *L, const char *name, const char *value, bool given)
{
	size_t i;

	for (i = 0; i < L->nvars; i++)
		if (!strcmp(L->vars[i].name, name)) {
			L->vars[i].value = value;
			L->vars[i].given = given;
			return;
		}
	if (!grow(L, &L->vars, L->nvars, sizeof(*L->vars)))
		return;
	L->vars[L->nvars++] = (struct var){ name, value, given };
}

static void merge_vars(struct loader *L, const struct jdoc *d)
{
	char at[JPTR_MAX], el[JPTR_MAX];
	const char *k;
	json_t *vars, *v;

	vars = field(L, d, "", d->root, "vars", JSON_OBJECT, "an object of strings", at);
	json_object_foreach(vars, k, v)
	{
		jptr_key(el, at, k);
		if (!var_name_ok(k, strlen(k)))
			err_at(L, d, el,
			       "expected a variable name matching [A-Za-z_][A-Za-z0-9_]{0,63}; "
			       "found \"%s\"",
			       k);
		else if (jdoc_expect(L->errs, d, el, v, JSON_STRING, "a string"))
			set_var(L, k, json_string_value(v), false);
	}
}

static const struct var *var_find(const struct loader *L, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < L->nvars; i++)
		if (strlen(L->vars[i].name) == len && !strncmp(L->vars[i].name, name, len))
			return &L->vars[i];
	return NULL;
}

/* Replaces each ${name} (values are not substituted again); false after reporting an error.
 * *dflt is the first variable that kept its policy's default (not given by --var), or NULL. */
static bool substitute(struct loader *L, const struct jdoc *d, const char *ptr, const char *in,
		       char *out, size_t outsz, const struct var **dflt)
{
	const char *p = in, *end, *val;
	const struct var *v;
	size_t n = 0, len;

	*dflt = NULL;
	while (*p) {
		if (p[0] != '$' || p[1] != '{') {
			if (n + 1 >= outsz)
				goto too_long;
			out[n++] = *p++;
			continue;
		}
		end = strchr(p + 2, '}');
		if (!end || !var_name_ok(p + 2, end - p - 2)) {
			err_at(L, d, ptr,
			       "expected ${name} with name matching [A-Za-z_][A-Za-z0-9_]{0,63}; "
			       "found \"%s\"",
			       in);
			return false;
		}
		v = var_find(L, p + 2, end - p - 2);
		val = v ? v->value : NULL;
		if (v && !v->given && !*dflt)
			*dflt = v;
		if (!val) {
			err_at(L, d, ptr,
			       "unresolved variable ${%.*s}: expected it in \"vars\" or given with "
			       "--var %.*s=VALUE",
			       (int)(end - p - 2), p + 2, (int)(end - p - 2), p + 2);
			return false;
		}
		len = strlen(val);
		if (n + len >= outsz)
			goto too_long;
		memcpy(out + n, val, len);
		n += len;
		p = end + 1;
	}
	out[n] = '\0';
	return true;
too_long:
	err_at(L, d, ptr, "expected a path shorter than %zu bytes; found \"%.64s...\"", outsz, in);
	return false;
}

/* Absolute, no empty, "." or ".." components, no trailing "/" (except "/" itself). */
static bool path_normal(const char *s)
{
	const char *c = s;
	size_t len;

	if (s[0] != '/')
		return false;
	if (!s[1])
		return true;
	while (*c == '/') {
		c++;
		len = strcspn(c, "/");
		if (!len || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += len;
	}
	return true;
}

/* Substitutes, checks and stat()s the path at ptr into r; false after reporting an error. */
static bool resolve_path(struct loader *L, const struct jdoc *d, const char *ptr, const char *in,
			 bool optional, struct policy_path *r)
{
	const struct var *dflt;
	char path[PATH_MAX];
	struct stat st;

	if (!substitute(L, d, ptr, in, path, sizeof(path), &dflt))
		return false;
	if (!path_normal(path)) {
		err_at(L, d, ptr,
		       "expected an absolute, normalised path (no \"..\", \".\", \"//\" or "
		       "trailing \"/\"); found \"%s\"",
		       path);
		return false;
	}
	r->optional = optional;
	if (stat(path, &st)) {
		/* A template's default that does not exist here: the operator names the place. */
		if (!optional && dflt && errno == ENOENT) {
			size_t n = L->errs->n;

			err_at(L, d, ptr,
			       "set --var %s=PATH: its default gives \"%s\", which does not exist "
			       "here",
			       dflt->name, path);
			if (L->errs->n > n)
				L->errs->v[n].needs_var = true;
			return false;
		}
		if (!optional || (errno != ENOENT && errno != ENOTDIR)) {
			err_at(L, d, ptr, "expected an existing path%s; found \"%s\": %s",
			       optional ? "" : " (or \"optional\": true)", path, strerror(errno));
			return false;
		}
	} else {
		r->exists = true;
		r->dev = st.st_dev;
		r->ino = st.st_ino;
	}
	r->path = dup_str(L, path);
	return r->path != NULL;
}

static bool same_object(const struct policy_path *a, const struct policy_path *b)
{
	if (a->exists && b->exists)
		return a->dev == b->dev && a->ino == b->ino;
	return !strcmp(a->path, b->path);
}

/* ---- files ---- */

static bool parse_rights(struct loader *L, const struct jdoc *d, const char *ptr, const json_t *o,
			 __u32 *rights)
{
	char at[JPTR_MAX], el[JPTR_MAX], buf[80], list[128];
	json_t *arr, *e;
	size_t i;
	int r;
	bool ok = true;

	*rights = 0;
	arr = field(L, d, ptr, o, "rights", JSON_ARRAY, "an array of rights", at);
	if (!json_object_get(o, "rights")) {
		err_at(L, d, at, "missing required field; expected an array of rights ([] denies)");
		return false;
	}
	if (!arr)
		return false;
	list_names(right_names, NAMES(right_names), list, sizeof(list));
	json_array_foreach(arr, i, e)
	{
		jptr_idx(el, at, i);
		r = json_is_string(e)
			    ? one_of(json_string_value(e), right_names, NAMES(right_names))
			    : -1;
		if (r < 0) {
			err_at(L, d, el, "expected one of %s; found %s", list,
			       found(e, buf, sizeof(buf)));
			ok = false;
			continue;
		}
		*rights |= 1U << r;
	}
	return ok;
}

static bool get_bool(struct loader *L, const struct jdoc *d, const char *ptr, const json_t *o,
		     const char *key, bool *out)
{
	char at[JPTR_MAX];
	json_t *v = field(L, d, ptr, o, key, JSON_TRUE, "true or false", at);

	if (v)
		*out = json_is_true(v);
	return v != NULL;
}

static bool get_path(struct loader *L, const struct jdoc *d, const char *ptr, const json_t *o,
		     struct policy_path *r)
{
	char at[JPTR_MAX];
	bool optional = false;
	json_t *v;

	get_bool(L, d, ptr, o, "optional", &optional);
	v = field(L, d, ptr, o, "path", JSON_STRING, "a path", at);
	if (!json_object_get(o, "path")) {
		err_at(L, d, at, "missing required field; expected a path");
		return false;
	}
	return v && resolve_path(L, d, at, json_string_value(v), optional, r);
}

/* Adds r (taken) to the rules: one object once per file; a later file's rule replaces a base's. */
static void add_file_rule(struct loader *L, size_t doc, const char *ptr, struct policy_path *r)
{
	struct policy *p = L->p;
	char buf[80], other[80];
	size_t i;

	for (i = 0; i < p->n_files && !same_object(&p->files[i], r); i++)
		;
	if (i < p->n_files && L->file_doc[i] == doc) {
		if (p->files[i].rights != r->rights) {
			policy_rights_format(p->files[i].rights, other, sizeof(other));
			policy_rights_format(r->rights, buf, sizeof(buf));
			err_at(L, L->docs[doc], ptr,
			       "expected one rule per object; found \"%s\" (%s), the same object "
			       "as \"%s\" (%s)",
			       r->path, buf, p->files[i].path, other);
		}
		free(r->path);
		return;
	}
	if (i < p->n_files) {
		free(p->files[i].path);
		p->files[i] = *r;
		L->file_doc[i] = doc;
		return;
	}
	if (!grow(L, &p->files, p->n_files, sizeof(*p->files)) ||
	    !grow(L, &L->file_doc, p->n_files, sizeof(*L->file_doc))) {
		free(r->path);
		return;
	}
	L->file_doc[p->n_files] = doc;
	p->files[p->n_files++] = *r;
}

static void apply_files(struct loader *L, size_t doc)
{
	const struct jdoc *d = L->docs[doc];
	char at[JPTR_MAX], el[JPTR_MAX], ptr[JPTR_MAX];
	struct policy_path r;
	json_t *arr, *o;
	size_t i;
	bool ok;

	arr = field(L, d, "", d->root, "files", JSON_ARRAY, "an array of file rules", at);
	json_array_foreach(arr, i, o)
	{
		jptr_idx(el, at, i);
		if (!jdoc_expect(L->errs, d, el, o, JSON_OBJECT, "a file rule object"))
			continue;
		jdoc_check_keys(L->errs, d, el, o, file_keys);
		memset(&r, 0, sizeof(r));
		/* Both checked, so that both report. */
		ok = parse_rights(L, d, el, o, &r.rights);
		ok = get_path(L, d, el, o, &r) && ok;
		if (!ok) {
			free(r.path);
			continue;
		}
		jptr_key(ptr, el, "path");
		add_file_rule(L, doc, ptr, &r);
	}
}

/* ---- exec ---- */

static void apply_exec_allow(struct loader *L, const struct jdoc *d, const char *at,
			     const json_t *arr)
{
	struct policy *p = L->p;
	char el[JPTR_MAX], ptr[JPTR_MAX];
	struct policy_path r;
	json_t *e;
	size_t i, j;
	bool ok;

	json_array_foreach(arr, i, e)
	{
		jptr_idx(el, at, i);
		memset(&r, 0, sizeof(r));
		if (json_is_string(e)) {
			ok = resolve_path(L, d, el, json_string_value(e), false, &r);
		} else if (jdoc_expect(L->errs, d, el, e, JSON_OBJECT,
				       "a path or {\"path\", \"optional\"}")) {
			jdoc_check_keys(L->errs, d, el, e, exec_allow_keys);
			ok = get_path(L, d, el, e, &r);
		} else {
			continue;
		}
		jptr_key(ptr, el, "path");
		for (j = 0; ok && j < p->exec.n_allow && !same_object(&p->exec.allow[j], &r); j++)
			;
		if (!ok || j < p->exec.n_allow ||
		    !grow(L, &p->exec.allow, p->exec.n_allow, sizeof(r))) {
			free(r.path);
			continue;
		}
		p->exec.allow[p->exec.n_allow++] = r;
	}
}

static void apply_exec(struct loader *L, const struct jdoc *d)
{
	char at[JPTR_MAX], el[JPTR_MAX];
	json_t *o, *arr;

	o = field(L, d, "", d->root, "exec", JSON_OBJECT, "an object", at);
	if (!o)
		return;
	jdoc_check_keys(L->errs, d, at, o, exec_keys);
	arr = field(L, d, at, o, "allow", JSON_ARRAY, "an array of paths", el);
	if (arr)
		apply_exec_allow(L, d, el, arr);
	get_bool(L, d, at, o, "allow_memfd", &L->p->exec.allow_memfd);
	get_bool(L, d, at, o, "allow_writable", &L->p->exec.allow_writable);
}

/* ---- network ---- */

static bool parse_cidr(const char *s, struct policy_connect *r, char *why, size_t whysz)
{
	char addr[INET6_ADDRSTRLEN + 8], fixed[INET6_ADDRSTRLEN];
	const char *slash = strchr(s, '/');
	size_t alen = slash ? (size_t)(slash - s) : strlen(s), i;
	unsigned int maxp, prefix = 0, bits;
	bool bad = false;

	snprintf(why, whysz, "not an IPv4 or IPv6 address");
	if (alen >= sizeof(addr))
		return false;
	memcpy(addr, s, alen);
	addr[alen] = '\0';
	r->family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(r->family, addr, r->addr) != 1)
		return false;
	maxp = r->family == AF_INET ? 32 : 128;
	if (!slash) {
		prefix = maxp;
	} else {
		bad = !slash[1] || strlen(slash + 1) > 3 || (slash[1] == '0' && slash[2]);
		for (i = 1; slash[i]; i++) {
			bad |= slash[i] < '0' || slash[i] > '9';
			prefix = prefix * 10 + (slash[i] - '0');
		}
		if (bad || prefix > maxp) {
			snprintf(why, whysz, "prefix length not in 0-%u", maxp);
			return false;
		}
	}
	r->prefix_len = prefix;
	/* Host bits set usually mean a typo in the address or the length: refuse, suggest. */
	for (i = 0, bad = false; i < maxp / 8; i++) {
		bits = i * 8 >= prefix ? 0 : prefix - i * 8 >= 8 ? 8 : prefix - i * 8;
		if (r->addr[i] & (0xffU >> bits)) {
			bad = true;
			r->addr[i] &= ~(0xffU >> bits) & 0xff;
		}
	}
	if (bad) {
		inet_ntop(r->family, r->addr, fixed, sizeof(fixed));
		snprintf(why, whysz, "host bits set; the network is %s/%u", fixed, prefix);
		return false;
	}
	return true;
}

static bool parse_port(const char *s, unsigned long *out)
{
	unsigned long v = 0;
	size_t n = 0;

	if (*s == '0')
		return false;
	for (; s[n] >= '0' && s[n] <= '9' && n < 5; n++)
		v = v * 10 + (s[n] - '0');
	*out = v;
	return n && !s[n] && v >= 1 && v <= 65535;
}

/* A port (443, "443") or range ("8000-8080"); false when it is neither. */
static bool parse_ports(const json_t *e, __u16 *lo, __u16 *hi)
{
	char buf[16], *dash;
	unsigned long a, b;

	if (json_is_integer(e)) {
		if (json_integer_value(e) < 1 || json_integer_value(e) > 65535)
			return false;
		*lo = *hi = json_integer_value(e);
		return true;
	}
	if (!json_is_string(e) || strlen(json_string_value(e)) >= sizeof(buf))
		return false;
	strcpy(buf, json_string_value(e));
	dash = strchr(buf, '-');
	if (dash)
		*dash = '\0';
	if (!parse_port(buf, &a) || (dash && !parse_port(dash + 1, &b)))
		return false;
	if (!dash)
		b = a;
	*lo = a;
	*hi = b;
	return a <= b;
}

static void add_connect(struct loader *L, const struct jdoc *d, const char *ptr,
			const struct policy_connect *r)
{
	struct policy *p = L->p;

	if (!grow(L, &p->net.connect, p->net.n_connect, sizeof(*r)) ||
	    !grow(L, &L->connect_at, p->net.n_connect, sizeof(*L->connect_at)))
		return;
	L->connect_at[p->net.n_connect].d = d;
	snprintf(L->connect_at[p->net.n_connect].ptr, JPTR_MAX, "%s", ptr);
	p->net.connect[p->net.n_connect++] = *r;
}

static void apply_connect_rule(struct loader *L, const struct jdoc *d, const char *ptr,
			       const json_t *o)
{
	static const char *const protos[] = { "tcp", "udp", "any" };
	static const int proto_vals[] = { IPPROTO_TCP, IPPROTO_UDP, 0 };
	char at[JPTR_MAX], el[JPTR_MAX], buf[80], why[96];
	struct policy_connect r = { .port_lo = 1, .port_hi = 65535 };
	json_t *v, *ports, *e;
	bool ok = true;
	size_t i;
	int k;

	jdoc_check_keys(L->errs, d, ptr, o, connect_keys);
	v = field(L, d, ptr, o, "cidr", JSON_STRING, "a network as ADDRESS/PREFIX", at);
	if (!json_object_get(o, "cidr")) {
		err_at(L, d, at, "missing required field; expected a network as ADDRESS/PREFIX");
		ok = false;
	} else if (!v) {
		ok = false;
	} else if (!parse_cidr(json_string_value(v), &r, why, sizeof(why))) {
		err_at(L, d, at,
		       "expected an IPv4 or IPv6 network as ADDRESS/PREFIX; found %s (%s)",
		       found(v, buf, sizeof(buf)), why);
		ok = false;
	}
	v = field(L, d, ptr, o, "protocol", JSON_STRING, "tcp, udp or any", at);
	if (v) {
		k = one_of(json_string_value(v), protos, 3);
		if (k < 0) {
			err_at(L, d, at, "expected one of tcp, udp, any; found %s",
			       found(v, buf, sizeof(buf)));
			ok = false;
		} else {
			r.protocol = proto_vals[k];
		}
	} else if (json_object_get(o, "protocol")) {
		ok = false;
	}
	ports = json_object_get(o, "ports");
	if (!ports) {
		if (ok)
			add_connect(L, d, ptr, &r);
		return;
	}
	jptr_key(at, ptr, "ports");
	if (!jdoc_expect(L->errs, d, at, ports, JSON_ARRAY, "an array of ports"))
		return;
	if (!json_array_size(ports))
		err_at(L, d, at,
		       "expected at least one port (leave \"ports\" out for all); found []");
	/* One rule per port range, so that each compiles to one map entry. */
	json_array_foreach(ports, i, e)
	{
		jptr_idx(el, at, i);
		if (!parse_ports(e, &r.port_lo, &r.port_hi))
			err_at(L, d, el,
			       "expected a port from 1 to 65535 or a range \"LOW-HIGH\" with LOW "
			       "<= HIGH; found %s",
			       found(e, buf, sizeof(buf)));
		else if (ok)
			add_connect(L, d, ptr, &r);
	}
}

/* "name" or "*.suffix" of lower-case DNS labels; a wildcard needs two labels after it. */
static bool host_ok(const char *s)
{
	bool wild = !strncmp(s, "*.", 2);
	size_t len, labels = 0;

	if (wild)
		s += 2;
	if (!*s || strlen(s) > 253)
		return false;
	for (;;) {
		len = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-");
		if (!len || len > 63 || s[0] == '-' || s[len - 1] == '-')
			return false;
		labels++;
		s += len;
		if (!*s)
			break;
		if (*s++ != '.')
			return false;
	}
	return !wild || labels >= 2;
}

/* "ports": a scalar, the child's list replacing its base's; each from 1 to 65535, once. */
static void apply_proxy_ports(struct loader *L, const struct jdoc *d, const char *ptr,
			      const json_t *o)
{
	struct policy *p = L->p;
	char at[JPTR_MAX], el[JPTR_MAX], buf[80];
	json_int_t v;
	json_t *arr, *e;
	size_t i, j;

	arr = field(L, d, ptr, o, "ports", JSON_ARRAY, "an array of port numbers", at);
	if (!arr)
		return;
	if (!json_array_size(arr) || json_array_size(arr) > POLICY_PROXY_PORTS_MAX) {
		err_at(L, d, at, "expected 1 to %d ports; found %zu", POLICY_PROXY_PORTS_MAX,
		       json_array_size(arr));
		return;
	}
	p->net.n_proxy_ports = 0;
	json_array_foreach(arr, i, e)
	{
		jptr_idx(el, at, i);
		v = json_is_integer(e) ? json_integer_value(e) : 0;
		for (j = 0; j < p->net.n_proxy_ports && p->net.proxy_ports[j] != v; j++)
			;
		if (v < 1 || v > 65535 || j < p->net.n_proxy_ports) {
			err_at(L, d, el, "expected a port number from 1 to 65535, once; found %s",
			       found(e, buf, sizeof(buf)));
			continue;
		}
		p->net.proxy_ports[p->net.n_proxy_ports++] = v;
	}
}

static void apply_proxy(struct loader *L, const struct jdoc *d, const char *ptr, const json_t *o)
{
	struct policy *p = L->p;
	char at[JPTR_MAX], el[JPTR_MAX], buf[80];
	json_t *arr, *e;
	size_t i, j;
	const char *h;

	jdoc_check_keys(L->errs, d, ptr, o, proxy_keys);
	apply_proxy_ports(L, d, ptr, o);
	arr = field(L, d, ptr, o, "allow_hosts", JSON_ARRAY, "an array of host names", at);
	json_array_foreach(arr, i, e)
	{
		jptr_idx(el, at, i);
		if (!json_is_string(e) || !host_ok(json_string_value(e))) {
			err_at(L, d, el,
			       "expected a lower-case host name or \"*.domain.suffix\"; found %s",
			       found(e, buf, sizeof(buf)));
			continue;
		}
		h = json_string_value(e);
		for (j = 0; j < p->net.n_proxy_hosts && strcmp(p->net.proxy_hosts[j], h); j++)
			;
		if (j < p->net.n_proxy_hosts ||
		    !grow(L, &p->net.proxy_hosts, p->net.n_proxy_hosts, sizeof(char *)) ||
		    !grow(L, &L->host_at, p->net.n_proxy_hosts, sizeof(*L->host_at)))
			continue;
		L->host_at[p->net.n_proxy_hosts].d = d;
		snprintf(L->host_at[p->net.n_proxy_hosts].ptr, JPTR_MAX, "%s", el);
		p->net.proxy_hosts[p->net.n_proxy_hosts] = dup_str(L, h);
		if (p->net.proxy_hosts[p->net.n_proxy_hosts])
			p->net.n_proxy_hosts++;
	}
}

static void apply_network(struct loader *L, const struct jdoc *d)
{
	char at[JPTR_MAX], el[JPTR_MAX], item[JPTR_MAX], buf[80], list[96];
	json_t *o, *arr, *e;
	size_t i;
	int k;

	o = field(L, d, "", d->root, "network", JSON_OBJECT, "an object", at);
	if (!o)
		return;
	jdoc_check_keys(L->errs, d, at, o, net_keys);
	arr = field(L, d, at, o, "connect", JSON_ARRAY, "an array of connect rules", el);
	json_array_foreach(arr, i, e)
	{
		jptr_idx(item, el, i);
		if (jdoc_expect(L->errs, d, item, e, JSON_OBJECT, "a connect rule object"))
			apply_connect_rule(L, d, item, e);
	}
	get_bool(L, d, at, o, "bind", &L->p->net.bind);
	arr = field(L, d, at, o, "sockets", JSON_ARRAY, "an array of socket families", el);
	list_names(sock_names, NAMES(sock_names), list, sizeof(list));
	json_array_foreach(arr, i, e)
	{
		jptr_idx(item, el, i);
		k = json_is_string(e) ? one_of(json_string_value(e), sock_names, NAMES(sock_names))
				      : -1;
		if (k < 0)
			err_at(L, d, item, "expected one of %s; found %s", list,
			       found(e, buf, sizeof(buf)));
		else
			L->p->net.sockets |= 1U << k;
	}
	e = field(L, d, at, o, "proxy", JSON_OBJECT, "an object", el);
	if (e)
		apply_proxy(L, d, el, e);
}

/* ---- tools, limits, audit, scalars ---- */

/* A grant: "name", or {"name", "approval", "approval_timeout"}; NULL (reported) when neither. */
static const char *tool_grant(struct loader *L, const struct jdoc *d, const char *el,
			      const json_t *e, struct policy_tool *pt)
{
	static const char *const grant_keys[] = { "name", "approval", "approval_timeout", NULL };
	char at[JPTR_MAX];
	json_t *v;

	if (json_is_string(e))
		return json_string_value(e);
	if (!jdoc_expect(L->errs, d, el, e, JSON_OBJECT, "a tool name or an object"))
		return NULL;
	jdoc_check_keys(L->errs, d, el, e, grant_keys);
	v = field(L, d, el, e, "name", JSON_STRING, "a tool name", at);
	if (!json_object_get(e, "name"))
		err_at(L, d, at, "missing required field; expected a tool name");
	tools_parse_approval(L->errs, d, el, e, &pt->approval, &pt->approval_timeout_sec);
	return v ? json_string_value(v) : NULL;
}

bool policy_tool_approval(const struct policy_tool *pt, unsigned int *timeout_sec)
{
	*timeout_sec = pt->approval_timeout_sec ? pt->approval_timeout_sec
		       : pt->def		? pt->def->approval_timeout_sec
						: TOOL_APPROVAL_TIMEOUT_DEFAULT;
	return pt->approval || (pt->def && pt->def->approval);
}

static void apply_tools(struct loader *L, const struct jdoc *d)
{
	struct policy *p = L->p;
	char at[JPTR_MAX], el[JPTR_MAX], buf[80];
	struct policy_tool g;
	const struct tool *def = NULL;
	const char *name;
	json_t *arr, *e;
	size_t i, j;

	arr = field(L, d, "", d->root, "tools", JSON_ARRAY, "an array of tool names", at);
	json_array_foreach(arr, i, e)
	{
		jptr_idx(el, at, i);
		memset(&g, 0, sizeof(g));
		name = tool_grant(L, d, el, e, &g);
		if (!name)
			continue;
		if (L->reg) {
			def = tools_find(L->reg, name);
			if (!def) {
				err_at(L, d, el, "expected a tool of the registry %s; found %s",
				       L->reg->path, found(e, buf, sizeof(buf)));
				continue;
			}
		}
		for (j = 0; j < p->n_tools && strcmp(p->tools[j].name, name); j++)
			;
		if (j < p->n_tools) { /* granted by a base too: approval, if either asks it */
			p->tools[j].approval |= g.approval;
			if (g.approval_timeout_sec)
				p->tools[j].approval_timeout_sec = g.approval_timeout_sec;
			continue;
		}
		if (!grow(L, &p->tools, p->n_tools, sizeof(*p->tools)) ||
		    !grow(L, &L->tool_at, p->n_tools, sizeof(*L->tool_at)))
			continue;
		L->tool_at[p->n_tools].d = d;
		snprintf(L->tool_at[p->n_tools].ptr, JPTR_MAX, "%s", el);
		g.def = def;
		g.name = dup_str(L, name);
		p->tools[p->n_tools] = g;
		if (p->tools[p->n_tools].name)
			p->n_tools++;
	}
}

/* Capabilities append, like lists: a base's grants stay. */
static void apply_capabilities(struct loader *L, const struct jdoc *d)
{
	char at[JPTR_MAX], el[JPTR_MAX], buf[80];
	json_t *arr, *e;
	size_t i;
	int cap;

	arr = field(L, d, "", d->root, "capabilities", JSON_ARRAY, "an array of capability names",
		    at);
	json_array_foreach(arr, i, e)
	{
		jptr_idx(el, at, i);
		cap = json_is_string(e) ? policy_capability(json_string_value(e)) : -1;
		if (cap < 0)
			err_at(L, d, el,
			       "expected a capability of capabilities(7) (\"net_bind_service\", "
			       "\"CAP_NET_BIND_SERVICE\"); found %s",
			       found(e, buf, sizeof(buf)));
		else
			L->p->capabilities |= 1ULL << cap;
	}
}

static void apply_devices(struct loader *L, const struct jdoc *d)
{
	char at[JPTR_MAX];
	json_t *o = field(L, d, "", d->root, "devices", JSON_OBJECT, "an object", at);

	if (!o)
		return;
	jdoc_check_keys(L->errs, d, at, o, device_keys);
	get_bool(L, d, at, o, "create", &L->p->devices.create);
}

static void apply_limits(struct loader *L, const struct jdoc *d)
{
	char at[JPTR_MAX];
	json_t *o = field(L, d, "", d->root, "limits", JSON_OBJECT, "an object", at);

	if (o)
		jdoc_limits(L->errs, d, at, o, WALL_CLOCK_MAX, &L->p->limits);
}

const char *const policy_env_reserved[] = { "HTTP_PROXY",	  "HTTPS_PROXY", "http_proxy",
					    "https_proxy",	  "NO_PROXY",	 "no_proxy",
					    "AGENTD_TOOL_SOCKET", NULL };

/* [A-Za-z_][A-Za-z0-9_]*, the portable environment variable names (POSIX). */
static bool env_name_ok(const char *s)
{
	size_t n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");

	return n && n == strlen(s) && n <= POLICY_ENV_NAME_MAX && !(s[0] >= '0' && s[0] <= '9');
}

static bool env_reserved(const char *s)
{
	const char *const *r;

	for (r = policy_env_reserved; *r; r++)
		if (!strcmp(s, *r))
			return true;
	return false;
}

/* "env": the operator's variables the agent gets, by name; bases and children add to it. */
static void apply_env(struct loader *L, const struct jdoc *d)
{
	struct policy *p = L->p;
	char at[JPTR_MAX], el[JPTR_MAX], buf[80];
	const char *name;
	json_t *arr, *e;
	size_t i, j;

	arr = field(L, d, "", d->root, "env", JSON_ARRAY, "an array of variable names", at);
	json_array_foreach(arr, i, e)
	{
		jptr_idx(el, at, i);
		if (!jdoc_expect(L->errs, d, el, e, JSON_STRING, "a variable name"))
			continue;
		name = json_string_value(e);
		if (!env_name_ok(name)) {
			err_at(L, d, el,
			       "expected a variable name matching [A-Za-z_][A-Za-z0-9_]* (at most "
			       "%d characters); found %s",
			       POLICY_ENV_NAME_MAX, found(e, buf, sizeof(buf)));
			continue;
		}
		if (env_reserved(name)) {
			err_at(L, d, el,
			       "expected a variable agentctl run does not set itself (it points "
			       "%s at the agent's own proxy or broker); found %s",
			       name, found(e, buf, sizeof(buf)));
			continue;
		}
		for (j = 0; j < p->n_env && strcmp(p->env[j], name); j++)
			;
		if (j < p->n_env || !grow(L, &p->env, p->n_env, sizeof(*p->env)))
			continue;
		p->env[p->n_env] = dup_str(L, name);
		if (p->env[p->n_env])
			p->n_env++;
	}
}

/* [a-z0-9][a-z0-9-]{0,62} */
static bool name_ok(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-");

	return n && n == strlen(s) && n <= POLICY_NAME_MAX && s[0] != '-';
}

static void apply_on_failure(struct loader *L, const struct jdoc *d, const char *at, json_t *o)
{
	char el[JPTR_MAX], buf[80];
	json_t *v = field(L, d, at, o, "on_failure", JSON_STRING, "freeze or continue", el);

	if (v && strcmp(json_string_value(v), "freeze") && strcmp(json_string_value(v), "continue"))
		err_at(L, d, el, "expected one of freeze, continue; found %s",
		       found(v, buf, sizeof(buf)));
	else if (v)
		L->p->audit.on_failure = strcmp(json_string_value(v), "freeze")
						 ? POLICY_AUDIT_CONTINUE
						 : POLICY_AUDIT_FREEZE;
}

static void apply_scalars(struct loader *L, const struct jdoc *d)
{
	char at[JPTR_MAX], buf[80];
	json_t *v, *o;

	v = field(L, d, "", d->root, "name", JSON_STRING, "a policy name", at);
	if (!json_object_get(d->root, "name"))
		err_at(L, d, at, "missing required field; expected a policy name");
	if (v && !name_ok(json_string_value(v))) {
		err_at(L, d, at, "expected a name matching [a-z0-9][a-z0-9-]{0,62}; found %s",
		       found(v, buf, sizeof(buf)));
	} else if (v) {
		free(L->p->name);
		L->p->name = dup_str(L, json_string_value(v));
	}
	v = field(L, d, "", d->root, "mode", JSON_STRING, "act, enforce, report-only or shadow",
		  at);
	if (v && policy_mode_parse(json_string_value(v), &L->p->mode)) {
		err_at(L, d, at, "expected one of act, enforce, report-only, shadow; found %s",
		       found(v, buf, sizeof(buf)));
	} else if (v) {
		L->mode_at.d = d;
		snprintf(L->mode_at.ptr, JPTR_MAX, "%s", at);
	}
	get_bool(L, d, "", d->root, "io_uring", &L->p->io_uring);
	o = field(L, d, "", d->root, "audit", JSON_OBJECT, "an object", at);
	if (o) {
		jdoc_check_keys(L->errs, d, at, o, audit_keys);
		get_bool(L, d, at, o, "log_allows", &L->p->audit.log_allows);
		apply_on_failure(L, d, at, o);
	}
}

/* Reporting agents observe and report: no actuating tools, no egress. */
static void check_report_only(struct loader *L)
{
	const struct policy *p = L->p;
	const char *mode_file = L->mode_at.d ? L->mode_at.d->path : "?";
	size_t i;

	if (p->mode != POLICY_MODE_REPORT_ONLY)
		return;
	for (i = 0; i < p->n_tools; i++)
		if (p->tools[i].def && p->tools[i].def->effect == TOOL_ACTUATE)
			err_at(L, L->tool_at[i].d, L->tool_at[i].ptr,
			       "expected a tool whose effect is observe or report in a report-only "
			       "policy (mode set in %s); found \"%s\", which actuates",
			       mode_file, p->tools[i].name);
	for (i = 0; i < p->net.n_connect; i++)
		if (!i || strcmp(L->connect_at[i].ptr, L->connect_at[i - 1].ptr) ||
		    L->connect_at[i].d != L->connect_at[i - 1].d)
			err_at(L, L->connect_at[i].d, L->connect_at[i].ptr,
			       "expected no network.connect rule in a report-only policy "
			       "(mode set in %s): reporting agents do not egress; found one",
			       mode_file);
	for (i = 0; i < p->net.n_proxy_hosts; i++)
		err_at(L, L->host_at[i].d, L->host_at[i].ptr,
		       "expected no proxy host in a report-only policy (mode set in %s): "
		       "reporting agents do not egress; found \"%s\"",
		       mode_file, p->net.proxy_hosts[i]);
}

static void apply_doc(struct loader *L, size_t doc)
{
	const struct jdoc *d = L->docs[doc];

	jdoc_check_keys(L->errs, d, "", d->root, top_keys);
	apply_scalars(L, d);
	apply_files(L, doc);
	apply_exec(L, d);
	apply_network(L, d);
	apply_tools(L, d);
	apply_limits(L, d);
	apply_env(L, d);
	apply_capabilities(L, d);
	apply_devices(L, d);
}

static int load(struct loader *L, struct jdoc *root, struct policy **out)
{
	size_t before = L->errs->n + L->errs->dropped, i;

	L->p = calloc(1, sizeof(*L->p));
	if (!L->p) {
		jdoc_free(root);
		return -ENOMEM;
	}
	L->p->path = dup_str(L, root->path);
	add_doc(L, root, 0);
	for (i = 0; i < L->ndocs; i++)
		merge_vars(L, L->docs[i]);
	for (i = 0; L->cli && i < L->cli->n; i++)
		set_var(L, L->cli->v[i].name, L->cli->v[i].value, true);
	for (i = 0; i < L->ndocs && !L->err; i++)
		apply_doc(L, i);
	if (!L->p->net.n_proxy_ports) {
		static const __u16 def[] = { 443, 80 };

		memcpy(L->p->net.proxy_ports, def, sizeof(def));
		L->p->net.n_proxy_ports = sizeof(def) / sizeof(def[0]);
	}
	check_report_only(L);
	if (!L->err && L->errs->n + L->errs->dropped != before)
		L->err = -EINVAL;
	if (!L->err) {
		*out = L->p;
		L->p = NULL;
	}
	for (i = 0; i < L->ndocs; i++)
		jdoc_free(L->docs[i]);
	free(L->vars);
	free(L->file_doc);
	free(L->tool_at);
	free(L->connect_at);
	free(L->host_at);
	policy_free(L->p);
	return L->err;
}

int policy_load(const char *path, const struct policy_vars *vars, const struct tools_registry *reg,
		struct policy **out, struct policy_errors *errs)
{
	struct loader L = { .errs = errs, .cli = vars, .reg = reg };
	struct jdoc *root;
	int err;

	*out = NULL;
	err = jdoc_load_file(path, &root, errs);
	if (err)
		return err;
	return load(&L, root, out);
}

int policy_load_buffer(const char *name, const char *buf, size_t len,
		       const struct policy_vars *vars, const struct tools_registry *reg,
		       struct policy **out, struct policy_errors *errs)
{
	struct loader L = { .errs = errs, .cli = vars, .reg = reg };
	struct jdoc *root;
	int err;

	*out = NULL;
	err = jdoc_load_buffer(name, buf, len, &root, errs);
	if (err)
		return err;
	return load(&L, root, out);
}

static void free_paths(struct policy_path *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		free(v[i].path);
	free(v);
}

void policy_free(struct policy *p)
{
	size_t i;

	if (!p)
		return;
	free(p->name);
	free(p->path);
	free_paths(p->files, p->n_files);
	free_paths(p->exec.allow, p->exec.n_allow);
	free(p->net.connect);
	for (i = 0; i < p->net.n_proxy_hosts; i++)
		free(p->net.proxy_hosts[i]);
	free(p->net.proxy_hosts);
	for (i = 0; i < p->n_tools; i++)
		free(p->tools[i].name);
	free(p->tools);
	for (i = 0; i < p->n_env; i++)
		free(p->env[i]);
	free(p->env);
	free(p);
}
