// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <unistd.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "kernel/cgroup.h"
#include "kernel/enforcer.h"
#include "log.h"
#include "policy/netdeny.h"
#include "kernel/ruletab.h"
#include "files.skel.h"
#include "files_ro.skel.h"
#include "exec.skel.h"
#include "exec_ro.skel.h"
#include "self.skel.h"
#include "contain.skel.h"
#include "sock.skel.h"
#include "net.skel.h"

#define MAX_LINKS 128
#define MAX_MISSING 16

struct object {
	const char *name;
	const void *(*elf_bytes)(size_t *sz);
	/* The same object built for kernels with bpf_rdonly_cast() (6.2 and later), or NULL. */
	const void *(*elf_bytes_ro)(size_t *sz);
	bool lsm;
	struct bpf_object *obj;
};

struct enforcer {
	char pin_dir[PATH_MAX]; /* "" when not pinning */
	struct object objs[6];
	struct bpf_link *lsm_links[MAX_LINKS];
	int nlsm_links;
	struct bpf_link *cg_links[MAX_LINKS];
	int ncg_links;
	const char *missing[MAX_MISSING + 1];
	int nmissing;
	struct ring_buffer *events;
	__u32 ring_bytes; /* 0: as the objects declare it */
	struct agentd_shared *shared; /* the shared section (abi.h), mapped */
	struct agentd_rule_bucket *rules; /* the rule_buckets map, mapped; NULL without them */
	struct agentd_agent_slot *slots; /* the agent_slots map, mapped */
	/* A switch (or a clear) since the last grace period this process saw: a half it left may
	 * still be read. True at load: an earlier agentd may have switched just before it ended. */
	bool unsettled;
};

static const struct object objects[] = {
	{ .name = "files",
	  .elf_bytes = files_bpf__elf_bytes,
	  .elf_bytes_ro = files_ro_bpf__elf_bytes,
	  .lsm = true },
	{ .name = "exec",
	  .elf_bytes = exec_bpf__elf_bytes,
	  .elf_bytes_ro = exec_ro_bpf__elf_bytes,
	  .lsm = true },
	{ .name = "self", .elf_bytes = self_bpf__elf_bytes, .lsm = true },
	{ .name = "contain", .elf_bytes = contain_bpf__elf_bytes, .lsm = true },
	{ .name = "sock", .elf_bytes = sock_bpf__elf_bytes, .lsm = true },
	{ .name = "net", .elf_bytes = net_bpf__elf_bytes, .lsm = false },
};

/* Hooks whose absence loses nothing: an older hook covers the same operations there. */
static const char *const covered_hooks[] = {
	"file_truncate", /* before Linux 6.2, ftruncate() goes through path_truncate */
	"inode_set_acl", /* before Linux 6.2, ACLs go through inode_setxattr */
	"inode_remove_acl", /* and inode_removexattr */
	"file_ioctl_compat", /* before Linux 6.7, compat ioctls go through file_ioctl */
};

static bool hook_covered(const char *hook)
{
	size_t i;

	for (i = 0; i < sizeof(covered_hooks) / sizeof(covered_hooks[0]); i++)
		if (!strcmp(hook, covered_hooks[i]))
			return true;
	return false;
}

/*
 * An LSM hook this kernel does not have is not loaded, and is reported (enforcer_missing_hooks)
 * unless an older hook covers it. The kernel has the hook when its BTF has the function
 * bpf_lsm_<hook>, as libbpf_find_vmlinux_btf_id() looks it up; that call parses the kernel's
 * BTF again each time (5 MB on 6.12, half a second each under the VM tier's emulation), so
 * vmlinux is parsed once for all objects (enforcer_load).
 */
static void skip_missing_hooks(struct enforcer *e, struct bpf_object *obj,
			       const struct btf *vmlinux)
{
	char func[128];
	struct bpf_program *prog;
	const char *hook;

	bpf_object__for_each_program(prog, obj)
	{
		if (bpf_program__type(prog) != BPF_PROG_TYPE_LSM)
			continue;
		hook = strchr(bpf_program__section_name(prog), '/') + 1;
		snprintf(func, sizeof(func), "bpf_lsm_%s", hook);
		if (btf__find_by_name_kind(vmlinux, func, BTF_KIND_FUNC) > 0)
			continue;
		bpf_program__set_autoload(prog, false);
		if (!hook_covered(hook) && e->nmissing < MAX_MISSING)
			e->missing[e->nmissing++] = hook;
	}
}

