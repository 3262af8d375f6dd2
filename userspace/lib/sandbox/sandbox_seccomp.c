// SPDX-License-Identifier: GPL-2.0
/*
 * The seccomp layer (sandbox_seccomp.h). What it denies: Docker's default profile (the calls
 * it refuses to a container without extra capabilities), plus what agentd's self-protection
 * denies (bpf, perf events, keyrings, module loading, kexec, every mount call, new namespaces),
 * io_uring unless granted (its operations never pass through seccomp), the socket families
 * and types the policy does not grant, ICMP "ping" sockets unless granted, and what an agent
 * that is root without capabilities still reaches by uid alone: the terminal ioctls that inject
 * input or take the console, signals to every task of its uid (kill -1), and the priorities of
 * every task of its uid (PRIO_USER, IOPRIO_WHO_USER). Every denial answers EPERM: an agent that probes gets an
 * error it can handle, and nothing is killed.
 *
 * Other architectures: only the native one is in the filter, and a syscall made through another
 * ABI (i386's int 0x80, x32's numbers on x86_64) is answered EPERM as a whole: an agent cannot
 * step around the list by switching ABIs, and 32-bit programs do not run under an agent.
 */
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <seccomp.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include "sandbox/sandbox_seccomp.h"

/* linux/ioprio.h, which older headers lack */
#ifndef IOPRIO_WHO_USER
#define IOPRIO_WHO_USER 3
#endif

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

const char *const sandbox_seccomp_denied[] = {
	/* agentd's self-protection */
	"bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key", "kexec_load",
	"kexec_file_load", "init_module", "finit_module", "delete_module", "create_module", "mount",
	"umount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig",
	"fsmount", "fspick", "mount_setattr", "setns",
	/* the rest of Docker's default deny list */
	"acct", "clock_adjtime", "clock_settime", "settimeofday", "stime", "get_kernel_syms",
	"query_module", "ioperm", "iopl", "kcmp", "lookup_dcookie", "name_to_handle_at",
	"open_by_handle_at", "nfsservctl", "quotactl", "quotactl_fd", "reboot", "swapon", "swapoff",
	"sysfs", "_sysctl", "syslog", "uselib", "ustat", "vm86", "vm86old", "vhangup",
	"process_vm_readv", "process_vm_writev", "mbind", "get_mempolicy", "set_mempolicy",
	"move_pages",
	/* what root without capabilities still reaches: fanotify marks (unprivileged since 5.13) */
	"fanotify_init", NULL
};

static const char *const io_uring_calls[] = { "io_uring_setup", "io_uring_enter",
					      "io_uring_register", NULL };

/* Every flag that makes a new namespace. */
static const unsigned long ns_flags[] = { CLONE_NEWNS,	CLONE_NEWCGROUP, CLONE_NEWUTS,
					  CLONE_NEWIPC, CLONE_NEWUSER,	 CLONE_NEWPID,
					  CLONE_NEWNET, CLONE_NEWTIME };

void sandbox_seccomp_from_policy(const struct policy *p, struct sandbox_seccomp *s)
{
	static const struct {
		__u32 policy;
		int family;
	} families[] = {
		{ POLICY_SOCK_INET, AF_INET },	   { POLICY_SOCK_INET6, AF_INET6 },
		{ POLICY_SOCK_UNIX, AF_UNIX },	   { POLICY_SOCK_NETLINK, AF_NETLINK },
		{ POLICY_SOCK_PACKET, AF_PACKET },
	};
	size_t i;

	s->io_uring = p->io_uring;
	s->icmp = p->net.sockets & POLICY_SOCK_ICMP;
	s->families = 0;
	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (p->net.sockets & families[i].policy)
			s->families |= 1ULL << families[i].family;
	s->types = 1U << SOCK_STREAM | 1U << SOCK_DGRAM | 1U << SOCK_SEQPACKET;
	if (p->net.sockets & POLICY_SOCK_RAW)
		s->types |= 1U << SOCK_RAW;
	s->log = true;
}

