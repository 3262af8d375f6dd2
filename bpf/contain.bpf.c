// SPDX-License-Identifier: GPL-2.0
/*
 * Containment: an agent, whatever its uid and the capabilities its credentials carry, uses only
 * the capabilities its policy grants, and reaches no task, System V IPC object or kernel-wide
 * setting outside itself by any route these hooks see. Each program first asks whether the
 * current task is an agent's (current_agent()), so a task of no agent pays that lookup only,
 * except where a hook acts for a task other than the current one (file_send_sigiotask) or keeps
 * state for every task (the free hooks), which say so.
 *
 * Fails closed: a decision that needs state it cannot record (a full map) refuses the operation
 * that would need it; where a hook cannot refuse (file_set_fowner is void), the loss is reported.
 */
#include "contain.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * Capabilities: an agent's task uses only those its policy names, whatever its credentials hold,
 * in every user namespace. The current task decides, not the credentials checked: the kernel
 * also checks a file opener's or another task's credentials on the current task's behalf, and
 * an agent may not borrow them (a socket opened before an exec, an overlay's mounter). Earlier
 * LSMs' refusals stand (ret). Opportunistic checks (CAP_OPT_NOAUDIT: the kernel asks whether a
 * task could, on every mmap for one) are refused without an event. Fails closed: an agent
 * without a configuration has none.
 */
SEC("lsm/capable")
int BPF_PROG(capable, const struct cred *cred, struct user_namespace *ns, int cap,
	     unsigned int opts, int ret)
{
	struct agent a;

	if (ret)
		return ret;
	if (!current_agent(&a))
		return 0;
	if (cap >= 0 && cap < 64 && ((a.cfg.capabilities >> cap) & 1))
		return 0;
	if ((cap == CAP_SETUID || cap == CAP_SETGID || cap == CAP_SETPCAP) &&
	    bpf_task_storage_get(&launching, bpf_get_current_task_btf(), 0, 0))
		return 0;
	if (opts & CAP_OPT_NOAUDIT)
		return -EPERM;
	return deny_self(&a, AGENTD_HOOK_CAPABLE, AGENTD_REASON_CAPABILITY, 0, cap);
}

/* The launcher's window ends with its exec (contain.bpf.h). A void hook: nothing to fail. */
SEC("lsm/bprm_committed_creds")
int BPF_PROG(bprm_committed_creds)
{
	bpf_task_storage_delete(&launching, bpf_get_current_task_btf());
	return 0;
}

/* Denied unless the policy grants cap: for what the kernel allows without one. */
static __always_inline int deny_without(int cap, __u32 hook, __u32 arg)
{
	struct agent a;

	if (!current_agent(&a) || ((a.cfg.capabilities >> cap) & 1))
		return 0;
	return deny_self(&a, hook, AGENTD_REASON_CAPABILITY, 0, arg);
}

/* The kernel log (syslog(2), /dev/kmsg, /proc/kmsg): with dmesg_restrict=0 the kernel lets any
 * task read it; an agent only with syslog granted. */
SEC("lsm/syslog")
int BPF_PROG(syslog, int type, int ret)
{
	return ret ? ret : deny_without(CAP_SYSLOG, AGENTD_HOOK_SYSLOG, type);
}

/* The clock (settimeofday, clock_settime, adjtimex that sets): only with sys_time granted. */
SEC("lsm/settime")
int BPF_PROG(settime, void *ts, void *tz, int ret)
{
	return ret ? ret : deny_without(CAP_SYS_TIME, AGENTD_HOOK_SETTIME, 0);
}

/* Quotas, reading one's own included: only with sys_admin granted. */
SEC("lsm/quotactl")
int BPF_PROG(quotactl, int cmds, int type, int id, void *sb, int ret)
{
	return ret ? ret : deny_without(CAP_SYS_ADMIN, AGENTD_HOOK_QUOTACTL, cmds);
}

/*
 * userfaultfd (the syscall, and /dev/userfaultfd's USERFAULTFD_IOC_NEW) makes its file with
 * anon_inode_getfd_secure(), which asks this hook with the name "[userfaultfd]". Denied to every
 * agent: with UFFD_USER_MODE_ONLY it needs no capability, and it stretches kernel races at will.
 */
