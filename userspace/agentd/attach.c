// SPDX-License-Identifier: GPL-2.0
/*
 * agentctl attach and detach in the daemon: running work put under an agent's policy.
 *
 * --pid: the process and its descendants are moved into a frozen staging cgroup below the
 * agent's (cgroup.procs), where they are the agent's and stop. A process that forks meanwhile
 * leaves its child in the old cgroup only if the fork completed before the parent moved (the
 * kernel orders the two), so passes over the process tree repeat until one moves nothing: from
 * then on every new child is born inside. Once all have stopped, every moved process's
 * descriptors are checked: the kernel checks cgroup writes when a cgroup file is opened, not
 * when it is written, so a cgroup file a process opened for writing before it was moved would
 * let it leave. One such descriptor (or an io_uring with a cgroup file among its registered
 * files, which are written without a descriptor) refuses the attach, and every moved process is
 * moved back where it was. Once moved, a process can open or receive no such file (BPF LSM:
 * file_open, file_receive), and stopped it can use none it holds, so what the check sees is all
 * it can ever hold; checked, the processes move into the agent's cgroup and run on.
 *
 * --cgroup: a cgroup outside agentd's tree (a container's) becomes one of the agent's: the
 * cgroup-BPF programs are attached to it first (they ignore tasks of no agent), then it is
 * registered, then its processes are checked as above (one holding a cgroup file open for
 * writing undoes the registration and refuses), then it is recorded in the agent's state so
 * that a restarted agentd re-adopts it.
 * Resource limits are not applied to it: it is not agentd's to limit.
 *
 * Over 800 lines, kept whole: --pid and --cgroup share the descriptor check, the staging and the
 * undo, and the undo must see every step taken; one file keeps every path back in view.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include "broker/broker.h"
#include "kernel/cgroup.h"
#include "daemon.h"
#include "log.h"
#include "kernel/mounts.h"
#include "kernel/procfs.h"
#include "proxy.h"

#define PF_EXITING 0x00000004 /* include/linux/sched.h: the task is in do_exit() */

#define PASSES_MAX 100
#define ANCESTRY_MAX 4096

__attribute__((format(printf, 3, 4))) static json_t *error(const struct control_request *req,
							   const char *code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return control_reply_error(req->id, code, msg);
}

/* Whether path is top or below it. */
static bool under(const char *path, const char *top)
{
	return cgroup_path_below(path, top);
}

/* The cgroup v2 directory of a process ("0::/x" in /proc/PID/cgroup), below root. */
static int proc_cgroup(const char *root, pid_t pid, char *out, size_t sz)
{
	char rel[PATH_MAX];
	int err = cgroup_of_pid(pid, rel, sizeof(rel));

	if (!err && (size_t)snprintf(out, sz, "%s%s", root, strcmp(rel, "/") ? rel : "") >= sz)
		err = -ENAMETOOLONG;
	return err;
}

/* The agent whose cgroups (its own, or attached ones) hold the cgroup at path, or NULL. */
static struct agent *owner(struct daemon *d, const char *path)
{
	struct agent *a;
	size_t i;
	int id;

	for (id = 1; id < AGENTD_MAX_AGENTS; id++) {
		a = d->agents[id];
		if (!a)
			continue;
		if (under(path, a->cgroup))
			return a;
		for (i = 0; i < a->st.ncgroups; i++)
			if (under(path, a->st.cgroups[i]))
				return a;
	}
	return NULL;
}

/*
 * Whether the cgroup at path is one whose processes are never an agent's: init.scope (the init
 * system's), agentd's own (its service's; when agentd runs in the root cgroup, only the processes
 * agentd started are protected, below), or the broker's tools'. Returns what it is, or NULL.
 */
static const char *protected_cgroup(const struct daemon *d, const char *root, const char *path)
{
	char self[PATH_MAX + 8], cg[PATH_MAX + 32];

	snprintf(cg, sizeof(cg), "%s/init.scope", root);
	if (under(path, cg))
		return "init.scope, the init system's cgroup";
	snprintf(cg, sizeof(cg), "%s/%s", d->cgroup, BROKER_TOOLS_CGROUP);
	if (under(path, cg))
		return "the cgroup of the broker's tools";
	if (proc_cgroup(root, getpid(), self, sizeof(self)))
		return "agentd's own cgroup (it cannot be read)"; /* fail closed */
	if (strcmp(self, root) && under(path, self))
		return "agentd's own cgroup";
	return NULL;
}

/* What holds for work attached to an agent: the kernel layers, and no resource limits. */
static json_t *layers_json(const struct daemon *d, bool foreign)
{
	const char *l = d->lsm ? "BPF LSM" : "NOT ENFORCED";

	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "files", l, "exec", l, "self", l,
			 "sockets", l, "network", "cgroup-BPF", "limits",
			 foreign ? "NOT APPLIED (not agentd's cgroup)" : "as for the agent");
}

/* Without BPF LSM only cgroup-BPF holds for attached work: said, and refused unless asked. */
static json_t *check_partial(const struct daemon *d, const struct control_request *req,
			     const char *what)
{
	if (d->lsm || req->allow_partial)
		return NULL;
	return error(req, CONTROL_E_PARTIAL,
		     "BPF LSM is unavailable here: for %s only the agent's network rules "
		     "(cgroup-BPF) would hold; its file, exec, socket-family and self-protection "
		     "rules would NOT be enforced (Landlock and seccomp cannot be applied to a "
		     "process that is already running); --allow-partial attaches anyway",
		     what);
}

static json_t *attached(const struct control_request *req, const struct daemon *d,
			const struct agent *a, bool foreign)
{
	json_t *reply = control_reply_ok(req->id);

	if (!reply)
		return NULL;
	json_object_set_new(reply, "name", json_string(a->st.name));
	json_object_set_new(reply, "layers", layers_json(d, foreign));
	return reply;
}

