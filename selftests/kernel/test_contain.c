// SPDX-License-Identifier: GPL-2.0
/*
 * Containment (contain.bpf.c): an agent running as root, its credentials holding every
 * capability (as a process attached with agentctl attach --pid keeps them), uses only the
 * capabilities its policy grants and reaches no task, IPC object, terminal or device outside
 * itself. Each denial is tried from inside the agent with its errno checked, and its allowed
 * twin beside it: the same call outside the agent, or on the agent's own object.
 */
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/ioprio.h>
#include <linux/kcmp.h>
#include <linux/reboot.h>
#include <linux/userfaultfd.h>
#include <mqueue.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/io.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include "ops.h"

#define CAP(n) (1ULL << (n))

static void start(struct test_agent *ag, const struct file_rule *files, size_t n, __u64 caps,
		  __u32 flags)
{
	test_agent_start(
		ag,
		&(struct ruleset){
			.files = files, .nfiles = n, .capabilities = caps, .flags = flags },
		true);
}

/* An agent that may read and execute everything, with the capabilities caps. The agent is
 * static: its cleanup, deferred to the end of the test, outlives the caller's frame. */
static struct test_agent *rx_agent(__u64 caps)
{
	static const struct file_rule files[] = { { "/", RX } };
	static struct test_agent ag;

	start(&ag, files, 1, caps, 0);
	return &ag;
}

/* ---- capabilities ---- */

static int try_sethostname(void *arg)
{
	char name[256] = "";

	(void)arg;
	if (gethostname(name, sizeof(name) - 1))
		return 100 + errno;
	return sethostname(name, strlen(name)) ? errno : 0;
}

static int try_settime(void *arg)
{
	struct timespec now;

	(void)arg;
	clock_gettime(CLOCK_REALTIME, &now);
	return clock_settime(CLOCK_REALTIME, &now) ? errno : 0;
}

/* Only the Ctrl-Alt-Del setting: never a reboot. */
static int try_reboot_cad(void *arg)
{
	(void)arg;
	return syscall(SYS_reboot, LINUX_REBOOT_MAGIC1, LINUX_REBOOT_MAGIC2,
		       LINUX_REBOOT_CMD_CAD_OFF, NULL)
		       ? errno
		       : 0;
}

static int try_iopl(void *arg)
{
	(void)arg;
	return iopl(3) ? errno : 0;
}

static int try_syslog(void *arg)
{
	static char buf[1 << 16];

	(void)arg;
	return klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, sizeof(buf)) < 0 ? errno : 0;
}

static int try_acct_off(void *arg)
{
	(void)arg;
	return acct(NULL) ? errno : 0;
}

