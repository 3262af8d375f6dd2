// SPDX-License-Identifier: GPL-2.0
/* agentctl policy check: validates policy files without root and without the daemon;
 * agentctl policy reload: asks the daemon to apply them again. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "client.h"
#include "cmds.h"
#include "sandbox/landlock.h"
#include "sandbox/layers.h"
#include "log.h"
#include "policy/load.h"
#include "policy/policy.h"
#include "kernel/probe.h"

#define DEFAULT_TOOLS "policies/tools.json"

struct check_opts {
	const char *tools; /* --tools, or NULL for the default search */
	struct policy_var *vars;
	size_t nvars;
	bool json;
	bool layers_given; /* --layers: print what these layers cannot enforce */
	struct layers layers;
};

static int usage(void)
{
	log_err("usage: agentctl policy check [--tools FILE] [--var NAME=VALUE]...\n"
		"                             [--layers LAYER,...] [--json] FILE...\n"
		"       agentctl policy reload [NAME] [--json] [--control PATH]\n"
		"       agentctl policy generate NAME [--since TIME] [--from FILE]... [--diff]\n"
		"                                [--policy FILE] [--allow-broad] (docs/POLICY.md)\n"
		"  --layers  print what the policy asks that these layers cannot enforce (the "
		"gap):\n"
		"            bpf-lsm, cgroup, landlock (this kernel's ABI; landlock:N for ABI N),\n"
		"            seccomp; the gap does not change the exit status (docs/LAYERS.md)\n");
	return EXIT_USAGE;
}

/* --tools, else tools.json beside the policy, else policies/tools.json; NULL when none exists. */
static const char *tools_path(const struct check_opts *o, const char *policy, char *buf,
			      size_t bufsz)
{
	char *copy;

	if (o->tools)
		return o->tools;
	copy = strdup(policy);
	if (!copy)
		return NULL;
	snprintf(buf, bufsz, "%s/tools.json", dirname(copy));
	free(copy);
	if (!access(buf, F_OK))
		return buf;
	return access(DEFAULT_TOOLS, F_OK) ? NULL : DEFAULT_TOOLS;
}

static json_t *errors_json(const struct policy_errors *errs)
{
	json_t *arr = json_array(), *e;
	size_t i;

	for (i = 0; arr && i < errs->n; i++) {
		e = json_pack("{s:s, s:i, s:i, s:s, s:s}", "file", errs->v[i].file, "line",
			      errs->v[i].line, "column", errs->v[i].column, "pointer",
			      errs->v[i].pointer, "message", errs->v[i].msg);
		json_array_append_new(arr, e);
	}
	return arr;
}

/* Valid as a template: every error is a default path missing here, for --var to name. */
static bool template_only(const struct policy_errors *errs)
{
	size_t i;

	for (i = 0; i < errs->n; i++)
		if (!errs->v[i].needs_var)
			return false;
	return errs->n && !errs->dropped;
}

/* --layers for policy p: Landlock is not applied to a policy in shadow mode. */
static struct layers policy_layers(const struct check_opts *o, const struct policy *p)
{
	struct layers l = o->layers;

	l.shadow = p->mode == POLICY_MODE_SHADOW;
	return l;
}

static json_t *result_json(const struct check_opts *o, const char *file, const struct policy *p,
			   const struct policy_errors *errs)
{
	json_t *r;

	if (!p && template_only(errs))
		return json_pack("{s:s, s:b, s:b, s:o}", "file", file, "valid", 1, "template", 1,
				 "needs_var", errors_json(errs));
	if (!p)
		return json_pack("{s:s, s:b, s:o, s:I}", "file", file, "valid", 0, "errors",
				 errors_json(errs), "errors_dropped", (json_int_t)errs->dropped);
	r = json_pack("{s:s, s:b, s:s, s:s, s:{s:I, s:I, s:I, s:I, s:I}, s:[]}", "file", file,
		      "valid", 1, "name", p->name, "mode", policy_mode_name(p->mode), "counts",
		      "files", (json_int_t)p->n_files, "exec", (json_int_t)p->exec.n_allow,
		      "connect", (json_int_t)p->net.n_connect, "proxy_hosts",
		      (json_int_t)p->net.n_proxy_hosts, "tools", (json_int_t)p->n_tools, "errors");
	if (r && o->layers_given) {
		struct layers l = policy_layers(o, p);

		json_object_set_new(r, "enforcement", layers_json(p, &l));
	}
	return r;
}