/* The map libbpf makes of obj's .bss, the shared section (abi.h); NULL without one. */
static struct bpf_map *shared_section(const struct bpf_object *obj)
{
	return bpf_object__find_map_by_name(obj, AGENTD_SHARED_SECTION);
}

/* The map of from that obj's map is the same as: by name, or the shared section; NULL for
 * other internal maps (each object's own constants) and for maps from lacks. */
static struct bpf_map *counterpart(const struct bpf_object *from, const struct bpf_object *obj,
				   const struct bpf_map *map)
{
	if (map == shared_section(obj))
		return shared_section(from);
	if (bpf_map__is_internal(map))
		return NULL;
	return bpf_object__find_map_by_name(from, bpf_map__name(map));
}

/*
 * A program reads the shared section at offsets fixed when its object was built, into the one
 * map every object shares: agentd_shared must be the section's one variable in every object, so
 * that all lay it out alike. A global variable added to an object would change the section's
 * size, and is refused here.
 */
static int check_shared_section(const struct bpf_object *obj)
{
	const struct bpf_map *map = shared_section(obj);

	if (!map || bpf_map__value_size(map) == sizeof(struct agentd_shared))
		return 0;
	log_err("BPF object %s: its .bss holds %u bytes, agentd_shared alone %zu: a global "
		"variable besides agentd_shared\n",
		bpf_object__name(obj), bpf_map__value_size(map), sizeof(struct agentd_shared));
	return -EINVAL;
}

/*
 * Makes obj, opened and not loaded, reuse for each of its maps the map of the same name, or the
 * shared section, of an object already loaded. strict: a map that no loaded object has is an
 * error (-ENOENT); else obj creates it, for the objects after it.
 */
static int reuse_maps(const struct enforcer *e, struct bpf_object *obj, bool strict)
{
	struct bpf_map *map, *own;
	size_t i;
	int err;

	bpf_object__for_each_map(map, obj)
	{
		if (bpf_map__is_internal(map) && map != shared_section(obj))
			continue;
		own = NULL;
		for (i = 0; !own && i < sizeof(e->objs) / sizeof(e->objs[0]); i++) {
			if (!e->objs[i].obj || e->objs[i].obj == obj)
				continue;
			own = counterpart(e->objs[i].obj, obj, map);
			if (own && bpf_map__fd(own) < 0)
				own = NULL; /* that object is not loaded */
		}
		if (!own) {
			if (strict)
				return -ENOENT;
			continue;
		}
		err = bpf_map__reuse_fd(map, bpf_map__fd(own));
		if (err)
			return err;
	}
	return 0;
}

int enforcer_share_maps(const struct enforcer *e, struct bpf_object *obj)
{
	return check_shared_section(obj) ?: reuse_maps(e, obj, true);
}

/* The map pinned at path, described in *info; -ENOENT when nothing is pinned there. */
static int pin_info(const char *path, struct bpf_map_info *info)
{
	__u32 len = sizeof(*info);
	int fd = bpf_obj_get(path), err = 0;

	if (fd < 0)
		return -errno;
	memset(info, 0, sizeof(*info));
	if (bpf_obj_get_info_by_fd(fd, info, &len))
		err = -errno;
	close(fd);
	return err;
}

/* Every object's maps pinned by name, the shared section as AGENTD_SHARED_PIN: the objects
 * share them, and so does the next agentd. */
static int pin_maps(struct enforcer *e, struct bpf_object *obj)
{
	struct bpf_map *map, *shared = shared_section(obj);
	char path[PATH_MAX + 64];
	int err;

	bpf_object__for_each_map(map, obj)
	{
		if (bpf_map__is_internal(map) && map != shared)
			continue;
		snprintf(path, sizeof(path), "%s/%s", e->pin_dir,
			 map == shared ? AGENTD_SHARED_PIN : bpf_map__name(map));
		err = bpf_map__set_pin_path(map, path);
		if (err)
			return err;
	}
	return 0;
}

/* Whether the kernel has the kfunc bpf_rdonly_cast() (Linux 6.2 and later). */
static bool has_rdonly_cast(const struct btf *vmlinux)
{
	return vmlinux && btf__find_by_name_kind(vmlinux, "bpf_rdonly_cast", BTF_KIND_FUNC) > 0;
}

/* Opens and loads one object (its _ro build when ro and it has one); vmlinux is the kernel's
 * BTF for an LSM object, else NULL. */