static int try_fsopen(void *arg)
{
	int fd = syscall(SYS_fsopen, "tmpfs", 0);

	(void)arg;
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int try_open_tree_clone(void *arg)
{
	int fd = syscall(SYS_open_tree, AT_FDCWD, "/tmp", 1 /* OPEN_TREE_CLONE */ | O_CLOEXEC);

	(void)arg;
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* Capability-free: what the capable hook alone refuses, each with EPERM, each allowed outside. */
TEST(contain_capabilities_denied)
{
	int (*const ops[])(void *) = { try_sethostname, try_settime, try_reboot_cad,	 try_iopl,
				       try_acct_off,	try_fsopen,  try_open_tree_clone };
	struct test_agent *ag = rx_agent(0);
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		ASSERT_EQ(test_agent_run(ag, ops[i], NULL), EPERM);
		ASSERT_EQ(run_in_cgroup(NULL, ops[i], NULL, NULL), 0);
	}
}

static char dmesg_restrict[16];

static void restore_dmesg_restrict(void *arg)
{
	(void)arg;
	test_write("/proc/sys/kernel/dmesg_restrict", dmesg_restrict, 0644);
}

/* With dmesg_restrict=0 the kernel asks no capability to read its log: the syslog hook does. */
TEST(contain_kernel_log_denied)
{
	struct test_agent *ag = rx_agent(0);
	FILE *f = fopen("/proc/sys/kernel/dmesg_restrict", "r");

	ASSERT(f && fgets(dmesg_restrict, sizeof(dmesg_restrict), f));
	fclose(f);
	test_defer(restore_dmesg_restrict, NULL);
	test_write("/proc/sys/kernel/dmesg_restrict", "0\n", 0644);
	ASSERT_EQ(test_agent_run(ag, try_syslog, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, try_syslog, NULL, NULL), 0);
	ASSERT_EQ(test_agent_run(rx_agent(CAP(CAP_SYSLOG)), try_syslog, NULL), 0);
}

static int try_nice_down(void *arg)
{
	(void)arg;
	return setpriority(PRIO_PROCESS, 0, -5) ? errno : 0;
}

/* A granted capability works; the same call without it is the kernel's own refusal. */
TEST(contain_granted_capability_works)
{
	ASSERT_EQ(test_agent_run(rx_agent(CAP(CAP_SYS_NICE)), try_nice_down, NULL), 0);
	ASSERT_EQ(test_agent_run(rx_agent(0), try_nice_down, NULL), EACCES);
}

static int try_setgroups(void *arg)
{
	(void)arg;
	return setgroups(0, NULL) ? errno : 0;
}

static int fork_and(void *fn)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return 100 + errno;
	if (pid == 0)
		_exit(((int (*)(void *))fn)(NULL));
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return 101;
	return WEXITSTATUS(status);
}

/*
 * The launcher's child (clone3 into the cgroup by a task of no agent, as agentctl run's) may
 * still change its groups and uid before its exec (agentctl run --user); a task it forks, which
 * runs no launcher code, may not.
 */
TEST(contain_setid_only_while_launching)
{
	struct test_agent *ag = rx_agent(0);

	ASSERT_EQ(test_agent_run(ag, try_setgroups, NULL), 0);
	ASSERT_EQ(test_agent_run(ag, fork_and, try_setgroups), EPERM);
}

/* ---- devices ---- */

static int try_mknod_char(void *path)
{
	if (mknod(path, S_IFCHR | 0600, makedev(1, 3)))
		return errno;
	return unlink(path) ? 100 + errno : 0;
}

static int try_mknod_block(void *path)
{
	if (mknod(path, S_IFBLK | 0600, makedev(7, 0)))
		return errno;
	return unlink(path) ? 100 + errno : 0;
}

static int try_mknod_fifo(void *path)
{
	if (mknod(path, S_IFIFO | 0600, 0))
		return errno;
	return unlink(path) ? 100 + errno : 0;
}

/* In its own workspace, where it may create anything: no device unless the policy grants it. */
TEST(contain_mknod_device_denied)
{
	static struct test_agent plain, granted;
	char ws[PATH_MAX], node[PATH_MAX];
	struct file_rule files[] = { { "/", RX }, { ws, AGENTD_RIGHTS_ALL } };

	test_dir(ws, sizeof(ws));
	PATHF(node, "%s/node", ws);
	start(&plain, files, 2, 0, 0);
	ASSERT_EQ(test_agent_run(&plain, try_mknod_char, node), EPERM);
	ASSERT_EQ(test_agent_run(&plain, try_mknod_block, node), EPERM);
	ASSERT_EQ(test_agent_run(&plain, try_mknod_fifo, node), 0);
	/* A root agent holding CAP_MKNOD alone still may not. */
	start(&plain, files, 2, CAP(CAP_MKNOD), 0);
	ASSERT_EQ(test_agent_run(&plain, try_mknod_char, node), EPERM);
	start(&granted, files, 2, CAP(CAP_MKNOD), AGENTD_AGENT_ALLOW_DEVICES);
	ASSERT_EQ(test_agent_run(&granted, try_mknod_char, node), 0);
	ASSERT_EQ(test_agent_run(&granted, try_mknod_block, node), 0);
}

