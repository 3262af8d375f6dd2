// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kernel/cglimits.h"
#include "policy/jsondoc.h"
#include "policy/jsonpos.h"

#define FOUND_MAX 64

void policy_errors_clear(struct policy_errors *errs)
{
	size_t i;

	if (!errs)
		return;
	for (i = 0; i < errs->n; i++) {
		free(errs->v[i].file);
		free(errs->v[i].pointer);
		free(errs->v[i].msg);
	}
	free(errs->v);
	errs->v = NULL;
	errs->n = 0;
	errs->dropped = 0;
}

int policy_error_format(const struct policy_error *e, char *buf, size_t bufsz)
{
	if (!e->line)
		return snprintf(buf, bufsz, "%s: %s", e->file, e->msg);
	if (!*e->pointer)
		return snprintf(buf, bufsz, "%s:%d:%d: %s", e->file, e->line, e->column, e->msg);
	return snprintf(buf, bufsz, "%s:%d:%d: %s: %s", e->file, e->line, e->column, e->pointer,
			e->msg);
}

static void add_error(struct policy_errors *errs, const char *file, int line, int column,
		      const char *ptr, const char *msg)
{
	struct policy_error *v, *e;

	if (errs->n == POLICY_ERRORS_MAX)
		goto drop;
	v = realloc(errs->v, (errs->n + 1) * sizeof(*v));
	if (!v)
		goto drop;
	errs->v = v;
	e = &v[errs->n];
	*e = (struct policy_error){ 0 };
	e->file = strdup(file);
	e->pointer = strdup(ptr);
	e->msg = strdup(msg);
	e->line = line;
	e->column = column;
	if (!e->file || !e->pointer || !e->msg) {
		free(e->file);
		free(e->pointer);
		free(e->msg);
		goto drop;
	}
	errs->n++;
	return;
drop:
	errs->dropped++;
}

void jdoc_err(struct policy_errors *errs, const struct jdoc *d, const char *ptr, const char *fmt,
	      ...)
{
	char msg[1024], at[JPTR_MAX], *slash;
	int line = 0, column = 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(at, sizeof(at), "%s", ptr);
	/* A missing field has no place of its own: point at the object that lacks it. */
	while (jsonpos_locate(d->buf, d->len, at, &line, &column)) {
		slash = strrchr(at, '/');
		if (!slash) {
			line = column = 1;
			break;
		}
		*slash = '\0';
	}
	add_error(errs, d->path, line, column, ptr, msg);
}

const char *jdoc_found(const json_t *v, char *buf, size_t bufsz)
{
	char *s;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	default:
		break;
	}
	s = json_dumps(v, JSON_ENCODE_ANY);
	if (!s)
		return "a value";
	if (strlen(s) > FOUND_MAX)
		snprintf(buf, bufsz, "%.*s...", FOUND_MAX, s);
	else
		snprintf(buf, bufsz, "%s", s);
	free(s);
	return buf;
}

void jptr_key(char *out, const char *ptr, const char *key)
{
	size_t n = snprintf(out, JPTR_MAX, "%s/", ptr);

	for (; *key && n + 3 < JPTR_MAX; key++) {
		if (*key == '~' || *key == '/') {
			out[n++] = '~';
			out[n++] = *key == '~' ? '0' : '1';
		} else {
			out[n++] = *key;
		}
	}
	out[n < JPTR_MAX ? n : JPTR_MAX - 1] = '\0';
}

void jptr_idx(char *out, const char *ptr, size_t idx)
{
	snprintf(out, JPTR_MAX, "%s/%zu", ptr, idx);
}

bool jdoc_expect(struct policy_errors *errs, const struct jdoc *d, const char *ptr, const json_t *v,
		 json_type type, const char *what)
{
	char found[FOUND_MAX + 8];

	if (json_typeof(v) == type || (type == JSON_TRUE && json_is_boolean(v)))
		return true;
	jdoc_err(errs, d, ptr, "expected %s; found %s", what, jdoc_found(v, found, sizeof(found)));
	return false;
}

static bool key_allowed(const char *key, const char *const *allowed)
{
	for (; *allowed; allowed++)
		if (!strcmp(key, *allowed))
			return true;
	return false;
}