static int load_object(struct enforcer *e, struct object *o, const struct btf *vmlinux, bool ro)
{
	size_t sz;
	const void *bytes = ro && o->elf_bytes_ro ? o->elf_bytes_ro(&sz) : o->elf_bytes(&sz);
	int err;

	o->obj = bpf_object__open_mem(bytes, sz, NULL);
	if (!o->obj)
		return -errno;
	if (vmlinux)
		skip_missing_hooks(e, o->obj, vmlinux);
	err = 0;
	if (e->ring_bytes) {
		/* Every object declares the ring: each must agree before the first creates it. */
		struct bpf_map *ring = bpf_object__find_map_by_name(o->obj, "events");

		if (ring)
			err = bpf_map__set_max_entries(ring, e->ring_bytes);
	}
	err = err ?: check_shared_section(o->obj);
	if (!err)
		err = e->pin_dir[0] ? pin_maps(e, o->obj) : reuse_maps(e, o->obj, false);
	if (!err)
		err = bpf_object__load(o->obj);
	if (err) {
		log_debug("loading BPF object %s: %s\n", o->name, strerror(-err));
		return err;
	}
	return 0;
}

static int fill_structural(struct enforcer *e)
{
	struct agentd_addr_key keys[128];
	__u32 deny = 1;
	int n, i, fd = enforcer_map_fd(e, "structural_deny");

	if (fd < 0)
		return fd;
	n = netdeny_default(keys, sizeof(keys) / sizeof(keys[0]));
	if (n < 0)
		return n;
	for (i = 0; i < n; i++)
		if (bpf_map_update_elem(fd, &keys[i], &deny, BPF_ANY))
			return -errno;
	return 0;
}

/* A ring already pinned keeps its size: its pending events are not to be lost, and libbpf
 * reuses a pinned map only if it matches the declaration. */
static int pinned_ring_bytes(const struct enforcer *e, __u32 *bytes)
{
	struct bpf_map_info info;
	char path[PATH_MAX + 16];
	int err;

	snprintf(path, sizeof(path), "%s/events", e->pin_dir);
	err = pin_info(path, &info);
	if (err)
		return err == -ENOENT ? 0 : err;
	*bytes = info.max_entries;
	return 0;
}

__u32 enforcer_ring_bytes(const struct enforcer *e)
{
	int fd = enforcer_map_fd(e, "events");
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) ? info.max_entries : 0;
}

/*
 * The pin directory's format marker: a one-element array map pinned as ENFORCER_PIN_FORMAT_PIN
 * holding ENFORCER_PIN_FORMAT, frozen. A map, because bpffs holds nothing but BPF objects (no
 * regular file can be made there) and a marker anywhere else could outlive the pins or predate
 * them: pinned beside them, it lives exactly as long as they do (--teardown removes it with them,
 * a reboot or an unmount of bpffs takes it with them).
 */

/* The format the marker at path says; -ENOENT without one, -EBADMSG for a pin there that is not
 * such a marker. */
static int pin_format_read(const char *path, __u32 *format)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), zero = 0;
	int fd = bpf_obj_get(path), err = 0;

	if (fd < 0)
		return -errno;
	/* A lookup fails on a link or program pinned under the name, before info is read as a map's. */
	if (bpf_map_lookup_elem(fd, &zero, format) || bpf_obj_get_info_by_fd(fd, &info, &len))
		err = errno == EINVAL || errno == ENOENT ? -EBADMSG : -errno;
	else if (info.type != BPF_MAP_TYPE_ARRAY || info.key_size != sizeof(zero) ||
		 info.value_size != sizeof(*format) || info.max_entries != 1)
		err = -EBADMSG;
	close(fd);
	return err;
}

static int pin_format_write(const char *path)
{
	__u32 zero = 0, format = ENFORCER_PIN_FORMAT;
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, ENFORCER_PIN_FORMAT_PIN, sizeof(zero),
				sizeof(format), 1, NULL),
	    err = 0;

	if (fd < 0)
		return -errno;
	if (bpf_map_update_elem(fd, &zero, &format, BPF_ANY) || bpf_map_freeze(fd) ||
	    bpf_obj_pin(fd, path))
		err = -errno;
	close(fd);
	return err;
}

