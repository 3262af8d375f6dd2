// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include "policy/tools.h"

struct ctx {
	struct policy_errors *errs;
	const struct jdoc *d;
	int err; /* -ENOMEM once an allocation failed */
};

static const char *const tool_keys[] = { "name",    "effect",	  "exec", "builtin",  "args",
					 "timeout", "output_cap", "env",  "secrets",  "limits",
					 "uid",	    "gid",	  "user", "programs", "description",
					 "network", NULL };
static const char *const arg_keys[] = { "type", "max_length", "pattern", "enum", NULL };
static const char *const effects[] = { "observe", "report", "actuate" };
static const char *const arg_types[] = { "string", "integer", "boolean" };
static const char *const builtins[] = { "noop", "report", NULL };

const char *tool_effect_name(enum tool_effect effect)
{
	return effect <= TOOL_ACTUATE ? effects[effect] : "?";
}

static char *dup_str(struct ctx *c, const char *s)
{
	char *r = strdup(s);

	if (!r)
		c->err = -ENOMEM;
	return r;
}

static void *alloc_array(struct ctx *c, size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		c->err = -ENOMEM;
	return p;
}

/* [a-z0-9][a-z0-9._-]{0,63}: also the grammar policies use to name tools. */
static bool tool_name_ok(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789._-");

	return n && n == strlen(s) && n <= TOOL_NAME_MAX && strchr("._-", s[0]) == NULL;
}

/* [a-z_][a-z0-9_]{0,31} */
static bool arg_name_ok(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_");

	return n && n == strlen(s) && n <= 32 && !(s[0] >= '0' && s[0] <= '9');
}

/* [A-Z_][A-Z0-9_]{0,127} */
static bool env_name_ok(const char *s)
{
	size_t n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");

	return n && n == strlen(s) && n <= 128 && !(s[0] >= '0' && s[0] <= '9');
}