static int try_open_rw(void *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* A device node in the workspace (the host's, here: /dev/null's numbers) opens through a rule
 * on the node itself, never through the workspace's tree rule; /dev's own nodes open through
 * the tree rule on /. */
TEST(contain_device_open_needs_its_own_rule)
{
	static struct test_agent tree, own;
	char ws[PATH_MAX], node[PATH_MAX];
	struct file_rule files[] = { { "/", AGENTD_RIGHTS_ALL },
				     { ws, AGENTD_RIGHTS_ALL },
				     { node, AGENTD_RIGHT_READ | AGENTD_RIGHT_WRITE } };

	test_dir(ws, sizeof(ws));
	PATHF(node, "%s/null", ws);
	ASSERT_OK(mknod(node, S_IFCHR | 0666, makedev(1, 3)));
	start(&tree, files, 2, 0, 0);
	ASSERT_EQ(test_agent_run(&tree, try_open_rw, node), EPERM);
	ASSERT_EQ(test_agent_run(&tree, try_open_rw, "/dev/null"), 0);
	start(&own, files, 3, 0, 0);
	ASSERT_EQ(test_agent_run(&own, try_open_rw, node), 0);
}

/* ---- signals through a file's owner ---- */

struct sigio {
	int rfd, wfd;
	pid_t owner; /* 0: the agent's task itself */
};

/* Makes p's pipe signal SIGUSR1 to its owner when it has data, then writes to it. Returns 0,
 * or 1 when the owner is the caller and no SIGUSR1 came. */
static int try_sigio(void *arg)
{
	const struct sigio *p = arg;
	pid_t owner = p->owner ? p->owner : getpid();
	sigset_t usr1;

	if (fcntl(p->rfd, F_SETOWN, owner) || fcntl(p->rfd, F_SETSIG, SIGUSR1) ||
	    fcntl(p->rfd, F_SETFL, O_ASYNC | O_NONBLOCK))
		return 100 + errno;
	if (write(p->wfd, "x", 1) != 1)
		return 110 + errno;
	if (p->owner)
		return 0;
	/* Sent within write(), before it returned: pending now or never. */
	sigpending(&usr1);
	return sigismember(&usr1, SIGUSR1) ? 0 : 1;
}

static int usr1_pending(void)
{
	const struct timespec none = { 0 };
	sigset_t usr1;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	return sigtimedwait(&usr1, NULL, &none) == SIGUSR1;
}

static void close_pipe(void *arg)
{
	int *fds = arg;

	close(fds[0]);
	close(fds[1]);
}

/* SIGUSR1 blocked (so that it stays pending), and a fresh pipe, closed at the end. */
static struct sigio *sigio_pipe(int fds[2])
{
	static struct sigio p;
	sigset_t usr1;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	ASSERT_OK(sigprocmask(SIG_BLOCK, &usr1, NULL));
	ASSERT_OK(pipe2(fds, O_CLOEXEC));
	test_defer(close_pipe, fds);
	p = (struct sigio){ fds[0], fds[1], getpid() };
	return &p;
}

/*
 * F_SETOWN to a task outside the agent, F_SETSIG and O_ASYNC: the signal is sent by whoever
 * makes the I/O ready (the agent's write, or later the host's), through no task_kill, and
 * never arrives, not even once the host sets the owner again. The same owner set to the
 * agent's own task gets its signal; set up outside any agent, the host gets it.
 */
TEST(contain_sigio_outside_not_delivered)
{
	static int fds[2], own[2], host[2];
	struct sigio *p = sigio_pipe(fds);

	ASSERT_EQ(test_agent_run(rx_agent(0), try_sigio, p), 0);
	ASSERT_EQ(usr1_pending(), 0);
	/* The host's own write to the pipe the agent set up: no more a signal. */
	ASSERT_EQ(write(fds[1], "y", 1), 1);
	ASSERT_EQ(usr1_pending(), 0);
	ASSERT_EQ(run_in_cgroup(NULL, try_sigio, p, NULL), 0);
	ASSERT_EQ(usr1_pending(), 0);
	p = sigio_pipe(own);
	p->owner = 0;
	ASSERT_EQ(test_agent_run(rx_agent(0), try_sigio, p), 0);
	p = sigio_pipe(host);
	ASSERT_EQ(run_in_cgroup(NULL, try_sigio, p, NULL), 0);
	ASSERT_EQ(usr1_pending(), 1);
}

static int try_setsig_and_write(void *arg)
{
	const struct sigio *p = arg;

	if (fcntl(p->rfd, F_SETSIG, SIGUSR1))
		return 100 + errno;
	return write(p->wfd, "x", 1) == 1 ? 0 : 110 + errno;
}

/* The host made itself the owner and set O_ASYNC; the agent, handed the pipe, picks the signal
 * (F_SETSIG: it could be SIGKILL) and makes the I/O ready: the host's signal, steered by the
 * agent, never arrives. The same steering outside any agent: it does. */
TEST(contain_sigio_host_owner_steered_not_delivered)
{
	static int fds[2], host[2];
	struct sigio *p = sigio_pipe(fds);

	ASSERT_OK(fcntl(fds[0], F_SETOWN, getpid()));
	ASSERT_OK(fcntl(fds[0], F_SETFL, O_ASYNC | O_NONBLOCK));
	ASSERT_EQ(test_agent_run(rx_agent(0), try_setsig_and_write, p), 0);
	ASSERT_EQ(usr1_pending(), 0);
	p = sigio_pipe(host);
	ASSERT_OK(fcntl(host[0], F_SETOWN, getpid()));
	ASSERT_OK(fcntl(host[0], F_SETFL, O_ASYNC | O_NONBLOCK));
	ASSERT_EQ(run_in_cgroup(NULL, try_setsig_and_write, p, NULL), 0);
	ASSERT_EQ(usr1_pending(), 1);
}

/* ---- tasks outside ---- */

struct outside {
	pid_t pid;
};

static int try_setpriority(void *arg)
{
	return setpriority(PRIO_PROCESS, ((struct outside *)arg)->pid, 5) ? errno : 0;
}

static int try_setscheduler(void *arg)
{
	struct sched_param sp = { 0 };

	return sched_setscheduler(((struct outside *)arg)->pid, SCHED_BATCH, &sp) ? errno : 0;
}

static int try_ioprio(void *arg)
{
	return syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, ((struct outside *)arg)->pid,
		       IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 7))
		       ? errno
		       : 0;
}

