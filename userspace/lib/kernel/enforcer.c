// SPDX-License-Identifier: GPL-2.0
/*
 * The enforcer: the BPF objects agentd loads (which, in which build for this kernel, without the
 * hooks this kernel lacks), their loading onto one set of maps, and the enforcer's life. The rest
 * is in enforcer_*.c (enforcer_internal.h lists them).
 */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "kernel/enforcer_internal.h"
#include "log.h"
#include "policy/netdeny.h"
#include "files.skel.h"
#include "files_ro.skel.h"
#include "exec.skel.h"
#include "exec_ro.skel.h"
#include "self.skel.h"
#include "contain.skel.h"
#include "sock.skel.h"
#include "net.skel.h"

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
	err = err ?: enforcer_check_shared_section(o->obj);
	if (!err)
		err = e->pin_dir[0] ? enforcer_pin_maps(e, o->obj)
				    : enforcer_reuse_maps(e, o->obj, false);
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
		err = enforcer_check_pin_format(e->pin_dir);
		err = err ?: enforcer_pinned_ring_bytes(e, &e->ring_bytes);
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
	err = err ?: enforcer_map_agents(e);
	if (!err && opts->on_event)
		err = enforcer_events_open(e, opts->on_event, opts->ctx);
	if (err)
		goto err_free;
	*out = e;
	return 0;

err_free:
	btf__free(vmlinux);
	enforcer_destroy(e);
	return err;
}

const char *const *enforcer_missing_hooks(const struct enforcer *e)
{
	return e->missing;
}

void enforcer_destroy(struct enforcer *e)
{
	size_t i;

	if (!e)
		return;
	ring_buffer__free(e->events);
	enforcer_unmap_agents(e);
	enforcer_detach_lsm(e);
	while (e->ncg_links > 0)
		bpf_link__destroy(e->cg_links[--e->ncg_links]);
	for (i = 0; i < sizeof(e->objs) / sizeof(e->objs[0]); i++)
		bpf_object__close(e->objs[i].obj);
	free(e);
}