static int one_of(const char *s, const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

static bool get_string(struct ctx *c, const char *ptr, const json_t *v, const char *what)
{
	return jdoc_expect(c->errs, c->d, ptr, v, JSON_STRING, what);
}

/* The value of obj[key] when it has the type, reporting a wrong type; at gets its pointer. */
static json_t *field(struct ctx *c, const char *ptr, const json_t *obj, const char *key,
		     json_type type, const char *what, char *at)
{
	json_t *v = json_object_get(obj, key);

	jptr_key(at, ptr, key);
	if (!v || !jdoc_expect(c->errs, c->d, at, v, type, what))
		return NULL;
	return v;
}

#define PATTERN_LEN_MAX 512
#define PATTERN_REPEAT_MAX 255
#define PATTERN_DEPTH_MAX 32
#define PATTERN_COST_MAX 300

/* Past a bracket expression starting at re[i] ('['); returns the index after its ']'. */
static size_t skip_bracket(const char *re, size_t i)
{
	i++;
	if (re[i] == '^')
		i++;
	if (re[i] == ']')
		i++;
	for (; re[i] && re[i] != ']'; i++) {
		if (re[i] == '[' && (re[i + 1] == ':' || re[i + 1] == '.' || re[i + 1] == '=')) {
			const char *end = strchr(re + i + 2, re[i + 1]);

			i = end && end[1] == ']' ? (size_t)(end + 1 - re) : i + 1;
		}
	}
	return re[i] ? i + 1 : i;
}

/*
 * Why a pattern would make regcomp() build an automaton too big for an untrusted file (a
 * registry is a file an operator may take from elsewhere), or NULL: glibc copies a quantified
 * atom or group once per repetition, so "(a{100}){100}" or a run of stacked quantifiers costs
 * memory exponential in the pattern's length. The estimate counts those copies.
 */
static const char *pattern_too_complex(const char *re)
{
	unsigned long sum = 0, last = 0, stack[PATTERN_DEPTH_MAX], k, m;
	bool quantified = false, inner[PATTERN_DEPTH_MAX + 1] = { false }, group_inner = false;
	int depth = 0;
	size_t i = 0;
	char *end;

	if (strlen(re) > PATTERN_LEN_MAX)
		return "longer than 512 bytes";
	while (re[i]) {
		char ch = re[i];
		bool interval = ch == '{' && re[i + 1] >= '0' && re[i + 1] <= '9';

		if (ch == '*' || ch == '+' || ch == '?' || interval) {
			if (quantified)
				return "a quantifier applied to a quantifier";
			/* glibc's matcher takes time exponential in such nesting (measured:
			 * "(a{1,255}){1,30}b$" on 4 KiB of "a" ran past 20 s). */
			if (group_inner)
				return "a repeated group that holds a repetition (nested "
				       "repetition "
				       "is outside the safe subset)";
			inner[depth] = true;
			k = 2;
			i++;
			if (interval) {
				k = strtoul(re + i, &end, 10);
				m = k + 1;
				if (*end == ',')
					m = end[1] >= '0' && end[1] <= '9'
						    ? strtoul(end + 1, &end, 10)
						    : (end++, k + 1);
				if (k > PATTERN_REPEAT_MAX || m > PATTERN_REPEAT_MAX + 1)
					return "a repetition count above 255";
				k = k > m ? k : m;
				i = *end == '}' ? (size_t)(end + 1 - re) : (size_t)(end - re);
			}
			sum += last * (k ? k - 1 : 0);
			last *= k ? k : 1;
			quantified = true;
			group_inner = false;
		} else {
			quantified = false;
			group_inner = false;
			if (ch == '(') {
				if (depth == PATTERN_DEPTH_MAX)
					return "groups nested deeper than 32";
				stack[depth++] = sum;
				inner[depth] = false;
				sum = 0;
				i++;
				continue;
			}
			if (ch == ')' && depth > 0) {
				last = sum + 1;
				sum = stack[--depth] + last;
				group_inner = inner[depth + 1];
				inner[depth] |= group_inner;
				i++;
				continue;
			}
			if (ch == '|') {
				last = 0;
				i++;
				continue;
			}
			if (ch == '[')
				i = skip_bracket(re, i);
			else
				i += ch == '\\' && re[i + 1] ? 2 : 1;
			last = 1;
			sum++;
		}
		if (sum > PATTERN_COST_MAX || last > PATTERN_COST_MAX)
			return "too complex (more than 300 states once its repetitions are "
			       "expanded)";
	}
	return NULL;
}

static void enum_error(struct ctx *c, const char *at, const json_t *v, const char *list)
{
	char found[80];

	jdoc_err(c->errs, c->d, at, "expected one of %s; found %s", list,
		 jdoc_found(v, found, sizeof(found)));
}

static void parse_arg(struct ctx *c, const char *ptr, const char *name, const json_t *o,
		      struct tool_arg *a)
{
	char at[JPTR_MAX], el[JPTR_MAX], found[80], rerr[128];
	const char *why;
	json_t *v, *e;
	regex_t re;
	size_t i;
	int t, rc;

	a->name = dup_str(c, name);
	a->max_length = TOOL_ARG_MAX_LENGTH_DEFAULT;
	if (!arg_name_ok(name))
		jdoc_err(c->errs, c->d, ptr,
			 "expected an argument name matching [a-z_][a-z0-9_]{0,31}; found \"%s\"",
			 name);
	if (!jdoc_expect(c->errs, c->d, ptr, o, JSON_OBJECT, "an object"))
		return;
	jdoc_check_keys(c->errs, c->d, ptr, o, arg_keys);
	v = json_object_get(o, "type");
	jptr_key(at, ptr, "type");
	if (!v)
		jdoc_err(c->errs, c->d, at,
			 "missing required field; expected string, integer or boolean");
	else if (get_string(c, at, v, "string, integer or boolean")) {
		t = one_of(json_string_value(v), arg_types, 3);
		if (t < 0)
			enum_error(c, at, v, "string, integer, boolean");
		a->type = t < 0 ? TOOL_ARG_STRING : (enum tool_arg_type)t;
		if (t > 0 && (json_object_get(o, "max_length") || json_object_get(o, "pattern") ||
			      json_object_get(o, "enum")))
			jdoc_err(c->errs, c->d, ptr,
				 "max_length, pattern and enum apply to string arguments only");
	}
	v = field(c, ptr, o, "max_length", JSON_INTEGER, "an integer from 1 to 1048576", at);
	if (v) {
		if (json_integer_value(v) < 1 || json_integer_value(v) > 1 << 20)
			jdoc_err(c->errs, c->d, at,
				 "expected an integer from 1 to 1048576; found %s",
				 jdoc_found(v, found, sizeof(found)));
		else
			a->max_length = json_integer_value(v);
	}
	v = field(c, ptr, o, "pattern", JSON_STRING, "a POSIX extended regular expression", at);
	if (v && (why = pattern_too_complex(json_string_value(v)))) {
		jdoc_err(c->errs, c->d, at, "expected a pattern of bounded size; found one %s",
			 why);
	} else if (v) {
		rc = regcomp(&re, json_string_value(v), REG_EXTENDED | REG_NOSUB);
		if (rc) {
			regerror(rc, &re, rerr, sizeof(rerr));
			jdoc_err(c->errs, c->d, at,
				 "expected a POSIX extended regular expression; found %s (%s)",
				 jdoc_found(v, found, sizeof(found)), rerr);
		} else if (!(a->re = malloc(sizeof(re)))) {
			regfree(&re);
			c->err = -ENOMEM;
		} else {
			*a->re = re;
			a->pattern = dup_str(c, json_string_value(v));
		}
	}
	v = field(c, ptr, o, "enum", JSON_ARRAY, "an array of strings", at);
	if (v) {
		if (!json_array_size(v))
			jdoc_err(c->errs, c->d, at,
				 "expected a non-empty array of strings; found []");
		a->enum_values = alloc_array(c, json_array_size(v), sizeof(char *));
		if (!a->enum_values)
			return;
		json_array_foreach(v, i, e)
		{
			jptr_idx(el, at, i);
			if (get_string(c, el, e, "a string"))
				a->enum_values[a->n_enum++] = dup_str(c, json_string_value(e));
		}
	}
}

static const struct tool_arg *find_arg(const struct tool *t, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < t->n_args; i++)
		if (t->args[i].name && strlen(t->args[i].name) == len &&
		    !strncmp(t->args[i].name, name, len))
			return &t->args[i];
	return NULL;
}

