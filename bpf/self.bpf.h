/* SPDX-License-Identifier: GPL-2.0 */
/* Self-protection verdicts, shared by self.bpf.c and the attachment benchmark (lsmcg.bpf.c). */
#ifndef AGENTD_SELF_BPF_H
#define AGENTD_SELF_BPF_H

#include "agent.bpf.h"

static __always_inline int deny_self(const struct agent *a, __u32 hook, __u32 reason,
				     __u32 target_pid, __u32 arg)
{
	struct agentd_self_event *e;

	e = event_reserve(a->id, sizeof(*e));
	if (e) {
		event_fill(&e->hdr, AGENTD_EV_SELF, sizeof(*e), &e->task, a, &e->verdict, hook, 1,
			   reason, 0);
		e->target_pid = target_pid;
		e->arg = arg;
		event_submit(e);
	}
	return -EPERM;
}

static __always_inline int deny_agents(__u32 hook, __u32 arg)
{
	struct agent a;

	if (!current_agent(&a))
		return 0;
	return deny_self(&a, hook, AGENTD_REASON_SELF_PROTECT, 0, arg);
}

/*
 * The cgroup file systems (v2 and v1): writing any of their files or changing their tree is how
 * a task moves (cgroup.procs, tasks) or changes its limits. An agent does neither, whatever
 * its policy. Each check runs once per operation, in a hook that runs once per operation:
 * file_open (a file opened for writing, appending or truncating), the path hooks (mkdir, rmdir,
 * rename, link, unlink, chmod, chown, truncate), inode_setxattr/removexattr, file_receive (a
 * writable cgroup file passed by SCM_RIGHTS or pidfd_getfd) and task_alloc
 * (clone3(CLONE_INTO_CGROUP)). Each denial is one self event, hook AGENTD_HOOK_CGROUP_WRITE,
 * arg the hook that saw it. A cgroup file opened for writing before the task became an agent
 * is not seen by any of them: agentctl run and agentd's attach refuse such tasks.
 */
static __always_inline int on_cgroupfs(struct super_block *sb)
{
	unsigned long magic = sb->s_magic;

	return magic == CGROUP2_SUPER_MAGIC || magic == CGROUP_SUPER_MAGIC;
}

/* A cgroup file open for writing, or being opened to create or truncate. */
static __always_inline int cgroup_file_writable(struct file *file)
{
	unsigned int mode = file->f_mode, flags = file->f_flags;

	if (!(mode & FMODE_WRITE) && !(flags & (O_CREAT | O_TRUNC)))
		return 0;
	return on_cgroupfs(file->f_inode->i_sb);
}

/* For an agent already identified: -EPERM (and an event) when file writes to a cgroup. */
static __always_inline int cgroup_open_check(const struct agent *a, struct file *file)
{
	if (!cgroup_file_writable(file))
		return 0;
	return deny_self(a, AGENTD_HOOK_CGROUP_WRITE, AGENTD_REASON_SELF_PROTECT, 0,
			 AGENTD_HOOK_FILE_OPEN);
}

/* For an agent already identified: -EPERM (and an event) when a path hook's object is on a
 * cgroup file system (mnt: the mount of the object or of its directory). */
static __always_inline int cgroup_path_check(const struct agent *a, struct vfsmount *mnt,
					     __u32 hook)
{
	if (!on_cgroupfs(mnt->mnt_sb))
		return 0;
	return deny_self(a, AGENTD_HOOK_CGROUP_WRITE, AGENTD_REASON_SELF_PROTECT, 0, hook);
}

#endif /* AGENTD_SELF_BPF_H */