static int try_prlimit_read(void *arg)
{
	struct rlimit rl;

	return prlimit(((struct outside *)arg)->pid, RLIMIT_NOFILE, NULL, &rl) ? errno : 0;
}

static int try_prlimit_write(void *arg)
{
	struct rlimit rl = { 64, 64 };

	return prlimit(((struct outside *)arg)->pid, RLIMIT_CORE, &rl, NULL) ? errno : 0;
}

static int try_affinity(void *arg)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	return sched_setaffinity(((struct outside *)arg)->pid, sizeof(set), &set) ? errno : 0;
}

/* The ptrace_access_check routes (enforced before this file): reading another's memory,
 * taking its descriptors, comparing its files, its /proc files. */
static int try_process_vm_readv(void *arg)
{
	char buf[8], src[8] = "";
	struct iovec l = { buf, sizeof(buf) }, r = { src, sizeof(src) };

	return process_vm_readv(((struct outside *)arg)->pid, &l, 1, &r, 1, 0) < 0 ? errno : 0;
}

static int try_pidfd_getfd(void *arg)
{
	int pidfd = syscall(SYS_pidfd_open, ((struct outside *)arg)->pid, 0), fd;

	if (pidfd < 0)
		return 100 + errno;
	fd = syscall(SYS_pidfd_getfd, pidfd, 0, 0);
	close(pidfd);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int try_kcmp(void *arg)
{
	return syscall(SYS_kcmp, getpid(), ((struct outside *)arg)->pid, KCMP_FILE, 0, 0) < 0
		       ? errno
		       : 0;
}

static int try_proc_mem(void *arg)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/mem", ((struct outside *)arg)->pid);
	return try_open(path);
}

