// SPDX-License-Identifier: GPL-2.0
/*
 * The pin directory as a whole: its format marker (checked before anything is loaded, written
 * into an empty directory), the size of the ring pinned there, and teardown, which ends the
 * enforcement pinned there.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include "kernel/enforcer_internal.h"
#include "log.h"

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

/* A ring already pinned keeps its size: its pending events are not to be lost, and libbpf
 * reuses a pinned map only if it matches the declaration. */
int enforcer_pinned_ring_bytes(const struct enforcer *e, __u32 *bytes)
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

/* What the kernel itself puts in every new bpffs mount (BPF_PRELOAD's iterators,
 * kernel/bpf/preload): never an agentd's, never removed. */
static bool kernel_preloaded(const char *name)
{
	return !strcmp(name, "maps.debug") || !strcmp(name, "progs.debug");
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
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		     !kernel_preloaded(de->d_name);
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
int enforcer_check_pin_format(const char *pin_dir)
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
		if (de->d_name[0] == '.' || kernel_preloaded(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", pin_dir, de->d_name);
		if (unlink(path))
			err = -errno;
	}
	closedir(d);
	/* A bpffs mount of its own stays, with the kernel's iterators in it. */
	if (!err && rmdir(pin_dir) && errno != EBUSY && errno != ENOTEMPTY)
		err = -errno;
	return err;
}