/* SCMP_A0() with every field set (its two-argument form leaves datum_b out). */
static struct scmp_arg_cmp arg(unsigned int n, enum scmp_compare op, scmp_datum_t a, scmp_datum_t b)
{
	return (struct scmp_arg_cmp){ .arg = n, .op = op, .datum_a = a, .datum_b = b };
}

static int deny(scmp_filter_ctx ctx, const char *name, int err, unsigned int n,
		const struct scmp_arg_cmp *cmp)
{
	int nr = seccomp_syscall_resolve_name(name);

	/* A call this architecture does not have cannot be made through it. */
	if (nr == __NR_SCMP_ERROR)
		return 0;
	return seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(err), nr, n, cmp);
}

static int deny_list(scmp_filter_ctx ctx, const char *const *names)
{
	int err = 0;

	for (; !err && *names; names++)
		err = deny(ctx, *names, EPERM, 0, NULL);
	return err;
}

/*
 * New namespaces: unshare and clone by their flags (in a register, so seccomp can read them).
 * clone3 passes its flags in a struct in memory, which seccomp cannot read: it answers ENOSYS,
 * so that libc falls back to clone, whose flags this filter checks.
 */
static int deny_namespaces(scmp_filter_ctx ctx)
{
	struct scmp_arg_cmp cmp;
	int err = deny(ctx, "clone3", ENOSYS, 0, NULL);
	size_t i;

	for (i = 0; !err && i < sizeof(ns_flags) / sizeof(ns_flags[0]); i++) {
		cmp = arg(0, SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]);
		err = deny(ctx, "unshare", EPERM, 1, &cmp);
		/* clone's flags are its first argument on every architecture but s390. */
		if (!err)
			err = deny(ctx, "clone", EPERM, 1, &cmp);
	}
	return err;
}

/*
 * personality(2): only the values Docker allows (Linux, Linux32, UNAME26, both, and the
 * query), so that an agent cannot turn on READ_IMPLIES_EXEC or ADDR_NO_RANDOMIZE. libseccomp
 * cannot say "none of these values" (one comparison per argument and rule), so this is a second,
 * ten-instruction filter; it compares the low 32 bits, which are all the kernel reads.
 */
static int load_personality(bool log)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		/* libseccomp's architecture tokens are the kernel's AUDIT_ARCH_ values. */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, seccomp_arch_native(), 0, 8),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_personality, 0, 6),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x8, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x20000, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x20008, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffff, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, log ? SECCOMP_FILTER_FLAG_LOG : 0, &prog))
		return -errno;
	return 0;
}

/* socket and socketpair: the families and types (low four bits of the type) not granted. */
static int deny_sockets(scmp_filter_ctx ctx, const struct sandbox_seccomp *s)
{
	static const char *const calls[] = { "socket", "socketpair" };
	struct scmp_arg_cmp cmp;
	int err = 0, i, v;

	for (i = 0; !err && i < 2; i++) {
		for (v = 0; !err && v < AF_MAX; v++) {
			if (s->families & (1ULL << v))
				continue;
			/* The kernel reads an int: compare the low 32 bits only. */
			cmp = arg(0, SCMP_CMP_MASKED_EQ, 0xffffffff, v);
			err = deny(ctx, calls[i], EPERM, 1, &cmp);
		}
		cmp = arg(0, SCMP_CMP_GE, AF_MAX, 0);
		if (!err)
			err = deny(ctx, calls[i], EPERM, 1, &cmp);
		for (v = 0; !err && v < 16; v++) {
			if (s->types & (1U << v))
				continue;
			cmp = arg(1, SCMP_CMP_MASKED_EQ, 0xf, v);
			err = deny(ctx, calls[i], EPERM, 1, &cmp);
		}
	}
	return err;
}

/* socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP) and its IPv6 twin: ping sockets, which
 * net.ipv4.ping_group_range opens to unprivileged users. */
