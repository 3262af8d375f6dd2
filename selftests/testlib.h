/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers for tests that drive the real binaries and the real kernel. All clean up after
 * themselves through test_defer(), on failure too. */
#ifndef AGENTD_TESTLIB_H
#define AGENTD_TESTLIB_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <netinet/in.h>
#include "kernel/rules.h"

/* Creates a fresh cgroup v2 directory for this test (under parent, or under the cgroup v2 root
 * when parent is NULL); removed when the test ends. */
void test_cgroup_in(const char *parent, char *path, size_t pathsz);
void test_cgroup(char *path, size_t pathsz);
/* Creates a file holding text under a fresh directory; removed when the test ends. */
void test_file(char *path, size_t pathsz, const char *name, const char *text);

/* A bpffs directory for this test's pins (agentd --pin-dir); torn down when the test ends. */
void test_pin_dir(char *path, size_t pathsz);

/* Creates a fresh directory /tmp/agentd-<name>-<pid>-<n>; when the test ends it is removed with
 * its contents, append-only flags (audit logs) lifted first. */
void test_tmpdir(char *path, size_t pathsz, const char *name);
/* When the test ends: kills the tasks of every child cgroup of path (cgroup.kill), waits for
 * them to go, removes the children and path itself. */
void test_cgroup_tree_at_end(const char *path);

/* Unlinks path when the test ends. */
void test_unlink_at_end(const char *path);

/* Creates a fresh directory under /tmp; it and everything below it (mounts too) are removed when
 * the test ends. */
void test_dir(char *path, size_t pathsz);
/* Mounts a fresh tmpfs on dir; unmounted when the test ends. */
void test_mount_tmpfs(const char *dir);
/* Mounts a bpffs of its own on dir; unmounted when the test ends. */
void test_mount_bpffs(const char *dir);
/* Bind-mounts from on to; unmounted when the test ends. */
void test_bind_mount(const char *from, const char *to);
/* An io_uring with path (opened for writing) among its registered files and no descriptor of
 * path left: the ring's descriptor (O_CLOEXEC, kept across fork). FAILs on error. */
int test_ring_registering(const char *path);
/* Writes text to path (created with mode, or truncated); FAILs on error. */
void test_write(const char *path, const char *text, mode_t mode);
/* Copies the file from to the new file to (with mode); FAILs on error. */
void test_copy(const char *from, const char *to, mode_t mode);
/* A copy of the project binary name (from the test binary's directory) in a fresh
 * test_tmpdir() (which agents see) that every user may enter, for running it as another user:
 * the checkout may sit under a directory only its owner enters (a clone in /root). */
void test_bin_for_all(const char *name, char *path, size_t pathsz);

/* A child process whose stdout the test reads line by line. */
struct proc {
	pid_t pid;
	int out_fd;
	char buf[16384];
	size_t len;
	char line[4096];
};

/* Starts argv[0] from the test binary's directory, stdout piped; killed and freed when the
 * test ends. */
struct proc *proc_start(char *const argv[]);
/* Waits until a line containing every needle (NULL-terminated list) appears; returns it
 * (in p->line) or NULL on timeout or end of output. */
const char *proc_wait_line(struct proc *p, int timeout_ms, const char *const needles[]);
/* How long a test waits for agentd's "ready": loading and verifying every program takes
 * seconds under software emulation, and more when the host is loaded (a bound on failure, not a
 * timed assertion). */
#define TEST_READY_MS 60000
/* Signals the process and returns its exit status as from waitpid(). */
int proc_stop(struct proc *p, int sig);
/* agentctl audit follow --dir audit_dir, reading from the end of the log: started, and waited
 * for until it has opened the log (inotify tells), so that no record after this is missed. */
struct proc *test_audit_follower(const char *audit_dir);
/* The calling test's own network namespace: lo up, with the IPv4 addresses addrs (n of them) on
 * it as lo:1, lo:2, ... Traffic to them never leaves the machine. */
void test_netns(const char *const addrs[], size_t n);

/* Runs fn(arg) in a child placed in the cgroup at path from its first instruction (or outside
 * any agent when path is NULL); fn's return value is the child's exit status. Returns it, and
 * the child's pid in *child when child is not NULL. */
int run_in_cgroup(const char *path, int (*fn)(void *), void *arg, pid_t *child);

