// SPDX-License-Identifier: GPL-2.0
/*
 * Exec: what the kernel executes or maps executable needs EXEC; trees the agent can write, and
 * memfds, are refused unless the policy allows them. A shell exiting 42 proves a run; the
 * deny is execve's errno, EPERM (the LSM's verdict, from bprm_check or the exec open).
 *
 * Scripts: the kernel opens a script with FMODE_EXEC and checks it like a binary, so a script
 * run by name needs EXEC, and its interpreter needs EXEC too. An allowed interpreter given a
 * readable script as an argument ("sh script") runs it: EXEC governs what the kernel executes,
 * not what an interpreter reads.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ops.h"

#define RUN_OK 42

static char *const sh_argv[] = { "sh", "-c", "exit 42", NULL };

/* Execs path as "sh -c 'exit 42'"; the child's status is 42, or execve's errno. */
static int exec_sh(void *path)
{
	execv(path, sh_argv);
	return errno;
}

static int exec_argv(void *argv)
{
	char *const *v = argv;

	execv(v[0], v);
	return errno;
}

struct exec_dirs {
	char top[PATH_MAX];
	char ro[PATH_MAX]; /* read only */
	char rx[PATH_MAX]; /* read and exec */
	char ws[PATH_MAX]; /* every right: a workspace */
};

static void exec_dirs(struct exec_dirs *d)
{
	test_dir(d->top, sizeof(d->top));
	PATHF(d->ro, "%s/ro", d->top);
	PATHF(d->rx, "%s/rx", d->top);
	PATHF(d->ws, "%s/ws", d->top);
	if (mkdir(d->ro, 0755) || mkdir(d->rx, 0755) || mkdir(d->ws, 0755))
		FAIL("mkdir: %s", strerror(errno));
}

static void exec_agent(struct test_agent *ag, const struct exec_dirs *d, __u32 flags)
{
	const struct file_rule files[] = {
		{ "/", RX },
		{ d->ro, AGENTD_RIGHT_READ },
		{ d->rx, RX },
		{ d->ws, AGENTD_RIGHTS_ALL },
	};

	test_agent_start(ag, &(struct ruleset){ .flags = flags, .files = files, .nfiles = 4 },
			 true);
}

TEST(exec_needs_exec)
{
	char ro_sh[PATH_MAX], rx_sh[PATH_MAX];
	struct exec_dirs d;
	struct test_agent ag;

	exec_dirs(&d);
	test_copy("/bin/sh", PATHF(ro_sh, "%s/sh", d.ro), 0755);
	test_copy("/bin/sh", PATHF(rx_sh, "%s/sh", d.rx), 0755);
	exec_agent(&ag, &d, 0);
	ASSERT_EQ(test_agent_run(&ag, exec_sh, "/bin/sh"), RUN_OK);
	ASSERT_EQ(test_agent_run(&ag, exec_sh, rx_sh), RUN_OK);
	ASSERT_EQ(test_agent_run(&ag, exec_sh, ro_sh), EPERM);
	ASSERT_EQ(run_in_cgroup(NULL, exec_sh, ro_sh, NULL), RUN_OK);
}

TEST(exec_from_writable_tree_needs_allow_writable_exec)
{
	char ws_sh[PATH_MAX];
	struct exec_dirs d;
	struct test_agent ag;

	exec_dirs(&d);
	test_copy("/bin/sh", PATHF(ws_sh, "%s/sh", d.ws), 0755);
	exec_agent(&ag, &d, 0);
	ASSERT_EQ(test_agent_run(&ag, exec_sh, ws_sh), EPERM);
	test_agent_apply(&ag,
			 &(struct ruleset){
				 .flags = AGENTD_AGENT_ALLOW_WRITABLE_EXEC,
				 .files = (const struct file_rule[]){ { "/", RX },
								      { d.ws, AGENTD_RIGHTS_ALL } },
				 .nfiles = 2,
			 });
	ASSERT_EQ(test_agent_run(&ag, exec_sh, ws_sh), RUN_OK);
}

/* The ELF interpreter of this (dynamically linked) test binary. */
static void elf_interp(char *out, size_t sz)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int i;

	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		FAIL("read /proc/self/exe: %s", strerror(errno));
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) != sizeof(ph))
			FAIL("read program header: %s", strerror(errno));
		if (ph.p_type != PT_INTERP || ph.p_filesz >= sz)
			continue;
		if (pread(fd, out, ph.p_filesz, ph.p_offset) != (ssize_t)ph.p_filesz)
			FAIL("read PT_INTERP: %s", strerror(errno));
		out[ph.p_filesz] = '\0';
		close(fd);
		return;
	}
	SKIP("the test binary is not dynamically linked");
}

/* Maps the file executable, then maps it readable and mprotects that executable. */
static int map_exec(void *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *p;

	if (fd < 0)
		return 100 + errno;
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return errno;
	munmap(p, 4096);
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return 110 + errno;
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return 120 + errno;
	return 0;
}

static int mprotect_exec(void *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *p;

	if (fd < 0)
		return 100 + errno;
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return 110 + errno;
	return mprotect(p, 4096, PROT_READ | PROT_EXEC) ? errno : 0;
}