/* Every "{" in an exec element opens a placeholder naming a declared argument. */
static void check_placeholders(struct ctx *c, const char *at, const struct tool *t, const char *s)
{
	const char *p = s, *end;

	while ((p = strpbrk(p, "{}"))) {
		end = *p == '{' ? strchr(p, '}') : NULL;
		if (!end) {
			jdoc_err(c->errs, c->d, at,
				 "expected {name} placeholders; found an unmatched '%c' in \"%s\"",
				 *p, s);
			return;
		}
		if (!find_arg(t, p + 1, end - p - 1)) {
			jdoc_err(c->errs, c->d, at,
				 "expected a placeholder naming a declared argument; found "
				 "\"{%.*s}\"",
				 (int)(end - p - 1), p + 1);
		}
		p = end + 1;
	}
}

static char **string_list(struct ctx *c, const char *at, const json_t *arr, size_t *n,
			  bool (*ok)(const char *), const char *what)
{
	char el[JPTR_MAX], found[80];
	char **out;
	json_t *e;
	size_t i;

	out = alloc_array(c, json_array_size(arr), sizeof(char *));
	if (!out)
		return NULL;
	json_array_foreach(arr, i, e)
	{
		jptr_idx(el, at, i);
		if (!get_string(c, el, e, what))
			continue;
		if (ok && !ok(json_string_value(e))) {
			jdoc_err(c->errs, c->d, el, "expected %s; found %s", what,
				 jdoc_found(e, found, sizeof(found)));
			continue;
		}
		out[(*n)++] = dup_str(c, json_string_value(e));
	}
	return out;
}

