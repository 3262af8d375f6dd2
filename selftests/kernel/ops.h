/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Operations an agent task tries, for run_in_cgroup(): each returns 0 on success or the errno
 * of the failing call, so that tests check the exact errno the kernel gave.
 */
#ifndef AGENTD_KERNEL_OPS_H
#define AGENTD_KERNEL_OPS_H

#include "harness.h"
#include "testlib.h"

struct op {
	const char *a, *b;
	int flags;
};

#define OP(...) (&(struct op){ __VA_ARGS__ })

int op_open(void *op); /* open(a, flags | O_CLOEXEC, 0644) */
int op_truncate(void *op); /* truncate(a, 0) */
int op_ftruncate(void *op); /* open(a, O_WRONLY), ftruncate */
int op_mkdir(void *op);
int op_mkfifo(void *op);
int op_symlink(void *op); /* symlink(b, a): a is the new name */
int op_unlink(void *op);
int op_rmdir(void *op);
int op_link(void *op); /* link(a, b) */
int op_rename(void *op); /* renameat2(a, b, flags) */
int op_chmod(void *op);
int op_chown(void *op);
int op_utimes(void *op); /* utimensat(a) with explicit times */
int op_touch(void *op); /* utimensat(a, NULL): the current time, as a write sets it */
int op_futimens(void *op); /* open(a, O_RDONLY), futimens with explicit times */
int op_setxattr(void *op); /* setxattr(a, OP_XATTR) */
int op_removexattr(void *op); /* removexattr(a, OP_XATTR) */
int op_set_acl(void *op); /* an access ACL with a named user */
int op_remove_acl(void *op);

/* An extended attribute tmpfs keeps on every kernel (user.* only from Linux 6.6 on). */
#define OP_XATTR "trusted.agentd"
/* Gives path the OP_XATTR attribute and an access ACL, from the test process; FAILs on error. */
void op_attributes(const char *path);

/* Builds a path from a printf format into buf; FAILs when it does not fit. */
char *pathf(char *buf, size_t sz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define PATHF(buf, ...) pathf(buf, sizeof(buf), __VA_ARGS__)

/* Base rights for an agent in the tests: the whole file system readable and executable. */
#define RX (AGENTD_RIGHT_READ | AGENTD_RIGHT_EXEC)

#endif
