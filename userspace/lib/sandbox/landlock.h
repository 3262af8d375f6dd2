/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Landlock layer: a policy's file rules and exec allowlist as a Landlock ruleset, for the
 * processes agentctl run starts where BPF LSM is not available (docs/LAYERS.md). The ABI is
 * negotiated: rights an older ABI lacks are left out, and layers.c names what that loses.
 */
#ifndef AGENTD_LANDLOCK_H
#define AGENTD_LANDLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "policy/policy.h"

/* The newest ABI whose rights this file knows (6: scopes for signals and abstract sockets). */
#define LANDLOCK_ABI_KNOWN 6

/* Access rights by bit, as in <linux/landlock.h>; defined here because the build host's UAPI
 * headers may be older than the kernel that runs the agent. */
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13) /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1) /* ABI 6 */

/* The rights that only a directory can hold (adding them to a file's rule is EINVAL). */
#define LL_FS_DIR_ONLY                                                                             \
	(LL_FS_READ_DIR | LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | LL_FS_MAKE_CHAR |                 \
	 LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK | LL_FS_MAKE_FIFO | LL_FS_MAKE_BLOCK |  \
	 LL_FS_MAKE_SYM | LL_FS_REFER)

struct landlock_rule {
	char *path;
	dev_t dev; /* the object the policy's load found at path (st_dev, st_ino) */
	ino_t ino;
	__u64 access; /* LL_FS_* */
	int fd; /* O_PATH, after landlock_open(); -1 before */
};

struct landlock_plan {
	int abi; /* the ABI compiled for */
	__u64 handled_fs; /* every right of that ABI: what no rule grants is denied */
	__u64 scoped; /* LL_SCOPE_* */
	struct landlock_rule *rules; /* one per object named with rights; sorted by path */
	size_t n;
	size_t n_denies; /* rules with no right (deny inside allow): Landlock cannot hold them */
};

/* The handled file-system rights of an ABI (0 for abi < 1). */
__u64 landlock_handled_fs(int abi);
/* Our rights (AGENTD_RIGHT_*) as Landlock rights of that ABI. */
__u64 landlock_access(__u32 rights, int abi);

/*
 * Compiles p's file rules and exec allowlist for ABI abi (1..; above LANDLOCK_ABI_KNOWN it
 * compiles for LANDLOCK_ABI_KNOWN). Exec entries grant exec and read, as compile.c does; rules
 * of one path merge; absent optional paths and rules with no right are left out. Opens nothing.
 * Returns 0, -EINVAL (abi < 1) or -ENOMEM.
 */
int landlock_compile(const struct policy *p, int abi, struct landlock_plan **out);
/*
 * Opens every rule's path O_PATH (as the caller: before a privilege drop) and drops the rights a
 * non-directory cannot hold. Returns 0 or -errno of the first path that fails (*bad names it):
 * -ESTALE when the path now names another object than the policy's load found (renamed over
 * since), which the rule would otherwise silently grant.
 */
int landlock_open(struct landlock_plan *pl, const char **bad);
/* What landlock_open()'s err says, for people. */
const char *landlock_strerror(int err);
/*
 * Makes the ruleset; the caller restricts itself with landlock_restrict() once it is the user
 * the agent runs as and has set no_new_privs. Returns the ruleset fd or -errno.
 */
int landlock_ruleset(const struct landlock_plan *pl);
/* landlock_restrict_self(fd); closes fd. Returns 0 or -errno. */
int landlock_restrict(int ruleset_fd);
void landlock_plan_free(struct landlock_plan *pl);

#endif