/* How many entries pin_dir holds, or -errno. */
static int pin_count(const char *pin_dir)
{
	struct dirent *de;
	int n = 0;
	DIR *d = opendir(pin_dir);

	if (!d)
		return -errno;
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

/*
 * Pins of this format are reused; an empty directory gets the marker before anything else is
 * pinned there. Pins of another format, or pins without a marker (an agentd from before the
 * marker), are refused with what to do: their maps cannot be reused (libbpf would fail with a
 * bare "parameter mismatch", or worse, reuse a map whose bytes mean something else), nor
 * rewritten in place while the programs attached with them still read them.
 */
static int check_pin_format(const char *pin_dir)
{
	char path[PATH_MAX + 32], what[128];
	__u32 format = 0;
	int err, n;

	snprintf(path, sizeof(path), "%s/" ENFORCER_PIN_FORMAT_PIN, pin_dir);
	err = pin_format_read(path, &format);
	if (!err && format == ENFORCER_PIN_FORMAT)
		return 0;
	if (err == -ENOENT) {
		n = pin_count(pin_dir);
		if (n <= 0)
			return n ?: pin_format_write(path);
		snprintf(what, sizeof(what), "pins without a format marker (%s)",
			 ENFORCER_PIN_FORMAT_PIN);
	} else if (err == -EBADMSG) {
		snprintf(what, sizeof(what), "%s is not a pin format marker",
			 ENFORCER_PIN_FORMAT_PIN);
	} else if (err) {
		log_err("%s: %s\n", path, strerror(-err));
		return err;
	} else {
		snprintf(what, sizeof(what),
			 "pins of format %u, where this agentd's are of format %u", format,
			 ENFORCER_PIN_FORMAT);
	}
	log_err("%s: %s, of an agentd whose pins this one cannot reuse: run agentd --teardown "
		"--pin-dir %s (enforcement ends until agentd starts again), then start agentd\n",
		pin_dir, what, pin_dir);
	return -ESTALE;
}

static int map_shared_section(struct enforcer *e);
static int index_sync(struct enforcer *e);
static int object_filter_map(struct enforcer *e);
static int agent_slots_map(struct enforcer *e);

int enforcer_load(struct enforcer **out, const struct enforcer_opts *opts)
{
	struct btf *vmlinux = NULL;
	struct enforcer *e;
	bool ro;
	size_t i;
	int err;

	*out = NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	memcpy(e->objs, objects, sizeof(objects));
	if (opts->ring_bytes &&
	    (opts->ring_bytes < 4096 || (opts->ring_bytes & (opts->ring_bytes - 1)))) {
		err = -EINVAL;
		goto err_free;
	}
	e->ring_bytes = opts->ring_bytes;
	if (opts->pin_dir) {
		snprintf(e->pin_dir, sizeof(e->pin_dir), "%s", opts->pin_dir);
		if (mkdir(e->pin_dir, 0700) && errno != EEXIST) {
			err = -errno;
			goto err_free;
		}
		err = check_pin_format(e->pin_dir);
		err = err ?: pinned_ring_bytes(e, &e->ring_bytes);
		if (err)
			goto err_free;
	}
	if (opts->lsm) {
		vmlinux = btf__load_vmlinux_btf();
		if (!vmlinux) {
			err = -errno;
			log_err("reading the kernel's BTF: %s\n", strerror(-err));
			goto err_free;
		}
	}
	ro = !opts->plain_objects && has_rdonly_cast(vmlinux);
	for (i = 0; i < sizeof(objects) / sizeof(objects[0]); i++) {
		if (e->objs[i].lsm && !opts->lsm)
			continue;
		err = load_object(e, &e->objs[i], e->objs[i].lsm ? vmlinux : NULL, ro);
		if (err)
			goto err_free;
	}
	btf__free(vmlinux);
	vmlinux = NULL;
	err = fill_structural(e);
	err = err ?: map_shared_section(e);
	err = err ?: index_sync(e);
	err = err ?: object_filter_map(e);
	err = err ?: agent_slots_map(e);
	if (err)
		goto err_free;
	if (opts->on_event) {
		e->events =
			ring_buffer__new(enforcer_map_fd(e, "events"),
					 (ring_buffer_sample_fn)opts->on_event, opts->ctx, NULL);
		if (!e->events) {
			err = -errno;
			goto err_free;
		}
	}
	*out = e;
	return 0;

err_free:
	btf__free(vmlinux);
	enforcer_destroy(e);
	return err;
}

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

const char *const *enforcer_missing_hooks(const struct enforcer *e)
{
	return e->missing;
}

/* The cgroup's level: how many components below the cgroup v2 root. */
static int cgroup_level(const char *path)
{
	char root[PATH_MAX], real[PATH_MAX];
	const char *p;
	int level = 0, err;

	err = cgroup2_mount(root, sizeof(root));
	if (err)
		return err;
	if (!realpath(path, real))
		return -errno;
	if (strncmp(real, root, strlen(root)))
		return -EXDEV;
	for (p = real + strlen(root); *p; p++)
		if (*p == '/' && p[1])
			level++;
	return level;
}

/* Maps the shared map called name (BPF_F_MMAPABLE, bytes long) for reading and writing into
 * *out. Returns 0, -ENOENT when no object has it, or -errno. */
static int map_shared(const struct enforcer *e, const char *name, size_t bytes, void *out)
{
	int fd = enforcer_map_fd(e, name);
	void *p;

	if (fd < 0)
		return fd;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	memcpy(out, &p, sizeof(p));
	return 0;
}

#define INDEX_MASK (AGENTD_CGROUP_INDEX_SLOTS - 1)

/* The word naming cgroup id of agent_id alone in its slot; "several" for an id out of range
 * (not agentd's: agent_cgroups, which the hash lookup reads, then decides). */
static __u64 slot_word(__u64 id, __u32 agent_id)
{
	if (!agent_id || agent_id >= AGENTD_MAX_AGENTS)
		return AGENTD_CGROUP_INDEX_SEVERAL;
	return agentd_cgroup_index_word(id, agent_id);
}

/* The word the slot of cgroup id should hold, by agent_cgroups now. An iteration restarted by
 * a concurrent deletion counts some ids twice: "several", which is never wrong. */
static int index_word(struct enforcer *e, __u64 id, __u64 *word)
{
	int fd = enforcer_map_fd(e, "agent_cgroups");
	__u64 key, next, *prev = NULL;
	__u32 agent;
	int n = 0;

	if (fd < 0)
		return fd;
	*word = 0;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if ((key & INDEX_MASK) != (id & INDEX_MASK))
			continue;
		if (bpf_map_lookup_elem(fd, &key, &agent))
			return -errno;
		*word = ++n > 1 ? AGENTD_CGROUP_INDEX_SEVERAL : slot_word(key, agent);
	}
	return errno == ENOENT ? 0 : -errno;
}