static void parse_exec(struct ctx *c, const char *at, const json_t *v, struct tool *t)
{
	char el[JPTR_MAX];
	size_t i;

	if (!json_array_size(v)) {
		jdoc_err(c->errs, c->d, at, "expected a non-empty argv array; found []");
		return;
	}
	t->exec = string_list(c, at, v, &t->n_exec, NULL, "a string");
	if (c->err || !t->exec || t->n_exec != json_array_size(v))
		return;
	jptr_idx(el, at, 0);
	if (t->exec[0][0] != '/' || strpbrk(t->exec[0], "{}"))
		jdoc_err(c->errs, c->d, el,
			 "expected an absolute program path without placeholders; found \"%s\"",
			 t->exec[0]);
	for (i = 1; i < t->n_exec; i++) {
		jptr_idx(el, at, i);
		check_placeholders(c, el, t, t->exec[i]);
	}
}

static void parse_env(struct ctx *c, const char *at, const json_t *v, struct tool *t)
{
	char el[JPTR_MAX];
	const char *k;
	json_t *e;

	t->env = alloc_array(c, json_object_size(v), sizeof(char *));
	if (!t->env)
		return;
	json_object_foreach((json_t *)v, k, e)
	{
		jptr_key(el, at, k);
		if (!env_name_ok(k))
			jdoc_err(c->errs, c->d, el,
				 "expected a variable name matching [A-Z_][A-Z0-9_]*; found \"%s\"",
				 k);
		else if (get_string(c, el, e, "a string") &&
			 asprintf(&t->env[t->n_env++], "%s=%s", k, json_string_value(e)) < 0) {
			t->env[--t->n_env] = NULL;
			c->err = -ENOMEM;
		}
	}
}

static void parse_effect(struct ctx *c, const char *ptr, const json_t *o, struct tool *t)
{
	char at[JPTR_MAX];
	json_t *v;
	int e;

	jptr_key(at, ptr, "effect");
	v = json_object_get(o, "effect");
	if (!v) {
		jdoc_err(c->errs, c->d, at,
			 "missing required field; expected observe, report or actuate");
		return;
	}
	if (!get_string(c, at, v, "observe, report or actuate"))
		return;
	e = one_of(json_string_value(v), effects, 3);
	if (e < 0)
		enum_error(c, at, v, "observe, report, actuate");
	/* An unknown effect is treated as the most dangerous one. */
	t->effect = e < 0 ? TOOL_ACTUATE : (enum tool_effect)e;
}

/* "uid" and "gid" (default: the uid): the ids an exec tool runs as, instead of root. */
static void parse_ids(struct ctx *c, const char *ptr, const json_t *o, struct tool *t, bool builtin)
{
	static const char *const keys[] = { "uid", "gid" };
	unsigned int *ids[] = { &t->uid, &t->gid };
	char at[JPTR_MAX], found[80];
	json_t *v;
	size_t i;

	for (i = 0; i < 2; i++) {
		v = field(c, ptr, o, keys[i], JSON_INTEGER, "an integer id", at);
		if (v && builtin)
			jdoc_err(c->errs, c->d, at, "a builtin runs in agentd: it takes no %s",
				 keys[i]);
		else if (v && (json_integer_value(v) < 1 || json_integer_value(v) > TOOL_ID_MAX))
			jdoc_err(c->errs, c->d, at, "expected an id from 1 to %u; found %s",
				 TOOL_ID_MAX, jdoc_found(v, found, sizeof(found)));
		else if (v)
			*ids[i] = (unsigned int)json_integer_value(v);
	}
	if (t->gid && !t->uid)
		jdoc_err(c->errs, c->d, ptr, "a gid without a uid: the tool would keep root's uid");
	if (t->uid && !t->gid)
		t->gid = t->uid;
	v = field(c, ptr, o, "user", JSON_STRING, "\"root\"", at);
	if (v && strcmp(json_string_value(v), "root"))
		enum_error(c, at, v, "\"root\" (other users are given by uid)");
	else if (v && (builtin || t->uid))
		jdoc_err(c->errs, c->d, at, "%s",
			 builtin ? "a builtin runs in agentd: it takes no user"
				 : "expected either user or uid; found both");
	else if (v)
		t->root = true;
}