SEC("lsm/inode_init_security_anon")
int BPF_PROG(inode_init_security_anon, struct inode *inode, const struct qstr *name,
	     const struct inode *context_inode, int ret)
{
	static const char uffd[] = "[userfaultfd]";
	char buf[sizeof(uffd)] = {};
	struct agent a;
	int i;

	if (ret || !current_agent(&a))
		return ret;
	if (bpf_probe_read_kernel_str(buf, sizeof(buf), BPF_CORE_READ(name, name)) != sizeof(uffd))
		return 0;
	for (i = 0; i < sizeof(uffd); i++)
		if (buf[i] != uffd[i])
			return 0;
	return deny_self(&a, AGENTD_HOOK_USERFAULTFD, AGENTD_REASON_SELF_PROTECT, 0, 0);
}

/*
 * Tasks outside the agent: their scheduling, priority, I/O priority, process group and memory
 * placement are not the agent's to change. Fails closed: a target whose agent cannot be found
 * is no agent's.
 */
static __always_inline int check_task(struct task_struct *target, __u32 hook, __u32 arg)
{
	struct agent a;

	if (!current_agent(&a))
		return 0;
	if (task_agent(target) == a.id)
		return 0;
	return deny_self(&a, hook, AGENTD_REASON_OUTSIDE_AGENT, BPF_CORE_READ(target, tgid), arg);
}

SEC("lsm/task_setpgid")
int BPF_PROG(task_setpgid, struct task_struct *p, int pgid, int ret)
{
	return ret ? ret : check_task(p, AGENTD_HOOK_TASK_SETPGID, pgid);
}

SEC("lsm/task_setnice")
int BPF_PROG(task_setnice, struct task_struct *p, int nice, int ret)
{
	return ret ? ret : check_task(p, AGENTD_HOOK_TASK_SETNICE, nice);
}

SEC("lsm/task_setioprio")
int BPF_PROG(task_setioprio, struct task_struct *p, int ioprio, int ret)
{
	return ret ? ret : check_task(p, AGENTD_HOOK_TASK_SETIOPRIO, ioprio);
}

/* sched_setscheduler, sched_setattr, sched_setaffinity. */
SEC("lsm/task_setscheduler")
int BPF_PROG(task_setscheduler, struct task_struct *p, int ret)
{
	return ret ? ret : check_task(p, AGENTD_HOOK_TASK_SETSCHEDULER, 0);
}

/* move_pages, migrate_pages. */
SEC("lsm/task_movememory")
int BPF_PROG(task_movememory, struct task_struct *p, int ret)
{
	return ret ? ret : check_task(p, AGENTD_HOOK_TASK_MOVEMEMORY, 0);
}

/*
 * prlimit() of another task, to read or to set: the kernel asks this hook only when the target
 * is not the caller, and names credentials, not tasks. Credentials shared are the caller's own
 * thread group's (threads share them; a fork copies them); any other target is refused, one of
 * the agent's own included, which the hook cannot tell apart.
 */
SEC("lsm/task_prlimit")
int BPF_PROG(task_prlimit, const struct cred *cred, const struct cred *tcred, unsigned int flags,
	     int ret)
{
	struct agent a;

	if (ret || !current_agent(&a) || cred == tcred)
		return ret;
	return deny_self(&a, AGENTD_HOOK_TASK_PRLIMIT, AGENTD_REASON_OUTSIDE_AGENT, 0, flags);
}

/*
 * SIGIO and SIGURG go to a file's owner when its I/O is ready, sent by whichever task (or
 * interrupt) made it ready, through no task_kill: owners set by an agent are recorded here, by
 * file, and a signal from such a file reaches only that agent's tasks (file_send_sigiotask).
 * An agent may set any owner; what it owns it may signal, nothing else.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16 * AGENTD_MAX_AGENTS);
	__type(key, __u64); /* the struct file */
	__type(value, __u32); /* the agent that set its owner */
} sigio_owners SEC(".maps");