/*
 * Brings the slot of cgroup id up to date with agent_cgroups, in one 8-byte store: a program
 * reads the word before or after, whole. Callers serialize (agentd's one thread).
 */
static int index_update(struct enforcer *e, __u64 id)
{
	__u64 word;
	int err = index_word(e, id, &word);

	if (err)
		return err;
	__atomic_store_n(&e->shared->cgroup_index[id & INDEX_MASK], word, __ATOMIC_RELEASE);
	return 0;
}

/* Rewrites every slot of the cgroup index from agent_cgroups (pinned maps of an earlier agentd),
 * before any program that reads it is attached. */
static int index_sync(struct enforcer *e)
{
	int err = 0, cg_fd = enforcer_map_fd(e, "agent_cgroups");
	__u64 key, next, *prev = NULL, *words;
	__u32 agent, i;

	if (cg_fd < 0)
		return cg_fd;
	words = calloc(AGENTD_CGROUP_INDEX_SLOTS, sizeof(*words));
	if (!words)
		return -ENOMEM;
	while (!bpf_map_get_next_key(cg_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(cg_fd, &key, &agent)) {
			err = -errno;
			break;
		}
		i = key & INDEX_MASK;
		words[i] = words[i] ? AGENTD_CGROUP_INDEX_SEVERAL : slot_word(key, agent);
	}
	if (!err && errno != ENOENT)
		err = -errno;
	for (i = 0; !err && i < AGENTD_CGROUP_INDEX_SLOTS; i++)
		if (__atomic_load_n(&e->shared->cgroup_index[i], __ATOMIC_RELAXED) != words[i])
			__atomic_store_n(&e->shared->cgroup_index[i], words[i], __ATOMIC_RELEASE);
	free(words);
	return err;
}

/* Adds level to the agent levels, unless there: the level first, then the count that includes it
 * (a program reads them in the other order). -ENOSPC when there are AGENTD_MAX_AGENT_LEVELS. */
static int add_level(struct enforcer *e, __u32 level)
{
	struct agentd_agent_levels *lv = &e->shared->levels;
	__u32 n = __atomic_load_n(&lv->count, __ATOMIC_RELAXED), i;

	for (i = 0; i < n && i < AGENTD_MAX_AGENT_LEVELS && lv->level[i] != level; i++)
		;
	if (i < n)
		return 0;
	if (n >= AGENTD_MAX_AGENT_LEVELS)
		return -ENOSPC;
	__atomic_store_n(&lv->level[n], level, __ATOMIC_RELAXED);
	__atomic_store_n(&lv->count, n + 1, __ATOMIC_RELEASE);
	return 0;
}