static bool abs_path_ok(const char *s)
{
	return s[0] == '/' && !strpbrk(s, "{}");
}

/* "programs": what the tool may execute besides exec[0] (its Landlock exec rights). */
static void parse_programs(struct ctx *c, const char *ptr, const json_t *o, struct tool *t,
			   bool builtin)
{
	char at[JPTR_MAX];
	json_t *v = field(c, ptr, o, "programs", JSON_ARRAY, "an array of absolute paths", at);

	if (v && builtin)
		jdoc_err(c->errs, c->d, at, "a builtin runs in agentd: it takes no programs");
	else if (v)
		t->programs = string_list(c, at, v, &t->n_programs, abs_path_ok,
					  "an absolute path without placeholders");
}

/* "network": "none" (the default) or "public" (docs/BROKER.md). */
static void parse_network(struct ctx *c, const char *ptr, const json_t *o, struct tool *t,
			  bool builtin)
{
	static const char *const nets[] = { "none", "public" };
	char at[JPTR_MAX];
	json_t *v = field(c, ptr, o, "network", JSON_STRING, "\"none\" or \"public\"", at);
	int n;

	if (!v)
		return;
	if (builtin) {
		jdoc_err(c->errs, c->d, at, "a builtin runs in agentd: it takes no network");
		return;
	}
	n = one_of(json_string_value(v), nets, 2);
	if (n < 0)
		enum_error(c, at, v, "none, public");
	t->network_public = n == 1;
}