/* Entries in sigio_owners: while 0, a file's release has nothing to forget. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sigio_owner_count SEC(".maps");

static __always_inline void owner_count_add(__s64 n)
{
	__u32 zero = 0;
	__u64 *count = bpf_map_lookup_elem(&sigio_owner_count, &zero);

	if (count)
		__sync_fetch_and_add(count, n);
}

/* Records that agent id sets file's owner; -EPERM (and an event) when the map is full. */
static __always_inline int owner_record(const struct agent *a, struct file *file, __u32 hook,
					__u32 arg)
{
	__u64 key = (__u64)file;
	__u32 id = a->id;

	if (!bpf_map_update_elem(&sigio_owners, &key, &id, BPF_NOEXIST)) {
		owner_count_add(1);
		return 0;
	}
	if (!bpf_map_update_elem(&sigio_owners, &key, &id, BPF_EXIST))
		return 0;
	return deny_self(a, hook, AGENTD_REASON_UNRECORDED, 0, arg);
}

static __always_inline void owner_forget(struct file *file)
{
	__u64 key = (__u64)file;

	if (!bpf_map_delete_elem(&sigio_owners, &key))
		owner_count_add(-1);
}

/*
 * Every route that sets an owner (__f_setown) passes here, the setter current. Void: a record
 * that fails is reported (the fcntl and ioctl routes recorded it already, and refuse then). A
 * record stays until the file is released, the host's own setting an owner again included: an
 * agent that chose the signal (F_SETSIG) would otherwise steer the host's new owner too.
 */
SEC("lsm/file_set_fowner")
int BPF_PROG(file_set_fowner, struct file *file)
{
	struct agent a;

	if (current_agent(&a))
		owner_record(&a, file, AGENTD_HOOK_FILE_FCNTL, 0);
	return 0;
}

/* A released file's record goes. Runs for every file of every task: one load while no agent
 * holds a record, a hash deletion otherwise. */
SEC("lsm/file_free_security")
int BPF_PROG(file_free_security, struct file *file)
{
	__u32 zero = 0;
	__u64 *count = bpf_map_lookup_elem(&sigio_owner_count, &zero);

	if (count && *count)
		owner_forget(file);
	return 0;
}

static __always_inline struct file *fown_file(struct fown_struct *fown)
{
	if (bpf_core_field_exists(struct fown_struct, file))
		return BPF_CORE_READ(fown, file);
	return (struct file *)((void *)fown - bpf_core_field_offset(struct file, f_owner));
}

/* current is whoever made the I/O ready: the file's record decides. */
SEC("lsm/file_send_sigiotask")
int BPF_PROG(file_send_sigiotask, struct task_struct *tsk, struct fown_struct *fown, int sig,
	     int ret)
{
	__u64 key;
	__u32 *owner, id;
	struct agent a;

	if (ret)
		return ret;
	key = (__u64)fown_file(fown);
	owner = bpf_map_lookup_elem(&sigio_owners, &key);
	if (!owner)
		return 0;
	id = *owner;
	if (task_agent(tsk) == id)
		return 0;
	agent_config(&a, id);
	return deny_self(&a, AGENTD_HOOK_FILE_SEND_SIGIOTASK, AGENTD_REASON_OUTSIDE_AGENT,
			 BPF_CORE_READ(tsk, tgid), sig);
}

/*
 * fcntl commands that set an owner or steer what it is sent: F_SETFL's O_ASYNC (a tty's fasync
 * sets an owner; on a file whose owner the host set, it would have the host sent SIGIO, whose
 * default is to terminate) and F_SETSIG (SIGKILL, to the host's owner) make the file the
 * agent's too.
 */
static __always_inline int fcntl_steers_signals(unsigned int cmd, unsigned long arg)
{
	return cmd == F_SETOWN || cmd == F_SETOWN_EX || cmd == F_SETSIG || cmd == F_SETLEASE ||
	       cmd == F_NOTIFY || (cmd == F_SETFL && (arg & O_ASYNC));
}

