// SPDX-License-Identifier: GPL-2.0
/*
 * Attaching the programs: their links, pinned in the pin directory so that enforcement outlives
 * agentd; a pinned link of the same code on the same maps adopted, one of other code or maps (an
 * upgrade) replaced with no moment without either, links of programs this build lacks removed;
 * the cgroup programs' links per cgroup, and their detaching.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kernel/enforcer_internal.h"
#include "log.h"

/* A program's link pin: link-<object>-<program>, and the cgroup's id for cgroup programs. */
static void link_pin_path(const struct enforcer *e, const char *obj, struct bpf_program *prog,
			  __u64 cgroup, char *path, size_t sz)
{
	if (cgroup)
		snprintf(path, sz, "%s/link-%s-%s-%llu", e->pin_dir, obj, bpf_program__name(prog),
			 (unsigned long long)cgroup);
	else
		snprintf(path, sz, "%s/link-%s-%s", e->pin_dir, obj, bpf_program__name(prog));
}

/* The tag (a hash of the instructions, map references left out) of the program behind fd. */
static int prog_tag(int fd, __u8 tag[BPF_TAG_SIZE])
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	memcpy(tag, info.tag, BPF_TAG_SIZE);
	return 0;
}

#define MAX_PROG_MAPS 64

/* The ids of the maps the program behind fd uses; -E2BIG past MAX_PROG_MAPS. */
static int prog_map_ids(int fd, __u32 ids[MAX_PROG_MAPS], __u32 *n)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	info.nr_map_ids = MAX_PROG_MAPS;
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.nr_map_ids > MAX_PROG_MAPS)
		return -E2BIG;
	*n = info.nr_map_ids;
	return 0;
}

/* Whether the map of this id is one of the shared, pinned ones: libbpf names the internal maps
 * of an object "<object>.<section>", and only .bss, the shared section, is not made afresh at
 * each load (.rodata is each object's own constants). */
static bool shared_map(__u32 id)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd = bpf_map_get_fd_by_id(id);
	const char *dot;
	bool shared;

	if (fd < 0)
		return true; /* gone: cannot be the old program's, and so counts as different */
	shared = !bpf_obj_get_info_by_fd(fd, &info, &len);
	dot = strchr(info.name, '.');
	shared = shared && (!dot || !strcmp(dot, AGENTD_SHARED_SECTION));
	close(fd);
	return shared;
}

/* Whether the program behind old uses every shared map the program behind new uses. A map pin
 * removed by hand makes the next load create that map afresh; a link left running the old
 * map would then enforce what agentd no longer writes. */
static bool same_maps(int old, int new)
{
	__u32 old_ids[MAX_PROG_MAPS], new_ids[MAX_PROG_MAPS], nold, nnew, i, j;

	if (prog_map_ids(old, old_ids, &nold) || prog_map_ids(new, new_ids, &nnew))
		return false;
	for (i = 0; i < nnew; i++) {
		for (j = 0; j < nold && old_ids[j] != new_ids[i]; j++)
			;
		if (j == nold && shared_map(new_ids[i]))
			return false;
	}
	return true;
}

/* Whether the link pinned at path runs prog's very code on the very maps prog uses: then an
 * earlier agentd of this build attached it, and it is adopted. */
static bool pinned_runs(const char *path, struct bpf_program *prog)
{
	struct bpf_link_info info = {};
	__u8 old[BPF_TAG_SIZE], new[BPF_TAG_SIZE];
	__u32 len = sizeof(info);
	int fd = bpf_obj_get(path), pfd = -1;
	bool same = false;

	if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
		pfd = bpf_prog_get_fd_by_id(info.prog_id);
	if (pfd >= 0)
		same = !prog_tag(pfd, old) && !prog_tag(bpf_program__fd(prog), new) &&
		       !memcmp(old, new, sizeof(old)) && same_maps(pfd, bpf_program__fd(prog));
	if (pfd >= 0)
		close(pfd);
	if (fd >= 0)
		close(fd);
	return same;
}

/*
 * Pins link at path. Over another agentd's link (other code: an upgrade), through a temporary
 * name renamed over it: the old link goes with its last pin, and until then both run, so that
 * no moment has neither.
 */
static int pin_link(struct bpf_link *link, const char *path, bool replace)
{
	char tmp[PATH_MAX + 160];
	int err, old;

	if (!replace)
		return bpf_link__pin(link, path);
	snprintf(tmp, sizeof(tmp), "%s-new", path); /* bpffs refuses names with a dot */
	unlink(tmp);
	old = bpf_obj_get(path);
	err = bpf_link__pin(link, tmp);
	if (!err && rename(tmp, path)) {
		err = -errno;
		unlink(tmp);
	}
	/* The replaced link, detached now: the release of its pin would detach it only later,
	 * from a kernel workqueue, and until then both programs run (the old one on maps agentd
	 * no longer writes). Links without a detach operation are left to their release. */
	if (old >= 0) {
		if (!err)
			bpf_link_detach(old);
		close(old);
	}
	return err;
}

static int attach_one(struct enforcer *e, const char *obj, struct bpf_program *prog, int cgroup_fd,
		      __u64 cgroup, struct bpf_link **link)
{
	char path[PATH_MAX + 128];
	bool replace = false;
	int err;

	*link = NULL;
	if (e->pin_dir[0]) {
		link_pin_path(e, obj, prog, cgroup, path, sizeof(path));
		/* Attached by an earlier agentd and still enforcing: adopt, do not attach twice,
		 * unless it runs other code. */
		if (!access(path, F_OK)) {
			if (pinned_runs(path, prog))
				return 0;
			replace = true;
		}
	}
	*link = cgroup_fd < 0 ? bpf_program__attach(prog)
			      : bpf_program__attach_cgroup(prog, cgroup_fd);
	if (!*link)
		return -errno;
	if (!e->pin_dir[0])
		return 0;
	err = pin_link(*link, path, replace);
	if (err) {
		bpf_link__destroy(*link);
		*link = NULL;
		return err;
	}
	/* The pin owns the attachment now. Our descriptor goes: closing it detaches nothing (the
	 * pin holds the link), and kept it would hold the link even after its pin is replaced or
	 * removed. libbpf closes no descriptor of a disconnected link, so we do. */
	bpf_link__disconnect(*link);
	close(bpf_link__fd(*link));
	bpf_link__destroy(*link);
	*link = NULL;
	return 0;
}

