/* SPDX-License-Identifier: GPL-2.0 */
/* The file_open decision, shared by files.bpf.c and the attachment benchmark (lsmcg.bpf.c). */
#ifndef AGENTD_FILES_BPF_H
#define AGENTD_FILES_BPF_H

#include "rights.bpf.h"
#include "self.bpf.h"

static __always_inline __u32 open_rights(struct file *file)
{
	unsigned int mode = file->f_mode, flags = file->f_flags;
	__u32 needed = 0;

	/* The kernel opens a binary for exec with FMODE_EXEC: exec rights, not read. */
	if (mode & FMODE_EXEC)
		needed |= AGENTD_RIGHT_EXEC;
	else if (mode & FMODE_READ)
		needed |= AGENTD_RIGHT_READ;
	if (mode & FMODE_WRITE)
		needed |= AGENTD_RIGHT_WRITE;
	if ((flags & O_TRUNC) && (mode & FMODE_WRITE))
		needed |= AGENTD_RIGHT_TRUNCATE;
	return needed;
}

/*
 * Devices the kernel makes: nodes of a devtmpfs (the /dev the kernel populates, and bind mounts
 * of its nodes) or of a devpts (terminals). A node anywhere else was made by someone's mknod.
 */
static __always_inline int kernel_device_fs(struct super_block *sb)
{
	static const char devtmpfs[] = "devtmpfs";
	char name[sizeof(devtmpfs)] = {};
	int i;

	if (sb->s_magic == DEVPTS_SUPER_MAGIC)
		return 1;
	if (bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(sb, s_type, name)) !=
	    sizeof(devtmpfs))
		return 0;
	for (i = 0; i < sizeof(devtmpfs); i++)
		if (name[i] != devtmpfs[i])
			return 0;
	return 1;
}

/*
 * A character or block device opens through a rule on the node itself, or through a tree rule
 * only on a file system of the kernel's devices: a node made elsewhere (in a workspace, by
 * anyone) never opens through the rights of the tree it sits in.
 */
static __always_inline int device_denied(struct file *file, struct walk *w)
{
	struct inode *inode = file->f_inode;
	__u16 type = inode->i_mode & S_IFMT;

	if ((type != S_IFCHR && type != S_IFBLK) || !w->depth || kernel_device_fs(inode->i_sb))
		return 0;
	w->reason = AGENTD_REASON_DEVICE;
	return 1;
}

/* Whether agent a may not open file as it asks, shadow mode applied (an event is emitted when
 * its rules deny, or when the policy logs allows). */
static __always_inline int file_open_denied(const struct agent *a, struct file *file)
{
	struct dentry *d = file->f_path.dentry;
	struct vfsmount *mnt = file->f_path.mnt;
	__u32 needed = open_rights(file);
	struct walk w = {};
	int deny;

	if (!a->has_config) {
		w.reason = AGENTD_REASON_NO_POLICY;
		deny = 1;
	} else {
		rights_walk(a, d, mnt, &w);
		/* Objects on internal mounts (pipes, sockets, memfds) have no path: the agent can
		 * only reopen one it already holds (/proc/self/fd). Exec of them is exec's concern. */
		deny = (w.rights & needed) != needed && !(w.flags & AGENTD_EVF_INTERNAL);
		/* The open of an exec is not its use: the exec is (exec.bpf.c). */
		if (deny &&
		    walk_granted(a, &w, d, needed,
				 needed & AGENTD_RIGHT_EXEC ? GRANT_PEEK_OR_MINE : GRANT_CLAIM))
			deny = 0;
		deny = deny || device_denied(file, &w);
	}
	if (want_file_event(a, deny, &w))
		emit_file_event(a, AGENTD_HOOK_FILE_OPEN, deny, &w, needed, d, mnt);
	return enforced(a, deny, w.reason);
}

/* The verdict of file_open: 0 or -EPERM. A task of no agent: 0 after the identity lookup. The
 * agent's file policy, after self-protection (no cgroup file opened for writing, whatever the
 * policy grants). */
static __always_inline int file_open_verdict(struct file *file)
{
	struct agent a;
	int err;

	if (!current_agent(&a))
		return 0;
	err = cgroup_open_check(&a, file);
	if (err)
		return err;
	return lsm_verdict(file_open_denied(&a, file));
}

#endif /* AGENTD_FILES_BPF_H */
