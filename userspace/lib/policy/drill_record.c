// SPDX-License-Identifier: GPL-2.0
/* The drill record (drill_record.h): every field checked, errors placed at their line and column. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "policy/drill_record.h"
#include "policy/jsonpos.h"

#define DRILL_FILE_MAX (1 << 20)

struct reader {
	const char *name, *buf;
	size_t len;
	char *err;
	size_t errsz;
};

static const char *const verdicts[] = {
	[DRILL_NONE] = "never drilled",	     [DRILL_BLOCKED] = "blocked",
	[DRILL_ESCAPED] = "escaped",	     [DRILL_ALLOW_FAILED] = "allow-failed",
	[DRILL_NOT_DRILLED] = "not-drilled",
};

const char *drill_verdict_name(enum drill_verdict v)
{
	return (size_t)v < sizeof(verdicts) / sizeof(verdicts[0]) ? verdicts[v] : "?";
}

/* "NAME:LINE:COLUMN: pointer: message", the place of the value at pointer. */
__attribute__((format(printf, 3, 4))) static int bad(const struct reader *rd, const char *pointer,
						     const char *fmt, ...)
{
	int line = 1, column = 1, n;
	va_list ap;

	jsonpos_locate(rd->buf, rd->len, pointer, &line, &column);
	n = snprintf(rd->err, rd->errsz, "%s:%d:%d: %s: ", rd->name, line, column,
		     pointer[0] ? pointer : "/");
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < rd->errsz)
		vsnprintf(rd->err + n, rd->errsz - n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A string member (optional: absent gives ""), at most size - 1 bytes, no NUL inside. */
static int get_str(const struct reader *rd, const json_t *obj, const char *key, const char *at,
		   bool required, char *out, size_t size)
{
	const json_t *v = json_object_get(obj, key);
	char pointer[128];

	snprintf(pointer, sizeof(pointer), "%s/%s", at, key);
	out[0] = '\0';
	if (!v && !required)
		return 0;
	if (!v)
		return bad(rd, at, "\"%s\" is missing", key);
	if (!json_is_string(v))
		return bad(rd, pointer, "must be a string");
	if (json_string_length(v) >= size || strlen(json_string_value(v)) != json_string_length(v))
		return bad(rd, pointer, "longer than %zu bytes, or holds a NUL", size - 1);
	memcpy(out, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

/* "YYYY-MM-DDTHH:MM:SS[.fraction]Z", UTC; *sec the seconds since the epoch. */
static int parse_time(const char *s, __s64 *sec)
{
	struct tm tm = {};
	const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);

	if (!p)
		return -EINVAL;
	if (*p == '.') {
		if (!strchr("0123456789", p[1]) || !p[1])
			return -EINVAL;
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	}
	if (strcmp(p, "Z"))
		return -EINVAL;
	*sec = timegm(&tm);
	return 0;
}

static int get_time(const struct reader *rd, const json_t *doc, const char *key, char *out,
		    __s64 *sec)
{
	char pointer[32];
	__s64 ignored;
	int err = get_str(rd, doc, key, "", true, out, DRILL_TIME_MAX);

	snprintf(pointer, sizeof(pointer), "/%s", key);
	if (!err && parse_time(out, sec ? sec : &ignored))
		err = bad(rd, pointer, "not a UTC time (2026-12-03T15:00:02.1Z)");
	return err;
}

static enum drill_verdict verdict_of(const char *s)
{
	size_t i;

	for (i = DRILL_BLOCKED; i < sizeof(verdicts) / sizeof(verdicts[0]); i++)
		if (!strcmp(s, verdicts[i]))
			return i;
	return DRILL_NONE;
}

/* "denied": {"op", "errno", "layer"}, or absent. */
static int get_denied(const struct reader *rd, const json_t *e, const char *at,
		      struct drill_boundary *b)
{
	const json_t *d = json_object_get(e, "denied");
	char pointer[64];

	snprintf(pointer, sizeof(pointer), "%s/denied", at);
	if (!d)
		return 0;
	if (!json_is_object(d))
		return bad(rd, pointer, "must be an object");
	return get_str(rd, d, "op", pointer, false, b->denied_op, sizeof(b->denied_op)) ?:
		       get_str(rd, d, "errno", pointer, false, b->denied_errno,
			       sizeof(b->denied_errno)) ?:
		       get_str(rd, d, "layer", pointer, false, b->layer, sizeof(b->layer));
}

static int get_boundary(const struct reader *rd, const json_t *e, size_t i, struct drill_record *r)
{
	char at[48], name[32], verdict[32];
	const json_t *allowed;
	struct drill_boundary *b;
	int which, err;

	snprintf(at, sizeof(at), "/boundaries/%zu", i);
	if (!json_is_object(e))
		return bad(rd, at, "must be an object");
	err = get_str(rd, e, "boundary", at, true, name, sizeof(name))
		      ?: get_str(rd, e, "verdict", at, true, verdict, sizeof(verdict));
	if (err)
		return err;
	which = boundary_from_name(name);
	snprintf(at + strlen(at), sizeof(at) - strlen(at), "/boundary");
	if (which < 0)
		return bad(rd, at, "no boundary \"%s\" (userspace/lib/boundary.h)", name);
	b = &r->b[which];
	if (b->verdict != DRILL_NONE)
		return bad(rd, at, "boundary \"%s\" appears twice", name);
	snprintf(at, sizeof(at), "/boundaries/%zu", i);
	b->verdict = verdict_of(verdict);
	if (b->verdict == DRILL_NONE)
		return bad(rd, at,
			   "verdict \"%s\" is none of blocked, escaped, allow-failed, "
			   "not-drilled",
			   verdict);
	allowed = json_object_get(e, "allowed");
	if (allowed && !json_is_object(allowed))
		return bad(rd, at, "\"allowed\" must be an object");
	return get_denied(rd, e, at, b) ?: get_str(rd, e, "why", at, false, b->why, sizeof(b->why));
}

static int get_generation(const struct reader *rd, const json_t *doc, __u32 *gen)
{
	const json_t *v = json_object_get(doc, "generation");

	if (!v)
		return bad(rd, "", "\"generation\" is missing");
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > 0xffffffffLL)
		return bad(rd, "/generation", "must be an integer from 1 to 4294967295");
	*gen = (__u32)json_integer_value(v);
	return 0;
}

static int get_all(const struct reader *rd, const json_t *doc, struct drill_record *r)
{
	const json_t *list, *e;
	size_t i;
	int err;

	if (!json_is_object(doc))
		return bad(rd, "", "must be an object");
	err = get_str(rd, doc, "agent", "", true, r->agent, sizeof(r->agent)) ?:
		      get_generation(rd, doc, &r->generation) ?:
		      get_str(rd, doc, "policy_digest", "", true, r->policy_digest,
			      sizeof(r->policy_digest)) ?:
		      get_time(rd, doc, "started", r->started, NULL) ?:
		      get_time(rd, doc, "ended", r->ended, &r->ended_sec);
	if (err)
		return err;
	list = json_object_get(doc, "boundaries");
	if (!json_is_array(list))
		return bad(rd, list ? "/boundaries" : "", "\"boundaries\" must be an array");
	json_array_foreach(list, i, e)
	{
		err = get_boundary(rd, e, i, r);
		if (err)
			return err;
	}
	return 0;
}

int drill_record_parse(const char *name, const char *buf, size_t len, struct drill_record *r,
		       char *err, size_t errsz)
{
	struct reader rd = { name, buf, len, err, errsz };
	json_error_t jerr;
	json_t *doc;
	int ret;

	memset(r, 0, sizeof(*r));
	doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		snprintf(err, errsz, "%s:%d:%d: %s", name, jerr.line, jerr.column, jerr.text);
		return -EINVAL;
	}
	ret = get_all(&rd, doc, r);
	json_decref(doc);
	return ret;
}

int drill_record_load(const char *state_dir, const char *agent, struct drill_record *r, char *err,
		      size_t errsz)
{
	char path[4200], *buf = malloc(DRILL_FILE_MAX);
	ssize_t n = 0, got;
	int fd, ret;

	snprintf(path, sizeof(path), "%s/drill/%s.json", state_dir, agent);
	fd = buf ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
	if (fd < 0) {
		ret = buf ? -errno : -ENOMEM;
		if (ret != -ENOENT)
			snprintf(err, errsz, "%s: %s", path, strerror(-ret));
		free(buf);
		return ret;
	}
	while ((got = read(fd, buf + n, DRILL_FILE_MAX - n)) > 0)
		n += got;
	ret = got < 0 ? -errno : n == DRILL_FILE_MAX ? -EFBIG : 0;
	close(fd);
	if (ret)
		snprintf(err, errsz, "%s: %s", path, strerror(-ret));
	else
		ret = drill_record_parse(path, buf, n, r, err, errsz);
	free(buf);
	return ret;
}