bool jdoc_check_keys(struct policy_errors *errs, const struct jdoc *d, const char *ptr,
		     const json_t *obj, const char *const *allowed)
{
	char at[JPTR_MAX], list[512] = "";
	const char *const *a;
	const char *key;
	json_t *v;
	bool ok = true;

	for (a = allowed; *a; a++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
			 a == allowed ? "" : ", ", *a);
	json_object_foreach((json_t *)obj, key, v)
	{
		if (key_allowed(key, allowed))
			continue;
		jptr_key(at, ptr, key);
		jdoc_err(errs, d, at, "unknown field; expected one of %s", list);
		ok = false;
	}
	return ok;
}

unsigned long long jdoc_scaled(const char *s, const char *units, const unsigned long long *mult,
			       unsigned long long max)
{
	unsigned long long v = 0;
	const char *u;

	if (*s < '0' || *s > '9')
		return 0;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (max - (*s - '0')) / 10)
			return 0;
		v = v * 10 + (*s - '0');
	}
	if (!*s)
		return v;
	u = strchr(units, *s);
	if (!u || s[1] || v > max / mult[u - units])
		return 0;
	return v * mult[u - units];
}

bool jdoc_duration(struct policy_errors *errs, const struct jdoc *d, const char *ptr,
		   const json_t *v, unsigned long long max, unsigned long long *out)
{
	static const unsigned long long mult[] = { 1, 60, 3600 };
	char found[FOUND_MAX + 8];

	*out = 0;
	if (json_is_string(v))
		*out = jdoc_scaled(json_string_value(v), "smh", mult, max);
	else if (json_is_integer(v) && json_integer_value(v) > 0 &&
		 (unsigned long long)json_integer_value(v) <= max)
		*out = json_integer_value(v);
	if (*out)
		return true;
	jdoc_err(errs, d, ptr,
		 "expected a duration from 1s to %llus, as \"30s\", \"10m\" or \"2h\"; found %s",
		 max, jdoc_found(v, found, sizeof(found)));
	return false;
}

static int parse_into(struct jdoc *d, struct policy_errors *errs)
{
	json_error_t jerr;

	d->root = json_loadb(d->buf, d->len, JSON_REJECT_DUPLICATES, &jerr);
	if (!d->root) {
		add_error(errs, d->path, jerr.line > 0 ? jerr.line : 1,
			  jerr.column > 0 ? jerr.column : 1, "", jerr.text);
		return -EINVAL;
	}
	if (!json_is_object(d->root)) {
		jdoc_expect(errs, d, "", d->root, JSON_OBJECT, "an object");
		return -EINVAL;
	}
	return 0;
}

static struct jdoc *jdoc_new(const char *path)
{
	struct jdoc *d = calloc(1, sizeof(*d));
	char *tmp;

	if (!d)
		return NULL;
	d->path = strdup(path);
	tmp = strdup(path);
	if (d->path && tmp)
		d->dir = strdup(dirname(tmp));
	free(tmp);
	if (!d->dir) {
		jdoc_free(d);
		return NULL;
	}
	return d;
}

static int read_regular(int fd, struct jdoc *d)
{
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (st.st_size > JDOC_MAX_SIZE)
		return -EFBIG;
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	d->buf = malloc(JDOC_MAX_SIZE + 1);
	if (!d->buf)
		return -ENOMEM;
	/* Read to EOF, not to st_size: the file may change under us; the bound still holds. */
	while ((n = read(fd, d->buf + d->len, JDOC_MAX_SIZE + 1 - d->len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		d->len += n;
		if (d->len > JDOC_MAX_SIZE)
			return -EFBIG;
	}
	return 0;
}

static struct jdoc_files *files_record;
static const struct jdoc_files *files_replay;

void jdoc_files_use(struct jdoc_files *record, const struct jdoc_files *replay)
{
	files_record = record;
	files_replay = replay;
}

void jdoc_files_free(struct jdoc_files *f)
{
	size_t i;

	for (i = 0; f && i < f->n; i++) {
		free(f->v[i].path);
		free(f->v[i].buf);
	}
	if (f) {
		free(f->v);
		f->v = NULL;
		f->n = 0;
	}
}

static const struct jdoc_file *files_find(const struct jdoc_files *f, const char *path)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].path, path))
			return &f->v[i];
	return NULL;
}