/* ---- processes ---- */

struct ptab {
	int pid, ppid;
	bool dead; /* a zombie: it runs nothing, and a move of it moves nothing */
};

static int ptab_cmp(const void *a, const void *b)
{
	return ((const struct ptab *)a)->pid - ((const struct ptab *)b)->pid;
}

/* The parent of pid, or -1; its state letter in *state when state is not NULL. */
static int read_stat(int pid, char *state)
{
	char path[64], buf[512], st = '?';
	const char *p;
	int ppid = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (procfs_read(path, buf, sizeof(buf)) < 0)
		return -1;
	p = procfs_stat_fields(buf);
	if (p && sscanf(p, "%c %d", &st, &ppid) != 2)
		ppid = -1;
	if (state)
		*state = st;
	return ppid;
}

static int read_ppid(int pid)
{
	return read_stat(pid, NULL);
}

/* Every process and its parent, sorted by pid. */
static int ptab_scan(struct ptab **out, size_t *n)
{
	struct ptab *t = NULL, *more;
	size_t cap = 0;
	struct dirent *de;
	DIR *dir = opendir("/proc");
	int pid, ppid;
	char state;

	*n = 0;
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = atoi(de->d_name);
		ppid = read_stat(pid, &state);
		if (ppid < 0)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 1024;
			more = realloc(t, cap * sizeof(*t));
			if (!more) {
				free(t);
				closedir(dir);
				return -ENOMEM;
			}
			t = more;
		}
		t[(*n)++] = (struct ptab){ pid, ppid, state == 'Z' || state == 'X' };
	}
	closedir(dir);
	qsort(t, *n, sizeof(*t), ptab_cmp);
	*out = t;
	return 0;
}

static bool descends(const struct ptab *t, size_t n, int pid, int root)
{
	struct ptab key = { 0, 0, false }, *e;
	int depth;

	for (depth = 0; depth < ANCESTRY_MAX && pid > 1; depth++) {
		if (pid == root)
			return true;
		key.pid = pid;
		e = bsearch(&key, t, n, sizeof(*t), ptab_cmp);
		if (!e)
			return false;
		pid = e->ppid;
	}
	return pid == root;
}

/* A process moved, and the cgroup it came from (to move it back). */
struct moved {
	int pid;
	unsigned long long start; /* its start time: a pid reused later names another process */
	char from[PATH_MAX + 8];
};

struct move {
	struct daemon *d;
	struct agent *a;
	char root[PATH_MAX];
	char staging[sizeof(((struct agent *)0)->cgroup) + 32]; /* where moves go (below) */
	unsigned moved, skipped;
	struct moved *v;
	size_t nv, cap;
	char why[1024];
};

/* Field n (3 and above) of a /proc/.../stat line, as a number; 0 when there is none. */
static unsigned long long stat_field(const char *line, int n)
{
	const char *p = procfs_stat_fields(line);
	int i;

	for (i = 3; p && i < n; i++) {
		p = strchr(p, ' ');
		p = p ? p + 1 : NULL;
	}
	return p ? strtoull(p, NULL, 10) : 0;
}

/* Field 22 of /proc/PID/stat, the process's start time; 0 when it cannot be read. */
static unsigned long long start_time(int pid)
{
	char path[64], buf[1024];

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (procfs_read(path, buf, sizeof(buf)) < 0)
		return 0;
	return stat_field(buf, 22);
}

static int remember(struct move *m, int pid, const char *from)
{
	struct moved *more;

	if (m->nv == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 64;
		more = realloc(m->v, m->cap * sizeof(*m->v));
		if (!more)
			return -ENOMEM;
		m->v = more;
	}
	m->v[m->nv].pid = pid;
	m->v[m->nv].start = start_time(pid);
	snprintf(m->v[m->nv++].from, sizeof(m->v[0].from), "%s", from);
	return 0;
}

/* Moves one process of the tree unless it is inside already, or another agent's. */
static int move_one(struct move *m, int pid, unsigned *moved)
{
	char cg[PATH_MAX + 8], procs[sizeof(m->staging) + 16], num[16];
	struct agent *b;
	int err = proc_cgroup(m->root, pid, cg, sizeof(cg));

	if (err == -ESRCH)
		return 0; /* gone meanwhile */
	if (err) {
		snprintf(m->why, sizeof(m->why), "the cgroup of process %d: %s", pid,
			 strerror(-err));
		return err;
	}
	b = owner(m->d, cg);
	if (b == m->a)
		return 0;
	if (b || protected_cgroup(m->d, m->root, cg)) {
		/* A process never leaves its agent: it stays with b, confined. One that entered a
		 * protected cgroup since tree_protected() stays there. */
		m->skipped++;
		return 0;
	}
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", m->staging);
	snprintf(num, sizeof(num), "%d", pid);
	err = remember(m, pid, cg);
	if (!err)
		err = cgroup_write(procs, num);
	if (err == -ESRCH)
		return 0;
	if (err) {
		snprintf(m->why, sizeof(m->why), "moving process %d into %.400s: %s", pid,
			 m->staging, strerror(-err));
		return err;
	}
	(*moved)++;
	return 0;
}

/* The open flags of descriptor fd of thread tid of pid, from fdinfo ("flags:\t0100002"). */
static int fd_flags(int pid, int tid, int fd)
{
	char path[96], line[128];
	unsigned flags;
	int r = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/fdinfo/%d", pid, tid, fd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (r < 0 && fgets(line, sizeof(line), f))
		if (sscanf(line, "flags: %o", &flags) == 1)
			r = (int)(flags & 0x7fffffff);
	fclose(f);
	return r;
}