/* Outside (the test's own child) and, for the twin, the agent's own child. */
static pid_t sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

static void kill_sleeper(void *arg)
{
	pid_t pid = *(pid_t *)arg;

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* ops[i] on a child of the agent's own task: the allowed twin. */
static int on_own_child(void *fn)
{
	struct outside child = { sleeper() };
	int r;

	if (child.pid < 0)
		return 100;
	r = ((int (*)(void *))fn)(&child);
	kill_sleeper(&child.pid);
	return r;
}

TEST(contain_outside_tasks_out_of_reach)
{
	int (*const ops[])(void *) = { try_setpriority, try_setscheduler,     try_ioprio,
				       try_affinity,	try_process_vm_readv, try_pidfd_getfd,
				       try_kcmp,	try_proc_mem };
	static struct outside host;
	struct test_agent *ag = rx_agent(0);
	size_t i;

	host.pid = sleeper();
	ASSERT_OK(host.pid);
	test_defer(kill_sleeper, &host.pid);
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		int err = ops[i] == try_proc_mem ? EACCES : EPERM;

		if (test_agent_run(ag, ops[i], &host) != err)
			FAIL("op %zu on an outside task: not %s", i, strerror(err));
		if (test_agent_run(ag, on_own_child, ops[i]) != 0)
			FAIL("op %zu on the agent's own child: refused", i);
		if (run_in_cgroup(NULL, ops[i], &host, NULL) != 0)
			FAIL("op %zu outside any agent: refused", i);
	}
}

/* prlimit names credentials, not tasks: another process's limits are refused, read or set, the
 * agent's own child's too. */
TEST(contain_prlimit_of_others_denied)
{
	static struct outside host;
	struct test_agent *ag = rx_agent(0);

	host.pid = sleeper();
	ASSERT_OK(host.pid);
	test_defer(kill_sleeper, &host.pid);
	ASSERT_EQ(test_agent_run(ag, try_prlimit_read, &host), EPERM);
	ASSERT_EQ(test_agent_run(ag, try_prlimit_write, &host), EPERM);
	ASSERT_EQ(test_agent_run(ag, on_own_child, try_prlimit_read), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, try_prlimit_read, &host, NULL), 0);
}

static int clone_parent(void *arg)
{
	int status;
	pid_t pid = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0);

	(void)arg;
	if (pid < 0)
		return errno;
	if (pid == 0)
		_exit(0);
	/* The child is our parent's: wait for it there would be the parent's job. */
	(void)status;
	return 0;
}

/* CLONE_PARENT from the agent's first task would give the test (its parent, outside) a child
 * and its exit signal; from a task whose parent is the agent's, it stays inside. */
TEST(contain_clone_parent_outside_denied)
{
	struct test_agent *ag = rx_agent(0);

	ASSERT_EQ(test_agent_run(ag, clone_parent, NULL), EPERM);
	ASSERT_EQ(test_agent_run(ag, fork_and, clone_parent), 0);
}

/* ---- System V IPC ---- */

struct ipc_ids {
	int shm, msg, sem;
};

static void ipc_remove(void *arg)
{
	struct ipc_ids *ids = arg;

	shmctl(ids->shm, IPC_RMID, NULL);
	msgctl(ids->msg, IPC_RMID, NULL);
	semctl(ids->sem, 0, IPC_RMID);
}

struct msg1 {
	long type;
	char text[4];
};

static int try_shmat(void *arg)
{
	void *p = shmat(((struct ipc_ids *)arg)->shm, NULL, 0);

	if (p == (void *)-1)
		return errno;
	return shmdt(p) ? 100 + errno : 0;
}

static int try_msgsnd(void *arg)
{
	struct msg1 m = { 1, "hi" };

	return msgsnd(((struct ipc_ids *)arg)->msg, &m, sizeof(m.text), IPC_NOWAIT) ? errno : 0;
}

static int try_semop(void *arg)
{
	struct sembuf op = { 0, 1, IPC_NOWAIT };

	return semop(((struct ipc_ids *)arg)->sem, &op, 1) ? errno : 0;
}

