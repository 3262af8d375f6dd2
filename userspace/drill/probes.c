// SPDX-License-Identifier: GPL-2.0
/*
 * The operations each boundary's process tries (docs/DRILL.md lists them): every target is
 * chosen from the policy, every address is on loopback or in the drill's own network namespace,
 * and nothing tried changes anything outside the drill if it gets through (a chmod to the mode
 * the file has, SIGCONT to a running task, a priority set to the one it has).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include "agentd/abi.h"
#include "boundary.h"
#include "drill.h"

static const char *errname(int err)
{
	const char *n = strerrorname_np(err);

	return n ? n : "E?";
}

static void vput(struct drill_op *o, const char *fmt, va_list ap)
{
	vsnprintf(o->op, sizeof(o->op), fmt, ap);
}

/* A denied operation: rc < 0 with errno is blocked; anything else got through. */
static void denied(struct drill_result *r, int rc, const char *fmt, ...)
{
	struct drill_op *o;
	int err = errno;
	va_list ap;

	if (r->n_denied == DRILL_OPS_MAX)
		return;
	o = &r->denied[r->n_denied++];
	va_start(ap, fmt);
	vput(o, fmt, ap);
	va_end(ap);
	o->escaped = rc >= 0;
	snprintf(o->err, sizeof(o->err), "%s", rc < 0 ? errname(err) : "");
}

/* A denied connection: only the layers' own refusal (EPERM, EACCES) blocks it; any other
 * answer (ENETUNREACH, ECONNREFUSED, a connection) came from past the hooks. */
static void denied_net(struct drill_result *r, int rc, const char *fmt, ...)
{
	struct drill_op *o;
	int err = errno;
	va_list ap;

	if (r->n_denied == DRILL_OPS_MAX)
		return;
	o = &r->denied[r->n_denied++];
	va_start(ap, fmt);
	vput(o, fmt, ap);
	va_end(ap);
	o->escaped = rc >= 0 || (err != EPERM && err != EACCES);
	snprintf(o->err, sizeof(o->err), "%s", rc < 0 ? errname(err) : "");
}