static bool is_cgroup_fs(const struct statfs *sfs)
{
	return sfs->f_type == CGROUP2_SUPER_MAGIC || sfs->f_type == CGROUP_SUPER_MAGIC;
}

/* A cgroup file that moves, kills or freezes processes, by its name alone. */
static bool cgroup_control_name(const char *name)
{
	return !strncmp(name, "cgroup.", 7) || !strcmp(name, "tasks");
}

/*
 * One "  3: /sys/fs/cgroup/x/cgroup.procs" line of an io_uring's fdinfo: 1 when the registered
 * file is on a cgroup file system (name says which), 0, or -1 when the line is no such entry.
 * Older kernels (6.1 and 6.12 among them; 6.18 gives paths) give the file's name alone: there,
 * a name of the cgroup files that move, kill or freeze processes counts, wherever it is.
 */
static int ring_entry(char *line, char *name, size_t namesz)
{
	struct statfs sfs;
	char *path;

	line[strcspn(line, "\n")] = '\0';
	path = strchr(line, ':');
	if (!path || !isdigit((unsigned char)line[strspn(line, " ")]) || path[1] != ' ')
		return -1;
	path += 2;
	unescape_octal(path); /* seq_file_path() escapes spaces, tabs, newlines, backslashes */
	if (path[0] == '/' ? statfs(path, &sfs) || !is_cgroup_fs(&sfs) : !cgroup_control_name(path))
		return 0;
	snprintf(name, namesz, "anon_inode:[io_uring] registering %s", path);
	return 1;
}

/*
 * Whether the io_uring behind descriptor fd has a cgroup file among its registered files: they
 * are written without being opened again, and once registered need no descriptor. fdinfo lists
 * them ("UserFiles:" and one line each) only when it gets the ring's lock: a ring whose
 * registered files stay unlisted counts as holding one. The list gives paths, not modes, so a
 * cgroup file registered for reading only counts too.
 */
static int ring_registers_cgroup(int pid, int tid, int fd, char *name, size_t namesz)
{
	char path[96], line[PATH_MAX + 32];
	unsigned files = 0, listed = 0;
	int tries, r = 0, e;
	bool in_files;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/fdinfo/%d", pid, tid, fd);
	for (tries = 0; tries < 10; tries++) {
		f = fopen(path, "re");
		if (!f)
			return errno == ENOENT ? 0 : -errno;
		in_files = false;
		listed = 0;
		while (!r && fgets(line, sizeof(line), f)) {
			if (sscanf(line, "UserFiles: %u", &files) == 1) {
				in_files = true;
				continue;
			}
			e = in_files ? ring_entry(line, name, namesz) : -1;
			if (e < 0)
				in_files = false;
			else
				listed++, r = e;
		}
		fclose(f);
		if (r || !files || listed)
			return r;
		usleep(10000); /* the ring's lock was held: look again */
	}
	snprintf(name, namesz, "anon_inode:[io_uring] whose %u registered files stay unlisted",
		 files);
	return 1;
}

/*
 * Whether the descriptor is a cgroup file open for writing, or an io_uring with one registered:
 * 1 (name says which), 0, or -errno.
 */
static int fd_writable_cgroup(int pid, int tid, int fd, char *name, size_t namesz)
{
	char path[96];
	struct statfs sfs;
	int flags = fd_flags(pid, tid, fd), pfd, err = 0;
	ssize_t n;

	if (flags == -ENOENT)
		return 0; /* closed meanwhile */
	if (flags < 0)
		return flags;
	if ((flags & O_ACCMODE) == O_RDONLY)
		return 0; /* O_PATH descriptors too */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/fd/%d", pid, tid, fd);
	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return errno == ENOENT || errno == ENXIO ? 0 : -errno;
	if (fstatfs(pfd, &sfs))
		err = -errno;
	close(pfd);
	if (err)
		return err;
	n = readlink(path, name, namesz - 1);
	name[n > 0 ? n : 0] = '\0';
	if (sfs.f_type == ANON_INODE_FS_MAGIC && !strcmp(name, "anon_inode:[io_uring]"))
		return ring_registers_cgroup(pid, tid, fd, name, namesz);
	return is_cgroup_fs(&sfs);
}

/* Descriptors of one thread: 1 when one is a cgroup file open for writing (*fd, name), 0, or
 * -errno. */
static int thread_holds(int pid, int tid, int *fd, char *name, size_t namesz)
{
	char path[96];
	struct dirent *de;
	DIR *dir;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/fd", pid, tid);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while (!r && (de = readdir(dir))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		*fd = atoi(de->d_name);
		r = fd_writable_cgroup(pid, tid, *fd, name, namesz);
	}
	closedir(dir);
	return r;
}

/*
 * Whether a thread of process pid (threads may have descriptor tables of their own) holds a
 * cgroup file open for writing: 1 (*fd and name say which), 0, or -errno. A process that is
 * gone holds nothing.
 */
static int holds_writable_cgroup(int pid, int *fd, char *name, size_t namesz)
{
	char path[32];
	struct dirent *t;
	DIR *dir;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while (!r && (t = readdir(dir)))
		if (isdigit((unsigned char)t->d_name[0]))
			r = thread_holds(pid, atoi(t->d_name), fd, name, namesz);
	closedir(dir);
	return r;
}

/*
 * Whether thread tid of process pid is exiting or dead. The kernel moves no exiting thread
 * (cgroup_migrate_add_task() skips PF_EXITING; the cgroup.procs write still succeeds), and
 * such a thread never runs another instruction of its own: left where it was, it escapes
 * nothing.
 */
static bool thread_exiting(int pid, int tid)
{
	char path[96], buf[1024];
	const char *fields;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	n = procfs_read(path, buf, sizeof(buf));
	if (n < 0)
		return n == -ENOENT || n == -ESRCH; /* reaped */
	fields = procfs_stat_fields(buf);
	if (!fields)
		return false;
	return fields[0] == 'Z' || fields[0] == 'X' || (stat_field(buf, 9) & PF_EXITING);
}

