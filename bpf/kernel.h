/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel types the programs read, declared with preserve_access_index so that every
 * field access is a CO-RE relocation resolved against the running kernel's BTF at load time.
 * Only the fields used are declared; their offsets in this file mean nothing.
 * We declare instead of vendoring a vmlinux.h so that the build never depends on the build
 * host's kernel and the objects stay small and reviewable (see docs/ARCHITECTURE.md).
 */
#ifndef AGENTD_BPF_KERNEL_H
#define AGENTD_BPF_KERNEL_H

#include <linux/types.h>
#include <linux/bpf.h> /* UAPI: map types and helper flags, stable by definition */

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct qstr {
	__u32 len;
	const unsigned char *name;
};

struct super_block {
	__u32 s_dev; /* dev_t */
};

struct inode {
	unsigned long i_ino;
	struct super_block *i_sb;
};

struct dentry {
	struct dentry *d_parent;
	struct qstr d_name;
	struct inode *d_inode;
};

struct vfsmount {
	struct dentry *mnt_root;
};

struct path {
	struct vfsmount *mnt;
	struct dentry *dentry;
};

struct file {
	struct path f_path;
	struct inode *f_inode;
};

#pragma clang attribute pop

#endif /* AGENTD_BPF_KERNEL_H */
