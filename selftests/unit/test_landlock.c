// SPDX-License-Identifier: GPL-2.0
/* The Landlock compile (rights per ABI, merging, files vs directories) and both fallback layers
 * applied for real to a child (no root needed: no_new_privs is enough). */
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "agentd/abi.h"
#include "harness.h"
#include "sandbox/landlock.h"
#include "policy/policy.h"
#include "kernel/probe.h"
#include "sandbox/sandbox_seccomp.h"
#include "testlib.h"

static char dir[128];

static struct policy *load(const char *json)
{
	struct policy_var var = { "d", dir };
	struct policy_vars vars = { &var, 1 };
	struct policy_errors errs = { 0 };
	char path[PATH_MAX];
	struct policy *p = NULL;

	test_tmpdir(dir, sizeof(dir), "landlock");
	snprintf(path, sizeof(path), "%s/ws", dir);
	ASSERT_OK(mkdir(path, 0755));
	snprintf(path, sizeof(path), "%s/ws/secret", dir);
	ASSERT_OK(mkdir(path, 0755));
	snprintf(path, sizeof(path), "%s/ws/secret/key", dir);
	test_write(path, "key\n", 0644);
	snprintf(path, sizeof(path), "%s/ws/notes", dir);
	test_write(path, "notes\n", 0644);
	snprintf(path, sizeof(path), "%s/outside", dir);
	test_write(path, "outside\n", 0644);
	if (policy_load_buffer("p.json", json, strlen(json), &vars, NULL, &p, &errs))
		FAIL("policy %s: %s", json, errs.n ? errs.v[0].msg : "?");
	return p;
}

static void free_policy(void *p)
{
	policy_free(p);
}

static void free_plan(void *pl)
{
	landlock_plan_free(pl);
}

static const char policy_ws[] = "{\"name\": \"t\", \"files\": ["
				"{\"path\": \"${d}/ws\", \"rights\": [\"read\", \"write\", "
				"\"create\", \"link\", \"truncate\"]},"
				"{\"path\": \"${d}/ws/secret\", \"rights\": []},"
				"{\"path\": \"${d}/ws/notes\", \"rights\": [\"read\"]},"
				"{\"path\": \"${d}/absent\", \"rights\": [\"read\"], "
				"\"optional\": true}],"
				" \"exec\": {\"allow\": [\"${d}/ws/notes\"]}}";

TEST(landlock_rights_per_abi)
{
	ASSERT_EQ(landlock_handled_fs(0), 0);
	ASSERT_EQ(landlock_handled_fs(1), (1ULL << 13) - 1);
	ASSERT_EQ(landlock_handled_fs(2), (1ULL << 14) - 1);
	ASSERT_EQ(landlock_handled_fs(4), (1ULL << 15) - 1);
	ASSERT_EQ(landlock_handled_fs(5), (1ULL << 16) - 1);
	ASSERT_EQ(landlock_access(AGENTD_RIGHT_LINK, 1), 0);
	ASSERT_EQ(landlock_access(AGENTD_RIGHT_LINK, 2), LL_FS_REFER);
	ASSERT_EQ(landlock_access(AGENTD_RIGHT_TRUNCATE, 2), 0);
	ASSERT_EQ(landlock_access(AGENTD_RIGHT_TRUNCATE, 3), LL_FS_TRUNCATE);
	ASSERT_EQ(landlock_access(AGENTD_RIGHT_SETATTR, 6), 0);
	ASSERT_EQ(landlock_access(AGENTD_RIGHT_READ, 4), LL_FS_READ_FILE | LL_FS_READ_DIR);
	ASSERT_EQ(landlock_access(AGENTD_RIGHT_READ, 5),
		  LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_IOCTL_DEV);
	ASSERT_EQ(landlock_access(AGENTD_RIGHT_CREATE, 1),
		  LL_FS_MAKE_CHAR | LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK |
			  LL_FS_MAKE_FIFO | LL_FS_MAKE_BLOCK | LL_FS_MAKE_SYM);
	ASSERT_EQ(landlock_access(AGENTD_RIGHT_REMOVE | AGENTD_RIGHT_EXEC, 1),
		  LL_FS_REMOVE_FILE | LL_FS_REMOVE_DIR | LL_FS_EXECUTE);
}

/* Rules merge by path (files and exec), denies and absent paths are left out, files lose the
 * rights only directories hold, and the scopes come with ABI 6. */
