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

struct dentry;

struct file_system_type {
	const char *name;
};

struct super_block {
	struct file_system_type *s_type;
	__u32 s_dev; /* dev_t */
	unsigned long s_magic;
	unsigned long s_flags;
	struct dentry *s_root;
};

struct inode {
	__u16 i_mode;
	unsigned long i_ino;
	struct super_block *i_sb;
};

struct dentry {
	struct dentry *d_parent;
	struct qstr d_name;
	struct inode *d_inode;
	struct super_block *d_sb;
};

struct vfsmount {
	struct dentry *mnt_root;
	struct super_block *mnt_sb;
};

struct mnt_namespace;

struct mount {
	struct mount *mnt_parent;
	struct dentry *mnt_mountpoint;
	struct vfsmount mnt;
	struct mnt_namespace *mnt_ns;
};

struct path {
	struct vfsmount *mnt;
	struct dentry *dentry;
};

struct file;

/* Linux 6.12 allocates it apart and points back to its file; before, it was inside the file. */
struct fown_struct {
	struct file *file;
};

struct file {
	struct path f_path;
	struct inode *f_inode;
	unsigned int f_flags;
	unsigned int f_mode; /* fmode_t */
	struct fown_struct f_owner; /* before Linux 6.12 */
};

struct linux_binprm {
	struct file *file;
};

struct vm_area_struct {
	struct file *vm_file;
};

struct kernfs_node {
	__u64 id;
};

struct cgroup_subsys_state {
	struct cgroup_subsys_state *parent;
};

struct cgroup {
	struct cgroup_subsys_state self;
	int level;
	struct kernfs_node *kn;
};

struct css_set {
	struct cgroup *dfl_cgrp;
};

struct cred;

struct task_struct {
	int pid;
	int tgid;
	struct css_set *cgroups;
	struct task_struct *real_parent;
};

struct iattr {
	unsigned int ia_valid;
};
struct kernel_siginfo;
struct perf_event_attr;
struct key;
struct user_namespace;
struct kern_ipc_perm;
struct msg_msg;
struct sembuf;

#pragma clang attribute pop

/* From the kernel's headers; stable values. */
#define FMODE_READ 0x1
#define FMODE_WRITE 0x2
#define FMODE_EXEC 0x20
#define O_CREAT 00000100
#define O_TRUNC 00001000
#define PROT_EXEC 0x4
#define S_IFMT 00170000
#define S_IFDIR 0040000
#define S_IFCHR 0020000
#define S_IFBLK 0060000
#define DEVPTS_SUPER_MAGIC 0x1cd1
#define CLONE_PARENT 0x00008000
#define CLONE_THREAD 0x00010000
#define CAP_SETGID 6
#define CAP_SETUID 7
#define CAP_SETPCAP 8
#define CAP_SYS_ADMIN 21
#define CAP_SYS_TIME 25
#define CAP_SYSLOG 34
#define CAP_OPT_NOAUDIT (1U << 1)
#define O_ASYNC 020000
#define F_SETFL 4
#define F_SETOWN 8
#define F_SETSIG 10
#define F_SETOWN_EX 15
#define F_SETLEASE 1024
#define F_NOTIFY 1026
#define TIOCSTI 0x5412
#define TIOCLINUX 0x541C
#define TIOCCONS 0x541D
#define FIOASYNC 0x5452
#define FIOSETOWN 0x8901
#define SIOCSPGRP 0x8902
#define FSNOTIFY_OBJ_TYPE_INODE 0
#define CGROUP2_SUPER_MAGIC 0x63677270
#define CGROUP_SUPER_MAGIC 0x27e0eb
#define CLONE_INTO_CGROUP 0x200000000ULL
#define RENAME_EXCHANGE (1 << 1)
#define ATTR_SIZE (1 << 3)
#define ATTR_ATIME (1 << 4)
#define ATTR_MTIME (1 << 5)
#define ATTR_ATIME_SET (1 << 7)
#define ATTR_MTIME_SET (1 << 8)
#define SB_KERNMOUNT (1 << 22)
#define EPERM 1
#define ENOMEM 12
#define AF_UNIX 1
#define AF_INET 2
#define AF_INET6 10
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17
#define SOCK_STREAM 1
#define SOCK_DGRAM 2

#endif /* AGENTD_BPF_KERNEL_H */