/* 1 when a live thread of process pid is outside cgroup want (path below root), 0, or -errno. */
static int threads_outside(const char *root, int pid, const char *want)
{
	char path[32], rel[PATH_MAX], cg[PATH_MAX + 8];
	struct dirent *t;
	int r = 0, tid;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while (!r && (t = readdir(dir))) {
		if (!isdigit((unsigned char)t->d_name[0]))
			continue;
		tid = atoi(t->d_name);
		if (thread_exiting(pid, tid))
			continue;
		r = cgroup_of_task(pid, tid, rel, sizeof(rel));
		if (r == -ESRCH) {
			r = 0;
			continue;
		}
		if (!r && (size_t)snprintf(cg, sizeof(cg), "%s%s", root,
					   strcmp(rel, "/") ? rel : "") >= sizeof(cg))
			r = -ENAMETOOLONG;
		if (!r)
			r = strcmp(cg, want) != 0;
	}
	closedir(dir);
	return r;
}

/*
 * After the move: no moved process holds a cgroup file open for writing, and each is still in
 * the agent's cgroup. Returns 0, or -EPERM (or -errno when the check itself failed) with m->why.
 */
static int check_moved(struct move *m)
{
	char name[PATH_MAX], cg[PATH_MAX + 8];
	int r, fd = -1;
	size_t i;

	for (i = 0; i < m->nv; i++) {
		r = holds_writable_cgroup(m->v[i].pid, &fd, name, sizeof(name));
		if (r < 0) {
			snprintf(m->why, sizeof(m->why), "the descriptors of process %d: %s",
				 m->v[i].pid, strerror(-r));
			return r;
		}
		if (r) {
			snprintf(m->why, sizeof(m->why),
				 "process %d holds a cgroup file open for writing (descriptor %d, "
				 "%.400s): as an agent it could leave its cgroup through it",
				 m->v[i].pid, fd, name[0] ? name : "?");
			return -EPERM;
		}
	}
	for (i = 0; i < m->nv; i++) {
		r = proc_cgroup(m->root, m->v[i].pid, cg, sizeof(cg));
		if (r == -ESRCH)
			continue;
		/* Exiting as it was moved (the kernel moves no exiting task), then reaped: its
		 * pid may name a new process by now, which was never moved. */
		if (r == 0 && strcmp(cg, m->staging) && start_time(m->v[i].pid) != m->v[i].start)
			continue;
		/* Exiting as it was moved, not yet reaped: the process reads where its first
		 * thread was; each live thread must be in the staging cgroup. */
		if (r == 0 && strcmp(cg, m->staging) &&
		    threads_outside(m->root, m->v[i].pid, m->staging) == 0)
			continue;
		if (r || strcmp(cg, m->staging)) {
			snprintf(m->why, sizeof(m->why),
				 "process %d left the cgroup it was moved into while it was "
				 "attached",
				 m->v[i].pid);
			return -EPERM;
		}
	}
	return 0;
}

/*
 * The staging cgroup of an attach: a frozen child of the agent's cgroup, which every process is
 * moved into. A process moved there is the agent's at once (its ancestor is the agent's
 * cgroup), and stops before it runs another instruction of its own: a process built to race
 * the check cannot leave through a cgroup file between its move and the check, open something
 * outside, and come back without it. What the check sees is what each holds. One staging
 * cgroup per agent (attaches are served one at a time); an empty one a crashed agentd left is
 * removed first, one still holding processes refuses the attach.
 */
#define STAGING_NAME "agentd-attach"
#define FREEZE_WAIT_MS 5000

static int stage(struct move *m)
{
	char path[sizeof(m->staging) + 32];
	int err;

	snprintf(m->staging, sizeof(m->staging), "%s/" STAGING_NAME, m->a->cgroup);
	if (rmdir(m->staging) && errno != ENOENT) {
		/* Left by an agentd that died mid-attach: its processes, stopped and never
		 * checked, stay stopped there until the agent is removed. */
		err = -errno;
		snprintf(
			m->why, sizeof(m->why),
			"%.400s, an attach's staging cgroup left by an earlier agentd, holds "
			"processes that were never checked (%s): they stay stopped there until the "
			"agent is removed",
			m->staging, strerror(-err));
		return err;
	}
	if (mkdir(m->staging, 0755)) {
		err = -errno;
		snprintf(m->why, sizeof(m->why), "making %.400s: %s", m->staging, strerror(-err));
		return err;
	}
	snprintf(path, sizeof(path), "%s/cgroup.freeze", m->staging);
	err = cgroup_write(path, "1");
	if (err) {
		snprintf(m->why, sizeof(m->why), "freezing %.400s: %s", m->staging, strerror(-err));
		rmdir(m->staging);
	}
	return err;
}

/* Whether everything in the cgroup cg has stopped (cgroup.events: "frozen 1"), waiting up to
 * FREEZE_WAIT_MS: a process in an uninterruptible sleep may not stop, and then the attach is
 * refused rather than checked while it can still act. */