/* "ld.so ./binary" maps the binary rather than executing it: the mapping is checked. */
TEST(ld_so_of_binary_without_exec_denied)
{
	char interp[PATH_MAX], ro_bin[PATH_MAX], rx_bin[PATH_MAX];
	struct exec_dirs d;
	struct test_agent ag;

	elf_interp(interp, sizeof(interp));
	exec_dirs(&d);
	test_copy("/proc/self/exe", PATHF(ro_bin, "%s/prog", d.ro), 0755);
	test_copy("/proc/self/exe", PATHF(rx_bin, "%s/prog", d.rx), 0755);
	exec_agent(&ag, &d, 0);
	ASSERT_EQ(test_agent_run(&ag, map_exec, ro_bin), EPERM);
	ASSERT_EQ(test_agent_run(&ag, mprotect_exec, ro_bin), EPERM);
	ASSERT_EQ(test_agent_run(&ag, map_exec, rx_bin), 0);
	/* The test binary asked to list this test (and run none) exits 0. */
	char *ro_argv[] = {
		interp, ro_bin, "-l", "-t", "ld_so_of_binary_without_exec_denied", NULL
	};
	char *rx_argv[] = {
		interp, rx_bin, "-l", "-t", "ld_so_of_binary_without_exec_denied", NULL
	};
	ASSERT_EQ(test_agent_run(&ag, exec_argv, rx_argv), 0);
	ASSERT_EQ(test_agent_run(&ag, exec_argv, ro_argv), 127); /* ld.so: cannot map */
	ASSERT_EQ(run_in_cgroup(NULL, exec_argv, ro_argv, NULL), 0);
}

TEST(script_and_interpreter_both_need_exec)
{
	char ro_sh[PATH_MAX], rx_script[PATH_MAX], ro_script[PATH_MAX], bad_interp[PATH_MAX],
		text[PATH_MAX + 32];
	struct exec_dirs d;
	struct test_agent ag;

	exec_dirs(&d);
	test_copy("/bin/sh", PATHF(ro_sh, "%s/sh", d.ro), 0755);
	test_write(PATHF(rx_script, "%s/script", d.rx), "#!/bin/sh\nexit 42\n", 0755);
	test_write(PATHF(ro_script, "%s/script", d.ro), "#!/bin/sh\nexit 42\n", 0755);
	test_write(PATHF(bad_interp, "%s/bad-interp", d.rx), PATHF(text, "#!%s\nexit 42\n", ro_sh),
		   0755);
	exec_agent(&ag, &d, 0);
	char *rx_argv[] = { rx_script, NULL }, *ro_argv[] = { ro_script, NULL };
	char *bad_argv[] = { bad_interp, NULL }, *sh_ro_argv[] = { "/bin/sh", ro_script, NULL };
	ASSERT_EQ(test_agent_run(&ag, exec_argv, rx_argv), RUN_OK);
	ASSERT_EQ(test_agent_run(&ag, exec_argv, ro_argv), EPERM);
	ASSERT_EQ(test_agent_run(&ag, exec_argv, bad_argv), EPERM);
	ASSERT_EQ(test_agent_run(&ag, exec_argv, sh_ro_argv), RUN_OK);
	ASSERT_EQ(run_in_cgroup(NULL, exec_argv, bad_argv, NULL), RUN_OK);
}

/* A copy of /bin/sh in a memfd, run with fexecve (execveat AT_EMPTY_PATH). */
static int memfd_exec(void *arg)
{
	int in = open("/bin/sh", O_RDONLY | O_CLOEXEC), fd;
	struct stat st;

	(void)arg;
	fd = memfd_create("agent-sh", MFD_CLOEXEC);
	if (in < 0 || fd < 0 || fstat(in, &st))
		return 100 + errno;
	if (sendfile(fd, in, NULL, st.st_size) != st.st_size)
		return 110 + errno;
	fexecve(fd, sh_argv, environ);
	return errno;
}

TEST(memfd_exec_needs_allow_memfd_exec)
{
	const struct file_rule files[] = { { "/", RX } };
	struct ruleset rs = { .files = files, .nfiles = 1 };
	struct test_agent ag;

	test_agent_start(&ag, &rs, true);
	ASSERT_EQ(test_agent_run(&ag, memfd_exec, NULL), EPERM);
	rs.flags = AGENTD_AGENT_ALLOW_MEMFD_EXEC;
	test_agent_apply(&ag, &rs);
	ASSERT_EQ(test_agent_run(&ag, memfd_exec, NULL), RUN_OK);
}

static int execveat_fd(void *path)
{
	int fd = open(path, O_PATH | O_CLOEXEC);

	if (fd < 0)
		return 100 + errno;
	syscall(SYS_execveat, fd, "", sh_argv, environ, AT_EMPTY_PATH);
	return errno;
}

TEST(execveat_empty_path_needs_exec)
{
	char ro_sh[PATH_MAX], rx_sh[PATH_MAX];
	struct exec_dirs d;
	struct test_agent ag;

	exec_dirs(&d);
	test_copy("/bin/sh", PATHF(ro_sh, "%s/sh", d.ro), 0755);
	test_copy("/bin/sh", PATHF(rx_sh, "%s/sh", d.rx), 0755);
	exec_agent(&ag, &d, 0);
	ASSERT_EQ(test_agent_run(&ag, execveat_fd, ro_sh), EPERM);
	ASSERT_EQ(test_agent_run(&ag, execveat_fd, rx_sh), RUN_OK);
}
