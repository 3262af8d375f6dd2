// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <string.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/landlock.h>
#include <linux/magic.h>
#include <linux/seccomp.h>
#include <jansson.h>
#include "kernel/cgroup.h"
#include "log.h"
#include "paths.h"
#include "kernel/probe.h"
#include "probe.skel.h"

#define SECURITYFS "/sys/kernel/security"

bool lsm_list_has(const char *list, const char *lsm)
{
	size_t n = strlen(lsm);
	const char *p = list;

	while (p && *p) {
		if (!strncmp(p, lsm, n) && (p[n] == ',' || p[n] == '\0' || p[n] == '\n'))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

static int mount_if_absent(const char *dir, const char *type, long magic)
{
	struct statfs st;

	if (!statfs(dir, &st) && st.f_type == magic)
		return 0;
	if (mount(type, dir, type, MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		return -errno;
	return 0;
}

int mount_kernel_fs(void)
{
	int err;

	err = mount_if_absent(SECURITYFS, "securityfs", SECURITYFS_MAGIC);
	if (err) {
		log_err("cannot mount securityfs on %s: %s\n", SECURITYFS, strerror(-err));
		return err;
	}
	err = mount_if_absent(PATH_BPFFS, "bpf", BPF_FS_MAGIC);
	if (err)
		log_err("cannot mount bpffs on %s: %s\n", PATH_BPFFS, strerror(-err));
	return err;
}

static int read_lsm_list(char *buf, size_t bufsz)
{
	int fd = open(SECURITYFS "/lsm", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	buf[0] = '\0';
	if (fd < 0)
		return -errno;
	n = read(fd, buf, bufsz - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* A real load and attach, because a listed "bpf" LSM can still refuse programs (see README). */
static int trial_load_bpf_lsm(void)
{
	struct probe_bpf *skel;
	int err;

	skel = probe_bpf__open();
	if (!skel)
		return -errno;
	err = probe_bpf__load(skel);
	if (!err)
		err = probe_bpf__attach(skel);
	probe_bpf__destroy(skel);
	return err;
}

int probe_landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return abi < 0 ? -errno : (int)abi;
}

int probe_seccomp(void)
{
	__u32 action = SECCOMP_RET_ERRNO;

	if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action))
		return -errno;
	return 0;
}

/* A real try: a child becomes nobody and asks for a user namespace. */
static int probe_userns(void)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(2);
		_exit(unshare(CLONE_NEWUSER) ? 1 : 0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status) > 1)
		return -EPERM; /* could not become nobody: unknown */
	return WEXITSTATUS(status) == 0;
}

static void read_controllers(struct probe *p)
{
	char path[sizeof(p->cgroup2) + 32];
	ssize_t n;
	int fd;

	p->cgroup2_controllers[0] = '\0';
	if (!p->cgroup2[0])
		return;
	snprintf(path, sizeof(path), "%s/cgroup.controllers", p->cgroup2);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, p->cgroup2_controllers, sizeof(p->cgroup2_controllers) - 1);
	close(fd);
	p->cgroup2_controllers[n > 0 ? n : 0] = '\0';
	p->cgroup2_controllers[strcspn(p->cgroup2_controllers, "\n")] = '\0';
}

void probe_kernel(struct probe *p)
{
	memset(p, 0, sizeof(*p));
	p->lsm_list_err = read_lsm_list(p->lsm_list, sizeof(p->lsm_list));
	p->bpf_lsm_listed = lsm_list_has(p->lsm_list, "bpf");
	p->bpf_lsm_load_err = trial_load_bpf_lsm();
	p->btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
	if (cgroup2_mount(p->cgroup2, sizeof(p->cgroup2)))
		p->cgroup2[0] = '\0';
	read_controllers(p);
	p->landlock_abi = probe_landlock_abi();
	p->seccomp_err = probe_seccomp();
	p->no_new_privs = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) >= 0;
	p->userns = probe_userns();
}

bool probe_landlock_ok(const struct probe *p)
{
	return p->landlock_abi > 0;
}

bool probe_full_enforcement(const struct probe *p)
{
	return probe_bpf_lsm_ok(p) && p->cgroup2[0] && !p->seccomp_err && p->no_new_privs;
}

bool probe_bpf_lsm_ok(const struct probe *p)
{
	return p->bpf_lsm_listed && !p->bpf_lsm_load_err;
}

static const char *bpf_lsm_hint(const struct probe *p)
{
	if (p->lsm_list_err)
		return "securityfs is not readable: mount it on " SECURITYFS;
	if (!p->bpf_lsm_listed)
		return "add bpf to the lsm= boot parameter (see README, Requirements)";
	if (p->bpf_lsm_load_err)
		return "the kernel lists bpf but refuses BPF LSM programs (trampolines disabled?)";
	return "";
}