static int files_add(struct jdoc_files *f, const char *path, const char *buf, size_t len, dev_t dev,
		     ino_t ino)
{
	struct jdoc_file *more = realloc(f->v, (f->n + 1) * sizeof(*f->v));
	struct jdoc_file *e;

	if (!more)
		return -ENOMEM;
	f->v = more;
	e = &f->v[f->n];
	*e = (struct jdoc_file){ strdup(path), malloc(len + 1), len, dev, ino };
	if (!e->path || !e->buf) {
		free(e->path);
		free(e->buf);
		return -ENOMEM;
	}
	memcpy(e->buf, buf, len);
	e->buf[len] = '\0';
	f->n++;
	return 0;
}

/* The bytes of path from the replayed files, with the identity the file had. */
static int read_replayed(const char *path, struct jdoc *d)
{
	const struct jdoc_file *e = files_find(files_replay, path);

	if (!e)
		return -ENOENT;
	d->buf = malloc(e->len + 1);
	if (!d->buf)
		return -ENOMEM;
	memcpy(d->buf, e->buf, e->len);
	d->len = e->len;
	d->dev = e->dev;
	d->ino = e->ino;
	return 0;
}

static int read_file(const char *path, struct jdoc *d)
{
	int fd, err;

	if (files_replay)
		return read_replayed(path, d);
	/* O_NONBLOCK: a FIFO must not hang the check; it is refused as not regular. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	err = fd < 0 ? -errno : read_regular(fd, d);
	if (fd >= 0)
		close(fd);
	return err;
}

int jdoc_load_file(const char *path, struct jdoc **out, struct policy_errors *errs)
{
	struct jdoc *d;
	int err;

	*out = NULL;
	d = jdoc_new(path);
	if (!d)
		return -ENOMEM;
	err = read_file(path, d);
	if (!err && files_record)
		err = files_add(files_record, path, d->buf, d->len, d->dev, d->ino);
	if (err) {
		add_error(errs, path, 0, 0, "",
			  err == -EINVAL  ? "cannot read: not a regular file"
			  : err == -EFBIG ? "cannot read: larger than 1 MiB"
					  : strerror(-err));
		goto err_free;
	}
	err = parse_into(d, errs);
	if (err)
		goto err_free;
	*out = d;
	return 0;
err_free:
	jdoc_free(d);
	return err;
}

int jdoc_load_buffer(const char *name, const char *buf, size_t len, struct jdoc **out,
		     struct policy_errors *errs)
{
	struct jdoc *d;
	int err;

	*out = NULL;
	if (len > JDOC_MAX_SIZE) {
		add_error(errs, name, 0, 0, "", "cannot read: larger than 1 MiB");
		return -EFBIG;
	}
	d = jdoc_new(name);
	if (!d)
		return -ENOMEM;
	d->buf = malloc(len + 1);
	if (!d->buf) {
		jdoc_free(d);
		return -ENOMEM;
	}
	memcpy(d->buf, buf, len);
	d->len = len;
	err = parse_into(d, errs);
	if (err) {
		jdoc_free(d);
		return err;
	}
	*out = d;
	return 0;
}

void jdoc_free(struct jdoc *d)
{
	if (!d)
		return;
	json_decref(d->root);
	free(d->path);
	free(d->dir);
	free(d->buf);
	free(d);
}

#define LIMIT_CPU_CORES_MAX 1024
#define LIMIT_MEMORY_MAX (1ULL << 50)
#define LIMIT_PIDS_MAX 4194304

void jdoc_limits(struct policy_errors *errs, const struct jdoc *d, const char *ptr, const json_t *o,
		 unsigned long long wall_clock_max, struct limits *l)
{
	static const char *const keys[] = { "cpu", "memory", "pids", "wall_clock", NULL },
				 *const tool_keys[] = { "cpu", "memory", "pids", NULL };
	static const unsigned long long mem_mult[] = { 1ULL << 10, 1ULL << 20, 1ULL << 30 };
	char el[JPTR_MAX], found[80];
	unsigned long long v = 0;
	json_t *e;
	double cpu;

	jdoc_check_keys(errs, d, ptr, o, wall_clock_max ? keys : tool_keys);
	jptr_key(el, ptr, "cpu");
	e = json_object_get(o, "cpu");
	cpu = json_is_number(e) ? json_number_value(e) : 0;
	if (e && !(cpu >= 0.001 && cpu <= LIMIT_CPU_CORES_MAX))
		jdoc_err(errs, d, el, "expected a number of cores from 0.001 to %d; found %s",
			 LIMIT_CPU_CORES_MAX, jdoc_found(e, found, sizeof(found)));
	else if (e)
		l->cpu_millicores = (__u32)(cpu * 1000 + 0.5);
	jptr_key(el, ptr, "memory");
	e = json_object_get(o, "memory");
	if (json_is_string(e))
		v = jdoc_scaled(json_string_value(e), "KMG", mem_mult, LIMIT_MEMORY_MAX);
	else if (json_is_integer(e) && json_integer_value(e) > 0)
		v = json_integer_value(e);
	if (e && (!v || v > LIMIT_MEMORY_MAX))
		jdoc_err(errs, d, el,
			 "expected a size as bytes or \"512M\" (K, M, G: powers of 1024), at most "
			 "1P; found %s",
			 jdoc_found(e, found, sizeof(found)));
	else if (e)
		l->memory_bytes = v;
	jptr_key(el, ptr, "pids");
	e = json_object_get(o, "pids");
	if (e && (!json_is_integer(e) || json_integer_value(e) < 1 ||
		  json_integer_value(e) > LIMIT_PIDS_MAX))
		jdoc_err(errs, d, el, "expected an integer from 1 to %d; found %s", LIMIT_PIDS_MAX,
			 jdoc_found(e, found, sizeof(found)));
	else if (e)
		l->pids = json_integer_value(e);
	if (!wall_clock_max)
		return;
	jptr_key(el, ptr, "wall_clock");
	e = json_object_get(o, "wall_clock");
	if (e && jdoc_duration(errs, d, el, e, wall_clock_max, &v))
		l->wall_clock_sec = v;
}

json_t *jdoc_files_json(const struct jdoc_files *f)
{
	json_t *arr = json_array(), *e;
	size_t i;

	for (i = 0; arr && i < f->n; i++) {
		e = json_pack("{s:s, s:s%, s:I, s:I}", "path", f->v[i].path, "text", f->v[i].buf,
			      f->v[i].len, "dev", (json_int_t)f->v[i].dev, "ino",
			      (json_int_t)f->v[i].ino);
		if (!e || json_array_append_new(arr, e)) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr ? json_pack("{s:o}", "files", arr) : NULL;
}

int jdoc_files_parse(const json_t *j, struct jdoc_files *f)
{
	json_t *arr = json_object_get(j, "files"), *e;
	const char *path, *text;
	json_int_t dev, ino;
	size_t i, len;

	memset(f, 0, sizeof(*f));
	if (!json_is_array(arr))
		return -EINVAL;
	json_array_foreach(arr, i, e)
	{
		if (json_unpack(e, "{s:s, s:s%, s:I, s:I}", "path", &path, "text", &text, &len,
				"dev", &dev, "ino", &ino) ||
		    len > JDOC_MAX_SIZE || files_add(f, path, text, len, dev, ino)) {
			jdoc_files_free(f);
			return -EINVAL;
		}
	}
	return 0;
}

static void name_paths(const struct jdoc_files *a, const struct jdoc_files *b, bool changed,
		       const char *label, char *buf, size_t bufsz)
{
	const struct jdoc_file *o;
	size_t i, len = strlen(buf);
	bool first = true;

	for (i = 0; i < a->n && len < bufsz; i++) {
		o = files_find(b, a->v[i].path);
		if (changed ? !o || (o->len == a->v[i].len && !memcmp(o->buf, a->v[i].buf, o->len))
			    : o != NULL)
			continue;
		len += snprintf(buf + len, bufsz - len, "%s%s%s", first ? (len ? "; " : "") : ", ",
				first ? label : "", a->v[i].path);
		first = false;
	}
}

bool jdoc_files_differ(const struct jdoc_files *a, const struct jdoc_files *b, char *buf,
		       size_t bufsz)
{
	buf[0] = '\0';
	name_paths(a, b, true, "changed: ", buf, bufsz);
	name_paths(a, b, false, "gone: ", buf, bufsz);
	name_paths(b, a, false, "new: ", buf, bufsz);
	return buf[0] != '\0';
}