static void parse_tool(struct ctx *c, const char *ptr, const json_t *o, struct tool *t)
{
	char at[JPTR_MAX], found[80];
	const char *k;
	json_t *v, *e;
	int has_exec, has_builtin;
	unsigned long long secs;

	t->effect = TOOL_ACTUATE;
	t->timeout_sec = TOOL_TIMEOUT_DEFAULT;
	t->output_cap = TOOL_OUTPUT_CAP_DEFAULT;
	if (!jdoc_expect(c->errs, c->d, ptr, o, JSON_OBJECT, "an object"))
		return;
	jdoc_check_keys(c->errs, c->d, ptr, o, tool_keys);
	v = field(c, ptr, o, "name", JSON_STRING, "a tool name", at);
	if (!json_object_get(o, "name"))
		jdoc_err(c->errs, c->d, at, "missing required field; expected a tool name");
	if (v && !tool_name_ok(json_string_value(v)))
		jdoc_err(c->errs, c->d, at,
			 "expected a tool name matching [a-z0-9][a-z0-9._-]{0,63}; found %s",
			 jdoc_found(v, found, sizeof(found)));
	else if (v && !strcmp(json_string_value(v), TOOLS_LIST_NAME))
		jdoc_err(c->errs, c->d, at,
			 "\"%s\" is reserved: the broker answers it with the agent's tools",
			 TOOLS_LIST_NAME);
	else if (v)
		t->name = dup_str(c, json_string_value(v));
	v = field(c, ptr, o, "description", JSON_STRING, "a string", at);
	if (v && json_string_length(v) > TOOL_DESCRIPTION_MAX)
		jdoc_err(c->errs, c->d, at, "expected at most %d bytes; found %zu",
			 TOOL_DESCRIPTION_MAX, json_string_length(v));
	else if (v)
		t->description = dup_str(c, json_string_value(v));
	parse_effect(c, ptr, o, t);
	v = field(c, ptr, o, "args", JSON_OBJECT, "an object", at);
	if (v) {
		t->args = alloc_array(c, json_object_size(v), sizeof(*t->args));
		if (!t->args)
			return;
		json_object_foreach(v, k, e)
		{
			char el[JPTR_MAX];

			jptr_key(el, at, k);
			parse_arg(c, el, k, e, &t->args[t->n_args++]);
		}
	}
	has_exec = json_object_get(o, "exec") != NULL;
	has_builtin = json_object_get(o, "builtin") != NULL;
	if (has_exec == has_builtin)
		jdoc_err(c->errs, c->d, ptr, "expected exactly one of exec, builtin; found %s",
			 has_exec ? "both" : "neither");
	v = field(c, ptr, o, "exec", JSON_ARRAY, "an argv array of strings", at);
	if (v)
		parse_exec(c, at, v, t);
	v = field(c, ptr, o, "builtin", JSON_STRING, "noop or report", at);
	if (v && one_of(json_string_value(v), builtins, 2) < 0)
		enum_error(c, at, v, "noop, report");
	else if (v)
		t->builtin = dup_str(c, json_string_value(v));
	v = json_object_get(o, "timeout");
	jptr_key(at, ptr, "timeout");
	if (v && jdoc_duration(c->errs, c->d, at, v, TOOL_TIMEOUT_MAX, &secs))
		t->timeout_sec = secs;
	v = field(c, ptr, o, "output_cap", JSON_INTEGER, "an integer of bytes", at);
	if (v && (json_integer_value(v) < 1 || json_integer_value(v) > TOOL_OUTPUT_CAP_MAX))
		jdoc_err(c->errs, c->d, at, "expected an integer from 1 to %d; found %s",
			 TOOL_OUTPUT_CAP_MAX, jdoc_found(v, found, sizeof(found)));
	else if (v)
		t->output_cap = json_integer_value(v);
	v = field(c, ptr, o, "env", JSON_OBJECT, "an object of strings", at);
	if (v)
		parse_env(c, at, v, t);
	v = field(c, ptr, o, "secrets", JSON_ARRAY, "an array of variable names", at);
	if (v)
		t->secrets = string_list(c, at, v, &t->n_secrets, env_name_ok,
					 "a variable name matching [A-Z_][A-Z0-9_]*");
	parse_ids(c, ptr, o, t, has_builtin);
	parse_programs(c, ptr, o, t, has_builtin);
	parse_network(c, ptr, o, t, has_builtin);
	v = field(c, ptr, o, "limits", JSON_OBJECT, "an object", at);
	if (v && has_builtin)
		jdoc_err(c->errs, c->d, at, "a builtin runs in agentd: it takes no limits");
	else if (v)
		jdoc_limits(c->errs, c->d, at, v, 0, &t->limits); /* a tool's: no wall clock */
}

static void parse_registry(struct ctx *c, struct tools_registry *reg)
{
	static const char *const top_keys[] = { "tools", NULL };
	char at[JPTR_MAX], el[JPTR_MAX], name_at[JPTR_MAX];
	json_t *arr, *o;
	size_t i, j;

	jdoc_check_keys(c->errs, c->d, "", c->d->root, top_keys);
	arr = field(c, "", c->d->root, "tools", JSON_ARRAY, "an array of tools", at);
	if (!json_object_get(c->d->root, "tools"))
		jdoc_err(c->errs, c->d, at, "missing required field; expected an array of tools");
	if (!arr)
		return;
	reg->tools = alloc_array(c, json_array_size(arr), sizeof(*reg->tools));
	if (!reg->tools)
		return;
	json_array_foreach(arr, i, o)
	{
		jptr_idx(el, at, i);
		parse_tool(c, el, o, &reg->tools[reg->n++]);
		for (j = 0; reg->tools[i].name && j < i; j++)
			if (reg->tools[j].name && !strcmp(reg->tools[j].name, reg->tools[i].name)) {
				jptr_key(name_at, el, "name");
				jdoc_err(c->errs, c->d, name_at,
					 "expected a unique name; found \"%s\" again (first at "
					 "/tools/%zu)",
					 reg->tools[i].name, j);
			}
	}
}

