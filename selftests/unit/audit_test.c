// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <zlib.h>
#include "agentd/abi.h"
#include "audit_test.h"
#include "kernel/event.h"
#include "harness.h"

static void clear_append(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), flags;

	if (fd < 0)
		return;
	if (!ioctl(fd, FS_IOC_GETFLAGS, &flags) && (flags & FS_APPEND_FL)) {
		flags &= ~FS_APPEND_FL;
		ioctl(fd, FS_IOC_SETFLAGS, &flags);
	}
	close(fd);
}

/* Keeps a copy of a log file for the schema check over every record the tests wrote. */
static void collect(const char *path, const char *dir, const char *name)
{
	const char *into = getenv("AGENTD_AUDIT_COLLECT");
	char to[PATH_MAX], buf[65536];
	int in, out;
	ssize_t n;

	if (!into || !strstr(name, ".log"))
		return;
	snprintf(to, sizeof(to), "%s/%s-%s", into, strrchr(dir, '/') + 1, name);
	in = open(path, O_RDONLY | O_CLOEXEC);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			break;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
}

static void remove_dir(void *arg)
{
	char *dir = arg, path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);

	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		collect(path, dir, de->d_name);
		clear_append(path);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
	free(dir);
}

void audit_test_dir(char *path, size_t pathsz)
{
	snprintf(path, pathsz, "/tmp/agentd-audit-XXXXXX");
	if (!mkdtemp(path))
		FAIL("mkdtemp: %s", strerror(errno));
	test_defer(remove_dir, strdup(path));
}

char *audit_test_slurp(const char *path, size_t *len)
{
	gzFile gz = gzopen(path, "rb");
	size_t cap = 1 << 16;
	char *buf = malloc(cap);
	int n;

	if (!gz || !buf)
		FAIL("open %s: %s", path, strerror(errno));
	*len = 0;
	while ((n = gzread(gz, buf + *len, cap - *len)) > 0) {
		*len += n;
		if (*len == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			if (!buf)
				FAIL("out of memory");
		}
	}
	gzclose(gz);
	if (n < 0)
		FAIL("read %s", path);
	return buf;
}

void audit_test_spew(const char *path, const char *data, size_t len, bool gz)
{
	gzFile f;

	clear_append(path);
	f = gzopen(path, gz ? "wb" : "wbT");
	if (!f || (len && gzwrite(f, data, len) != (int)len) || gzclose(f) != Z_OK)
		FAIL("write %s", path);
}

size_t audit_test_lines(char *data, size_t len, char ***lines)
{
	size_t n = 0, i;

	*lines = calloc(len + 1, sizeof(**lines));
	if (!*lines)
		FAIL("out of memory");
	for (i = 0; i < len;) {
		char *nl = memchr(data + i, '\n', len - i);

		(*lines)[n++] = data + i;
		if (!nl)
			break;
		*nl = '\0';
		i = nl - data + 1;
	}
	return n;
}

char *audit_test_join(char **lines, size_t n, size_t *len)
{
	size_t i, total = 0;
	char *buf, *p;

	for (i = 0; i < n; i++)
		total += strlen(lines[i]) + 1;
	p = buf = malloc(total + 1);
	if (!buf)
		FAIL("out of memory");
	for (i = 0; i < n; i++)
		p += sprintf(p, "%s\n", lines[i]);
	*len = total;
	return buf;
}

void audit_test_file_record(struct audit_record *r, __u32 agent, bool deny, unsigned n)
{
	struct agentd_file_event e = {
		.hdr = { .type = AGENTD_EV_FILE,
			 .version = AGENTD_EVENT_VERSION,
			 .len = sizeof(e) },
		.task = { .cgroup_id = 4242,
			  .agent_id = agent,
			  .generation = 7,
			  .pid = 100 + n,
			  .tid = 101 + n,
			  .uid = 1000 },
		.verdict = { .hook = AGENTD_HOOK_FILE_OPEN,
			     .decision = deny ? AGENTD_DECISION_DENY : AGENTD_DECISION_ALLOW,
			     .reason = AGENTD_REASON_RULE,
			     .rule_id = 9 },
		.rights_needed = AGENTD_RIGHT_READ,
		.dev = (8ULL << 20) | 1,
		.ino = 1234 + n,
	};

	e.hdr.ts_ns = 1000000000ULL * n;
	strcpy(e.task.comm, "cat");
	e.path_len = snprintf(e.path, sizeof(e.path), "/w/file-%u", n);
	if (audit_test_from_event(r, &e, sizeof(e), 1700000000000000000LL))
		FAIL("audit_record_from_event");
}

int audit_test_from_event(struct audit_record *r, const void *data, size_t len, __s64 off)
{
	union agentd_event ev;
	int err = event_decode(data, len, &ev);

	return err < 0 ? err : audit_record_from_event(r, &ev, off);
}

int audit_test_verify(const char *dir, struct audit_verify_result *res)
{
	struct audit_segments segs;
	int ret;

	if (audit_segments_list(dir, &segs))
		FAIL("list %s", dir);
	ret = audit_verify_files(segs.paths, segs.n, res);
	audit_segments_free(&segs);
	return ret;
}