static int attach_all(struct enforcer *e, bool lsm, int cgroup_fd)
{
	struct bpf_link **links = lsm ? e->lsm_links : e->cg_links;
	int *n = lsm ? &e->nlsm_links : &e->ncg_links;
	struct bpf_program *prog;
	struct bpf_link *link;
	__u64 cgroup = 0;
	struct stat st;
	size_t i;
	int err;

	if (!lsm) {
		if (fstat(cgroup_fd, &st))
			return -errno;
		cgroup = st.st_ino; /* the cgroup's id: names its link pins */
	}
	for (i = 0; i < sizeof(e->objs) / sizeof(e->objs[0]); i++) {
		if (!e->objs[i].obj || e->objs[i].lsm != lsm)
			continue;
		bpf_object__for_each_program(prog, e->objs[i].obj)
		{
			if (!bpf_program__autoload(prog))
				continue;
			if (*n == MAX_LINKS)
				return -E2BIG;
			err = attach_one(e, e->objs[i].name, prog, lsm ? -1 : cgroup_fd, cgroup,
					 &link);
			if (err)
				return err;
			/* A pinned link is the pin's (attach_one() left none). */
			if (link)
				links[(*n)++] = link;
		}
	}
	return 0;
}

/* The loaded LSM object called name, or NULL. */
static struct bpf_object *lsm_object(const struct enforcer *e, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(e->objs) / sizeof(e->objs[0]); i++)
		if (e->objs[i].obj && e->objs[i].lsm && strlen(e->objs[i].name) == len &&
		    !strncmp(e->objs[i].name, name, len))
			return e->objs[i].obj;
	return NULL;
}

/*
 * Pinned links of LSM programs this build does not have (an upgrade removed or renamed them, or
 * a replacement's temporary name outlived a crash): their hooks would run the old code until
 * --teardown. Removed once every current program is attached.
 */
static void drop_stale_links(struct enforcer *e)
{
	char path[PATH_MAX + 300];
	struct bpf_program *prog;
	struct bpf_object *obj;
	const char *name;
	struct dirent *de;
	DIR *d;

	d = e->pin_dir[0] ? opendir(e->pin_dir) : NULL;
	while (d && (de = readdir(d))) {
		name = strncmp(de->d_name, "link-", 5) ? NULL : strchr(de->d_name + 5, '-');
		obj = name ? lsm_object(e, de->d_name + 5, name - de->d_name - 5) : NULL;
		if (!obj)
			continue; /* not a link of an LSM object (cgroup links are named per cgroup) */
		prog = bpf_object__find_program_by_name(obj, name + 1);
		if (prog && bpf_program__autoload(prog))
			continue;
		snprintf(path, sizeof(path), "%s/%s", e->pin_dir, de->d_name);
		if (!unlink(path))
			log_info("removed the pinned link %s: this agentd has no such program\n",
				 de->d_name);
	}
	if (d)
		closedir(d);
}

int enforcer_attach_lsm(struct enforcer *e)
{
	int err = attach_all(e, true, -1);

	if (err) {
		enforcer_detach_lsm(e);
		return err;
	}
	drop_stale_links(e);
	return 0;
}

void enforcer_detach_lsm(struct enforcer *e)
{
	while (e->nlsm_links > 0)
		bpf_link__destroy(e->lsm_links[--e->nlsm_links]);
}

int enforcer_attach_cgroup(struct enforcer *e, int cgroup_fd)
{
	return attach_all(e, false, cgroup_fd);
}

int enforcer_detach_cgroup(struct enforcer *e, int cgroup_fd)
{
	char path[PATH_MAX + 128];
	struct bpf_link_info info;
	struct bpf_program *prog;
	struct stat st;
	int i, fd, err = 0;
	size_t o;
	__u32 len;

	if (fstat(cgroup_fd, &st))
		return -errno;
	/* The cgroup's links leave the table too: attach and detach may alternate forever. */
	for (i = 0; i < e->ncg_links;) {
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (!bpf_obj_get_info_by_fd(bpf_link__fd(e->cg_links[i]), &info, &len) &&
		    info.cgroup.cgroup_id == st.st_ino) {
			bpf_link__destroy(e->cg_links[i]);
			e->cg_links[i] = e->cg_links[--e->ncg_links];
		} else {
			i++;
		}
	}
	for (o = 0; e->pin_dir[0] && o < sizeof(e->objs) / sizeof(e->objs[0]); o++) {
		if (!e->objs[o].obj || e->objs[o].lsm)
			continue;
		bpf_object__for_each_program(prog, e->objs[o].obj)
		{
			link_pin_path(e, e->objs[o].name, prog, st.st_ino, path, sizeof(path));
			fd = bpf_obj_get(path);
			if (fd < 0) {
				if (errno != ENOENT && !err)
					err = -errno;
				continue;
			}
			/* Detached now, whoever else holds the link. */
			if (bpf_link_detach(fd) && !err)
				err = -errno;
			close(fd);
			if (unlink(path) && !err)
				err = -errno;
		}
	}
	return err;
}
