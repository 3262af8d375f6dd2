// SPDX-License-Identifier: GPL-2.0
/*
 * The objects' maps as one set: each object reuses the maps of the objects loaded before it (by
 * name, and the shared section), so do benchmarks' objects; with a pin directory, each map is
 * pinned there by name. And the mappings of the shared maps agentd writes directly.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kernel/enforcer_internal.h"
#include "log.h"

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
int enforcer_check_shared_section(const struct bpf_object *obj)
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
int enforcer_reuse_maps(const struct enforcer *e, struct bpf_object *obj, bool strict)
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
	return enforcer_check_shared_section(obj) ?: enforcer_reuse_maps(e, obj, true);
}

/* Every object's maps pinned by name, the shared section as AGENTD_SHARED_PIN: the objects
 * share them, and so does the next agentd. */
int enforcer_pin_maps(struct enforcer *e, struct bpf_object *obj)
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

int enforcer_map_shared(const struct enforcer *e, const char *name, size_t bytes, void *out)
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