static int wait_frozen_at(const char *cg, char *why, size_t whysz)
{
	char path[2 * PATH_MAX], buf[256];
	struct pollfd pfd = { .events = POLLPRI };
	struct timespec start, now;
	long waited;
	int err = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/cgroup.events", cg);
	pfd.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (pfd.fd < 0)
		err = -errno;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!err) {
		n = pread(pfd.fd, buf, sizeof(buf) - 1, 0);
		if (n < 0) {
			err = -errno;
			break;
		}
		buf[n] = '\0';
		if (strstr(buf, "frozen 1"))
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		waited = (now.tv_sec - start.tv_sec) * 1000 +
			 (now.tv_nsec - start.tv_nsec) / 1000000;
		if (waited >= FREEZE_WAIT_MS) {
			err = -ETIMEDOUT;
			break;
		}
		/* cgroup.events signals a change with POLLPRI; the timeout bounds a missed one. */
		poll(&pfd, 1, 50);
	}
	if (pfd.fd >= 0)
		close(pfd.fd);
	if (err == -ETIMEDOUT)
		snprintf(why, whysz,
			 "the processes of %.400s did not all stop within %d ms (one in an "
			 "uninterruptible sleep?): they are not checked while they can act",
			 cg, FREEZE_WAIT_MS);
	else if (err)
		snprintf(why, whysz, "reading the state of %.400s: %s", cg, strerror(-err));
	return err;
}

static int wait_frozen(struct move *m)
{
	return wait_frozen_at(m->staging, m->why, sizeof(m->why));
}

/* Every process left in staging moved to the cgroup to (which thaws it, unless to is frozen).
 * Returns 0 or the first error. */
static int unstage_all(const char *staging, const char *to)
{
	char path[PATH_MAX + 32], line[32];
	int err = 0, e;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", staging);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	snprintf(path, sizeof(path), "%s/cgroup.procs", to);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		e = cgroup_write(path, line);
		if (e && e != -ESRCH && !err)
			err = e;
	}
	fclose(f);
	return err;
}

/* The end of a staging cgroup: what is left in it goes to the agent's cgroup (there only when
 * something went wrong: every moved process was moved on), and it is removed. */
static void unstage(struct move *m)
{
	int err = unstage_all(m->staging, m->a->cgroup);

	if (err || rmdir(m->staging))
		log_warn("agent %s: removing %s: %s\n", m->a->st.name, m->staging,
			 strerror(err ? -err : errno));
}

/* Every moved process back where it came from; returns how many could not be. */
static unsigned move_back(struct move *m)
{
	char procs[sizeof(m->v[0].from) + 16], num[16];
	unsigned failed = 0;
	size_t i;
	int err;

	for (i = m->nv; i-- > 0;) {
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", m->v[i].from);
		snprintf(num, sizeof(num), "%d", m->v[i].pid);
		err = cgroup_write(procs, num);
		if (err && err != -ESRCH) {
			log_warn("agent %s: moving process %d back to %s: %s\n", m->a->st.name,
				 m->v[i].pid, m->v[i].from, strerror(-err));
			failed++;
		}
	}
	return failed;
}

/* One pass over the tree of root; *moved counts the processes moved in it. */
static int move_pass(struct move *m, int root, unsigned *moved)
{
	struct ptab *t = NULL;
	size_t n, i;
	int err = ptab_scan(&t, &n);

	*moved = 0;
	if (err) {
		snprintf(m->why, sizeof(m->why), "reading /proc: %s", strerror(-err));
		return err;
	}
	/* A zombie stays where it died: its parent, stopped in staging, cannot reap it. */
	for (i = 0; !err && i < n; i++)
		if (!t[i].dead && descends(t, n, t[i].pid, root))
			err = move_one(m, t[i].pid, moved);
	free(t);
	return err;
}

/* Whether agentd itself descends from pid (moving pid's tree would move agentd). */
static bool is_ancestor_of_self(int pid)
{
	int p = getpid(), depth;

	for (depth = 0; depth < ANCESTRY_MAX && p > 1; depth++) {
		if (p == pid)
			return true;
		p = read_ppid(p);
	}
	return false;
}

/* Whether agentd started pid (a worker, a tool, or what they started). */
static bool started_by_self(int pid)
{
	int p = pid, self = getpid(), depth;

	for (depth = 0; depth < ANCESTRY_MAX && p > 1; depth++) {
		p = read_ppid(p);
		if (p == self)
			return true;
	}
	return false;
}

/*
 * A process of the tree of pid in a protected cgroup (protected_cgroup()) refuses the attach
 * before anything moves: 1 with m->why, 0, or -errno. One that enters such a cgroup later is
 * skipped by move_one().
 */
static int tree_protected(struct move *m, int pid)
{
	char cg[PATH_MAX + 8];
	struct ptab *t = NULL;
	const char *what;
	size_t n, i;
	int err = ptab_scan(&t, &n), r = 0;

	if (err) {
		snprintf(m->why, sizeof(m->why), "reading /proc: %s", strerror(-err));
		return err;
	}
	for (i = 0; !r && i < n; i++) {
		if (t[i].dead || !descends(t, n, t[i].pid, pid) ||
		    proc_cgroup(m->root, t[i].pid, cg, sizeof(cg)))
			continue;
		what = protected_cgroup(m->d, m->root, cg);
		if (what) {
			snprintf(m->why, sizeof(m->why),
				 "process %d (of the tree of %d) is in %s: it is never an agent's",
				 t[i].pid, pid, what);
			r = 1;
		}
	}
	free(t);
	return r;
}