/*
 * An agent for the test: a fresh cgroup registered with an enforcer (the BPF LSM objects loaded
 * and attached too when lsm), its rules applied, the cgroup-BPF programs attached to its cgroup.
 * The enforcer is the one test_enforcer_preload() loaded, or else one loaded for the test. All
 * of it is undone when the test ends.
 */
struct test_agent {
	struct enforcer *e;
	char cgroup[PATH_MAX];
	__u32 id;
	__u32 generation;
};

#define TEST_AGENT_ID 7

/* Loads (and with lsm attaches) the enforcer every later test_agent_start() uses; for the test
 * binary's parent process, before the tests fork. A failure is reported by the tests. */
void test_enforcer_preload(bool lsm);
void test_agent_start(struct test_agent *a, const struct ruleset *rs, bool lsm);
/* The same, as agent id (a second agent beside TEST_AGENT_ID's, in a cgroup of its own). */
void test_agent_start_as(struct test_agent *a, __u32 id, const struct ruleset *rs, bool lsm);
/* test_agent_start() with BPF LSM, in an enforcer of the test's own that loads the objects
 * built for every kernel (enforcer_opts.plain_objects), beside the shared one. */
void test_agent_start_plain(struct test_agent *a, const struct ruleset *rs);
/* rules_apply() for the agent; FAILs on error. */
void test_agent_apply(struct test_agent *a, const struct ruleset *rs);
/* run_in_cgroup() in the agent's cgroup. */
int test_agent_run(const struct test_agent *a, int (*fn)(void *), void *arg);

/* A TCP listener of the test on IPv4 addr, port *port (0: an ephemeral one, put in *port). */
int test_listener_at(const char *addr, int *port);
/* Whether a connection came to listener l, waiting for it a bounded while (loopback may
 * deliver it after connect() returns); it is accepted and closed. */
bool test_accepted(int l);
/* addr:port as a sockaddr_in, for test_connect_sin(). */
void test_sin(struct sockaddr_in *sin, const char *addr, int port);
/* connect() to the sockaddr_in at sin, then close: 0 or the errno (a run_in_cgroup() body). */
int test_connect_sin(void *sin);

/* A TCP listener of the test on 127.0.0.1, on an ephemeral port (put in *port); FAILs on error. */
int test_loopback_listener(int *port);
/* connect() to 127.0.0.1:*(int *)port, then close: 0 or the errno (a run_in_cgroup() body). */
int test_loopback_connect(void *port);

/* Runs agentctl (from the build directory) with the arguments, NULL-terminated; returns its exit
 * status (128 + signal when killed), its standard output in out. Output that does not fit in
 * out FAILs the test (agentctl killed), never hangs it. */
int agentctl_run(char *out, size_t outsz, ...);

/*
 * agentd in daemon mode for the test: its control socket, state, audit log, pins and parent of
 * agents' cgroups its own, under a fresh directory (a short path: the socket's must fit
 * sun_path), AGENTD_CONTROL set for agentctl_run(). Processes, cgroups, pins and files are
 * removed when the test ends.
 */
struct test_daemon {
	char dir[256];
	char control[PATH_MAX];
	char state[PATH_MAX];
	char audit[PATH_MAX];
	char pins[PATH_MAX];
	char cgroup[PATH_MAX]; /* parent of the agents' cgroups (--cgroup) */
	struct proc *agentd;
};

/* Makes d's directory and names its paths; starts nothing. */
void test_daemon_init(struct test_daemon *d, const char *name);
/* Starts agentd on d's paths with the further options given (NULL-terminated), without waiting
 * for it: d->agentd. */
struct proc *test_daemon_spawn(struct test_daemon *d, ...);
/* test_daemon_spawn(), then waits for "agentd: ready"; FAILs when it does not come. */
void test_daemon_start(struct test_daemon *d, ...);
/* agentctl agent add name --policy policy; FAILs when refused. The agent's cgroup in cg (when
 * cg is not NULL). */
void test_daemon_add(const struct test_daemon *d, const char *name, const char *policy, char *cg,
		     size_t cgsz);

/* run_in_cgroup() bodies: open path read-only (or create it); return 0 or the errno. */
int try_open(void *path);
int try_create(void *path);

#endif