static void allowed(struct drill_result *r, int rc, const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	r->has_allowed = true;
	va_start(ap, fmt);
	vput(&r->allowed, fmt, ap);
	va_end(ap);
	snprintf(r->allowed.err, sizeof(r->allowed.err), "%s", rc < 0 ? errname(err) : "");
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return true;
	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

/* The rights of the most specific file rule at or above path (0: none). */
static __u32 rights_at(const struct policy *p, const char *path)
{
	size_t i, best = 0, len;
	__u32 rights = 0;

	for (i = 0; i < p->n_files; i++) {
		len = strlen(p->files[i].path);
		if (under(path, p->files[i].path) && len >= best) {
			best = len;
			rights = p->files[i].rights;
		}
	}
	return rights;
}

/* By path (Landlock's view) or by object (BPF LSM's: another name of an allowed binary, such as
 * a busybox applet, is that binary). */
static bool exec_allowed(const struct policy *p, const char *path)
{
	char real[PATH_MAX], allow[PATH_MAX];
	struct stat st;
	bool obj = !stat(path, &st), resolved = realpath(path, real) != NULL;
	size_t i;

	for (i = 0; i < p->exec.n_allow; i++) {
		if (under(path, p->exec.allow[i].path) ||
		    (obj && p->exec.allow[i].exists && p->exec.allow[i].dev == st.st_dev &&
		     p->exec.allow[i].ino == st.st_ino))
			return true;
		/* A symbolic link to a binary in an allowed tree (/usr/bin/nproc to /bin/busybox). */
		if (resolved && realpath(p->exec.allow[i].path, allow) && under(real, allow))
			return true;
	}
	return false;
}

static bool kernel_fs(const char *path)
{
	return under(path, "/proc") || under(path, "/sys") || under(path, "/dev");
}

/* The first directory the policy lets the agent create files in. */
static const char *write_dir(const struct policy *p)
{
	struct stat st;
	size_t i;

	for (i = 0; i < p->n_files; i++)
		if ((p->files[i].rights & AGENTD_RIGHT_CREATE) &&
		    (p->files[i].rights & AGENTD_RIGHT_WRITE) && p->files[i].exists &&
		    !kernel_fs(p->files[i].path) && !stat(p->files[i].path, &st) &&
		    S_ISDIR(st.st_mode))
			return p->files[i].path;
	return NULL;
}

/* A path to read that the policy denies: a deny rule's, else a secret of the host's. */
static const char *unreadable(const struct policy *p)
{
	static const char *const host[] = { "/etc/shadow", "/etc/gshadow", "/root", NULL };
	size_t i;

	for (i = 0; i < p->n_files; i++)
		if (!p->files[i].rights && p->files[i].exists)
			return p->files[i].path;
	for (i = 0; host[i]; i++)
		if (!access(host[i], F_OK) && !(rights_at(p, host[i]) & AGENTD_RIGHT_READ))
			return host[i];
	return NULL;
}

/* An object the agent reaches whose rule does not grant setattr. */
static const char *no_setattr(const struct policy *p)
{
	size_t i;

	for (i = 0; i < p->n_files; i++)
		if (p->files[i].exists && p->files[i].rights &&
		    !(p->files[i].rights & AGENTD_RIGHT_SETATTR) && !kernel_fs(p->files[i].path))
			return p->files[i].path;
	return NULL;
}

static void drill_files(const struct drill_ctx *c, struct drill_result *r)
{
	const char *deny = unreadable(c->p), *attr = no_setattr(c->p), *dir = write_dir(c->p);
	char probe[PATH_MAX];
	struct stat st;
	int fd = -1;

	if (dir) {
		snprintf(probe, sizeof(probe), "%s/%s", dir, c->probe_name);
		fd = open(probe, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		allowed(r, fd, "open %s O_RDWR|O_CREAT", probe);
	}
	/* Its own file where it can, rather than the host's. */
	if (fd >= 0 && !(rights_at(c->p, probe) & AGENTD_RIGHT_SETATTR))
		attr = probe;
	if (deny) {
		int d = open(deny, O_RDONLY | O_CLOEXEC);

		denied(r, d, "open %s O_RDONLY", deny);
		if (d >= 0)
			close(d);
	}
	if (attr && !stat(attr, &st))
		denied(r, chmod(attr, st.st_mode & 07777), "chmod %s %04o (its mode)", attr,
		       st.st_mode & 07777);
	if (fd >= 0) {
		close(fd);
		unlink(probe);
	}
}

/* Runs path (fd >= 0: that memfd) with /dev/null as 0-2; returns 0 when the exec happened, or
 * -1 with errno. A close-on-exec pipe tells which: it closes empty when the exec succeeds. */
static int try_exec(struct drill_result *r, const char *path, int fd)
{
	char *argv[] = { (char *)path, NULL }, *envp[] = { NULL };
	int p[2], err = 0, null;
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		if (fd >= 0)
			fexecve(fd, argv, envp);
		else
			execve(path, argv, envp);
		err = errno;
		if (write(p[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(p[1]);
	if (pid > 0 && r->n_pids < DRILL_PIDS_MAX)
		r->pids[r->n_pids++] = pid;
	n = pid < 0 ? -1 : read(p[0], &err, sizeof(err));
	close(p[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	if (pid < 0 || n == sizeof(err)) {
		errno = pid < 0 ? errno : err;
		return -1;
	}
	return 0;
}

/* A binary of the host the exec list leaves out. */
static const char *not_listed(const struct policy *p)
{
	static const char *const bins[] = { "/usr/bin/true",  "/usr/bin/false",	  "/usr/bin/nproc",
					    "/usr/bin/tty",   "/usr/bin/arch",	  "/usr/bin/hostid",
					    "/usr/bin/users", "/usr/bin/logname", NULL };
	size_t i;

	for (i = 0; bins[i]; i++)
		if (!access(bins[i], X_OK) && !exec_allowed(p, bins[i]))
			return bins[i];
	return NULL;
}

/* A regular file of the exec list, the shell's first. */
static const char *listed(const struct policy *p)
{
	static const char *const pref[] = { "/bin/sh", "/usr/bin/sh", "/usr/bin/true",
					    "/usr/bin/cat", NULL };
	struct stat st;
	size_t i;

	for (i = 0; pref[i]; i++)
		if (exec_allowed(p, pref[i]) && !access(pref[i], X_OK))
			return pref[i];
	for (i = 0; i < p->exec.n_allow; i++)
		if (p->exec.allow[i].exists && !stat(p->exec.allow[i].path, &st) &&
		    S_ISREG(st.st_mode) && (st.st_mode & 0111))
			return p->exec.allow[i].path;
	return NULL;
}

/* A memfd holding a copy of path, or -1. */
static int memfd_of(const char *path)
{
	int in = open(path, O_RDONLY | O_CLOEXEC), fd = -1;
	struct stat st;

	if (in >= 0 && !fstat(in, &st))
		fd = memfd_create("agentd-drill", MFD_CLOEXEC);
	if (fd >= 0 && sendfile(fd, in, NULL, st.st_size) != st.st_size) {
		close(fd);
		fd = -1;
	}
	if (in >= 0)
		close(in);
	return fd;
}

static void drill_exec(const struct drill_ctx *c, struct drill_result *r)
{
	const char *bin = not_listed(c->p), *ok = listed(c->p);
	void *map;
	int fd;

	if (bin)
		denied(r, try_exec(r, bin, -1), "execve %s (not in exec.allow)", bin);
	if (bin && (rights_at(c->p, bin) & AGENTD_RIGHT_READ) &&
	    !(rights_at(c->p, bin) & AGENTD_RIGHT_EXEC)) {
		fd = open(bin, O_RDONLY | O_CLOEXEC);
		map = fd < 0 ? MAP_FAILED
			     : mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		denied(r, map == MAP_FAILED ? -1 : 0, "mmap %s PROT_EXEC (readable only)", bin);
		if (map != MAP_FAILED)
			munmap(map, 4096);
		if (fd >= 0)
			close(fd);
	}
	if (ok && !c->p->exec.allow_memfd) {
		fd = memfd_of(ok);
		if (fd >= 0) {
			denied(r, try_exec(r, ok, fd), "fexecve a memfd copy of %s", ok);
			close(fd);
		}
	}
	if (ok)
		allowed(r, try_exec(r, ok, -1), "execve %s", ok);
}

static int connect_to(int family, int type, const char *addr, int port)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(family, type | SOCK_CLOEXEC, 0), rc, err;

	if (fd < 0)
		return -1;
	if (family == AF_INET) {
		inet_pton(AF_INET, addr, &s4.sin_addr);
		rc = connect(fd, (struct sockaddr *)&s4, sizeof(s4));
	} else {
		inet_pton(AF_INET6, addr, &s6.sin6_addr);
		rc = connect(fd, (struct sockaddr *)&s6, sizeof(s6));
	}
	err = errno;
	close(fd);
	errno = err;
	return rc;
}

static void drill_egress(const struct drill_ctx *c, struct drill_result *r)
{
	static const struct {
		int family;
		const char *addr, *class;
	} to[] = {
		{ AF_INET, "0.0.0.1", "this network" },
		{ AF_INET, "10.0.0.1", "private" },
		{ AF_INET, "100.64.0.1", "shared" },
		{ AF_INET, "169.254.169.254", "link-local, metadata" },
		{ AF_INET, "172.16.0.1", "private" },
		{ AF_INET, "192.0.0.192", "IETF, metadata" },
		{ AF_INET, "192.168.0.1", "private" },
		{ AF_INET, "198.18.0.1", "benchmarking" },
		{ AF_INET, "224.0.0.1", "multicast" },
		{ AF_INET, "240.0.0.1", "reserved" },
		{ AF_INET, "192.0.2.1", "public, no rule" },
		{ AF_INET6, "::ffff:169.254.169.254", "IPv4-mapped metadata" },
		{ AF_INET6, "64:ff9b:1::a9fe:a9fe", "local NAT64" },
		{ AF_INET6, "2001::1", "Teredo" },
		{ AF_INET6, "fd00:ec2::254", "unique local, metadata" },
		{ AF_INET6, "fe80::1", "link-local" },
		{ AF_INET6, "fec0::1", "site-local" },
		{ AF_INET6, "ff02::1", "multicast" },
		{ AF_INET6, "2001:db8::1", "public, no rule" },
	};
	const struct policy_connect *pc;
	char addr[INET6_ADDRSTRLEN];
	size_t i;
	int rc;

	for (i = 0; i < sizeof(to) / sizeof(to[0]); i++)
		denied_net(r, connect_to(to[i].family, SOCK_STREAM, to[i].addr, 80),
			   "connect tcp %s%s%s:80 (%s)", to[i].family == AF_INET6 ? "[" : "",
			   to[i].addr, to[i].family == AF_INET6 ? "]" : "", to[i].class);
	if (!c->p->net.n_connect)
		return;
	pc = &c->p->net.connect[0];
	inet_ntop(pc->family, pc->addr, addr, sizeof(addr));
	/* In the drill's namespace nothing routes there: an answer other than the layers'
	 * refusal means the hooks let it through. */
	rc = connect_to(pc->family, pc->protocol == IPPROTO_UDP ? SOCK_DGRAM : SOCK_STREAM, addr,
			pc->port_lo);
	allowed(r, rc < 0 && (errno == EPERM || errno == EACCES) ? -1 : 0,
		"connect %s port %u (the policy's first rule; past the hooks is enough)", addr,
		pc->port_lo);
}

static void drill_loopback(const struct drill_ctx *c, struct drill_result *r)
{
	denied_net(r, connect_to(AF_INET, SOCK_STREAM, "127.0.0.1", c->tcp_port),
		   "connect tcp 127.0.0.1:%d (the drill's listener, outside)", c->tcp_port);
	denied_net(r, connect_to(AF_INET, SOCK_DGRAM, "127.0.0.1", c->tcp_port),
		   "connect udp 127.0.0.1:%d", c->tcp_port);
}

static const struct {
	int family;
	__u32 bit;
	const char *name;
} families[] = {
	{ AF_NETLINK, POLICY_SOCK_NETLINK, "AF_NETLINK" },
	{ AF_UNIX, POLICY_SOCK_UNIX, "AF_UNIX" },
	{ AF_INET6, POLICY_SOCK_INET6, "AF_INET6" },
	{ AF_INET, POLICY_SOCK_INET, "AF_INET" },
};

static void drill_sockets(const struct drill_ctx *c, struct drill_result *r)
{
	bool ok_done = false;
	size_t i;
	int fd;

	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		fd = socket(families[i].family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (!(c->p->net.sockets & families[i].bit))
			denied(r, fd, "socket %s SOCK_DGRAM (not in network.sockets)",
			       families[i].name);
		else if (!ok_done) {
			allowed(r, fd, "socket %s SOCK_DGRAM", families[i].name);
			ok_done = true;
		}
		if (fd >= 0)
			close(fd);
	}
	if (!r->n_denied)
		snprintf(r->why, sizeof(r->why), "the policy grants every family the drill tries");
}

static int unix_connect(const char *path, bool abstract)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), rc, err;
	socklen_t len;

	if (fd < 0)
		return -1;
	snprintf(a.sun_path + abstract, sizeof(a.sun_path) - 1, "%s", path);
	len = offsetof(struct sockaddr_un, sun_path) + abstract + strlen(path) + !abstract;
	rc = connect(fd, (struct sockaddr *)&a, len);
	err = errno;
	close(fd);
	errno = err;
	return rc;
}

static void drill_unix(const struct drill_ctx *c, struct drill_result *r)
{
	int sv[2], rc;
	char b = 0;

	denied_net(r, unix_connect(c->unix_path, false), "connect unix %s (the drill's, outside)",
		   c->unix_path);
	denied_net(r, unix_connect(c->abstract, true), "connect unix @%s (the drill's, outside)",
		   c->abstract);
	if (!(c->p->net.sockets & POLICY_SOCK_UNIX))
		return;
	rc = socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
	if (!rc) {
		rc = write(sv[0], &b, 1) == 1 && read(sv[1], &b, 1) == 1 ? 0 : -1;
		close(sv[0]);
		close(sv[1]);
	}
	allowed(r, rc, "socketpair AF_UNIX, one byte through it");
}

static void drill_ipc(const struct drill_ctx *c, struct drill_result *r)
{
	int id = shmget(c->ipc_key, 0, 0);

	denied(r, id, "shmget key 0x%x (agentd's segment in the host's namespace)", c->ipc_key);
	id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	allowed(r, id, "shmget IPC_PRIVATE (its own)");
	if (id >= 0)
		shmctl(id, IPC_RMID, NULL);
}

static void drill_signals(const struct drill_ctx *c, struct drill_result *r)
{
	denied(r, kill(c->outside, SIGCONT), "kill %d SIGCONT (the drill, outside)", c->outside);
	if (!ptrace(PTRACE_SEIZE, c->outside, NULL, NULL)) {
		denied(r, 0, "ptrace PTRACE_SEIZE %d (the drill, outside)", c->outside);
		ptrace(PTRACE_DETACH, c->outside, NULL, NULL);
	} else {
		denied(r, -1, "ptrace PTRACE_SEIZE %d (the drill, outside)", c->outside);
	}
	allowed(r, kill(getpid(), 0), "kill %d 0 (itself)", (int)getpid());
}

static void drill_capabilities(const struct drill_ctx *c, struct drill_result *r)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};
	__u64 eff;
	int fd;

	if (!(c->p->capabilities & (1ULL << CAP_SYS_ADMIN)))
		denied(r, sethostname("agentd-drill", 12), "sethostname (CAP_SYS_ADMIN)");
	if (!(c->p->capabilities & (1ULL << CAP_CHOWN))) {
		fd = memfd_create("agentd-drill", MFD_CLOEXEC);
		denied(r, fd < 0 ? -1 : fchown(fd, 1, 1), "fchown a memfd to 1:1 (CAP_CHOWN)");
		if (fd >= 0)
			close(fd);
	}
	/* Observed, not tried: a capability held beyond the policy's is one escaped. */
	if (syscall(SYS_capget, &h, d) == 0) {
		eff = d[0].effective | (__u64)d[1].effective << 32;
		if (eff & ~c->p->capabilities)
			denied(r, 0, "capget: effective 0x%llx beyond the policy's 0x%llx",
			       (unsigned long long)eff, (unsigned long long)c->p->capabilities);
	}
	if (!r->n_denied)
		snprintf(r->why, sizeof(r->why), "the policy grants every capability tried");
}

static void drill_self(const struct drill_ctx *c, struct drill_result *r)
{
	union bpf_attr attr = {};
	char pin[PATH_MAX + 16];
	int fd, prio;

	snprintf(pin, sizeof(pin), "%s/pin_format", c->pin_dir);
	attr.pathname = (__u64)(unsigned long)pin;
	fd = syscall(SYS_bpf, BPF_OBJ_GET, &attr, sizeof(attr));
	denied(r, fd, "bpf BPF_OBJ_GET %s (agentd's pin)", pin);
	if (fd >= 0)
		close(fd);
	errno = 0;
	prio = getpriority(PRIO_PROCESS, c->outside);
	if (!errno)
		denied(r, setpriority(PRIO_PROCESS, c->outside, prio),
		       "setpriority %d %d (the drill, outside: its own value)", c->outside, prio);
	denied(r, (int)ptrace(PTRACE_TRACEME, 0, NULL, NULL),
	       "ptrace PTRACE_TRACEME (the drill, outside, its tracer)");
}

static void drill_cgroup(const struct drill_ctx *c, struct drill_result *r)
{
	char path[PATH_MAX + 16], pid[16];
	int fd, n, rc;

	snprintf(path, sizeof(path), "%s/cgroup.procs", c->cgroup_root);
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	fd = open(path, O_WRONLY | O_CLOEXEC);
	rc = fd < 0 ? -1 : (write(fd, pid, n) == n ? 0 : -1);
	denied(r, rc, "write its pid to %s (leave the drill's cgroup)", path);
	if (fd >= 0)
		close(fd);
}

void drill_boundary(const struct drill_ctx *c, int b, struct drill_result *r)
{
	static void (*const fn[BOUNDARY_COUNT])(const struct drill_ctx *, struct drill_result *) = {
		[BOUNDARY_FILES] = drill_files,
		[BOUNDARY_EXEC] = drill_exec,
		[BOUNDARY_EGRESS] = drill_egress,
		[BOUNDARY_LOOPBACK] = drill_loopback,
		[BOUNDARY_SOCKETS] = drill_sockets,
		[BOUNDARY_UNIX] = drill_unix,
		[BOUNDARY_IPC] = drill_ipc,
		[BOUNDARY_SIGNALS] = drill_signals,
		[BOUNDARY_CAPABILITIES] = drill_capabilities,
		[BOUNDARY_SELF] = drill_self,
		[BOUNDARY_CGROUP] = drill_cgroup,
	};

	r->boundary = b;
	r->pids[r->n_pids++] = getpid();
	static const char *const not_tried[BOUNDARY_COUNT] = {
		[BOUNDARY_LIMITS] = "not tried: exhausting a limit would take from the host what "
				    "the limit protects; agentctl inspect observes the controllers",
		[BOUNDARY_BROKER] = "not tried: the tool broker is agentd's process, not a layer "
				    "of the agent's (its tests try its refusals)",
		[BOUNDARY_PROXY] = "not tried: the egress proxy is agentd's process, not a layer "
				   "of the agent's (its tests try its refusals)",
		[BOUNDARY_AUDIT] = "not tried: the audit log is written by agentd; the drill's "
				   "records are its evidence",
	};

	if (fn[b])
		fn[b](c, r);
	else
		snprintf(r->why, sizeof(r->why), "%s", not_tried[b]);
	if (!r->n_denied && !r->why[0])
		snprintf(r->why, sizeof(r->why),
			 "the policy denies nothing the drill can try here");
}