/* Maps the shared section (agent levels, cgroup index, object filter). */
static int map_shared_section(struct enforcer *e)
{
	return map_shared(e, AGENTD_SHARED_SECTION, sizeof(*e->shared), &e->shared);
}

int enforcer_add_cgroup_id(struct enforcer *e, __u64 id, int level, __u32 agent_id)
{
	int cg_fd = enforcer_map_fd(e, "agent_cgroups");
	int err;

	if (!agent_id || agent_id >= AGENTD_MAX_AGENTS)
		return -ERANGE;
	if (level < 0 || level >= AGENTD_MAX_CGROUP_LEVEL)
		return -ELOOP;
	/* The level, then the cgroup in agent_cgroups, then its slot of the index: once a program
	 * finds the cgroup (in its slot, or in agent_cgroups through a shared one), it finds it at
	 * its level. */
	err = add_level(e, level);
	if (err)
		return err;
	if (bpf_map_update_elem(cg_fd, &id, &agent_id, BPF_ANY))
		return -errno;
	err = index_update(e, id);
	if (err) {
		bpf_map_delete_elem(cg_fd, &id);
		index_update(e, id);
	}
	return err;
}

int enforcer_add_cgroup(struct enforcer *e, const char *path, __u32 agent_id)
{
	int level = cgroup_level(path), err;
	__u64 id;

	if (level < 0)
		return level;
	err = cgroup_id(path, &id);
	if (err)
		return err;
	return enforcer_add_cgroup_id(e, id, level, agent_id);
}

int enforcer_remove_cgroup_id(struct enforcer *e, __u64 id)
{
	if (bpf_map_delete_elem(enforcer_map_fd(e, "agent_cgroups"), &id))
		return -errno;
	/* Until then the slot may still name the cgroup: removal takes effect here. */
	return index_update(e, id);
}

void enforcer_object_filter_add(struct enforcer *e, __u64 dev, __u64 ino)
{
	__u32 bit = agentd_object_bit(dev, ino);

	if (e->rules)
		__atomic_fetch_or(&e->shared->object_filter[bit / 64], 1ULL << (bit % 64),
				  __ATOMIC_SEQ_CST);
}

static void set_bit_of(__u64 *words, __u64 dev, __u64 ino)
{
	__u32 bit = agentd_object_bit(dev, ino);

	words[bit / 64] |= 1ULL << (bit % 64);
}

static int collect_rule(void *words, const struct agentd_file_key *key,
			const struct agentd_file_rule *rule)
{
	(void)rule;
	set_bit_of(words, key->dev, key->ino);
	return 0;
}

/* Sets in words the bit of every object mount_roots has an entry for. */
static int object_filter_collect(int fd, __u64 *words)
{
	enum { CHUNK = 256 };
	struct agentd_file_key keys[CHUNK];
	struct agentd_mount_root values[CHUNK];
	__u32 batch, n, i;
	void *in = NULL;
	int err;

	do {
		n = CHUNK;
		err = bpf_map_lookup_batch(fd, in, &batch, keys, values, &n, NULL);
		if (err && errno != ENOENT)
			return -errno;
		for (i = 0; i < n; i++)
			set_bit_of(words, keys[i].dev, keys[i].ino);
		in = &batch;
	} while (!err);
	return 0;
}

int enforcer_object_filter_rebuild(struct enforcer *e)
{
	int mounts = enforcer_map_fd(e, "mount_roots");
	__u64 *words;
	__u32 i;
	int err;

	if (!e->rules || mounts < 0)
		return 0;
	words = calloc(AGENTD_OBJECT_FILTER_WORDS, sizeof(*words));
	if (!words)
		return -ENOMEM;
	err = ruletab_each(e->rules, collect_rule, words);
	err = err ?: object_filter_collect(mounts, words);
	/* Word by word, with one store each: a program reads a word as it was or as it is, and
	 * both have the bit of every entry now in the maps. Bits are only set before an entry
	 * exists (callers serialize), so the new words only ever clear bits. */
	for (i = 0; !err && i < AGENTD_OBJECT_FILTER_WORDS; i++)
		if (__atomic_load_n(&e->shared->object_filter[i], __ATOMIC_RELAXED) != words[i])
			__atomic_store_n(&e->shared->object_filter[i], words[i], __ATOMIC_SEQ_CST);
	free(words);
	return err;
}

/* Maps rule_buckets, then sets the object filter's bits of every entry already in the maps
 * (pinned by an earlier agentd) and clears the others, before any program is attached. */
