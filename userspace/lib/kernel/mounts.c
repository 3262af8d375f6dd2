// SPDX-License-Identifier: GPL-2.0
/*
 * Mount tables, for the hooks that name an object and no mount (rights.bpf.h): which dentries
 * are mount roots, and what a path walk finds above each mount point.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "kernel/kdev.h"
#include "kernel/mounts.h"

void unescape_octal(char *s)
{
	char *out = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 4;
		} else {
			*out++ = *s++;
		}
	}
	*out = '\0';
}

/* "36 35 0:30 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw": id, mount point, fs type. */
static int mountinfo_line(char *line, struct mountinfo_entry *m)
{
	char *save = NULL, *tok, *end;
	int field = 0;

	memset(m, 0, sizeof(*m));
	m->id = -1;
	for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		if (field == 0) {
			errno = 0;
			m->id = (int)strtol(tok, &end, 10);
			if (errno || *end || m->id < 0)
				return -EINVAL;
		}
		if (field == 4)
			m->mount_point = tok;
		if (field >= 6 && !strcmp(tok, "-")) {
			m->fstype = strtok_r(NULL, " \n", &save);
			break;
		}
		field++;
	}
	if (!m->mount_point || !m->fstype)
		return -EINVAL;
	unescape_octal(m->mount_point);
	return 0;
}

int mountinfo_next(FILE *mountinfo, char **line, size_t *cap, struct mountinfo_entry *m)
{
	if (getline(line, cap, mountinfo) <= 0)
		return 0;
	return mountinfo_line(*line, m) ? -EINVAL : 1;
}

/* The object at path (not following a last symlink, triggering no automount): 0, or -errno. */
static int object_at(const char *path, __u64 *dev, __u64 *ino, __u64 *mnt_id)
{
	struct statx st;

	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC,
		  STATX_INO | STATX_MNT_ID, &st))
		return -errno;
	*dev = kernel_dev(makedev(st.stx_dev_major, st.stx_dev_minor));
	*ino = st.stx_ino;
	*mnt_id = st.stx_mask & STATX_MNT_ID ? st.stx_mnt_id : 0;
	return 0;
}

/* What a path walk finds above the mount point mp: the rule of the nearest object above it. */
static void rights_above(const char *mp, rule_lookup_fn lookup, void *ctx, __u32 *rule_id,
			 __u32 *rights)
{
	char path[PATH_MAX], *slash;
	__u64 dev, ino, mnt;

	*rule_id = 0;
	*rights = 0;
	if (!strcmp(mp, "/") || strlen(mp) >= sizeof(path))
		return;
	strcpy(path, mp);
	while ((slash = strrchr(path, '/'))) {
		if (slash == path)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (!object_at(path, &dev, &ino, &mnt) && lookup(ctx, dev, ino, rule_id, rights))
			return;
		if (slash == path)
			return;
	}
}

static int add_root(struct mount_root **roots, size_t *n, size_t *cap, const struct mount_root *r)
{
	struct mount_root *more;
	size_t i;

	for (i = 0; i < *n; i++) {
		if ((*roots)[i].dev != r->dev || (*roots)[i].ino != r->ino)
			continue;
		(*roots)[i].rights &= r->rights;
		if ((*roots)[i].rule_id != r->rule_id)
			(*roots)[i].rule_id = 0;
		return 0;
	}
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		more = realloc(*roots, *cap * sizeof(**roots));
		if (!more)
			return -ENOMEM;
		*roots = more;
	}
	(*roots)[(*n)++] = *r;
	return 0;
}

int mount_roots_read(FILE *mountinfo, rule_lookup_fn lookup, void *ctx, struct mount_root **out,
		     size_t *n)
{
	struct mount_root *roots = NULL, r;
	struct mountinfo_entry m;
	size_t cap = 0, linecap = 0;
	char *line = NULL;
	__u64 mnt_id;
	int got, err = 0;

	*n = 0;
	while (!err && (got = mountinfo_next(mountinfo, &line, &linecap, &m))) {
		if (got < 0) {
			err = got;
			break;
		}
		/* A mount its path does not show (another mounted over it, or gone since) cannot be
		 * looked at; only an open descriptor could still reach objects in it. */
		if (object_at(m.mount_point, &r.dev, &r.ino, &mnt_id) ||
		    (mnt_id && mnt_id != (__u64)m.id))
			continue;
		rights_above(m.mount_point, lookup, ctx, &r.rule_id, &r.rights);
		err = add_root(&roots, n, &cap, &r);
	}
	free(line);
	if (err) {
		free(roots);
		*n = 0;
		return err;
	}
	*out = roots;
	return 0;
}