static int try_shm_rmid(void *arg)
{
	return shmctl(((struct ipc_ids *)arg)->shm, IPC_RMID, NULL) ? errno : 0;
}

static int try_msg_rmid(void *arg)
{
	return msgctl(((struct ipc_ids *)arg)->msg, IPC_RMID, NULL) ? errno : 0;
}

static int try_sem_rmid(void *arg)
{
	return semctl(((struct ipc_ids *)arg)->sem, 0, IPC_RMID) ? errno : 0;
}

static int try_shmget_key(void *arg)
{
	(void)arg;
	return shmget(0x41474e54, 4096, 0600) < 0 ? errno : 0;
}

/* The agent's own objects: created, used and removed inside. */
static int own_ipc(void *arg)
{
	struct ipc_ids ids;
	struct msg1 m;

	(void)arg;
	ids.shm = shmget(IPC_PRIVATE, 4096, 0600);
	ids.msg = msgget(IPC_PRIVATE, 0600);
	ids.sem = semget(IPC_PRIVATE, 1, 0600);
	if (ids.shm < 0 || ids.msg < 0 || ids.sem < 0)
		return 100 + errno;
	if (try_shmat(&ids) || try_msgsnd(&ids) || try_semop(&ids))
		return 110;
	if (msgrcv(ids.msg, &m, sizeof(m.text), 0, IPC_NOWAIT) < 0)
		return 120 + errno;
	if (try_shm_rmid(&ids) || try_msg_rmid(&ids) || try_sem_rmid(&ids))
		return 130;
	return 0;
}

TEST(contain_host_ipc_objects_out_of_reach)
{
	static struct ipc_ids host;
	struct test_agent *ag = rx_agent(0);

	host.shm = shmget(0x41474e54, 4096, IPC_CREAT | IPC_EXCL | 0600);
	host.msg = msgget(IPC_PRIVATE, 0600);
	host.sem = semget(IPC_PRIVATE, 1, 0600);
	ASSERT_OK(host.shm);
	ASSERT_OK(host.msg);
	ASSERT_OK(host.sem);
	test_defer(ipc_remove, &host);
	/* ipcperms() answers EACCES for the hook's refusal; the ctl calls skip it. */
	ASSERT_EQ(test_agent_run(ag, try_shmget_key, NULL), EACCES);
	ASSERT_EQ(test_agent_run(ag, try_shmat, &host), EACCES);
	ASSERT_EQ(test_agent_run(ag, try_msgsnd, &host), EACCES);
	ASSERT_EQ(test_agent_run(ag, try_semop, &host), EACCES);
	ASSERT_EQ(test_agent_run(ag, try_shm_rmid, &host), EPERM);
	ASSERT_EQ(test_agent_run(ag, try_msg_rmid, &host), EPERM);
	ASSERT_EQ(test_agent_run(ag, try_sem_rmid, &host), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, try_shmat, &host, NULL), 0);
	ASSERT_EQ(run_in_cgroup(NULL, try_msgsnd, &host, NULL), 0);
	ASSERT_EQ(test_agent_run(ag, own_ipc, NULL), 0);
}

/* POSIX message queues are files of the mqueue file system: file rights decide. Without a rule
 * on it (a mount of it, here the test's), a host queue does not open. */
static int try_mq_open(void *name)
{
	mqd_t q = mq_open(name, O_RDWR);

	if (q == (mqd_t)-1)
		return errno;
	mq_close(q);
	return 0;
}

static void mq_remove(void *name)
{
	mq_unlink(name);
}

static void umount_dir(void *dir)
{
	umount2(dir, MNT_DETACH);
}

