// SPDX-License-Identifier: GPL-2.0
/*
 * File policy: rights on file-system objects, checked at every hook that opens, creates,
 * removes, links, renames, truncates or changes attributes.
 *
 * Self-protection comes first and no policy lifts it: an agent changes nothing on a cgroup file
 * system (self.bpf.h). Fails closed: an agent task whose rights cannot be established (no rule,
 * no policy, a walk deeper than its bound) is denied. A task of no agent is allowed after the
 * identity lookup. Recording an event never changes a verdict.
 */
#include "files.bpf.h"

char LICENSE[] SEC("license") = "GPL";

SEC("lsm/file_open")
int BPF_PROG(file_open, struct file *file, int ret)
{
	return ret ? ret : file_open_verdict(file);
}

/* Creation: the directory receiving the new name needs CREATE. */
static __always_inline int check_create(const struct path *dir, struct dentry *dentry, __u32 hook)
{
	struct agent a;
	int err;

	if (!current_agent(&a))
		return 0;
	err = cgroup_path_check(&a, dir->mnt, hook);
	if (err)
		return err;
	return decide(&a, hook, dir->dentry, dir->mnt, dentry, AGENTD_RIGHT_CREATE);
}

/*
 * A character or block device node gives whoever opens it the device (a disk, the physical
 * memory), wherever it is made: created only when the policy grants devices. A whiteout (a
 * character device 0:0, what overlayfs and its tools make) is no device.
 */
static __always_inline int check_mknod(const struct path *dir, struct dentry *dentry, __u16 mode,
				       unsigned int dev)
{
	__u16 type = mode & S_IFMT;
	struct walk w = { .reason = AGENTD_REASON_DEVICE };
	struct agent a;

	if ((type != S_IFCHR && type != S_IFBLK) || (type == S_IFCHR && !dev))
		return check_create(dir, dentry, AGENTD_HOOK_PATH_MKNOD);
	if (!current_agent(&a) || (a.cfg.flags & AGENTD_AGENT_ALLOW_DEVICES))
		return check_create(dir, dentry, AGENTD_HOOK_PATH_MKNOD);
	emit_file_event(&a, AGENTD_HOOK_PATH_MKNOD, 1, &w, AGENTD_RIGHT_CREATE, dentry, dir->mnt);
	return -EPERM;
}

SEC("lsm/path_mknod")
int BPF_PROG(path_mknod, const struct path *dir, struct dentry *dentry, __u16 mode,
	     unsigned int dev, int ret)
{
	return ret ? ret : check_mknod(dir, dentry, mode, dev);
}

SEC("lsm/path_mkdir")
int BPF_PROG(path_mkdir, const struct path *dir, struct dentry *dentry, __u16 mode, int ret)
{
	return ret ? ret : check_create(dir, dentry, AGENTD_HOOK_PATH_MKDIR);
}

SEC("lsm/path_symlink")
int BPF_PROG(path_symlink, const struct path *dir, struct dentry *dentry, const char *old_name,
	     int ret)
{
	return ret ? ret : check_create(dir, dentry, AGENTD_HOOK_PATH_SYMLINK);
}

/*
 * Notification marks (inotify, fanotify, dnotify) tell what happens to an object: an agent may
 * place one only on an object it may read. A fanotify mark on a whole mount or file system sees
 * objects of every rule, and is refused.
 */
SEC("lsm/path_notify")
int BPF_PROG(path_notify, const struct path *path, __u64 mask, unsigned int obj_type, int ret)
{
	struct agent a;

	if (ret || !current_agent(&a))
		return ret;
	if (obj_type != FSNOTIFY_OBJ_TYPE_INODE)
		return deny_self(&a, AGENTD_HOOK_PATH_NOTIFY, AGENTD_REASON_SELF_PROTECT, 0,
				 obj_type);
	return decide(&a, AGENTD_HOOK_PATH_NOTIFY, path->dentry, path->mnt, path->dentry,
		      AGENTD_RIGHT_READ);
}

/* An operation on the object d, reached through mnt, that needs the rights needed. */
static __always_inline int check_at(struct vfsmount *mnt, struct dentry *d, __u32 hook,
				    __u32 needed)
{
	struct agent a;
	int err;

	if (!current_agent(&a))
		return 0;
	err = cgroup_path_check(&a, mnt, hook);
	if (err)
		return err;
	return decide(&a, hook, d, mnt, d, needed);
}

/* Removal: the object itself (and so its tree) needs REMOVE. */
static __always_inline int check_remove(const struct path *dir, struct dentry *dentry, __u32 hook)
{
	return check_at(dir->mnt, dentry, hook, AGENTD_RIGHT_REMOVE);
}