static json_t *attach_pid(struct daemon *d, struct agent *a, const struct control_request *req)
{
	struct move m = { .d = d, .a = a };
	char cg[PATH_MAX + 8], what[64];
	unsigned pass, moved = 1;
	struct agent *b;
	json_t *reply;
	int err = 0;

	if (req->pid == 1 || is_ancestor_of_self(req->pid))
		return error(req, CONTROL_E_REFUSED,
			     "process %d is init or an ancestor of agentd: agentd does not attach "
			     "itself to an agent",
			     req->pid);
	if (started_by_self(req->pid))
		return error(
			req, CONTROL_E_REFUSED,
			"process %d was started by agentd (a worker or a tool): it is never an "
			"agent's",
			req->pid);
	err = cgroup2_mount(m.root, sizeof(m.root));
	if (!err)
		err = proc_cgroup(m.root, req->pid, cg, sizeof(cg));
	if (err == -ESRCH || err == -ENOENT)
		return error(req, CONTROL_E_NOPROC, "no process %d (or it has no cgroup v2)",
			     req->pid);
	if (err)
		return error(req, CONTROL_E_FAILED, "the cgroup of process %d: %s", req->pid,
			     strerror(-err));
	b = owner(d, cg);
	if (b && b != a)
		return error(req, CONTROL_E_REFUSED,
			     "process %d is agent %s's: a process never leaves its agent", req->pid,
			     b->st.name);
	err = tree_protected(&m, req->pid);
	if (err > 0)
		return error(req, CONTROL_E_REFUSED, "%s", m.why);
	if (err)
		return error(req, CONTROL_E_FAILED, "%s", m.why);
	snprintf(what, sizeof(what), "process %d", req->pid);
	reply = check_partial(d, req, what);
	if (reply)
		return reply;
	err = stage(&m);
	if (err) {
		log_warn("agent %s: attach of process %d: %s\n", a->st.name, req->pid, m.why);
		return error(req, CONTROL_E_FAILED, "%s", m.why);
	}
	for (pass = 0; !err && moved && pass < PASSES_MAX; pass++) {
		err = move_pass(&m, req->pid, &moved);
		m.moved += moved;
	}
	if (!err && moved)
		snprintf(
			m.why, sizeof(m.why),
			"the tree of process %d still forked new processes outside after %d passes",
			req->pid, PASSES_MAX);
	if (err || moved) {
		log_warn("agent %s: attach of process %d stopped after %u processes moved: %s\n",
			 a->st.name, req->pid, m.moved, m.why);
		unstage(&m);
		free(m.v);
		return error(req, CONTROL_E_FAILED, "%s (%u processes were moved, and stay)", m.why,
			     m.moved);
	}
	err = wait_frozen(&m);
	err = err ?: check_moved(&m);
	if (!err) {
		/* Checked while stopped: into the agent's cgroup, where they run on. */
		err = unstage_all(m.staging, a->cgroup);
		if (err)
			snprintf(m.why, sizeof(m.why),
				 "moving the checked processes into %.400s: %s", a->cgroup,
				 strerror(-err));
	}
	if (err) {
		unsigned stuck = move_back(&m);

		unstage(&m);

		log_warn("agent %s: attach of process %d refused: %s; %u of %u moved processes "
			 "moved back\n",
			 a->st.name, req->pid, m.why, m.moved - stuck, m.moved);
		reply = error(req, err == -EPERM ? CONTROL_E_REFUSED : CONTROL_E_FAILED,
			      "%s; the %u processes moved were moved back where they were%s", m.why,
			      m.moved,
			      stuck ? " (some could not be: agentd's log names them)" : "");
		free(m.v);
		return reply;
	}
	unstage(&m);
	free(m.v);
	log_info("agent %s: process %d attached: %u processes moved into %s%s\n", a->st.name,
		 req->pid, m.moved, a->cgroup, d->lsm ? "" : " (network rules only: no BPF LSM)");
	daemon_audit(d, AUDIT_KIND_LIFECYCLE, "agent-attach", a, "pid=%d moved=%u layers=%s",
		     req->pid, m.moved, d->lsm ? "bpf-lsm,cgroup-bpf" : "cgroup-bpf");
	reply = attached(req, d, a, false);
	if (reply) {
		json_object_set_new(reply, "pid", json_integer(req->pid));
		json_object_set_new(reply, "moved", json_integer(m.moved));
		json_object_set_new(reply, "skipped", json_integer(m.skipped));
		json_object_set_new(reply, "cgroup", json_string(a->cgroup));
	}
	return reply;
}

/* ---- cgroups ---- */

/* The cgroup-BPF programs on, then the registration: the order that never leaves a registered
 * cgroup without its network programs. */
static int adopt_cgroup(struct daemon *d, struct agent *a, const char *path, const char **what)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;

	if (fd < 0) {
		*what = "opening";
		return -errno;
	}
	*what = "attaching the cgroup programs to";
	err = enforcer_attach_cgroup(d->e, fd);
	if (!err) {
		*what = "registering";
		err = enforcer_add_cgroup(d->e, path, a->st.id);
	}
	if (err)
		enforcer_detach_cgroup(d->e, fd);
	close(fd);
	return err;
}

/* The registration off, then the programs. */
static int release_cgroup(struct daemon *d, const char *path)
{
	int fd, err = enforcer_remove_cgroup(d->e, path);

	if (err == -ENOENT)
		err = 0; /* not registered, or the cgroup is gone */
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		int e = enforcer_detach_cgroup(d->e, fd);

		err = err ? err : e;
		close(fd);
	}
	return err;
}

/*
 * Whether a process in the cgroup tree at dir holds a cgroup file open for writing: 1 (*pid,
 * *fd, name say which), 0, or -errno. Registered first, the tree's processes can acquire no
 * such file any more, so this sees all they hold.
 */
static int tree_holds(const char *dir, int level, int *pid, int *fd, char *name, size_t namesz)
{
	char path[PATH_MAX + 16], line[32];
	struct dirent *de;
	int r = 0;
	DIR *d;
	FILE *f;

	if (level > AGENTD_MAX_CGROUP_LEVEL)
		return -ELOOP;
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno; /* removed meanwhile */
	while (!r && fgets(line, sizeof(line), f)) {
		*pid = atoi(line);
		r = holds_writable_cgroup(*pid, fd, name, namesz);
	}
	fclose(f);
	d = opendir(dir);
	if (!d)
		return r ? r : errno == ENOENT ? 0 : -errno;
	while (!r && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= PATH_MAX)
			r = -ENAMETOOLONG;
		else
			r = tree_holds(path, level + 1, pid, fd, name, namesz);
	}
	closedir(d);
	return r;
}