static int deny_icmp(scmp_filter_ctx ctx, const struct sandbox_seccomp *s)
{
	static const int kinds[][2] = { { AF_INET, IPPROTO_ICMP }, { AF_INET6, IPPROTO_ICMPV6 } };
	struct scmp_arg_cmp cmp[3];
	int err = 0;
	size_t i;

	for (i = 0; !err && i < 2; i++) {
		if (!(s->families & (1ULL << kinds[i][0])))
			continue; /* the whole family is denied */
		cmp[0] = arg(0, SCMP_CMP_MASKED_EQ, 0xffffffff, kinds[i][0]);
		cmp[1] = arg(1, SCMP_CMP_MASKED_EQ, 0xf, SOCK_DGRAM);
		cmp[2] = arg(2, SCMP_CMP_MASKED_EQ, 0xffffffff, kinds[i][1]);
		err = deny(ctx, "socket", EPERM, 3, cmp);
	}
	return err;
}

/*
 * Calls whose reach is every task of the caller's uid, which for a root agent without
 * capabilities is most of the host: TIOCSTI (input typed into a terminal), TIOCLINUX and TIOCCONS
 * (the console; ioctl's request is an unsigned int: the low 32 bits), kill(-1), and priorities
 * set for a whole uid. By pid they cannot be told apart (docs/LAYERS.md, the gap).
 */
static int deny_uid_wide(scmp_filter_ctx ctx)
{
	static const unsigned long ioctls[] = { TIOCSTI, TIOCLINUX, TIOCCONS };
	struct scmp_arg_cmp cmp;
	int err = 0;
	size_t i;

	for (i = 0; !err && i < sizeof(ioctls) / sizeof(ioctls[0]); i++) {
		cmp = arg(1, SCMP_CMP_MASKED_EQ, 0xffffffff, ioctls[i]);
		err = deny(ctx, "ioctl", EPERM, 1, &cmp);
	}
	cmp = arg(0, SCMP_CMP_MASKED_EQ, 0xffffffff, 0xffffffff);
	if (!err)
		err = deny(ctx, "kill", EPERM, 1, &cmp);
	cmp = arg(0, SCMP_CMP_MASKED_EQ, 0xffffffff, PRIO_USER);
	if (!err)
		err = deny(ctx, "setpriority", EPERM, 1, &cmp);
	cmp = arg(0, SCMP_CMP_MASKED_EQ, 0xffffffff, IOPRIO_WHO_USER);
	if (!err)
		err = deny(ctx, "ioprio_set", EPERM, 1, &cmp);
	return err;
}

int sandbox_seccomp_load(const struct sandbox_seccomp *s)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int err;

	if (!ctx)
		return -ENOMEM;
	err = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM));
	/* no_new_privs is the caller's to set, before Landlock too. */
	if (!err)
		err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (!err && s->log && seccomp_api_get() >= 3)
		err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_LOG, 1);
#if SCMP_VER_MAJOR > 2 || (SCMP_VER_MAJOR == 2 && SCMP_VER_MINOR >= 5)
	/* A binary search on the syscall number instead of a linear list: every system call of the
	 * agent runs the filter, and most are allowed ones that would otherwise pass every test of
	 * the list (docs/PERFORMANCE.md has the measured difference). */
	if (!err)
		err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
#endif
	if (!err)
		err = deny_list(ctx, sandbox_seccomp_denied);
	if (!err && !s->io_uring)
		err = deny_list(ctx, io_uring_calls);
	if (!err)
		err = deny_namespaces(ctx);
	if (!err)
		err = deny_sockets(ctx, s);
	if (!err && !s->icmp)
		err = deny_icmp(ctx, s);
	if (!err)
		err = deny_uid_wide(ctx);
	if (!err)
		err = seccomp_load(ctx);
	seccomp_release(ctx);
	return err ? err : load_personality(s->log);
}
