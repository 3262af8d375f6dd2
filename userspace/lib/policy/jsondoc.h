/* SPDX-License-Identifier: GPL-2.0 */
/*
 * JSON configuration files (policies, the tools registry): loading them, and the error list every
 * check reports into, each error placed at file:line:column and a JSON pointer.
 */
#ifndef AGENTD_JSONDOC_H
#define AGENTD_JSONDOC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <jansson.h>

/* Errors kept per load; more are counted in policy_errors.dropped. */
#define POLICY_ERRORS_MAX 50
/* Largest configuration file read. */
#define JDOC_MAX_SIZE (1 << 20)
/* Pointers longer than this are cut (and then located at their nearest ancestor). */
#define JPTR_MAX 512

struct policy_error {
	char *file; /* the file holding the error: a base for errors in a base */
	int line, column; /* 1-based; 0 when the error has no place in the file (I/O) */
	char *pointer; /* RFC 6901 pointer of the field, "" for the whole document */
	char *msg; /* "expected ...; found ..." */
	/* The policy is valid as a template: a path its default variables give is missing here,
	 * and --var must name one that exists. */
	bool needs_var;
};

struct policy_errors {
	struct policy_error *v;
	size_t n;
	size_t dropped; /* errors past POLICY_ERRORS_MAX (or not recorded for want of memory) */
};

/* Frees every error and empties the list (it can be reused); accepts NULL. */
void policy_errors_clear(struct policy_errors *errs);
/* "file:line:column: pointer: msg" (the place and pointer left out when unknown). Returns the
 * length snprintf would, truncating to bufsz. */
int policy_error_format(const struct policy_error *e, char *buf, size_t bufsz);

/* One loaded file. */
struct jdoc {
	char *path; /* as given */
	char *dir; /* its directory, for relative references */
	char *buf; /* raw bytes, for locating errors */
	size_t len;
	json_t *root; /* an object */
	dev_t dev; /* identity of the file, (0, 0) for a buffer */
	ino_t ino;
};

/*
 * Reads and parses a regular file (at most JDOC_MAX_SIZE bytes, no FIFOs or devices), rejecting
 * duplicate keys; the top level must be an object. Errors go to errs. Returns 0, -EINVAL
 * (reported: not JSON, not an object), or -errno (reported: cannot read).
 */
int jdoc_load_file(const char *path, struct jdoc **out, struct policy_errors *errs);
/* The same for bytes in memory; name is used in errors and for relative references. */
int jdoc_load_buffer(const char *name, const char *buf, size_t len, struct jdoc **out,
		     struct policy_errors *errs);
void jdoc_free(struct jdoc *d);

/*
 * The files a load read, bytes and identity: what a policy was made from (its bases and tools
 * registry included), kept with the rules made from it so that a restarted agentd loads the same
 * policy however the files changed since.
 */
struct jdoc_file {
	char *path;
	char *buf;
	size_t len;
	dev_t dev;
	ino_t ino;
};

struct jdoc_files {
	struct jdoc_file *v;
	size_t n;
};

/*
 * Until the next call, every jdoc_load_file() reads from replay when it is not NULL (a path not
 * there is an error: nothing comes from disk), and appends what it read to record when that is
 * not NULL. jdoc_files_use(NULL, NULL) goes back to the files on disk alone.
 */
void jdoc_files_use(struct jdoc_files *record, const struct jdoc_files *replay);
void jdoc_files_free(struct jdoc_files *f);
/* {"files": [{"path": ..., "text": ...}, ...]} and back. Parse returns 0 or -EINVAL. */
json_t *jdoc_files_json(const struct jdoc_files *f);
int jdoc_files_parse(const json_t *j, struct jdoc_files *f);
/* Whether a and b differ, paths and bytes; when they do, what names the difference in buf:
 * "changed: P, ...; gone: P, ...; new: P, ..." (gone: in a only). */
bool jdoc_files_differ(const struct jdoc_files *a, const struct jdoc_files *b, char *buf,
		       size_t bufsz);

/* Records an error at ptr in d (located at ptr, or its nearest ancestor that is found). */
void jdoc_err(struct policy_errors *errs, const struct jdoc *d, const char *ptr, const char *fmt,
	      ...) __attribute__((format(printf, 4, 5)));
/* Describes a found value for a message: "wirte" quoted (cut), 3, true, null, an object... */
const char *jdoc_found(const json_t *v, char *buf, size_t bufsz);
/* ptr + "/" + escaped key (or index), into out[JPTR_MAX]. */
void jptr_key(char *out, const char *ptr, const char *key);
void jptr_idx(char *out, const char *ptr, size_t idx);

/* Type checks that report "expected <what>; found <value>" and return false on mismatch. */
bool jdoc_expect(struct policy_errors *errs, const struct jdoc *d, const char *ptr, const json_t *v,
		 json_type type, const char *what);
/* Reports every key of obj not in the NULL-terminated allowed list; false when there was one. */
bool jdoc_check_keys(struct policy_errors *errs, const struct jdoc *d, const char *ptr,
		     const json_t *obj, const char *const *allowed);
/* Digits then at most one unit letter from units (scaled by mult[unit]); 0 unless in 1..max. */
unsigned long long jdoc_scaled(const char *s, const char *units, const unsigned long long *mult,
			       unsigned long long max);
/* A duration "N" + s/m/h (or a JSON integer of seconds) into seconds, > 0. */
bool jdoc_duration(struct policy_errors *errs, const struct jdoc *d, const char *ptr,
		   const json_t *v, unsigned long long max, unsigned long long *out);

/*
 * A "limits" object o at ptr, as policies and tools write it: "cpu" (cores, 0.001 to 1024),
 * "memory" (bytes, or "512M": K, M, G are powers of 1024; at most 1P), "pids" (1 to 4194304),
 * and where wall_clock_max is not 0 "wall_clock" (a duration up to it). Each valid one is set
 * in *l, an absent one is left alone; each bad one, and any other key, is reported.
 */
struct limits;
void jdoc_limits(struct policy_errors *errs, const struct jdoc *d, const char *ptr, const json_t *o,
		 unsigned long long wall_clock_max, struct limits *l);

#endif