/* Refuses what would confine agentd, overlap another agent, or is not a cgroup. */
static json_t *check_cgroup(struct daemon *d, const struct control_request *req, const char *root,
			    const char *real)
{
	char self[PATH_MAX + 8], procs[PATH_MAX + 16];
	const char *what;
	struct agent *b;
	size_t i;
	int id;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", real);
	if (!under(real, root) || !strcmp(real, root) || access(procs, F_OK))
		return error(req, CONTROL_E_REFUSED,
			     "%s is not a cgroup below the cgroup v2 root %s", req->cgroup, root);
	if (under(real, d->cgroup) || under(d->cgroup, real))
		return error(req, CONTROL_E_REFUSED,
			     "%s is in or above agentd's own cgroup tree %s (agents there are made "
			     "with agentctl agent add)",
			     req->cgroup, d->cgroup);
	if (proc_cgroup(root, getpid(), self, sizeof(self)) || under(self, real))
		return error(req, CONTROL_E_REFUSED, "agentd itself runs in %s", real);
	what = protected_cgroup(d, root, real);
	if (what)
		return error(req, CONTROL_E_REFUSED, "%s is in %s: it is never an agent's", real,
			     what);
	for (id = 1; id < AGENTD_MAX_AGENTS; id++) {
		b = d->agents[id];
		for (i = 0; b && i < b->st.ncgroups; i++)
			if (under(real, b->st.cgroups[i]) || under(b->st.cgroups[i], real))
				return error(req, CONTROL_E_REFUSED,
					     "%s overlaps %s, attached to agent %s", real,
					     b->st.cgroups[i], b->st.name);
	}
	return NULL;
}

/*
 * Stops every process of the tree at path (cgroup.freeze holds for the cgroups below), so that
 * none acts between its registration and the check of what it holds: one holding a cgroup file
 * could otherwise leave, act as no agent's, and come back without it. *froze says whether to
 * thaw: a tree its owner froze stays frozen.
 */
static int freeze_tree(const char *path, bool *froze, char *why, size_t whysz)
{
	char file[PATH_MAX + 32], buf[8] = "";
	int fd, err = 0;

	snprintf(file, sizeof(file), "%s/cgroup.freeze", path);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) < 0)
		err = -errno;
	if (fd >= 0)
		close(fd);
	*froze = buf[0] != '1';
	if (!err && *froze)
		err = cgroup_write(file, "1");
	if (err) {
		snprintf(why, whysz, "freezing %.400s: %s", path, strerror(-err));
		return err;
	}
	err = wait_frozen_at(path, why, whysz);
	if (err && *froze)
		cgroup_write(file, "0");
	return err;
}

static void thaw_tree(const char *path, bool froze)
{
	char file[PATH_MAX + 32];
	int err;

	if (!froze)
		return;
	snprintf(file, sizeof(file), "%s/cgroup.freeze", path);
	err = cgroup_write(file, "0");
	if (err)
		log_err("thawing %s: %s: its processes stay stopped\n", path, strerror(-err));
}

/* Registers the frozen tree at real and checks what its processes hold. */
static json_t *attach_frozen(struct daemon *d, struct agent *a, const struct control_request *req,
			     const char *real)
{
	char name[PATH_MAX];
	int err, pid = 0, fd = -1;
	const char *doing;
	json_t *reply;

	err = adopt_cgroup(d, a, real, &doing);
	if (err == -ENOSPC)
		return error(
			req, CONTROL_E_LIMIT,
			"%s: agents already sit at %d distinct cgroup depths, the most the BPF "
			"programs look at; attach a cgroup at a depth in use",
			real, AGENTD_MAX_AGENT_LEVELS);
	if (err == -ELOOP)
		return error(req, CONTROL_E_LIMIT,
			     "%s is deeper than the %d cgroup levels agents may sit at", real,
			     AGENTD_MAX_CGROUP_LEVEL);
	if (err)
		return error(req, CONTROL_E_FAILED, "%s %s: %s", doing, real, strerror(-err));
	err = tree_holds(real, 0, &pid, &fd, name, sizeof(name));
	if (err) {
		release_cgroup(d, real);
		if (err < 0)
			return error(req, CONTROL_E_FAILED, "the processes of %s: %s", real,
				     strerror(-err));
		return error(
			req, CONTROL_E_REFUSED,
			"process %d in %s holds a cgroup file open for writing (descriptor %d, "
			"%s): as an agent it could leave its cgroup through it; not attached",
			pid, real, fd, name[0] ? name : "?");
	}
	snprintf(a->st.cgroups[a->st.ncgroups++], sizeof(a->st.cgroups[0]), "%s", real);
	err = agent_state_save(d->o->state_dir, &a->st);
	if (err) {
		a->st.ncgroups--;
		release_cgroup(d, real);
		return error(req, CONTROL_E_FAILED, "saving %s/agents/%s.json: %s", d->o->state_dir,
			     a->st.name, strerror(-err));
	}
	log_info("agent %s: cgroup %s attached%s\n", a->st.name, real,
		 d->lsm ? "" : " (network rules only: no BPF LSM)");
	daemon_audit(d, AUDIT_KIND_LIFECYCLE, "agent-attach", a, "cgroup=%s layers=%s", real,
		     d->lsm ? "bpf-lsm,cgroup-bpf" : "cgroup-bpf");
	/* Its processes may use the agent's proxy from now on. */
	proxy_agent_reloaded(d, a);
	reply = attached(req, d, a, true);
	if (reply)
		json_object_set_new(reply, "cgroup", json_string(real));
	return reply;
}

