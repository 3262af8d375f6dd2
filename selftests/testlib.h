/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers for tests that drive the real binaries and the real kernel. All clean up after
 * themselves through test_defer(), on failure too. */
#ifndef AGENTD_TESTLIB_H
#define AGENTD_TESTLIB_H

#include <stddef.h>
#include <sys/types.h>

/* Creates a fresh cgroup v2 directory for this test; removed when the test ends. */
void test_cgroup(char *path, size_t pathsz);
/* Creates a file holding text under a fresh directory; removed when the test ends. */
void test_file(char *path, size_t pathsz, const char *name, const char *text);

/* A bpffs directory for this test's pins (agentd --pin-dir); torn down when the test ends. */
void test_pin_dir(char *path, size_t pathsz);

/* Unlinks path when the test ends. */
void test_unlink_at_end(const char *path);

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
/* Signals the process and returns its exit status as from waitpid(). */
int proc_stop(struct proc *p, int sig);

/* Runs fn(arg) in a child placed in the cgroup at path from its first instruction (or outside
 * any agent when path is NULL); fn's return value is the child's exit status. Returns it, and
 * the child's pid in *child when child is not NULL. */
int run_in_cgroup(const char *path, int (*fn)(void *), void *arg, pid_t *child);

#endif
