// SPDX-License-Identifier: GPL-2.0
/*
 * agentctl policy generate NAME: the agent's current policy with what its deny and would-deny
 * records show it needed (policy/generate.c; docs/POLICY.md, "Writing a policy"). Records come
 * through the verified reader, as agentctl audit query reads them: a log whose chain breaks
 * gives no policy at all.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "audit/audit.h"
#include "client.h"
#include "cmds.h"
#include "log.h"
#include "paths.h"
#include "policy/generate.h"

struct gen_args {
	const char *name;
	const char *dir;
	const char *policy;
	char **from;
	size_t nfrom;
	struct policy_var vars[32];
	size_t nvars;
	struct audit_filter filter;
	bool diff;
	struct gen_opts opts;
	struct ctl ctl;
};

static int gen_usage(void)
{
	log_err("usage: agentctl policy generate NAME [--since TIME] [--from FILE]... [--dir DIR]\n"
		"                                [--policy FILE] [--var NAME=VALUE]... [--diff]\n"
		"                                [--allow-broad] [--control PATH]\n");
	return EXIT_USAGE;
}

static int parse_var(struct gen_args *a, char *arg)
{
	char *eq = strchr(arg, '=');

	if (!eq || eq == arg || a->nvars == sizeof(a->vars) / sizeof(a->vars[0]))
		return -EINVAL;
	*eq = '\0';
	a->vars[a->nvars].name = arg;
	a->vars[a->nvars++].value = eq + 1;
	return 0;
}

static int parse_one(struct gen_args *a, char **argv, int *i, int argc)
{
	const char *opt = argv[*i];
	char *val = *i + 1 < argc ? argv[*i + 1] : NULL;

	if (!strcmp(opt, "--diff"))
		return a->diff = true, 0;
	if (!strcmp(opt, "--allow-broad"))
		return a->opts.allow_broad = true, 0;
	if (!val)
		return -EINVAL;
	++*i;
	if (!strcmp(opt, "--since"))
		return audit_filter_set(&a->filter, "since", val);
	if (!strcmp(opt, "--dir"))
		return a->dir = val, 0;
	if (!strcmp(opt, "--policy"))
		return a->policy = val, 0;
	if (!strcmp(opt, "--var"))
		return parse_var(a, val);
	if (!strcmp(opt, "--from")) {
		a->from[a->nfrom++] = val;
		return 0;
	}
	return -EINVAL;
}

static int parse_args(int argc, char **argv, struct gen_args *a)
{
	int i;

	argc = ctl_args(argc, argv, &a->ctl);
	audit_filter_init(&a->filter);
	a->from = calloc(argc, sizeof(*a->from));
	if (!a->from)
		return -ENOMEM;
	for (i = 1; i < argc; i++) {
		if (argv[i][0] != '-' && !a->name)
			a->name = argv[i];
		else if (argv[i][0] != '-' || parse_one(a, argv, &i, argc))
			return -EINVAL;
	}
	if (!a->name || !control_name_valid(a->name) || (a->dir && a->nfrom) ||
	    audit_filter_set(&a->filter, "agent", a->name))
		return -EINVAL;
	if (!a->dir && !a->nfrom)
		a->dir = PATH_AUDIT_DIR;
	return 0;
}

/* The agent's policy file, as agentd holds it: agent info. */
static int policy_from_daemon(struct gen_args *a, char *buf, size_t bufsz)
{
	struct control_request req = { .id = 1, .cmd = CONTROL_AGENT_INFO };
	const char *path;
	json_t *reply;
	int status;

	snprintf(req.name, sizeof(req.name), "%s", a->name);
	status = ctl_call(&a->ctl, &req, &reply);
	if (status) {
		log_err("no current policy for %s: give it with --policy FILE\n", a->name);
		return status;
	}
	path = json_string_value(json_object_get(json_object_get(reply, "agent"), "policy"));
	snprintf(buf, bufsz, "%s", path ? path : "");
	json_decref(reply);
	return path ? 0 : EXIT_FAIL;
}

/* extends names files beside the policy: made absolute, so the output loads from anywhere. */
static int absolute_extends(json_t *doc, const char *policy)
{
	json_t *ext = json_object_get(doc, "extends"), *e;
	char dir[PATH_MAX], *copy = strdup(policy), path[2 * PATH_MAX];
	size_t i;

	if (!copy || !realpath(dirname(copy), dir)) {
		free(copy);
		return -errno;
	}
	free(copy);
	json_array_foreach(ext, i, e)
	{
		if (!json_is_string(e) || json_string_value(e)[0] == '/')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, json_string_value(e));
		json_array_set_new(ext, i, json_string(path));
	}
	return 0;
}