TEST(landlock_compile_and_open)
{
	struct policy *p = load(policy_ws);
	struct landlock_plan *pl;
	const char *bad = NULL;
	char notes[PATH_MAX];

	test_defer(free_policy, p);
	ASSERT_EQ(landlock_compile(p, 0, &pl), -EINVAL);
	ASSERT_EQ(landlock_compile(p, 99, &pl), 0);
	ASSERT_EQ(pl->abi, LANDLOCK_ABI_KNOWN);
	ASSERT_EQ(pl->scoped, LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL);
	ASSERT_EQ(pl->n, 2);
	ASSERT_EQ(pl->n_denies, 1);
	snprintf(notes, sizeof(notes), "%s/ws/notes", dir);
	ASSERT_STREQ(pl->rules[1].path, notes);
	ASSERT_EQ(pl->rules[1].access,
		  LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_IOCTL_DEV | LL_FS_EXECUTE);
	ASSERT_EQ(pl->rules[0].access,
		  landlock_access(AGENTD_RIGHT_READ | AGENTD_RIGHT_WRITE | AGENTD_RIGHT_CREATE |
					  AGENTD_RIGHT_LINK | AGENTD_RIGHT_TRUNCATE,
				  6));
	ASSERT_EQ(landlock_open(pl, &bad), 0);
	ASSERT(pl->rules[0].fd >= 0 && pl->rules[1].fd >= 0);
	/* A file cannot hold READ_DIR. */
	ASSERT_EQ(pl->rules[1].access, LL_FS_READ_FILE | LL_FS_IOCTL_DEV | LL_FS_EXECUTE);
	landlock_plan_free(pl);
	ASSERT_EQ(landlock_compile(p, 2, &pl), 0);
	ASSERT_EQ(pl->scoped, 0);
	ASSERT_EQ(pl->handled_fs, landlock_handled_fs(2));
	ASSERT_EQ(pl->rules[0].access & LL_FS_TRUNCATE, 0);
	test_defer(free_plan, pl);
}

/* Runs fn in a child that has applied both layers for p, ICMP sockets granted when icmp (the
 * policy's "icmp" socket kind); returns its exit status. */
static int sandboxed_icmp(const struct policy *p, bool icmp, int (*fn)(void))
{
	struct landlock_plan *pl = NULL;
	struct sandbox_seccomp sc;
	const char *bad;
	int status, fd;
	pid_t pid;

	ASSERT_EQ(landlock_compile(p, probe_landlock_abi(), &pl), 0);
	sandbox_seccomp_from_policy(p, &sc);
	sc.icmp |= icmp;
	pid = fork();
	ASSERT_OK(pid);
	if (pid == 0) {
		if (landlock_open(pl, &bad))
			_exit(100);
		fd = landlock_ruleset(pl);
		if (fd < 0)
			_exit(101);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || landlock_restrict(fd))
			_exit(102);
		if (sandbox_seccomp_load(&sc))
			_exit(103);
		_exit(fn());
	}
	landlock_plan_free(pl);
	ASSERT_OK(waitpid(pid, &status, 0));
	ASSERT(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static int sandboxed(const struct policy *p, int (*fn)(void))
{
	return sandboxed_icmp(p, false, fn);
}

static int open_errno(const char *rel, int flags)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	fd = open(path, flags | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* Each check returns 0 or a distinct code for the first that failed. */
static int files_child(void)
{
	if (open_errno("ws/notes", O_RDONLY))
		return 1;
	if (open_errno("ws/new", O_WRONLY | O_CREAT))
		return 2;
	if (open_errno("outside", O_RDONLY) != EACCES)
		return 3;
	if (open_errno("ws/notes", O_WRONLY) != EACCES && open_errno("ws/notes", O_WRONLY))
		return 4;
	if (open_errno("new-outside", O_WRONLY | O_CREAT) != EACCES)
		return 5;
	/* The gap: a deny inside the allowed tree is readable under Landlock. */
	if (open_errno("ws/secret/key", O_RDONLY))
		return 6;
	return 0;
}

TEST(landlock_applied_allows_and_denies)
{
	struct policy *p;

	if (probe_landlock_abi() < 1)
		SKIP("no Landlock on this kernel");
	p = load(policy_ws);
	test_defer(free_policy, p);
	ASSERT_EQ(sandboxed(p, files_child), 0);
}

#ifdef __x86_64__
/* i386's getpid through int 0x80, in a child because a kernel without the i386 ABI answers
 * SIGSEGV: 0 when it is answered EPERM or the ABI is absent, 1 when it ran. */
static int int80_getpid(void)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		long ret = 20;

		close(2); /* the sanitizer's report of the fault, when there is one */
		__asm__ volatile("int $0x80" : "+a"(ret) : : "r8", "r9", "r10", "r11", "memory");
		_exit(ret == -EPERM ? 10 : 11);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return 1;
	/* Anything else is the fault (a signal, or the sanitizer's report and exit). */
	return WIFEXITED(status) && WEXITSTATUS(status) == 11;
}
#endif

static int seccomp_child(void)
{
	int fd;

	errno = 0;
	if (syscall(SYS_bpf, 0, NULL, 0) >= 0 || errno != EPERM)
		return 1;
	if (unshare(CLONE_NEWUSER) >= 0 || errno != EPERM)
		return 2;
	if (syscall(SYS_clone3, NULL, 0) >= 0 || errno != ENOSYS)
		return 3;
	if (socket(AF_PACKET, SOCK_DGRAM, 0) >= 0 || errno != EPERM)
		return 4;
	if (socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, 1) >= 0 || errno != EPERM)
		return 5;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 6;
	close(fd);
	if (syscall(SYS_io_uring_setup, 1, NULL) >= 0 || errno != EPERM)
		return 7;
	if (personality(READ_IMPLIES_EXEC) != -1 || errno != EPERM)
		return 8;
	if (personality(0xffffffff) == -1)
		return 9;
	if (syscall(SYS_keyctl, 0, 0, 0, 0, 0) >= 0 || errno != EPERM)
		return 10;
	if (syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0) >= 0 || errno != EPERM)
		return 11;
	if (syscall(SYS_fsopen, "tmpfs", 0) >= 0 || errno != EPERM)
		return 12;