static const char *landlock_hint(int err)
{
	if (err == -EOPNOTSUPP)
		return "built in but not active: add landlock to the lsm= boot parameter";
	if (err == -ENOSYS)
		return "not built into this kernel (CONFIG_SECURITY_LANDLOCK)";
	return strerror(-err);
}

void probe_print(FILE *out, const struct probe *p)
{
	fprintf(out, "active LSMs:  %s\n",
		p->lsm_list_err ? strerror(-p->lsm_list_err) : p->lsm_list);
	fprintf(out, "BPF LSM:      %s", probe_bpf_lsm_ok(p) ? "available" : "UNAVAILABLE");
	if (p->bpf_lsm_load_err)
		fprintf(out, " (trial load: %s)", strerror(-p->bpf_lsm_load_err));
	fprintf(out, "\n");
	if (!probe_bpf_lsm_ok(p))
		fprintf(out, "              file and exec rules are NOT enforced by BPF LSM: %s\n",
			bpf_lsm_hint(p));
	fprintf(out, "BTF:          %s\n", p->btf ? "/sys/kernel/btf/vmlinux" : "MISSING");
	fprintf(out, "cgroup v2:    %s\n", p->cgroup2[0] ? p->cgroup2 : "NOT MOUNTED");
	if (p->cgroup2[0])
		fprintf(out, "              controllers: %s\n",
			p->cgroup2_controllers[0] ? p->cgroup2_controllers
						  : "NONE (limits NOT ENFORCED)");
	if (p->landlock_abi > 0)
		fprintf(out, "Landlock:     ABI %d\n", p->landlock_abi);
	else
		fprintf(out, "Landlock:     UNAVAILABLE (%s)\n", landlock_hint(p->landlock_abi));
	fprintf(out, "seccomp:      %s\n",
		p->seccomp_err ? strerror(-p->seccomp_err) : "filters (errno action)");
	fprintf(out, "no_new_privs: %s\n", p->no_new_privs ? "yes" : "NO");
	fprintf(out, "user ns:      %s\n",
		p->userns == 1	 ? "unprivileged users may create them (agents: denied by "
				   "seccomp or BPF LSM)"
		: p->userns == 0 ? "refused to unprivileged users"
				 : "unknown");
	fprintf(out, "enforcement:  %s\n",
		probe_full_enforcement(p) ? "FULL (BPF LSM, cgroup-BPF, seccomp)"
		: p->cgroup2[0]		  ? "PARTIAL: agentd needs --allow-partial; what is lost: "
					    "agentctl policy check --layers (docs/LAYERS.md)"
					  : "NONE: no cgroup v2");
}

int probe_print_json(FILE *out, const struct probe *p)
{
	json_t *o, *more;
	int err;

	o = json_pack("{s:s?, s:{s:b, s:b, s:i, s:s}, s:b, s:s?}", "lsm_list",
		      p->lsm_list_err ? NULL : p->lsm_list, "bpf_lsm", "available",
		      probe_bpf_lsm_ok(p), "listed", p->bpf_lsm_listed, "load_errno",
		      -p->bpf_lsm_load_err, "hint", bpf_lsm_hint(p), "btf", p->btf, "cgroup2",
		      p->cgroup2[0] ? p->cgroup2 : NULL);
	more = json_pack("{s:s?, s:{s:b, s:i, s:s}, s:{s:b, s:i}, s:b, s:o, s:s}",
			 "cgroup2_controllers", p->cgroup2[0] ? p->cgroup2_controllers : NULL,
			 "landlock", "available", probe_landlock_ok(p), "abi",
			 p->landlock_abi > 0 ? p->landlock_abi : 0, "hint",
			 p->landlock_abi > 0 ? "" : landlock_hint(p->landlock_abi), "seccomp",
			 "available", !p->seccomp_err, "errno", -p->seccomp_err, "no_new_privs",
			 p->no_new_privs, "unprivileged_userns",
			 p->userns < 0 ? json_null() : json_boolean(p->userns), "enforcement",
			 probe_full_enforcement(p) ? "full"
			 : p->cgroup2[0]	   ? "partial"
						   : "none");
	if (!o || !more || json_object_update(o, more)) {
		json_decref(o);
		json_decref(more);
		return -ENOMEM;
	}
	json_decref(more);
	err = json_dumpf(o, out, JSON_INDENT(2)) ? -EIO : 0;
	fputc('\n', out);
	json_decref(o);
	return err;
}