SEC("lsm/file_fcntl")
int BPF_PROG(file_fcntl, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
	struct agent a;

	if (ret || !fcntl_steers_signals(cmd, arg) || !current_agent(&a))
		return ret;
	return owner_record(&a, file, AGENTD_HOOK_FILE_FCNTL, cmd);
}

/*
 * Terminals: TIOCSTI types into a terminal's input (commands for the shell that reads it),
 * TIOCLINUX's selection paste does the same on a virtual console, TIOCCONS redirects the
 * console. Refused to every agent on every tty, whatever capability it holds. The ioctls that
 * set an owner are recorded as fcntl's are.
 */
static __always_inline int ioctl_check(struct file *file, unsigned int cmd)
{
	struct agent a;

	if (!current_agent(&a))
		return 0;
	if (cmd == TIOCSTI || cmd == TIOCLINUX || cmd == TIOCCONS)
		return deny_self(&a, AGENTD_HOOK_FILE_IOCTL, AGENTD_REASON_SELF_PROTECT, 0, cmd);
	if (cmd == FIOSETOWN || cmd == SIOCSPGRP || cmd == FIOASYNC)
		return owner_record(&a, file, AGENTD_HOOK_FILE_IOCTL, cmd);
	return 0;
}

SEC("lsm/file_ioctl")
int BPF_PROG(file_ioctl, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
	return ret ? ret : ioctl_check(file, cmd);
}

/* 32-bit ioctls have their own hook from Linux 6.7 on; before, file_ioctl saw them. */
SEC("lsm/file_ioctl_compat")
int BPF_PROG(file_ioctl_compat, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
	return ret ? ret : ioctl_check(file, cmd);
}

/*
 * System V IPC: shared memory segments, message queues and semaphore sets are reachable by key
 * or id from anywhere in the IPC namespace. An agent reaches only those its own tasks created:
 * their creator's agent is recorded at creation, by object, and forgotten when it goes. An
 * object the host creates is never recorded, and so never the agent's. Creation by an agent
 * whose record cannot be stored (the map full) is refused: fail closed.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16 * AGENTD_MAX_AGENTS);
	__type(key, __u64); /* the struct kern_ipc_perm */
	__type(value, __u32); /* the agent whose task created it */
} ipc_owners SEC(".maps");

static __always_inline int ipc_alloc(struct kern_ipc_perm *perm, __u32 kind)
{
	__u64 key = (__u64)perm;
	struct agent a;

	if (!current_agent(&a))
		return 0;
	if (!bpf_map_update_elem(&ipc_owners, &key, &a.id, BPF_ANY))
		return 0;
	return deny_self(&a, AGENTD_HOOK_IPC_ALLOC, AGENTD_REASON_UNRECORDED, 0, kind);
}

/* Whoever frees it (the last detach may be the host's): the record goes. Rare: no identity. */
static __always_inline void ipc_free(struct kern_ipc_perm *perm)
{
	__u64 key = (__u64)perm;

	bpf_map_delete_elem(&ipc_owners, &key);
}

/* An agent's use of perm: its own object, or refused. No object (IPC_INFO and the like ask for
 * the namespace's totals): allowed. */
static __always_inline int ipc_check(struct kern_ipc_perm *perm, __u32 hook, __u32 arg)
{
	__u64 key = (__u64)perm;
	struct agent a;
	__u32 *owner;

	if (!current_agent(&a) || !perm)
		return 0;
	owner = bpf_map_lookup_elem(&ipc_owners, &key);
	if (owner && *owner == a.id)
		return 0;
	return deny_self(&a, hook, AGENTD_REASON_NOT_OWN_IPC, 0, arg);
}

SEC("lsm/shm_alloc_security")
int BPF_PROG(shm_alloc_security, struct kern_ipc_perm *perm, int ret)
{
	return ret ? ret : ipc_alloc(perm, 1);
}

SEC("lsm/msg_queue_alloc_security")
int BPF_PROG(msg_queue_alloc_security, struct kern_ipc_perm *perm, int ret)
{
	return ret ? ret : ipc_alloc(perm, 2);
}

SEC("lsm/sem_alloc_security")
int BPF_PROG(sem_alloc_security, struct kern_ipc_perm *perm, int ret)
{
	return ret ? ret : ipc_alloc(perm, 3);
}

