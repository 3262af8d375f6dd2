// SPDX-License-Identifier: GPL-2.0
/*
 * Self-protection: what no agent may do, whatever its policy. An agent may not load BPF or
 * kernel modules, open perf events, mount, create user namespaces, use keyrings, write to any
 * cgroup file or clone into another cgroup (so it never leaves its cgroup: self.bpf.h lists the
 * hooks; file_open and the path hooks are in files.bpf.c), or signal or ptrace a task outside
 * itself.
 *
 * Fails closed: every agent task is denied; tasks of no agent are not affected.
 */
#include "contain.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * Denied to every agent, so these programs read no argument: hook signatures differ between
 * kernels (perf_event_open lost its attr in 6.11), and the previous program's verdict needs no
 * reading either: the trampoline runs no further program once one has returned an error.
 * userns_create exists from Linux 6.1 on; where a hook is missing it is reported, not loaded.
 */
SEC("lsm/bpf")
int BPF_PROG(bpf_syscall)
{
	return deny_agents(AGENTD_HOOK_BPF, 0);
}

SEC("lsm/perf_event_open")
int BPF_PROG(perf_event_open)
{
	return deny_agents(AGENTD_HOOK_PERF_EVENT_OPEN, 0);
}

SEC("lsm/kernel_module_request")
int BPF_PROG(kernel_module_request)
{
	return deny_agents(AGENTD_HOOK_KERNEL_MODULE_REQUEST, 0);
}

SEC("lsm/kernel_read_file")
int BPF_PROG(kernel_read_file)
{
	return deny_agents(AGENTD_HOOK_KERNEL_READ_FILE, 0);
}

SEC("lsm/kernel_load_data")
int BPF_PROG(kernel_load_data)
{
	return deny_agents(AGENTD_HOOK_KERNEL_LOAD_DATA, 0);
}

SEC("lsm/sb_mount")
int BPF_PROG(sb_mount)
{
	return deny_agents(AGENTD_HOOK_SB_MOUNT, 0);
}

SEC("lsm/move_mount")
int BPF_PROG(move_mount)
{
	return deny_agents(AGENTD_HOOK_MOVE_MOUNT, 0);
}

SEC("lsm/sb_umount")
int BPF_PROG(sb_umount)
{
	return deny_agents(AGENTD_HOOK_SB_UMOUNT, 0);
}

SEC("lsm/sb_pivotroot")
int BPF_PROG(sb_pivotroot)
{
	return deny_agents(AGENTD_HOOK_SB_PIVOTROOT, 0);
}

SEC("lsm/userns_create")
int BPF_PROG(userns_create)
{
	return deny_agents(AGENTD_HOOK_USERNS_CREATE, 0);
}

SEC("lsm/key_alloc")
int BPF_PROG(key_alloc)
{
	return deny_agents(AGENTD_HOOK_KEY_ALLOC, 0);
}

SEC("lsm/key_permission")
int BPF_PROG(key_permission)
{
	return deny_agents(AGENTD_HOOK_KEY_PERMISSION, 0);
}

/*
 * clone3(CLONE_INTO_CGROUP): copy_process() calls this hook with the clone3 flags, high bits
 * included, before cgroup_can_fork() places the child. From an agent: refused. From a task of
 * no agent: the child is marked as launching (contain.bpf.h). CLONE_PARENT from an agent whose
 * parent is outside it would give that parent a child, and its exit signal: refused (threads
 * send none). Other forks pass one test.
 */
static __always_inline int clone_check(struct task_struct *task, unsigned long clone_flags)
{
	struct task_struct *parent;
	struct agent a;

	if (!current_agent(&a)) {
		if (clone_flags & CLONE_INTO_CGROUP)
			bpf_task_storage_get(&launching, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		return 0;
	}
	if (clone_flags & CLONE_INTO_CGROUP)
		return deny_self(&a, AGENTD_HOOK_CGROUP_WRITE, AGENTD_REASON_SELF_PROTECT, 0,
				 AGENTD_HOOK_TASK_ALLOC);
	if (clone_flags & CLONE_THREAD)
		return 0;
	parent = BPF_CORE_READ(bpf_get_current_task_btf(), real_parent);
	if (task_agent(parent) == a.id)
		return 0;
	return deny_self(&a, AGENTD_HOOK_TASK_ALLOC, AGENTD_REASON_OUTSIDE_AGENT,
			 BPF_CORE_READ(parent, tgid), clone_flags);
}

SEC("lsm/task_alloc")
int BPF_PROG(task_alloc, struct task_struct *task, unsigned long clone_flags, int ret)
{
	if (ret || !(clone_flags & (CLONE_INTO_CGROUP | CLONE_PARENT)))
		return ret;
	return clone_check(task, clone_flags);
}

/* A cgroup file opened for writing elsewhere, passed to an agent (SCM_RIGHTS, pidfd_getfd):
 * the descriptor is not installed. */
SEC("lsm/file_receive")
int BPF_PROG(file_receive, struct file *file, int ret)
{
	if (ret || !cgroup_file_writable(file))
		return ret;
	return deny_agents(AGENTD_HOOK_CGROUP_WRITE, AGENTD_HOOK_FILE_RECEIVE);
}

/* Extended attributes of cgroups (user.* ones steer systemd-oomd, for one). The dentry is the
 * second argument on every kernel (the first became a mnt_idmap in 6.3). */
static __always_inline int cgroup_xattr_check(struct dentry *dentry, __u32 hook)
{
	if (!on_cgroupfs(dentry->d_sb))
		return 0;
	return deny_agents(AGENTD_HOOK_CGROUP_WRITE, hook);
}

SEC("lsm/inode_setxattr")
int BPF_PROG(inode_setxattr, void *idmap, struct dentry *dentry)
{
	return cgroup_xattr_check(dentry, AGENTD_HOOK_INODE_SETXATTR);
}

SEC("lsm/inode_removexattr")
int BPF_PROG(inode_removexattr, void *idmap, struct dentry *dentry)
{
	return cgroup_xattr_check(dentry, AGENTD_HOOK_INODE_REMOVEXATTR);
}

/* Signals and ptrace reach only tasks of the same agent. */
static __always_inline int check_target(struct task_struct *target, __u32 hook, __u32 arg)
{
	struct agent a;

	if (!current_agent(&a))
		return 0;
	if (task_agent(target) == a.id)
		return 0;
	return deny_self(&a, hook, AGENTD_REASON_OUTSIDE_AGENT, BPF_CORE_READ(target, tgid), arg);
}

SEC("lsm/task_kill")
int BPF_PROG(task_kill, struct task_struct *p, struct kernel_siginfo *info, int sig,
	     const struct cred *cred, int ret)
{
	return ret ? ret : check_target(p, AGENTD_HOOK_TASK_KILL, sig);
}

SEC("lsm/ptrace_access_check")
int BPF_PROG(ptrace_access_check, struct task_struct *child, unsigned int mode, int ret)
{
	return ret ? ret : check_target(child, AGENTD_HOOK_PTRACE_ACCESS_CHECK, mode);
}

SEC("lsm/ptrace_traceme")
int BPF_PROG(ptrace_traceme, struct task_struct *parent, int ret)
{
	return ret ? ret : check_target(parent, AGENTD_HOOK_PTRACE_TRACEME, 0);
}
