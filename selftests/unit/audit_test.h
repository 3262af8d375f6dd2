/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the audit unit tests: scratch log directories and file surgery. */
#ifndef AGENTD_AUDIT_TEST_H
#define AGENTD_AUDIT_TEST_H

#include <stddef.h>
#include "audit/audit.h"

/* A fresh directory, removed with everything in it (append-only flags cleared) at test end. */
void audit_test_dir(char *path, size_t pathsz);

/* Whole-file contents (gunzipped when the file is gzip); free() the result. */
char *audit_test_slurp(const char *path, size_t *len);
/* Replaces a file with data, gzipped when gz. */
void audit_test_spew(const char *path, const char *data, size_t len, bool gz);

/* The lines of data (newlines replaced by NULs); free() both. */
size_t audit_test_lines(char *data, size_t len, char ***lines);
/* Joins n lines (each gets a newline) into a new buffer. */
char *audit_test_join(char **lines, size_t n, size_t *len);

/* A file event record as the kernel would report it. */
void audit_test_file_record(struct audit_record *r, __u32 agent, bool deny, unsigned n);
/* A ring-buffer record (its bytes) as the sink takes it: decoded once, then the record of it. */
int audit_test_from_event(struct audit_record *r, const void *data, size_t len, __s64 off);

/* Verifies every segment in dir. */
int audit_test_verify(const char *dir, struct audit_verify_result *res);

#endif