SEC("lsm/path_unlink")
int BPF_PROG(path_unlink, const struct path *dir, struct dentry *dentry, int ret)
{
	return ret ? ret : check_remove(dir, dentry, AGENTD_HOOK_PATH_UNLINK);
}

SEC("lsm/path_rmdir")
int BPF_PROG(path_rmdir, const struct path *dir, struct dentry *dentry, int ret)
{
	return ret ? ret : check_remove(dir, dentry, AGENTD_HOOK_PATH_RMDIR);
}

/*
 * Moving or linking an object to a new place: the source needs src_needed, the destination
 * directory CREATE and LINK, and the object may not gain rights. Its rights after the move are
 * the destination's, unless a rule sits on the object itself (rules follow objects).
 */
static __always_inline int check_move(const struct agent *a, __u32 hook, struct dentry *obj,
				      struct vfsmount *mnt, const struct path *to_dir,
				      __u32 src_needed)
{
	struct dentry *dir = to_dir->dentry;
	struct walk src = {}, dst = {};
	int deny;

	if (!a->has_config) {
		src.reason = AGENTD_REASON_NO_POLICY;
		deny = 1;
		goto out;
	}
	rights_walk_looped(a, obj, mnt, &src);
	deny = (src.rights & src_needed) != src_needed;
	if (deny)
		goto out;
	rights_walk_looped(a, dir, to_dir->mnt, &dst);
	deny = (dst.rights & (AGENTD_RIGHT_CREATE | AGENTD_RIGHT_LINK)) !=
	       (AGENTD_RIGHT_CREATE | AGENTD_RIGHT_LINK);
	if (deny) {
		src = dst;
		src_needed = AGENTD_RIGHT_CREATE | AGENTD_RIGHT_LINK;
		goto out;
	}
	if (src.depth && (dst.rights & ~src.rights)) {
		deny = 1;
		src.reason = AGENTD_REASON_LINK_WIDENS;
		src_needed = dst.rights;
	}
out:
	if (want_event(a, deny))
		emit_file_event(a, hook, deny, &src, src_needed, obj, mnt);
	return lsm_verdict(enforced(a, deny, src.reason));
}

SEC("lsm/path_link")
int BPF_PROG(path_link, struct dentry *old_dentry, const struct path *new_dir,
	     struct dentry *new_dentry, int ret)
{
	struct agent a;
	int err;

	if (ret)
		return ret;
	if (!current_agent(&a))
		return 0;
	err = cgroup_path_check(&a, new_dir->mnt, AGENTD_HOOK_PATH_LINK);
	if (err)
		return err;
	return check_move(&a, AGENTD_HOOK_PATH_LINK, old_dentry, new_dir->mnt, new_dir,
			  AGENTD_RIGHT_LINK);
}

SEC("lsm/path_rename")
int BPF_PROG(path_rename, const struct path *old_dir, struct dentry *old_dentry,
	     const struct path *new_dir, struct dentry *new_dentry, unsigned int flags, int ret)
{
	const __u32 needed = AGENTD_RIGHT_LINK | AGENTD_RIGHT_REMOVE;
	struct agent a;
	int err;

	if (ret)
		return ret;
	if (!current_agent(&a))
		return 0;
	/* A rename never crosses file systems: the source's mount says it all. */
	err = cgroup_path_check(&a, old_dir->mnt, AGENTD_HOOK_PATH_RENAME);
	if (err)
		return err;
	err = check_move(&a, AGENTD_HOOK_PATH_RENAME, old_dentry, old_dir->mnt, new_dir, needed);
	if (err)
		return err;
	if (flags & RENAME_EXCHANGE)
		return check_move(&a, AGENTD_HOOK_PATH_RENAME, new_dentry, new_dir->mnt, old_dir,
				  needed);
	/* Renaming over an existing name removes the object there: it needs REMOVE, or a file
	 * the agent may only read could be replaced. */
	if (BPF_CORE_READ(new_dentry, d_inode))
		return decide(&a, AGENTD_HOOK_PATH_RENAME, new_dentry, new_dir->mnt, new_dentry,
			      AGENTD_RIGHT_REMOVE);
	return 0;
}

static __always_inline int check_path(const struct path *path, __u32 hook, __u32 needed)
{
	return check_at(path->mnt, path->dentry, hook, needed);
}