static int object_filter_map(struct enforcer *e)
{
	int err = map_shared(e, "rule_buckets", RULETAB_BYTES, &e->rules);

	if (err)
		return err == -ENOENT ? 0 : err; /* no file objects: no table, no filter */
	return enforcer_object_filter_rebuild(e);
}

struct agentd_rule_bucket *enforcer_rules(struct enforcer *e)
{
	return e->rules;
}

struct agentd_shared *enforcer_shared(struct enforcer *e)
{
	return e->shared;
}

/* A multiple of the page size (1024 slots of 72 bytes: 18 pages), as mmap() of a map wants. */
#define SLOTS_BYTES (AGENTD_MAX_AGENTS * sizeof(struct agentd_agent_slot))
_Static_assert(SLOTS_BYTES % 4096 == 0, "agent_slots maps whole pages");

int enforcer_wait_for_programs(struct enforcer *e)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	int inner, outer, err = 0;
	__u32 zero = 0;

	inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, sizeof(__u32), sizeof(__u32), 1, NULL);
	if (inner < 0)
		return -errno;
	opts.inner_map_fd = inner;
	outer = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, NULL, sizeof(__u32), sizeof(__u32), 1,
			       &opts);
	if (outer < 0 || bpf_map_update_elem(outer, &zero, &inner, BPF_ANY))
		err = -errno;
	if (outer >= 0)
		close(outer);
	close(inner);
	if (!err)
		e->unsettled = false;
	return err;
}

int enforcer_agent_config(const struct enforcer *e, __u32 agent_id, struct agentd_agent_config *cfg)
{
	const struct agentd_agent_slot *s;
	__u32 gen;

	if (agent_id >= AGENTD_MAX_AGENTS)
		return -EINVAL;
	s = &e->slots[agent_id];
	gen = __atomic_load_n(&s->generation, __ATOMIC_ACQUIRE);
	if (!gen)
		return -ENOENT;
	*cfg = s->cfg[gen & 1];
	return 0;
}

int enforcer_agent_switch(struct enforcer *e, __u32 agent_id, const struct agentd_agent_config *cfg)
{
	struct agentd_agent_slot *s;
	__u32 cur;
	int err;

	if (agent_id >= AGENTD_MAX_AGENTS || !cfg->generation)
		return -EINVAL;
	s = &e->slots[agent_id];
	cur = __atomic_load_n(&s->generation, __ATOMIC_RELAXED);
	if (cur && !((cur ^ cfg->generation) & 1))
		return -EINVAL; /* the half in force itself */
	if (e->unsettled) {
		err = enforcer_wait_for_programs(e);
		if (err)
			return err;
	}
	/* No program reads this half now (the wait above, or one since it was last left). The
	 * release store orders the half's bytes before the generation that names it; a program's
	 * read of the half depends on the generation it loaded. */
	s->cfg[cfg->generation & 1] = *cfg;
	__atomic_store_n(&s->generation, cfg->generation, __ATOMIC_RELEASE);
	e->unsettled = true;
	return 0;
}

int enforcer_agent_clear(struct enforcer *e, __u32 agent_id)
{
	if (agent_id >= AGENTD_MAX_AGENTS)
		return -EINVAL;
	__atomic_store_n(&e->slots[agent_id].generation, 0, __ATOMIC_RELEASE);
	e->unsettled = true;
	return 0;
}

/* Maps agent_slots. */
static int agent_slots_map(struct enforcer *e)
{
	int err = map_shared(e, "agent_slots", SLOTS_BYTES, &e->slots);

	if (!err)
		e->unsettled = true;
	return err;
}

int enforcer_remove_cgroup(struct enforcer *e, const char *path)
{
	__u64 id;
	int err = cgroup_id(path, &id);

	if (err)
		return err;
	return enforcer_remove_cgroup_id(e, id);
}

static void endpoint_key(struct agentd_endpoint_key *k, __u32 agent_id, const __u8 addr[16],
			 __u16 port, __u8 protocol)
{
	memset(k, 0, sizeof(*k));
	k->agent_id = agent_id;
	k->port = port;
	k->protocol = protocol;
	memcpy(k->addr, addr, 16);
}

int enforcer_add_endpoint(struct enforcer *e, __u32 agent_id, const __u8 addr[16], __u16 port,
			  __u8 protocol)
{
	struct agentd_endpoint_key k;
	__u32 one = 1;

	endpoint_key(&k, agent_id, addr, port, protocol);
	if (bpf_map_update_elem(enforcer_map_fd(e, "endpoints"), &k, &one, BPF_ANY))
		return -errno;
	return 0;
}