static json_t *load_current(struct gen_args *a)
{
	char path[PATH_MAX];
	json_error_t jerr;
	json_t *doc;

	if (!a->policy && policy_from_daemon(a, path, sizeof(path)))
		return NULL;
	if (a->policy)
		snprintf(path, sizeof(path), "%s", a->policy);
	doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc || !json_is_object(doc)) {
		log_err("%s:%d:%d: %s (agentctl policy check %s)\n", path, jerr.line, jerr.column,
			doc ? "not a JSON object" : jerr.text, path);
		json_decref(doc);
		return NULL;
	}
	if (absolute_extends(doc, path)) {
		log_err("%s: cannot resolve its directory: %s\n", path, strerror(errno));
		json_decref(doc);
		return NULL;
	}
	return doc;
}

struct feed {
	struct gen *g;
	const struct audit_filter *filter;
	int err;
};

static void feed_record(void *ctx, const char *line, size_t len, json_t *rec)
{
	struct feed *f = ctx;
	int r;

	(void)line;
	(void)len;
	if (f->err || !audit_filter_match_json(f->filter, rec))
		return;
	r = gen_record(f->g, rec);
	if (r < 0)
		f->err = r;
}

static int read_records(struct gen_args *a, struct gen *g)
{
	struct feed f = { .g = g, .filter = &a->filter };
	struct audit_segments segs = { 0 };
	struct audit_verify_result res;
	int bad, err = a->dir ? audit_segments_list(a->dir, &segs) : 0;

	if (err) {
		log_err("cannot read the audit directory %s: %s\n", a->dir, strerror(-err));
		return EXIT_FAIL;
	}
	if (a->dir)
		bad = audit_verify_files_each(segs.paths, segs.n, NULL, 0, &res, feed_record, &f);
	else
		bad = audit_verify_files_each(a->from, a->nfrom, NULL, 0, &res, feed_record, &f);
	audit_segments_free(&segs);
	if (bad) {
		log_err("TAMPERED %s:%llu: seq %llu: %s: %s; no policy is generated from a log "
			"that does not verify (agentctl audit verify)\n",
			res.file, (unsigned long long)res.line, (unsigned long long)res.seq,
			audit_problem_name(res.problem), res.what);
		return res.problem == AUDIT_IO ? EXIT_FAIL : EXIT_NO;
	}
	return f.err ? EXIT_FAIL : 0;
}

static void print_skips(const struct gen *g)
{
	const struct gen_skip *s;
	size_t n, i;

	s = gen_skips(g, &n);
	for (i = 0; i < n; i++)
		log_warn("not granted: %s (%zu record%s): %s\n", s[i].what, s[i].count,
			 s[i].count == 1 ? "" : "s", s[i].why);
}

static int print_output(const struct gen_args *a, json_t *doc, json_t *changes)
{
	json_t *c;
	size_t i;

	if (!a->diff)
		return json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) ||
		       putchar('\n') == EOF;
	json_array_foreach(changes, i, c)
	{
		printf("%s\n", json_string_value(c));
	}
	return 0;
}

int policy_generate(int argc, char **argv)
{
	struct gen_args a = { .opts = { 0 } };
	struct policy_vars vars;
	json_t *cur = NULL, *doc = NULL, *changes = NULL;
	struct gen *g = NULL;
	int status = EXIT_FAIL;

	if (parse_args(argc, argv, &a)) {
		free(a.from);
		return gen_usage();
	}
	vars = (struct policy_vars){ .v = a.vars, .n = a.nvars };
	a.opts.vars = &vars;
	cur = load_current(&a);
	if (!cur)
		goto out;
	g = gen_new(cur, a.name, &a.opts);
	if (!g)
		goto out;
	status = read_records(&a, g);
	if (status)
		goto out;
	doc = gen_policy(g, &changes);
	status = !doc || print_output(&a, doc, changes) ? EXIT_FAIL : 0;
	print_skips(g);
out:
	json_decref(doc);
	json_decref(changes);
	json_decref(cur);
	gen_free(g);
	free(a.from);
	return status;
}