/* The gap for --layers, one line per rule. */
static int print_gap(const struct check_opts *o, const char *file, const struct policy *p)
{
	struct layers l = policy_layers(o, p);
	char names[128];
	struct gap g;
	size_t i;

	if (layers_gap(p, &l, &g))
		return -ENOMEM;
	layers_format(&o->layers, names, sizeof(names));
	if (!g.n && l.shadow)
		printf("%s: shadow mode under %s: the agent's own rules record would-deny and "
		       "allow; self-protection and the structural network deny are enforced\n",
		       file, names);
	else if (!g.n)
		printf("%s: every rule is enforced by %s\n", file, names);
	else
		printf("%s: %zu rule%s NOT ENFORCED by %s:\n", file, g.n, g.n == 1 ? "" : "s",
		       names);
	for (i = 0; i < g.n; i++)
		printf("  %s: %s\n", g.v[i].rule, g.v[i].why);
	gap_free(&g);
	return 0;
}

static void print_result(const char *file, const struct policy *p, const struct policy_errors *errs)
{
	char line[2048];
	size_t i;

	if (p) {
		printf("%s: ok (%s, mode %s: %zu file rules, %zu exec paths, %zu connect rules, "
		       "%zu proxy hosts, %zu tools)\n",
		       file, p->name, policy_mode_name(p->mode), p->n_files, p->exec.n_allow,
		       p->net.n_connect, p->net.n_proxy_hosts, p->n_tools);
		return;
	}
	for (i = 0; i < errs->n; i++) {
		policy_error_format(&errs->v[i], line, sizeof(line));
		printf("%s\n", line);
	}
	if (template_only(errs)) {
		printf("%s: ok as a template (%zu path%s to name with --var)\n", file, errs->n,
		       errs->n == 1 ? "" : "s");
		return;
	}
	if (errs->dropped)
		printf("%s: %zu more errors not shown\n", file, errs->dropped);
	printf("%s: invalid (%zu error%s)\n", file, errs->n + errs->dropped,
	       errs->n + errs->dropped == 1 ? "" : "s");
}

/* A tool that runs as root ("user": "root") is outside its caller's uid and keeps root's
 * capabilities: said on a warning line per tool, and in --json as "warnings". */
static void warn_root_tools(const char *file, const struct tool *const *tools, size_t n,
			    json_t *result)
{
	json_t *arr = result ? json_array() : NULL;
	char line[512];
	size_t i;

	for (i = 0; i < n; i++) {
		if (!tools[i] || !tools[i]->root)
			continue;
		snprintf(line, sizeof(line),
			 "tool \"%s\" runs as root (\"user\": \"root\" in the registry): with "
			 "root's capabilities, only its caller's files",
			 tools[i]->name);
		if (arr)
			json_array_append_new(arr, json_string(line));
		else
			printf("%s: warning: %s\n", file, line);
	}
	if (arr)
		json_object_set_new(result, "warnings", arr);
}

static void warn_policy_tools(const char *file, const struct policy *p, json_t *result)
{
	const struct tool **defs = calloc(p->n_tools + 1, sizeof(*defs));
	size_t i;

	if (!defs)
		return;
	for (i = 0; i < p->n_tools; i++)
		defs[i] = p->tools[i].def;
	warn_root_tools(file, defs, p->n_tools, result);
	free(defs);
}

static void warn_registry(const char *file, const struct tools_registry *reg, json_t *result)
{
	const struct tool **defs = calloc(reg->n + 1, sizeof(*defs));
	size_t i;

	if (!defs)
		return;
	for (i = 0; i < reg->n; i++)
		defs[i] = &reg->tools[i];
	warn_root_tools(file, defs, reg->n, result);
	free(defs);
}

/* A file named tools.json is a registry, so that a glob of policies/ checks everything there. */
static int check_registry(const char *file, json_t *results)
{
	struct policy_errors errs = { 0 };
	struct tools_registry *reg;
	int err;

	err = tools_load(file, &reg, &errs);
	if (results && err)
		json_array_append_new(results, result_json(NULL, file, NULL, &errs));
	else if (results) {
		json_t *r = json_pack("{s:s, s:b, s:s, s:I, s:[]}", "file", file, "valid", 1,
				      "registry", "tools", "tools", (json_int_t)reg->n, "errors");

		if (r)
			warn_registry(file, reg, r);
		json_array_append_new(results, r);
	} else if (err) {
		print_result(file, NULL, &errs);
	} else {
		printf("%s: ok (tools registry: %zu tools)\n", file, reg->n);
		warn_registry(file, reg, NULL);
	}
	tools_free(reg);
	policy_errors_clear(&errs);
	if (err == -ENOMEM)
		return EXIT_FAIL;
	return err ? EXIT_NO : 0;
}