#ifdef __x86_64__
	if (int80_getpid() != 0)
		return 13;
#endif
	return 0;
}

TEST(seccomp_applied_answers_eperm)
{
	struct policy *p;

	p = load("{\"name\": \"t\", \"files\": [{\"path\": \"/\", \"rights\": [\"read\"]}],"
		 " \"network\": {\"sockets\": [\"inet\", \"unix\"]}}");
	test_defer(free_policy, p);
	if (probe_landlock_abi() < 1)
		SKIP("no Landlock on this kernel");
	ASSERT_EQ(sandboxed(p, seccomp_child), 0);
}

/* Errno of one call, 0 when it succeeded. */
static int call_errno(long ret)
{
	return ret < 0 ? errno : 0;
}

/* The same for socket(), whose descriptor is closed. */
static int sock_errno(int fd)
{
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* What root without capabilities still reaches by uid: each call is made so that the kernel,
 * had the filter let it through, answers something other than EPERM and changes nothing. */
static int uid_wide_child(void)
{
	char c = 'x';

	/* On descriptor -1 the kernel says EBADF; the filter decides first. */
	if (call_errno(ioctl(-1, TIOCSTI, &c)) != EPERM)
		return 1;
	if (call_errno(syscall(SYS_ioctl, -1, (1UL << 32) | TIOCSTI, &c)) != EPERM)
		return 2;
	if (call_errno(ioctl(-1, TIOCLINUX, &c)) != EPERM)
		return 3;
	if (call_errno(ioctl(-1, TIOCCONS)) != EPERM)
		return 4;
	if (call_errno(ioctl(-1, TIOCGWINSZ, &c)) != EBADF)
		return 5;
	/* Signal 0 sends nothing; the kernel would find tasks of this uid to check. */
	if (call_errno(kill(-1, 0)) != EPERM)
		return 6;
	if (call_errno(kill(getpid(), 0)) != 0)
		return 7;
	/* A uid with no task: the kernel would say ESRCH. */
	if (call_errno(setpriority(PRIO_USER, 0x7ffffff0, 0)) != EPERM)
		return 8;
	if (call_errno(syscall(SYS_ioprio_set, 3, 0x7ffffff0, 0)) != EPERM)
		return 9;
	if (call_errno(setpriority(PRIO_PROCESS, 0, getpriority(PRIO_PROCESS, 0))) != 0)
		return 10;
	/* Invalid flags: the kernel would say EINVAL. */
	if (call_errno(syscall(SYS_fanotify_init, ~0U, 0)) != EPERM)
		return 11;
	if (sock_errno(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_ICMP)) != EPERM)
		return 12;
	if (sock_errno(socket(AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6)) != EPERM)
		return 13;
	if (sock_errno(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) != 0)
		return 14;
	return 0;
}

TEST(seccomp_denies_what_root_reaches_by_uid)
{
	struct policy *p;

	p = load("{\"name\": \"t\", \"files\": [{\"path\": \"/\", \"rights\": [\"read\"]}],"
		 " \"network\": {\"sockets\": [\"inet\", \"inet6\"]}}");
	test_defer(free_policy, p);
	if (probe_landlock_abi() < 1)
		SKIP("no Landlock on this kernel");
	ASSERT_EQ(sandboxed(p, uid_wide_child), 0);
}

static int icmp_granted_child(void)
{
	/* The kernel decides: EACCES outside net.ipv4.ping_group_range, or a socket. */
	if (sock_errno(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_ICMP)) == EPERM)
		return 1;
	if (sock_errno(socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_ICMPV6)) == EPERM)
		return 2;
	return 0;
}

TEST(seccomp_icmp_when_granted)
{
	struct policy *p;

	p = load("{\"name\": \"t\", \"network\": {\"sockets\": [\"inet\", \"inet6\"]}}");
	test_defer(free_policy, p);
	if (probe_landlock_abi() < 1)
		SKIP("no Landlock on this kernel");
	ASSERT_EQ(sandboxed_icmp(p, true, icmp_granted_child), 0);
}

static int io_uring_child(void)
{
	long fd = syscall(SYS_io_uring_setup, 1, NULL);

	/* Granted: the kernel itself answers (EFAULT for the NULL params). */
	return fd < 0 && errno == EPERM ? 1 : 0;
}

TEST(seccomp_io_uring_when_granted)
{
	struct policy *p;

	p = load("{\"name\": \"t\", \"io_uring\": true}");
	test_defer(free_policy, p);
	if (probe_landlock_abi() < 1)
		SKIP("no Landlock on this kernel");
	ASSERT_EQ(sandboxed(p, io_uring_child), 0);
}