static int load_doc(struct jdoc *d, struct tools_registry **out, struct policy_errors *errs)
{
	struct ctx c = { .errs = errs, .d = d };
	size_t before = errs->n + errs->dropped;
	struct tools_registry *reg;

	reg = calloc(1, sizeof(*reg));
	if (!reg)
		return -ENOMEM;
	reg->path = strdup(d->path);
	if (!reg->path)
		c.err = -ENOMEM;
	else
		parse_registry(&c, reg);
	if (!c.err && errs->n + errs->dropped != before)
		c.err = -EINVAL;
	if (c.err) {
		tools_free(reg);
		return c.err;
	}
	*out = reg;
	return 0;
}

int tools_load(const char *path, struct tools_registry **out, struct policy_errors *errs)
{
	struct jdoc *d;
	int err;

	*out = NULL;
	err = jdoc_load_file(path, &d, errs);
	if (err)
		return err;
	err = load_doc(d, out, errs);
	jdoc_free(d);
	return err;
}

int tools_load_buffer(const char *name, const char *buf, size_t len, struct tools_registry **out,
		      struct policy_errors *errs)
{
	struct jdoc *d;
	int err;

	*out = NULL;
	err = jdoc_load_buffer(name, buf, len, &d, errs);
	if (err)
		return err;
	err = load_doc(d, out, errs);
	jdoc_free(d);
	return err;
}

const struct tool *tools_find(const struct tools_registry *reg, const char *name)
{
	size_t i;

	for (i = 0; reg && i < reg->n; i++)
		if (reg->tools[i].name && !strcmp(reg->tools[i].name, name))
			return &reg->tools[i];
	return NULL;
}

static void free_strings(char **v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

void tools_free(struct tools_registry *reg)
{
	struct tool *t;
	size_t i, j;

	if (!reg)
		return;
	for (i = 0; i < reg->n; i++) {
		t = &reg->tools[i];
		free(t->name);
		free(t->description);
		free_strings(t->exec, t->n_exec);
		free(t->builtin);
		for (j = 0; j < t->n_args; j++) {
			free(t->args[j].name);
			free(t->args[j].pattern);
			if (t->args[j].re)
				regfree(t->args[j].re);
			free(t->args[j].re);
			free_strings(t->args[j].enum_values, t->args[j].n_enum);
		}
		free(t->args);
		free_strings(t->env, t->n_env);
		free_strings(t->secrets, t->n_secrets);
		free_strings(t->programs, t->n_programs);
	}
	free(reg->tools);
	free(reg->path);
	free(reg);
}

static json_t *arg_schema(const struct tool_arg *a)
{
	static const char *const types[] = { "string", "integer", "boolean" };
	json_t *o = json_pack("{ss}", "type", types[a->type]), *e;
	size_t i;

	if (!o || a->type != TOOL_ARG_STRING)
		return o;
	if (json_object_set_new(o, "maxLength", json_integer((json_int_t)a->max_length)) ||
	    (a->pattern && json_object_set_new(o, "pattern", json_string(a->pattern))))
		goto err_free;
	if (a->n_enum) {
		e = json_array();
		if (json_object_set_new(o, "enum", e))
			goto err_free;
		for (i = 0; i < a->n_enum; i++)
			if (json_array_append_new(e, json_string(a->enum_values[i])))
				goto err_free;
	}
	return o;
err_free:
	json_decref(o);
	return NULL;
}

json_t *tool_input_schema(const struct tool *t)
{
	json_t *schema, *props = json_object(), *req = json_array();
	size_t i;

	schema = json_pack("{ss so so sb}", "type", "object", "properties", props, "required", req,
			   "additionalProperties", 0);
	if (!schema)
		return NULL;
	for (i = 0; i < t->n_args; i++)
		if (json_object_set_new(props, t->args[i].name, arg_schema(&t->args[i])) ||
		    json_array_append_new(req, json_string(t->args[i].name))) {
			json_decref(schema);
			return NULL;
		}
	return schema;
}