/* Checks one file; returns 0 valid, EXIT_NO invalid, EXIT_FAIL out of memory. */
static int check_one(const struct check_opts *o, const char *file, json_t *results)
{
	struct policy_vars vars = { .v = o->vars, .n = o->nvars };
	struct policy_source src = { .path = file,
				     .vars = &vars,
				     .no_tools = "(no tools.json found)" };
	struct policy_errors errs = { 0 };
	struct tools_registry *reg = NULL;
	struct policy *p = NULL;
	char buf[PATH_MAX], *copy;
	int err;

	copy = strdup(file);
	if (!copy)
		return EXIT_FAIL;
	err = !strcmp(basename(copy), "tools.json");
	free(copy);
	if (err)
		return check_registry(file, results);
	src.tools = tools_path(o, file, buf, sizeof(buf));
	err = policy_load_full(&src, &p, &reg, &errs);
	if (results) {
		json_t *r = result_json(o, file, p, &errs);

		if (r && p)
			warn_policy_tools(file, p, r);
		json_array_append_new(results, r);
	} else {
		print_result(file, p, &errs);
		if (p)
			warn_policy_tools(file, p, NULL);
	}
	if (p && !results && o->layers_given && print_gap(o, file, p))
		err = -ENOMEM;
	if (!p && err != -ENOMEM && template_only(&errs))
		err = 0;
	policy_free(p);
	tools_free(reg);
	policy_errors_clear(&errs);
	if (err == -ENOMEM)
		return EXIT_FAIL;
	return err ? EXIT_NO : 0;
}

static int add_var(struct check_opts *o, char *arg)
{
	char *eq = strchr(arg, '=');
	struct policy_var *v;

	if (!eq || eq == arg)
		return -EINVAL;
	v = realloc(o->vars, (o->nvars + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	*eq = '\0';
	v[o->nvars].name = arg;
	v[o->nvars++].value = eq + 1;
	o->vars = v;
	return 0;
}

static int parse_opts(struct check_opts *o, int argc, char **argv, int *first)
{
	int i, abi;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j")) {
			o->json = true;
		} else if (!strcmp(argv[i], "--tools") && i + 1 < argc) {
			o->tools = argv[++i];
		} else if (!strcmp(argv[i], "--layers") && i + 1 < argc) {
			abi = probe_landlock_abi();
			if (layers_parse(argv[++i], abi > 0 ? abi : LANDLOCK_ABI_KNOWN, &o->layers))
				return -EINVAL;
			o->layers_given = true;
		} else if (!strcmp(argv[i], "--var") && i + 1 < argc) {
			if (add_var(o, argv[++i]))
				return -EINVAL;
		} else {
			return -EINVAL;
		}
	}
	*first = i;
	return i < argc ? 0 : -EINVAL;
}

static int do_check(int argc, char **argv)
{
	struct check_opts o = { 0 };
	json_t *results = NULL;
	int i, first, r, status = 0;

	if (parse_opts(&o, argc, argv, &first)) {
		free(o.vars);
		return usage();
	}
	if (o.json) {
		results = json_array();
		if (!results) {
			free(o.vars);
			return EXIT_FAIL;
		}
	}
	for (i = first; i < argc; i++) {
		r = check_one(&o, argv[i], results);
		if (r > status)
			status = r;
	}
	if (results) {
		json_dumpf(results, stdout, JSON_INDENT(2));
		printf("\n");
		json_decref(results);
	}
	free(o.vars);
	return status;
}

/* Atomic per request: every policy named is compiled before any is applied. */
static int do_reload(int argc, char **argv)
{
	struct control_request req = { .id = 1, .cmd = CONTROL_POLICY_RELOAD };
	json_t *reply, *a;
	struct ctl c;
	int status;
	size_t i;

	argc = ctl_args(argc, argv, &c);
	if (argc > 2 || (argc == 2 && !control_name_valid(argv[1])))
		return usage();
	if (argc == 2)
		strcpy(req.name, argv[1]);
	status = ctl_call(&c, &req, &reply);
	if (status)
		return status;
	if (c.json)
		ctl_print_json(reply);
	json_array_foreach(c.json ? NULL : json_object_get(reply, "agents"), i, a)
	{
		printf("agent %s: policy reloaded, generation %lld\n",
		       json_string_value(json_object_get(a, "name")),
		       json_integer_value(json_object_get(a, "generation")));
	}
	json_decref(reply);
	return 0;
}

int do_policy(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "check"))
		return do_check(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "reload"))
		return do_reload(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "generate"))
		return policy_generate(argc - 1, argv + 1);
	return usage();
}