int enforcer_remove_endpoint(struct enforcer *e, __u32 agent_id, const __u8 addr[16], __u16 port,
			     __u8 protocol)
{
	struct agentd_endpoint_key k;

	endpoint_key(&k, agent_id, addr, port, protocol);
	if (bpf_map_delete_elem(enforcer_map_fd(e, "endpoints"), &k))
		return -errno;
	return 0;
}

int enforcer_consume(struct enforcer *e, int timeout_ms)
{
	int n = 0, m;

	if (!e->events)
		return -EINVAL;
	/* The programs wake us only past a backlog, so consume after every timeout too. With no
	 * time to wait, polling would only cost an epoll_wait(): consuming reads every ring. */
	if (timeout_ms) {
		n = ring_buffer__poll(e->events, timeout_ms);
		if (n < 0 && n != -EINTR)
			return n;
	}
	m = ring_buffer__consume(e->events);
	if (m < 0)
		return m;
	return (n > 0 ? n : 0) + m;
}

int enforcer_events_fd(const struct enforcer *e)
{
	return e->events ? ring_buffer__epoll_fd(e->events) : -EINVAL;
}

int enforcer_drops(struct enforcer *e, __u32 agent_id, __u64 *drops)
{
	int ncpu = libbpf_num_possible_cpus(), i, err = 0;
	__u64 *vals;

	if (ncpu < 0)
		return ncpu;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	if (bpf_map_lookup_elem(enforcer_map_fd(e, "event_drops"), &agent_id, vals))
		err = -errno;
	*drops = 0;
	for (i = 0; !err && i < ncpu; i++)
		*drops += vals[i];
	free(vals);
	return err;
}

int enforcer_map_fd(const struct enforcer *e, const char *name)
{
	struct bpf_map *map;
	size_t i;

	for (i = 0; i < sizeof(e->objs) / sizeof(e->objs[0]); i++) {
		if (!e->objs[i].obj)
			continue;
		map = bpf_object__find_map_by_name(e->objs[i].obj, name);
		if (map)
			return bpf_map__fd(map);
	}
	return -ENOENT;
}

/* Forgets every agent cgroup: from now on no task is an agent's, whatever is still attached. */
static void forget_agents(const char *pin_dir)
{
	struct agentd_shared *shared;
	char path[PATH_MAX + 32];
	__u64 key, next;
	int fd;

	snprintf(path, sizeof(path), "%s/agent_cgroups", pin_dir);
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		while (!bpf_map_get_next_key(fd, NULL, &next)) {
			key = next;
			if (bpf_map_delete_elem(fd, &key))
				break;
		}
		close(fd);
	}
	/* No level to look at: no task is an agent's. */
	snprintf(path, sizeof(path), "%s/" AGENTD_SHARED_PIN, pin_dir);
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (shared != MAP_FAILED) {
			__atomic_store_n(&shared->levels.count, 0, __ATOMIC_RELEASE);
			munmap(shared, sizeof(*shared));
		}
		close(fd);
	}
}

int enforcer_teardown(const char *pin_dir)
{
	char path[PATH_MAX + 300];
	struct dirent *de;
	__u32 format = 0;
	int err = 0;
	DIR *d;

	d = opendir(pin_dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	/* An unpinned link is detached only once its inode is freed, after an RCU grace period:
	 * forget the agents first, so that enforcement ends now, not a moment later. Only in maps
	 * of this format: what another's hold is not known. */
	snprintf(path, sizeof(path), "%s/" ENFORCER_PIN_FORMAT_PIN, pin_dir);
	if (!pin_format_read(path, &format) && format == ENFORCER_PIN_FORMAT)
		forget_agents(pin_dir);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", pin_dir, de->d_name);
		if (unlink(path))
			err = -errno;
	}
	closedir(d);
	if (!err && rmdir(pin_dir))
		err = -errno;
	return err;
}

void enforcer_destroy(struct enforcer *e)
{
	size_t i;

	if (!e)
		return;
	ring_buffer__free(e->events);
	if (e->shared)
		munmap(e->shared, sizeof(*e->shared));
	if (e->rules)
		munmap(e->rules, RULETAB_BYTES);
	if (e->slots)
		munmap(e->slots, SLOTS_BYTES);
	enforcer_detach_lsm(e);
	while (e->ncg_links > 0)
		bpf_link__destroy(e->cg_links[--e->ncg_links]);
	for (i = 0; i < sizeof(e->objs) / sizeof(e->objs[0]); i++)
		bpf_object__close(e->objs[i].obj);
	free(e);
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