TEST(contain_posix_mqueue_by_file_rights)
{
	static char name[64], mq[PATH_MAX];
	static struct test_agent none, granted;
	struct file_rule files[] = { { "/", RX }, { mq, AGENTD_RIGHT_READ | AGENTD_RIGHT_WRITE } };
	mqd_t q;

	snprintf(name, sizeof(name), "/agentd-contain-%d", getpid());
	q = mq_open(name, O_RDWR | O_CREAT | O_EXCL, 0600, NULL);
	ASSERT(q != (mqd_t)-1);
	mq_close(q);
	test_defer(mq_remove, name);
	test_dir(mq, sizeof(mq));
	ASSERT_OK(mount("mqueue", mq, "mqueue", 0, NULL));
	test_defer(umount_dir, mq);
	start(&none, files, 1, 0, 0);
	ASSERT_EQ(test_agent_run(&none, try_mq_open, name), EPERM);
	start(&granted, files, 2, 0, 0);
	ASSERT_EQ(test_agent_run(&granted, try_mq_open, name), 0);
}

/* ---- terminals ---- */

static int try_tiocsti(void *fdp)
{
	char c = ' ';

	return ioctl(*(int *)fdp, TIOCSTI, &c) ? errno : 0;
}

static void close_fd(void *fdp)
{
	close(*(int *)fdp);
}

/* Typing into a terminal (TIOCSTI) is refused to an agent holding every capability. The pty
 * comes from a devpts instance of the test's own. */
TEST(contain_tiocsti_denied)
{
	static int master, slave;
	static char pts[PATH_MAX];
	char ptmx[PATH_MAX];

	test_dir(pts, sizeof(pts));
	ASSERT_OK(mount("devpts", pts, "devpts", 0, "newinstance,ptmxmode=0600"));
	test_defer(umount_dir, pts);
	master = open(PATHF(ptmx, "%s/ptmx", pts), O_RDWR | O_NOCTTY | O_CLOEXEC);
	ASSERT_OK(master);
	test_defer(close_fd, &master);
	ASSERT_OK(unlockpt(master));
	slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	ASSERT_OK(slave);
	test_defer(close_fd, &slave);
	ASSERT_EQ(test_agent_run(rx_agent(~0ULL), try_tiocsti, &slave), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, try_tiocsti, &slave, NULL), 0);
}

/* ---- notification marks ---- */

static int try_inotify(void *path)
{
	int fd = inotify_init1(IN_CLOEXEC), r;

	if (fd < 0)
		return 100 + errno;
	r = inotify_add_watch(fd, path, IN_ALL_EVENTS) < 0 ? errno : 0;
	close(fd);
	return r;
}

static int try_fanotify_mount(void *path)
{
	int fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC, O_RDONLY), r;

	if (fd < 0)
		return 100 + errno;
	r = fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_OPEN, AT_FDCWD, path) ? errno : 0;
	close(fd);
	return r;
}

/* A mark only where the agent may read; none on a whole mount, even holding sys_admin. */
TEST(contain_notify_marks_need_read)
{
	static struct test_agent ag;
	char ws[PATH_MAX], secret[PATH_MAX];
	struct file_rule files[] = { { "/", RX }, { ws, AGENTD_RIGHTS_ALL }, { secret, 0 } };

	test_dir(ws, sizeof(ws));
	test_dir(secret, sizeof(secret));
	start(&ag, files, 3, CAP(CAP_SYS_ADMIN), 0);
	ASSERT_EQ(test_agent_run(&ag, try_inotify, secret), EPERM);
	ASSERT_EQ(test_agent_run(&ag, try_inotify, ws), 0);
	ASSERT_EQ(run_in_cgroup(NULL, try_inotify, secret, NULL), 0);
	ASSERT_EQ(test_agent_run(&ag, try_fanotify_mount, ws), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, try_fanotify_mount, ws, NULL), 0);
}

/* ---- userfaultfd ---- */

static int try_userfaultfd(void *arg)
{
	int fd = syscall(SYS_userfaultfd, UFFD_USER_MODE_ONLY | O_CLOEXEC);

	(void)arg;
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* User-mode-only userfaultfd needs no capability: refused to every agent all the same. */
TEST(contain_userfaultfd_denied)
{
	ASSERT_EQ(test_agent_run(rx_agent(~0ULL), try_userfaultfd, NULL), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, try_userfaultfd, NULL, NULL), 0);
}