static json_t *attach_cgroup(struct daemon *d, struct agent *a, const struct control_request *req)
{
	char root[PATH_MAX], real[PATH_MAX], what[PATH_MAX + 16], why[1024];
	bool froze;
	json_t *reply;
	int err;

	err = cgroup2_mount(root, sizeof(root));
	if (err)
		return error(req, CONTROL_E_FAILED, "no cgroup v2 mount: %s", strerror(-err));
	if (!realpath(req->cgroup, real))
		return error(req, CONTROL_E_FAILED, "cgroup %s: %s", req->cgroup, strerror(errno));
	reply = check_cgroup(d, req, root, real);
	if (reply)
		return reply;
	if (a->st.ncgroups == STATE_CGROUPS_MAX)
		return error(req, CONTROL_E_LIMIT, "agent %s has %d attached cgroups already",
			     a->st.name, STATE_CGROUPS_MAX);
	snprintf(what, sizeof(what), "cgroup %s", real);
	reply = check_partial(d, req, what);
	if (reply)
		return reply;
	err = freeze_tree(real, &froze, why, sizeof(why));
	if (err)
		return error(req, CONTROL_E_FAILED, "%s", why);
	reply = attach_frozen(d, a, req, real);
	thaw_tree(real, froze);
	return reply;
}

/* The attached cgroup that path names (resolved, or as given when it is gone), or -1. */
static int find_cgroup(const struct agent *a, const char *path)
{
	char real[PATH_MAX];
	size_t i;

	if (!realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	for (i = 0; i < a->st.ncgroups; i++)
		if (!strcmp(a->st.cgroups[i], real) || !strcmp(a->st.cgroups[i], path))
			return i;
	return -1;
}

static void forget_cgroup(struct agent *a, int i)
{
	memmove(a->st.cgroups[i], a->st.cgroups[i + 1],
		(a->st.ncgroups - i - 1) * sizeof(a->st.cgroups[0]));
	a->st.ncgroups--;
}

static json_t *detach_cgroup(struct daemon *d, struct agent *a, const struct control_request *req)
{
	int i = find_cgroup(a, req->cgroup), err;
	char path[CONTROL_PATH_MAX + 1];
	json_t *reply;

	if (i < 0)
		return error(req, CONTROL_E_NOT_ATTACHED, "%s is not attached to agent %s",
			     req->cgroup, a->st.name);
	snprintf(path, sizeof(path), "%s", a->st.cgroups[i]);
	err = release_cgroup(d, path);
	if (err)
		return error(req, CONTROL_E_FAILED, "detaching %s: %s", path, strerror(-err));
	forget_cgroup(a, i);
	err = agent_state_save(d->o->state_dir, &a->st);
	if (err)
		log_warn("saving %s/agents/%s.json: %s; a restart attaches %s again\n",
			 d->o->state_dir, a->st.name, strerror(-err), path);
	log_info("agent %s: cgroup %s detached: its processes are no longer the agent's\n",
		 a->st.name, path);
	daemon_audit(d, AUDIT_KIND_LIFECYCLE, "agent-detach", a, "cgroup=%s", path);
	proxy_agent_reloaded(d, a);
	reply = control_reply_ok(req->id);
	if (reply) {
		json_object_set_new(reply, "name", json_string(a->st.name));
		json_object_set_new(reply, "cgroup", json_string(path));
	}
	return reply;
}

void attach_adopt(struct daemon *d, struct agent *a)
{
	char staging[sizeof(a->cgroup) + 32];
	const char *doing;
	size_t i = 0;
	bool changed = false;
	int err;

	/* An attach the earlier agentd did not finish: empty, it goes; else its processes, never
	 * checked, stay stopped (stage() says so to the next attach). */
	snprintf(staging, sizeof(staging), "%s/" STAGING_NAME, a->cgroup);
	if (rmdir(staging) && errno != ENOENT)
		log_warn("agent %s: %s holds processes an unfinished attach moved and never "
			 "checked: they stay stopped there until the agent is removed\n",
			 a->st.name, staging);

	while (i < a->st.ncgroups) {
		const char *path = a->st.cgroups[i];

		err = access(path, F_OK) ? -errno : adopt_cgroup(d, a, path, &doing);
		if (err == -ENOENT) {
			log_warn("agent %s: attached cgroup %s is gone, forgetting it\n",
				 a->st.name, path);
			forget_cgroup(a, i);
			changed = true;
			continue;
		}
		if (err)
			log_err("agent %s: re-adopting attached cgroup %s: %s\n", a->st.name, path,
				strerror(-err));
		i++;
	}
	if (changed && agent_state_save(d->o->state_dir, &a->st))
		log_warn("agent %s: saving its state failed, ignoring\n", a->st.name);
}

void attach_release(struct daemon *d, struct agent *a)
{
	char staging[sizeof(a->cgroup) + 32];
	size_t i;
	int err;

	/* A staging cgroup an attach left (agentd died mid-attach): empty by now, the agent's
	 * processes killed, and in the way of the agent's cgroup's removal. */
	snprintf(staging, sizeof(staging), "%s/" STAGING_NAME, a->cgroup);
	if (rmdir(staging) && errno != ENOENT)
		log_warn("agent %s: removing %s: %s, ignoring\n", a->st.name, staging,
			 strerror(errno));
	for (i = 0; i < a->st.ncgroups; i++) {
		err = release_cgroup(d, a->st.cgroups[i]);
		if (err)
			log_warn("agent %s: detaching %s: %s, ignoring\n", a->st.name,
				 a->st.cgroups[i], strerror(-err));
	}
}

json_t *attach_handle(struct daemon *d, struct agent *a, const struct control_request *req)
{
	if (req->cmd == CONTROL_AGENT_ATTACH)
		return req->pid ? attach_pid(d, a, req) : attach_cgroup(d, a, req);
	return detach_cgroup(d, a, req);
}
