// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include <jansson.h>
#include "cgroup.h"
#include "log.h"
#include "probe.h"
#include "probe.skel.h"

#define SECURITYFS "/sys/kernel/security"
#define BPFFS "/sys/fs/bpf"

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
	err = mount_if_absent(BPFFS, "bpf", BPF_FS_MAGIC);
	if (err)
		log_err("cannot mount bpffs on %s: %s\n", BPFFS, strerror(-err));
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

void probe_kernel(struct probe *p)
{
	memset(p, 0, sizeof(*p));
	p->lsm_list_err = read_lsm_list(p->lsm_list, sizeof(p->lsm_list));
	p->bpf_lsm_listed = lsm_list_has(p->lsm_list, "bpf");
	p->bpf_lsm_load_err = trial_load_bpf_lsm();
	p->btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
	if (cgroup2_mount(p->cgroup2, sizeof(p->cgroup2)))
		p->cgroup2[0] = '\0';
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
}

int probe_print_json(FILE *out, const struct probe *p)
{
	json_t *o;
	int err;

	o = json_pack("{s:s?, s:{s:b, s:b, s:i, s:s}, s:b, s:s?}", "lsm_list",
		      p->lsm_list_err ? NULL : p->lsm_list, "bpf_lsm", "available",
		      probe_bpf_lsm_ok(p), "listed", p->bpf_lsm_listed, "load_errno",
		      -p->bpf_lsm_load_err, "hint", bpf_lsm_hint(p), "btf", p->btf, "cgroup2",
		      p->cgroup2[0] ? p->cgroup2 : NULL);
	if (!o)
		return -ENOMEM;
	err = json_dumpf(o, out, JSON_INDENT(2)) ? -EIO : 0;
	fputc('\n', out);
	json_decref(o);
	return err;
}