SEC("lsm/shm_free_security")
int BPF_PROG(shm_free_security, struct kern_ipc_perm *perm)
{
	ipc_free(perm);
	return 0;
}

SEC("lsm/msg_queue_free_security")
int BPF_PROG(msg_queue_free_security, struct kern_ipc_perm *perm)
{
	ipc_free(perm);
	return 0;
}

SEC("lsm/sem_free_security")
int BPF_PROG(sem_free_security, struct kern_ipc_perm *perm)
{
	ipc_free(perm);
	return 0;
}

/* Every permission check of every IPC operation (ipcperms()). */
SEC("lsm/ipc_permission")
int BPF_PROG(ipc_permission, struct kern_ipc_perm *ipcp, short flag, int ret)
{
	return ret ? ret : ipc_check(ipcp, AGENTD_HOOK_IPC_PERMISSION, flag);
}

/* shmget/msgget/semget of an existing key. */
SEC("lsm/shm_associate")
int BPF_PROG(shm_associate, struct kern_ipc_perm *perm, int shmflg, int ret)
{
	return ret ? ret : ipc_check(perm, AGENTD_HOOK_SHM_ASSOCIATE, shmflg);
}

SEC("lsm/msg_queue_associate")
int BPF_PROG(msg_queue_associate, struct kern_ipc_perm *perm, int msqflg, int ret)
{
	return ret ? ret : ipc_check(perm, AGENTD_HOOK_MSG_QUEUE_ASSOCIATE, msqflg);
}

SEC("lsm/sem_associate")
int BPF_PROG(sem_associate, struct kern_ipc_perm *perm, int semflg, int ret)
{
	return ret ? ret : ipc_check(perm, AGENTD_HOOK_SEM_ASSOCIATE, semflg);
}

SEC("lsm/shm_shmat")
int BPF_PROG(shm_shmat, struct kern_ipc_perm *perm, char *shmaddr, int shmflg, int ret)
{
	return ret ? ret : ipc_check(perm, AGENTD_HOOK_SHM_SHMAT, shmflg);
}

SEC("lsm/msg_queue_msgsnd")
int BPF_PROG(msg_queue_msgsnd, struct kern_ipc_perm *perm, struct msg_msg *msg, int msqflg, int ret)
{
	return ret ? ret : ipc_check(perm, AGENTD_HOOK_MSG_QUEUE_MSGSND, msqflg);
}

SEC("lsm/msg_queue_msgrcv")
int BPF_PROG(msg_queue_msgrcv, struct kern_ipc_perm *perm, struct msg_msg *msg,
	     struct task_struct *target, long type, int mode, int ret)
{
	return ret ? ret : ipc_check(perm, AGENTD_HOOK_MSG_QUEUE_MSGRCV, mode);
}

/* The ctl calls: IPC_RMID and IPC_SET by the owner uid skip ipcperms(); these see them. */
SEC("lsm/shm_shmctl")
int BPF_PROG(shm_shmctl, struct kern_ipc_perm *perm, int cmd, int ret)
{
	return ret ? ret : ipc_check(perm, AGENTD_HOOK_SHM_SHMCTL, cmd);
}

SEC("lsm/msg_queue_msgctl")
int BPF_PROG(msg_queue_msgctl, struct kern_ipc_perm *perm, int cmd, int ret)
{
	return ret ? ret : ipc_check(perm, AGENTD_HOOK_MSG_QUEUE_MSGCTL, cmd);
}

SEC("lsm/sem_semctl")
int BPF_PROG(sem_semctl, struct kern_ipc_perm *perm, int cmd, int ret)
{
	return ret ? ret : ipc_check(perm, AGENTD_HOOK_SEM_SEMCTL, cmd);
}

SEC("lsm/sem_semop")
int BPF_PROG(sem_semop, struct kern_ipc_perm *perm, struct sembuf *sops, unsigned nsops, int alter,
	     int ret)
{
	return ret ? ret : ipc_check(perm, AGENTD_HOOK_SEM_SEMOP, alter);
}
