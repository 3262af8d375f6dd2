// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "kernel/cglimits.h"
#include "kernel/cgroup.h"

static const char *const controllers[] = { "cpu", "memory", "pids" };

static void read_text(const char *path, char *buf, size_t sz)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sz - 1);

	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
}

static int has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p;

	for (p = strstr(list, word); p; p = strstr(p + 1, word))
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n' || !p[n]))
			return 1;
	return 0;
}

static void add_missing(char *missing, size_t sz, const char *what)
{
	size_t n = strlen(missing);

	snprintf(missing + n, sz - n, "%s%s", n ? ", " : "", what);
}

/* Enables what dir offers of the controllers for its children. */
static int enable_at(const char *dir, int *offered)
{
	char path[PATH_MAX + 32], list[512], word[16];
	size_t i;
	int err;

	snprintf(path, sizeof(path), "%s/cgroup.controllers", dir);
	read_text(path, list, sizeof(list));
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dir);
	for (i = 0; i < sizeof(controllers) / sizeof(controllers[0]); i++) {
		if (!has_word(list, controllers[i])) {
			offered[i] = 0;
			continue;
		}
		snprintf(word, sizeof(word), "+%s", controllers[i]);
		err = cgroup_write(path, word);
		if (err)
			return err;
	}
	return 0;
}

int limits_enable(const char *root, const char *parent, char *missing, size_t missingsz)
{
	int offered[3] = { 1, 1, 1 }, err;
	char dir[PATH_MAX];
	const char *p;
	size_t i, n = strlen(root);

	missing[0] = '\0';
	if (strncmp(parent, root, n) || strlen(parent) >= sizeof(dir))
		return -EXDEV;
	/* Each ancestor from the root down to parent, parent included. */
	for (p = parent + n;; p = strchr(p + 1, '/')) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(p ? (size_t)(p - parent) : strlen(parent)),
			 parent);
		err = enable_at(dir, offered);
		if (err || !p)
			break;
	}
	for (i = 0; i < sizeof(controllers) / sizeof(controllers[0]); i++)
		if (!offered[i])
			add_missing(missing, missingsz, controllers[i]);
	return err;
}

int limits_apply(const char *cg, const struct limits *l, char *missing, size_t missingsz)
{
	char path[PATH_MAX + 32], text[64];
	int err = 0;

	missing[0] = '\0';
	if (l->cpu_millicores) {
		snprintf(path, sizeof(path), "%s/cpu.max", cg);
		snprintf(text, sizeof(text), "%llu 100000",
			 (unsigned long long)l->cpu_millicores * 100);
		err = access(path, F_OK) ? (add_missing(missing, missingsz, "cpu"), 0)
					 : cgroup_write(path, text);
	}
	if (!err && l->memory_bytes) {
		snprintf(path, sizeof(path), "%s/memory.max", cg);
		snprintf(text, sizeof(text), "%llu", (unsigned long long)l->memory_bytes);
		err = access(path, F_OK) ? (add_missing(missing, missingsz, "memory"), 0)
					 : cgroup_write(path, text);
	}
	if (!err && l->pids) {
		snprintf(path, sizeof(path), "%s/pids.max", cg);
		snprintf(text, sizeof(text), "%u", l->pids);
		err = access(path, F_OK) ? (add_missing(missing, missingsz, "pids"), 0)
					 : cgroup_write(path, text);
	}
	return err;
}
