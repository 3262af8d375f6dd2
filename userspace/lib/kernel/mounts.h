/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_MOUNTS_H
#define AGENTD_MOUNTS_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

/* One line of a mountinfo stream (proc(5)); the strings point into the line, escapes decoded. */
struct mountinfo_entry {
	int id;
	char *mount_point;
	char *fstype;
};

/* Decodes the octal escapes of seq_file paths (\040 for a space, ...) in place. */
void unescape_octal(char *s);

/* The next entry of mountinfo: 1, 0 at its end, or -EINVAL naming no line (a malformed one). */
int mountinfo_next(FILE *mountinfo, char **line, size_t *cap, struct mountinfo_entry *m);

/* The dentry a mount shows at its top, and the rights at its mount point. */
struct mount_root {
	__u64 dev; /* kernel dev_t, as in the maps */
	__u64 ino;
	__u32 rule_id; /* 0: no rule, or mounts with this root that several rules decide */
	__u32 rights;
};

/* The rule on an object: returns 1 and fills rule_id and rights, or 0 for none. */
typedef int (*rule_lookup_fn)(void *ctx, __u64 dev, __u64 ino, __u32 *rule_id, __u32 *rights);

/*
 * The mount roots of every mount in mountinfo that its path shows (a mount hidden under another
 * at the same place cannot be looked at, and is left out), one per distinct root, with the
 * rights a path walk finds above the mount point: the rule of the nearest object on the way up
 * from it, none at the top; intersected over the mounts that share a root. *out is malloc()ed.
 * Returns 0 or -errno.
 */
int mount_roots_read(FILE *mountinfo, rule_lookup_fn lookup, void *ctx, struct mount_root **out,
		     size_t *n);

#endif
