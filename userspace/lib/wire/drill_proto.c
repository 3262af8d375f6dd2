// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "boundary.h"
#include "wire/drill_proto.h"

static json_t *op_json(const struct drill_op *o, bool denied)
{
	json_t *j = json_pack("{s:s, s:s}", "op", o->op, "errno", o->err);

	if (j && denied)
		json_object_set_new(j, "escaped", json_boolean(o->escaped));
	return j;
}

json_t *drill_result_json(const struct drill_result *r)
{
	json_t *j = json_object(), *pids = json_array(), *denied = json_array();
	size_t i;

	if (!j || !pids || !denied || !boundary_name(r->boundary)) {
		json_decref(j);
		json_decref(pids);
		json_decref(denied);
		return NULL;
	}
	for (i = 0; i < r->n_pids; i++)
		json_array_append_new(pids, json_integer(r->pids[i]));
	for (i = 0; i < r->n_denied; i++)
		json_array_append_new(denied, op_json(&r->denied[i], true));
	json_object_set_new(j, "boundary", json_string(boundary_name(r->boundary)));
	json_object_set_new(j, "pids", pids);
	json_object_set_new(j, "denied", denied);
	json_object_set_new(j, "allowed",
			    r->has_allowed ? op_json(&r->allowed, false) : json_null());
	json_object_set_new(j, "why", json_string(r->why));
	return j;
}

static int bad(char *err, size_t errsz, const char *field, const char *problem)
{
	snprintf(err, errsz, "%s: %s", field, problem);
	return -EINVAL;
}

/* A string of fewer than outsz bytes into out. */
static int str_field(const json_t *o, const char *key, char *out, size_t outsz, char *err,
		     size_t errsz)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_string(v))
		return bad(err, errsz, key, "not a string");
	if (json_string_length(v) >= outsz || strlen(json_string_value(v)) != json_string_length(v))
		return bad(err, errsz, key, "too long or holds a NUL");
	memcpy(out, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

static int op_parse(const json_t *o, bool denied, struct drill_op *op, char *err, size_t errsz)
{
	const json_t *e = json_object_get(o, "escaped");

	if (!json_is_object(o) || json_object_size(o) != (denied ? 3 : 2))
		return bad(err, errsz, denied ? "denied[]" : "allowed",
			   "not an object of op, errno (and escaped)");
	if (str_field(o, "op", op->op, sizeof(op->op), err, errsz) ||
	    str_field(o, "errno", op->err, sizeof(op->err), err, errsz))
		return -EINVAL;
	if (denied && !json_is_boolean(e))
		return bad(err, errsz, "escaped", "not a boolean");
	op->escaped = denied && json_is_true(e);
	return 0;
}

static int pids_parse(const json_t *a, struct drill_result *r, char *err, size_t errsz)
{
	const json_t *v;
	size_t i;

	if (!json_is_array(a) || json_array_size(a) > DRILL_PIDS_MAX)
		return bad(err, errsz, "pids", "not an array of at most 8");
	json_array_foreach(a, i, v)
	{
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > 4194304)
			return bad(err, errsz, "pids", "not a pid");
		r->pids[r->n_pids++] = (int)json_integer_value(v);
	}
	return 0;
}

static int fields_parse(const json_t *j, struct drill_result *r, char *err, size_t errsz)
{
	const json_t *denied = json_object_get(j, "denied"),
		     *allowed = json_object_get(j, "allowed"), *v;
	char name[32];
	size_t i;

	if (json_object_size(j) != 5)
		return bad(err, errsz, "result", "not boundary, pids, denied, allowed and why");
	if (str_field(j, "boundary", name, sizeof(name), err, errsz))
		return -EINVAL;
	r->boundary = boundary_from_name(name);
	if (r->boundary < 0)
		return bad(err, errsz, "boundary", "no such boundary");
	if (pids_parse(json_object_get(j, "pids"), r, err, errsz))
		return -EINVAL;
	if (!json_is_array(denied) || json_array_size(denied) > DRILL_OPS_MAX)
		return bad(err, errsz, "denied", "not an array of at most 24");
	json_array_foreach(denied, i, v)
	{
		if (op_parse(v, true, &r->denied[r->n_denied], err, errsz))
			return -EINVAL;
		r->n_denied++;
	}
	r->has_allowed = !json_is_null(allowed);
	if (r->has_allowed && op_parse(allowed, false, &r->allowed, err, errsz))
		return -EINVAL;
	if (str_field(j, "why", r->why, sizeof(r->why), err, errsz))
		return -EINVAL;
	if (!r->n_denied == !r->why[0])
		return bad(err, errsz, "why", "given with denied operations, or missing without");
	return 0;
}

int drill_result_parse(const char *line, size_t len, struct drill_result *r, char *err,
		       size_t errsz)
{
	json_error_t jerr;
	json_t *j;
	int ret;

	memset(r, 0, sizeof(*r));
	if (len > DRILL_LINE_MAX)
		return bad(err, errsz, "line", "too long");
	j = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!j)
		return bad(err, errsz, "line", jerr.text);
	ret = json_is_object(j) ? fields_parse(j, r, err, errsz)
				: bad(err, errsz, "line", "not an object");
	json_decref(j);
	return ret;
}
