// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "wire/broker_proto.h"

int broker_frame_check(const void *buf, size_t len, size_t max, size_t *payload_len)
{
	return frame_check(buf, len, max, payload_len);
}

int broker_frame_encode(const json_t *doc, size_t max, char **out, size_t *outlen)
{
	return frame_encode(doc, JSON_COMPACT | JSON_SORT_KEYS, max, out, outlen);
}

__attribute__((format(printf, 3, 4))) static int fail(struct broker_error *err, const char *code,
						      const char *fmt, ...)
{
	va_list ap;

	snprintf(err->code, sizeof(err->code), "%s", code);
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* [a-z0-9][a-z0-9._-]{0,63}, the registry's grammar for tool names. */
static bool tool_name_valid(const char *s, size_t len)
{
	size_t i;

	if (!len || len > TOOL_NAME_MAX ||
	    !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
		return false;
	for (i = 1; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '.' ||
		      s[i] == '_' || s[i] == '-'))
			return false;
	return true;
}

static int get_id(json_t *root, struct broker_request *req, struct broker_error *err)
{
	json_t *id = json_object_get(root, "id");

	if (!id)
		return 0;
	if (!json_is_integer(id) || json_integer_value(id) < 0 ||
	    json_integer_value(id) > BROKER_ID_MAX)
		return fail(err, BROKER_E_REQUEST, "\"id\" must be an integer from 0 to 2^53-1");
	req->id = json_integer_value(id);
	return 0;
}

static int get_args(json_t *args, struct broker_error *err)
{
	const char *key;
	json_t *v;

	if (!json_is_object(args))
		return fail(err, BROKER_E_REQUEST, "\"args\" must be an object");
	if (json_object_size(args) > BROKER_ARGS_MAX)
		return fail(err, BROKER_E_REQUEST, "\"args\": at most %d arguments",
			    BROKER_ARGS_MAX);
	json_object_foreach(args, key, v)
	{
		if (strlen(key) > BMSG_ARG_NAME_MAX)
			return fail(err, BROKER_E_REQUEST, "\"args\": names are at most %d bytes",
				    BMSG_ARG_NAME_MAX);
		if (!json_is_string(v) && !json_is_integer(v) && !json_is_boolean(v))
			return fail(err, BROKER_E_REQUEST,
				    "\"args\": \"%.32s\" must be a string, an integer or a boolean",
				    key);
	}
	return 0;
}

int broker_request_parse(const char *payload, size_t len, struct broker_request *req,
			 struct broker_error *err)
{
	json_t *root = json_loadb(payload, len, JSON_REJECT_DUPLICATES, NULL), *v;
	const char *key;
	int e;

	memset(req, 0, sizeof(*req));
	req->id = -1;
	if (!json_is_object(root)) {
		json_decref(root);
		return fail(err, BROKER_E_JSON, "the request is not a JSON object");
	}
	e = get_id(root, req, err);
	json_object_foreach(root, key, v)
	{
		if (e)
			break;
		if (!strcmp(key, "id"))
			continue;
		if (!strcmp(key, "tool")) {
			if (!json_is_string(v) ||
			    !tool_name_valid(json_string_value(v), json_string_length(v)))
				e = fail(
					err, BROKER_E_REQUEST,
					"\"tool\" must be a tool name ([a-z0-9][a-z0-9._-]{0,63})");
			else
				memcpy(req->tool, json_string_value(v), json_string_length(v) + 1);
		} else if (!strcmp(key, "args")) {
			e = get_args(v, err);
			if (!e)
				req->args = json_incref(v);
		} else {
			/* "agent" and its like included: the socket names the caller. */
			e = fail(err, BROKER_E_REQUEST,
				 "unknown key \"%.32s\" (want id, tool, args)", key);
		}
	}
	if (!e && !req->tool[0])
		e = fail(err, BROKER_E_REQUEST, "\"tool\" is missing");
	if (!e && !req->args) {
		req->args = json_object();
		if (!req->args)
			e = fail(err, BROKER_E_FAILED, "out of memory");
	}
	json_decref(root);
	if (e) {
		json_decref(req->args);
		req->args = NULL;
	}
	return e;
}

void broker_request_free(struct broker_request *req)
{
	json_decref(req->args);
	req->args = NULL;
}

json_t *broker_request_json(const struct broker_request *req)
{
	json_t *doc = json_pack("{s:s, s:O}", "tool", req->tool, "args", req->args);

	if (doc && req->id >= 0)
		json_object_set_new(doc, "id", json_integer(req->id));
	return doc;
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The bytes of an argument's value, in the encoding of struct bmsg_arg; false if none. */
static bool arg_value(const json_t *v, struct bmsg_arg *a, const void **data, __s64 *num,
		      __u8 *flag)
{
	if (json_is_string(v)) {
		*a = (struct bmsg_arg){ BMSG_ARG_STRING, 0, 0, (__u32)json_string_length(v) };
		*data = json_string_value(v);
	} else if (json_is_integer(v)) {
		*num = json_integer_value(v);
		*a = (struct bmsg_arg){ BMSG_ARG_INTEGER, 0, 0, sizeof(*num) };
		*data = num;
	} else if (json_is_boolean(v)) {
		*flag = json_is_true(v);
		*a = (struct bmsg_arg){ BMSG_ARG_BOOLEAN, 0, 0, 1 };
		*data = flag;
	} else {
		return false;
	}
	return true;
}

int broker_request_encode(const struct broker_request *req, char **out, size_t *outlen)
{
	struct bmsg_request h = { .id = req->id < 0 ? -1 : req->id };
	const char *keys[BROKER_ARGS_MAX], *key;
	size_t n = 0, len = sizeof(h), i, tl = strlen(req->tool);
	const void *data;
	struct bmsg_arg a;
	__s64 num;
	__u8 flag;
	char *buf, *p;
	json_t *v;

	*out = NULL;
	if (json_object_size(req->args) > BROKER_ARGS_MAX || !tl || tl > TOOL_NAME_MAX)
		return -EINVAL;
	json_object_foreach(req->args, key, v)
	{
		if (strlen(key) > BMSG_ARG_NAME_MAX || !arg_value(v, &a, &data, &num, &flag))
			return -EINVAL;
		keys[n++] = key;
		len += sizeof(a) + strlen(key) + a.value_len;
	}
	qsort(keys, n, sizeof(keys[0]), cmp_key);
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	h.nargs = n;
	h.tool_len = tl;
	memcpy(h.tool, req->tool, tl);
	memcpy(buf, &h, sizeof(h));
	p = buf + sizeof(h);
	for (i = 0; i < n; i++) {
		arg_value(json_object_get(req->args, keys[i]), &a, &data, &num, &flag);
		a.name_len = (__u8)strlen(keys[i]);
		memcpy(p, &a, sizeof(a));
		memcpy(p + sizeof(a), keys[i], a.name_len);
		memcpy(p + sizeof(a) + a.name_len, data, a.value_len);
		p += sizeof(a) + a.name_len + a.value_len;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

static bool all_zero(const char *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/* Names strictly ascending, bytewise (a prefix first): sorted, and no two alike. */
static bool after(const char *name, size_t len, const char *prev, size_t prev_len)
{
	int c = memcmp(prev, name, len < prev_len ? len : prev_len);

	return c < 0 || (c == 0 && prev_len < len);
}

/* One argument at *p (advanced past it) into req->args. */
static int decode_arg(const char **p, const char *end, unsigned i, const char **prev,
		      size_t *prev_len, struct broker_request *req, struct broker_error *err)
{
	char name[BMSG_ARG_NAME_MAX + 1];
	struct bmsg_arg a;
	const char *v;
	json_t *val = NULL;
	__s64 num;

	if ((size_t)(end - *p) < sizeof(a))
		return fail(err, BROKER_E_REQUEST, "argument %u: truncated", i);
	memcpy(&a, *p, sizeof(a));
	*p += sizeof(a);
	if (a.pad || (size_t)(end - *p) < a.name_len ||
	    (size_t)(end - *p) - a.name_len < a.value_len)
		return fail(err, BROKER_E_REQUEST, "argument %u: truncated or padded", i);
	if (memchr(*p, '\0', a.name_len) || (i && !after(*p, a.name_len, *prev, *prev_len)))
		return fail(err, BROKER_E_REQUEST, "argument %u: a NUL, or out of order", i);
	memcpy(name, *p, a.name_len);
	name[a.name_len] = '\0';
	*prev = *p;
	*prev_len = a.name_len;
	v = *p + a.name_len;
	*p = v + a.value_len;
	switch (a.type) {
	case BMSG_ARG_STRING:
		/* json_stringn() refuses what is not UTF-8; JSON text never held a NUL. */
		val = memchr(v, '\0', a.value_len) ? NULL : json_stringn(v, a.value_len);
		break;
	case BMSG_ARG_INTEGER:
		if (a.value_len == sizeof(num)) {
			memcpy(&num, v, sizeof(num));
			val = json_integer(num);
		}
		break;
	case BMSG_ARG_BOOLEAN:
		if (a.value_len == 1 && (v[0] == 0 || v[0] == 1))
			val = json_boolean(v[0]);
		break;
	}
	/* json_object_set_new() refuses a name that is not UTF-8 (and takes val either way). */
	if (!val || json_object_set_new(req->args, name, val))
		return fail(err, BROKER_E_REQUEST, "argument %u: a bad type, value or name", i);
	return 0;
}

int broker_request_decode(const void *buf, size_t len, struct broker_request *req,
			  struct broker_error *err)
{
	const char *p = (const char *)buf + sizeof(struct bmsg_request),
		   *end = (const char *)buf + len;
	const char *prev = NULL;
	struct bmsg_request h;
	size_t prev_len = 0;
	unsigned i;
	int e = 0;

	memset(req, 0, sizeof(*req));
	req->id = -1;
	if (len < sizeof(h))
		return fail(err, BROKER_E_REQUEST, "a request of %zu bytes, under its header", len);
	memcpy(&h, buf, sizeof(h));
	if (h.id < -1 || h.id > BROKER_ID_MAX || h.nargs > BROKER_ARGS_MAX ||
	    h.tool_len > TOOL_NAME_MAX || !tool_name_valid(h.tool, h.tool_len) ||
	    !all_zero(h.tool + h.tool_len, TOOL_NAME_MAX - h.tool_len))
		return fail(err, BROKER_E_REQUEST, "a request header out of range");
	req->id = h.id;
	memcpy(req->tool, h.tool, h.tool_len);
	req->args = json_object();
	if (!req->args)
		return fail(err, BROKER_E_FAILED, "out of memory");
	for (i = 0; !e && i < h.nargs; i++)
		e = decode_arg(&p, end, i, &prev, &prev_len, req, err);
	if (!e && p != end)
		e = fail(err, BROKER_E_REQUEST, "%zu bytes after the arguments", (size_t)(end - p));
	if (e)
		broker_request_free(req);
	return e;
}

static const struct tool_arg *find_arg(const struct tool *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->n_args; i++)
		if (!strcmp(t->args[i].name, name))
			return &t->args[i];
	return NULL;
}

static bool in_enum(const struct tool_arg *a, const char *s)
{
	size_t i;

	for (i = 0; i < a->n_enum; i++)
		if (!strcmp(a->enum_values[i], s))
			return true;
	return false;
}

static int check_string(const struct tool_arg *a, const json_t *v, struct broker_error *err)
{
	const char *s = json_string_value(v);

	if (json_string_length(v) > a->max_length)
		return fail(err, BROKER_E_ARGS, "\"%s\": longer than %zu bytes", a->name,
			    a->max_length);
	if (a->n_enum && !in_enum(a, s))
		return fail(err, BROKER_E_ARGS, "\"%s\": not one of the allowed values", a->name);
	if (a->pattern && !a->re)
		return fail(err, BROKER_E_ARGS, "\"%s\": the registry's pattern is not compiled",
			    a->name);
	if (a->re && regexec(a->re, s, 0, NULL, 0))
		return fail(err, BROKER_E_ARGS, "\"%s\": does not match the pattern %.64s", a->name,
			    a->pattern);
	return 0;
}

static int check_arg(const struct tool_arg *a, const json_t *v, struct broker_error *err)
{
	switch (a->type) {
	case TOOL_ARG_STRING:
		if (!json_is_string(v))
			return fail(err, BROKER_E_ARGS, "\"%s\": expected a string", a->name);
		return check_string(a, v, err);
	case TOOL_ARG_INTEGER:
		if (!json_is_integer(v))
			return fail(err, BROKER_E_ARGS, "\"%s\": expected an integer", a->name);
		return 0;
	case TOOL_ARG_BOOLEAN:
		if (!json_is_boolean(v))
			return fail(err, BROKER_E_ARGS, "\"%s\": expected a boolean", a->name);
		return 0;
	}
	return fail(err, BROKER_E_ARGS, "\"%s\": unknown type", a->name);
}

int broker_args_check(const struct tool *t, const json_t *args, struct broker_error *err)
{
	const char *key;
	json_t *v;
	size_t i;
	int e;

	if (!json_is_object(args))
		return fail(err, BROKER_E_ARGS, "the arguments are not an object");
	json_object_foreach((json_t *)args, key, v)
	{
		if (!find_arg(t, key))
			return fail(err, BROKER_E_ARGS, "\"%.32s\": %s takes no such argument", key,
				    t->name);
	}
	for (i = 0; i < t->n_args; i++) {
		v = json_object_get(args, t->args[i].name);
		if (!v)
			return fail(err, BROKER_E_ARGS, "\"%s\": missing", t->args[i].name);
		e = check_arg(&t->args[i], v, err);
		if (e)
			return e;
	}
	return 0;
}

const char *broker_arg_text(const json_t *args, const char *name, char *buf, size_t bufsz)
{
	json_t *v = json_object_get(args, name);

	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v)) {
		snprintf(buf, bufsz, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return buf;
	}
	if (json_is_boolean(v))
		return json_is_true(v) ? "true" : "false";
	return NULL;
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when it is not one. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	size_t want, i;
	unsigned cp;

	if (s[0] && s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		want = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		want = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		want = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n < want)
		return 0;
	for (i = 1; i < want; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((want == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (want == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return want;
}

/* The output as a JSON string: invalid UTF-8 and NULs become U+FFFD. */
static json_t *text_json(struct broker_output o)
{
	const unsigned char *s = (const unsigned char *)o.data;
	size_t i = 0, n = 0, k;
	json_t *v;
	char *buf;

	if (o.len > (SIZE_MAX - 1) / 3)
		return NULL;
	buf = malloc(o.len * 3 + 1);
	if (!buf)
		return NULL;
	while (i < o.len) {
		k = utf8_seq(s + i, o.len - i);
		if (k) {
			memcpy(buf + n, s + i, k);
			n += k, i += k;
		} else {
			memcpy(buf + n, "\xef\xbf\xbd", 3);
			n += 3, i++;
		}
	}
	v = json_stringn_nocheck(buf, n);
	free(buf);
	return v;
}

static json_t *id_json(long long id)
{
	return id < 0 ? json_null() : json_integer(id);
}

json_t *broker_reply_ok(long long id, int exit_code, struct broker_output out,
			struct broker_output err, bool truncated, unsigned redacted)
{
	json_t *so = text_json(out), *se = text_json(err);

	if (!so || !se) {
		json_decref(so);
		json_decref(se);
		return NULL;
	}
	return json_pack("{s:o, s:b, s:i, s:o, s:o, s:b, s:I}", "id", id_json(id), "ok", 1, "exit",
			 exit_code, "stdout", so, "stderr", se, "truncated", truncated, "redacted",
			 (json_int_t)redacted);
}

json_t *broker_reply_error(long long id, const char *code, const char *message)
{
	/* A message may quote a cut key: made valid text like output. */
	json_t *msg = text_json((struct broker_output){ message, strlen(message) });

	if (!msg)
		return NULL;
	return json_pack("{s:o, s:b, s:{s:s, s:o}}", "id", id_json(id), "ok", 0, "error", "code",
			 code, "message", msg);
}

static int reply_text(json_t *root, const char *key, char **out, size_t *len,
		      struct broker_reply *r)
{
	json_t *v = json_object_get(root, key);

	if (!json_is_string(v))
		return fail(&r->error, BROKER_E_JSON, "the reply's \"%s\" is not a string", key);
	*len = json_string_length(v);
	*out = malloc(*len + 1);
	if (!*out)
		return fail(&r->error, BROKER_E_FAILED, "out of memory");
	memcpy(*out, json_string_value(v), *len + 1);
	return 0;
}

static int reply_ok_fields(json_t *root, struct broker_reply *r)
{
	json_t *ex = json_object_get(root, "exit"), *tr = json_object_get(root, "truncated"),
	       *rd = json_object_get(root, "redacted");

	if (!json_is_integer(ex) || json_integer_value(ex) < 0 || json_integer_value(ex) > 255 ||
	    !json_is_boolean(tr) || !json_is_integer(rd) || json_integer_value(rd) < 0)
		return fail(&r->error, BROKER_E_JSON,
			    "an ok reply without exit (0-255), truncated and redacted");
	r->exit_code = (int)json_integer_value(ex);
	r->truncated = json_is_true(tr);
	r->redacted = (unsigned long long)json_integer_value(rd);
	if (reply_text(root, "stdout", &r->out, &r->out_len, r) ||
	    reply_text(root, "stderr", &r->err, &r->err_len, r))
		return -EINVAL;
	return 0;
}

static int reply_error_fields(json_t *root, struct broker_reply *r)
{
	json_t *e = json_object_get(root, "error");
	json_t *code = json_object_get(e, "code"), *msg = json_object_get(e, "message");

	if (!json_is_string(code) || !json_is_string(msg))
		return fail(&r->error, BROKER_E_JSON,
			    "an error reply without error.code and .message");
	fail(&r->error, json_string_value(code), "%s", json_string_value(msg));
	return 0;
}

int broker_reply_parse(const char *payload, size_t len, struct broker_reply *r)
{
	json_t *root = json_loadb(payload, len, JSON_REJECT_DUPLICATES, NULL), *id, *ok;
	int e;

	memset(r, 0, sizeof(*r));
	r->id = -1;
	if (!json_is_object(root)) {
		json_decref(root);
		return fail(&r->error, BROKER_E_JSON, "the reply is not a JSON object");
	}
	id = json_object_get(root, "id");
	ok = json_object_get(root, "ok");
	if (json_is_integer(id) && json_integer_value(id) >= 0)
		r->id = json_integer_value(id);
	if (!json_is_boolean(ok))
		e = fail(&r->error, BROKER_E_JSON, "the reply has no \"ok\"");
	else if (!json_is_null(id) && r->id < 0)
		e = fail(&r->error, BROKER_E_JSON, "the reply's \"id\" is not an id or null");
	else if ((r->ok = json_is_true(ok)))
		e = reply_ok_fields(root, r);
	else
		e = reply_error_fields(root, r);
	json_decref(root);
	if (e)
		broker_reply_free(r);
	return e;
}

void broker_reply_free(struct broker_reply *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}
