// SPDX-License-Identifier: GPL-2.0
/* The Landlock layer (landlock.h), after the kernel's samples/landlock/sandboxer.c: negotiate
 * the ABI, handle every right it has, degrade explicitly. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "agentd/abi.h"
#include "sandbox/landlock.h"

#define LL_RULE_PATH_BENEATH 1

/* struct landlock_ruleset_attr up to ABI 6; a kernel that knows fewer fields accepts the larger
 * struct as long as the fields it does not know are zero. */
struct ll_ruleset_attr {
	__u64 handled_access_fs;
	__u64 handled_access_net;
	__u64 scoped;
};

struct ll_path_beneath_attr {
	__u64 allowed_access;
	__s32 parent_fd;
} __attribute__((packed));

#define LL_FS_MAKE_ANY                                                                             \
	(LL_FS_MAKE_CHAR | LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK | LL_FS_MAKE_FIFO |   \
	 LL_FS_MAKE_BLOCK | LL_FS_MAKE_SYM)

__u64 landlock_handled_fs(int abi)
{
	__u64 fs = (LL_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0..12 */

	if (abi < 1)
		return 0;
	if (abi >= 2)
		fs |= LL_FS_REFER;
	if (abi >= 3)
		fs |= LL_FS_TRUNCATE;
	if (abi >= 5)
		fs |= LL_FS_IOCTL_DEV;
	return fs;
}

__u64 landlock_access(__u32 rights, int abi)
{
	__u64 a = 0;

	if (rights & AGENTD_RIGHT_READ)
		a |= LL_FS_READ_FILE | LL_FS_READ_DIR;
	if (rights & AGENTD_RIGHT_WRITE)
		a |= LL_FS_WRITE_FILE;
	if (rights & AGENTD_RIGHT_EXEC)
		a |= LL_FS_EXECUTE;
	if (rights & AGENTD_RIGHT_CREATE)
		a |= LL_FS_MAKE_ANY;
	if (rights & AGENTD_RIGHT_REMOVE)
		a |= LL_FS_REMOVE_FILE | LL_FS_REMOVE_DIR;
	if (rights & AGENTD_RIGHT_LINK)
		a |= LL_FS_REFER;
	if (rights & AGENTD_RIGHT_TRUNCATE)
		a |= LL_FS_TRUNCATE;
	/* BPF LSM does not check ioctls: a device the agent may open, it may ioctl. */
	if (rights & (AGENTD_RIGHT_READ | AGENTD_RIGHT_WRITE))
		a |= LL_FS_IOCTL_DEV;
	/* AGENTD_RIGHT_SETATTR has no Landlock right: layers.c reports it. */
	return a & landlock_handled_fs(abi);
}

static int add(struct landlock_plan *pl, const struct policy_path *pp, __u32 rights)
{
	const char *path = pp->path;
	struct landlock_rule *r;
	size_t i;

	for (i = 0; i < pl->n; i++)
		if (!strcmp(pl->rules[i].path, path))
			break;
	if (i == pl->n) {
		r = realloc(pl->rules, (pl->n + 1) * sizeof(*r));
		if (!r)
			return -ENOMEM;
		pl->rules = r;
		r = &pl->rules[pl->n];
		r->path = strdup(path);
		if (!r->path)
			return -ENOMEM;
		r->dev = pp->dev;
		r->ino = pp->ino;
		r->access = 0;
		r->fd = -1;
		pl->n++;
	}
	pl->rules[i].access |= landlock_access(rights, pl->abi);
	return 0;
}

static int cmp_rule(const void *a, const void *b)
{
	return strcmp(((const struct landlock_rule *)a)->path,
		      ((const struct landlock_rule *)b)->path);
}

int landlock_compile(const struct policy *p, int abi, struct landlock_plan **out)
{
	struct landlock_plan *pl;
	size_t i;
	int err = 0;

	*out = NULL;
	if (abi < 1)
		return -EINVAL;
	pl = calloc(1, sizeof(*pl));
	if (!pl)
		return -ENOMEM;
	pl->abi = abi > LANDLOCK_ABI_KNOWN ? LANDLOCK_ABI_KNOWN : abi;
	pl->handled_fs = landlock_handled_fs(pl->abi);
	if (pl->abi >= 6)
		pl->scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
	for (i = 0; !err && i < p->n_files; i++) {
		if (!p->files[i].exists)
			continue;
		if (!p->files[i].rights)
			pl->n_denies++;
		else
			err = add(pl, &p->files[i], p->files[i].rights);
	}
	for (i = 0; !err && i < p->exec.n_allow; i++)
		if (p->exec.allow[i].exists)
			err = add(pl, &p->exec.allow[i], AGENTD_RIGHT_EXEC | AGENTD_RIGHT_READ);
	if (err) {
		landlock_plan_free(pl);
		return err;
	}
	if (pl->n)
		qsort(pl->rules, pl->n, sizeof(*pl->rules), cmp_rule);
	*out = pl;
	return 0;
}

int landlock_open(struct landlock_plan *pl, const char **bad)
{
	struct landlock_rule *r;
	struct stat st;
	size_t i;

	for (i = 0; i < pl->n; i++) {
		r = &pl->rules[i];
		if (r->fd < 0)
			r->fd = open(r->path, O_PATH | O_CLOEXEC);
		if (r->fd < 0 || fstat(r->fd, &st)) {
			*bad = r->path;
			return -errno;
		}
		if (st.st_dev != r->dev || st.st_ino != r->ino) {
			*bad = r->path;
			return -ESTALE;
		}
		if (!S_ISDIR(st.st_mode))
			r->access &= ~LL_FS_DIR_ONLY;
	}
	return 0;
}

const char *landlock_strerror(int err)
{
	if (err == -ESTALE)
		return "the path names another object than when the policy was loaded (renamed "
		       "over since): reload the policy";
	return strerror(-err);
}

int landlock_ruleset(const struct landlock_plan *pl)
{
	struct ll_ruleset_attr attr = { .handled_access_fs = pl->handled_fs, .scoped = pl->scoped };
	struct ll_path_beneath_attr pb;
	int fd;
	size_t i;

	fd = syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (fd < 0)
		return -errno;
	for (i = 0; i < pl->n; i++) {
		pb.allowed_access = pl->rules[i].access;
		pb.parent_fd = pl->rules[i].fd;
		if (!pb.allowed_access)
			continue;
		if (syscall(SYS_landlock_add_rule, fd, LL_RULE_PATH_BENEATH, &pb, 0)) {
			int err = -errno;

			close(fd);
			return err;
		}
	}
	return fd;
}

int landlock_restrict(int ruleset_fd)
{
	int err = syscall(SYS_landlock_restrict_self, ruleset_fd, 0) ? -errno : 0;

	close(ruleset_fd);
	return err;
}

void landlock_plan_free(struct landlock_plan *pl)
{
	size_t i;

	if (!pl)
		return;
	for (i = 0; i < pl->n; i++) {
		free(pl->rules[i].path);
		if (pl->rules[i].fd >= 0)
			close(pl->rules[i].fd);
	}
	free(pl->rules);
	free(pl);
}