SEC("lsm/path_truncate")
int BPF_PROG(path_truncate, const struct path *path, int ret)
{
	return ret ? ret : check_path(path, AGENTD_HOOK_PATH_TRUNCATE, AGENTD_RIGHT_TRUNCATE);
}

/* ftruncate() has its own hook from Linux 6.2 on; before, it went through path_truncate. */
SEC("lsm/file_truncate")
int BPF_PROG(file_truncate, struct file *file, int ret)
{
	return ret ? ret
		   : check_path(&file->f_path, AGENTD_HOOK_FILE_TRUNCATE, AGENTD_RIGHT_TRUNCATE);
}

SEC("lsm/path_chmod")
int BPF_PROG(path_chmod, const struct path *path, __u16 mode, int ret)
{
	return ret ? ret : check_path(path, AGENTD_HOOK_PATH_CHMOD, AGENTD_RIGHT_SETATTR);
}

SEC("lsm/path_chown")
int BPF_PROG(path_chown, const struct path *path, __u32 uid, __u32 gid, int ret)
{
	return ret ? ret : check_path(path, AGENTD_HOOK_PATH_CHOWN, AGENTD_RIGHT_SETATTR);
}

/*
 * Hooks that name a dentry and no mount: rights from inode_rights_walk (rights.bpf.h). Unlike
 * the path hooks, these also run for the kernel's own work on a file system's layers (an
 * overlay copying a file up sets its times and xattrs on the upper layer, under the mounter's
 * credentials), and they check it too: overridden credentials are no sign of the kernel's own
 * work, since io_uring runs a request under a personality the agent registered.
 */
static __always_inline int check_inode(struct dentry *d, __u32 hook, __u32 needed)
{
	struct agent a;

	if (!current_agent(&a))
		return 0;
	return decide_inode(&a, hook, d, needed);
}

/*
 * Times set by utimensat() and friends: chosen times need SETATTR; the current time (touch)
 * needs WRITE, as the kernel asks only write permission for it, since writing sets it too. The
 * hook's arguments moved in Linux 6.8 (an idmap came first), so they are read by position from
 * the count the trampoline keeps. Its ret is not read: the trampoline runs no later program
 * once one has returned non-zero. Changes of mode and owner are path_chmod's and path_chown's;
 * size changes are truncation's; the kernel's own (stripping set-uid on write) carry no times.
 */
SEC("lsm/inode_setattr")
int inode_setattr(__u64 *ctx)
{
	__u64 dentry = 0, attr = 0;
	unsigned int valid;
	int i = bpf_get_func_arg_cnt(ctx) == 3;

	if (bpf_get_func_arg(ctx, i, &dentry) || bpf_get_func_arg(ctx, i + 1, &attr))
		return 0;
	valid = BPF_CORE_READ((struct iattr *)attr, ia_valid);
	if (!(valid & (ATTR_ATIME | ATTR_MTIME)) || (valid & ATTR_SIZE))
		return 0;
	return check_inode((struct dentry *)dentry, AGENTD_HOOK_INODE_SETATTR,
			   valid & (ATTR_ATIME_SET | ATTR_MTIME_SET) ? AGENTD_RIGHT_SETATTR
								     : AGENTD_RIGHT_WRITE);
}

SEC("lsm/inode_setxattr")
int BPF_PROG(inode_setxattr, void *idmap, struct dentry *dentry, const char *name,
	     const void *value, __u64 size, int flags, int ret)
{
	return ret ? ret : check_inode(dentry, AGENTD_HOOK_INODE_SETXATTR, AGENTD_RIGHT_SETATTR);
}

SEC("lsm/inode_removexattr")
int BPF_PROG(inode_removexattr, void *idmap, struct dentry *dentry, const char *name, int ret)
{
	return ret ? ret : check_inode(dentry, AGENTD_HOOK_INODE_REMOVEXATTR, AGENTD_RIGHT_SETATTR);
}

/* From Linux 6.2 on, POSIX ACLs have their own hooks; before, they went through setxattr. */
SEC("lsm/inode_set_acl")
int BPF_PROG(inode_set_acl, void *idmap, struct dentry *dentry, const char *acl_name, void *kacl,
	     int ret)
{
	return ret ? ret : check_inode(dentry, AGENTD_HOOK_INODE_SET_ACL, AGENTD_RIGHT_SETATTR);
}

SEC("lsm/inode_remove_acl")
int BPF_PROG(inode_remove_acl, void *idmap, struct dentry *dentry, const char *acl_name, int ret)
{
	return ret ? ret : check_inode(dentry, AGENTD_HOOK_INODE_REMOVE_ACL, AGENTD_RIGHT_SETATTR);
}
