// SPDX-License-Identifier: GPL-2.0
/*
 * The fields of grant.add and grant.rm (docs/CONTROL.md): the kind of grant and its target, the
 * rights of a path grant, its duration or once. Checked here for shape; agentd resolves the
 * target (a path to its object, a CIDR and port to a key) and says what it cannot.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "wire/control.h"

static const char *const kinds[] = { "path", "exec", "connect", "host", "tool" };

__attribute__((format(printf, 2, 3))) static int fail(struct control_error *err, const char *fmt,
						      ...)
{
	va_list ap;

	snprintf(err->code, sizeof(err->code), "%s", CONTROL_E_REQUEST);
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int get_str(json_t *v, const char *key, char *out, size_t outsz, struct control_error *err)
{
	if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) >= outsz ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return fail(err, "\"%s\" must be a string of 1 to %zu bytes", key, outsz - 1);
	memcpy(out, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

static int get_kind(json_t *v, struct control_request *req, struct control_error *err)
{
	size_t i;
	int e = get_str(v, "kind", req->grant.kind, sizeof(req->grant.kind), err);

	if (e)
		return fail(err, "\"kind\" must be path, exec, connect, host or tool");
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(req->grant.kind, kinds[i]))
			return 0;
	return fail(err, "\"kind\" must be path, exec, connect, host or tool");
}

static int get_int(json_t *v, const char *key, long long max, long long *out,
		   struct control_error *err)
{
	if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > max)
		return fail(err, "\"%s\" must be an integer from 1 to %lld", key, max);
	*out = json_integer_value(v);
	return 0;
}

int control_grant_arg(const char *key, json_t *v, struct control_request *req,
		      struct control_error *err)
{
	struct control_grant *g = &req->grant;
	bool add = req->cmd == CONTROL_GRANT_ADD;

	if (add && !strcmp(key, "kind"))
		return get_kind(v, req, err);
	if (add && !strcmp(key, "target"))
		return get_str(v, key, g->target, sizeof(g->target), err);
	if (add && !strcmp(key, "rights"))
		return get_str(v, key, g->rights, sizeof(g->rights), err);
	if (add && !strcmp(key, "for_ms"))
		return get_int(v, key, CONTROL_GRANT_FOR_MAX_MS, &g->for_ms, err);
	if (add && !strcmp(key, "once")) {
		if (!json_is_boolean(v))
			return fail(err, "\"once\" must be true or false");
		g->once = json_is_true(v);
		return 0;
	}
	if (!add && !strcmp(key, "grant"))
		return get_int(v, key, CONTROL_ID_MAX, &g->id, err);
	return 1;
}

int control_grant_check(const struct control_request *req, struct control_error *err)
{
	const struct control_grant *g = &req->grant;
	bool path = !strcmp(g->kind, "path");

	if (req->cmd == CONTROL_GRANT_RM)
		return g->id ? 0 : fail(err, "grant.rm needs \"grant\"");
	if (!g->kind[0] || !g->target[0])
		return fail(err, "grant.add needs \"kind\" and \"target\"");
	if (path != !!g->rights[0])
		return fail(err, path ? "a path grant needs \"rights\""
				      : "only a path grant takes \"rights\"");
	if (!g->for_ms && !g->once)
		return fail(err, "grant.add needs \"for_ms\" or \"once\": a grant ends");
	return 0;
}

void control_grant_json(const struct control_request *req, json_t *doc)
{
	const struct control_grant *g = &req->grant;

	if (g->kind[0])
		json_object_set_new(doc, "kind", json_string(g->kind));
	if (g->target[0])
		json_object_set_new(doc, "target", json_string(g->target));
	if (g->rights[0])
		json_object_set_new(doc, "rights", json_string(g->rights));
	if (g->for_ms)
		json_object_set_new(doc, "for_ms", json_integer(g->for_ms));
	if (g->once)
		json_object_set_new(doc, "once", json_true());
	if (g->id)
		json_object_set_new(doc, "grant", json_integer(g->id));
}
