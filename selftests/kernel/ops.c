// SPDX-License-Identifier: GPL-2.0
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "ops.h"

/* One enforcer for every test of this binary: loading under QEMU's emulation takes seconds. */
__attribute__((constructor)) static void preload(void)
{
	test_enforcer_preload(true);
}

#define RET(call) ((call) < 0 ? errno : 0)

int op_open(void *arg)
{
	const struct op *o = arg;
	int fd = open(o->a, o->flags | O_CLOEXEC, 0644);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

int op_truncate(void *arg)
{
	return RET(truncate(((struct op *)arg)->a, 0));
}

int op_ftruncate(void *arg)
{
	int fd = open(((struct op *)arg)->a, O_WRONLY | O_CLOEXEC), err;

	if (fd < 0)
		return 100 + errno;
	err = RET(ftruncate(fd, 0));
	close(fd);
	return err;
}

int op_mkdir(void *arg)
{
	return RET(mkdir(((struct op *)arg)->a, 0755));
}

int op_mkfifo(void *arg)
{
	return RET(mkfifo(((struct op *)arg)->a, 0644));
}

int op_symlink(void *arg)
{
	const struct op *o = arg;

	return RET(symlink(o->b, o->a));
}

int op_unlink(void *arg)
{
	return RET(unlink(((struct op *)arg)->a));
}

int op_rmdir(void *arg)
{
	return RET(rmdir(((struct op *)arg)->a));
}

int op_link(void *arg)
{
	const struct op *o = arg;

	return RET(link(o->a, o->b));
}

int op_rename(void *arg)
{
	const struct op *o = arg;

	return RET(renameat2(AT_FDCWD, o->a, AT_FDCWD, o->b, o->flags));
}

int op_chmod(void *arg)
{
	return RET(chmod(((struct op *)arg)->a, 0600));
}

int op_chown(void *arg)
{
	return RET(chown(((struct op *)arg)->a, 0, 0));
}

static const struct timespec some_times[2] = { { .tv_sec = 1000000000 }, { .tv_sec = 1000000000 } };

int op_utimes(void *arg)
{
	return RET(utimensat(AT_FDCWD, ((struct op *)arg)->a, some_times, 0));
}

int op_touch(void *arg)
{
	return RET(utimensat(AT_FDCWD, ((struct op *)arg)->a, NULL, 0));
}

int op_futimens(void *arg)
{
	int fd = open(((struct op *)arg)->a, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return 100 + errno;
	err = RET(futimens(fd, some_times));
	close(fd);
	return err;
}

int op_setxattr(void *arg)
{
	return RET(setxattr(((struct op *)arg)->a, OP_XATTR, "v", 1, 0));
}

int op_removexattr(void *arg)
{
	return RET(removexattr(((struct op *)arg)->a, OP_XATTR));
}

/* posix_acl_xattr format (include/uapi/linux/posix_acl_xattr.h), little-endian as on x86:
 * owner rw, user 1000 r, group r, mask r, other r. */
static const struct {
	__u32 version;
	struct {
		__u16 tag, perm;
		__u32 id;
	} e[5];
} acl = { 2,
	  { { 0x01, 6, ~0U },
	    { 0x02, 4, 1000 },
	    { 0x04, 4, ~0U },
	    { 0x10, 4, ~0U },
	    { 0x20, 4, ~0U } } };

int op_set_acl(void *arg)
{
	return RET(
		setxattr(((struct op *)arg)->a, "system.posix_acl_access", &acl, sizeof(acl), 0));
}

int op_remove_acl(void *arg)
{
	return RET(removexattr(((struct op *)arg)->a, "system.posix_acl_access"));
}

void op_attributes(const char *path)
{
	struct op o = { .a = path };
	int err = op_setxattr(&o);

	if (!err)
		err = op_set_acl(&o);
	if (err)
		FAIL("attributes of %s: %s", path, strerror(err));
}

char *pathf(char *buf, size_t sz, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sz, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sz)
		FAIL("path too long: %s", fmt);
	return buf;
}
