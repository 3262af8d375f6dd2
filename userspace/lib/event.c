// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "agentd/abi.h"
#include "event.h"

struct line {
	char *buf;
	size_t size;
	size_t len;
	int err;
};

static void line_add(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void line_add(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->len, l->size - l->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= l->size - l->len)
		l->err = -ENOSPC;
	else
		l->len += n;
}

/* Kernel strings are bytes an agent chose (file names, comm): escape all but printable ASCII. */
static void line_add_escaped(struct line *l, const char *s, size_t max)
{
	size_t i;

	for (i = 0; i < max && s[i]; i++) {
		unsigned char c = s[i];

		if (c > ' ' && c < 0x7f && c != '\\' && c != '"')
			line_add(l, "%c", c);
		else
			line_add(l, "\\x%02x", c);
	}
}

static const char *hook_name(__u32 hook)
{
	switch (hook) {
	case AGENTD_HOOK_FILE_OPEN:
		return "file_open";
	default:
		return "unknown";
	}
}

static void format_file(struct line *l, const struct agentd_file_event *e)
{
	line_add(l, "%s agent=%u gen=%u cgroup=%llu pid=%u tid=%u uid=%u comm=\"",
		 e->decision == AGENTD_DECISION_DENY ? "deny" : "allow", e->agent_id, e->generation,
		 (unsigned long long)e->cgroup_id, e->pid, e->tid, e->uid);
	line_add_escaped(l, e->comm, sizeof(e->comm));
	line_add(l, "\" hook=%s rule=%u dev=%llu:%llu ino=%llu name=\"", hook_name(e->hook),
		 e->rule_id, (unsigned long long)(e->dev >> 20),
		 (unsigned long long)(e->dev & 0xfffff), (unsigned long long)e->ino);
	line_add_escaped(l, e->name, sizeof(e->name));
	line_add(l, "\"%s", e->flags & AGENTD_EVF_NAME_TRUNCATED ? " name_truncated" : "");
}

int event_format(const void *data, size_t len, char *buf, size_t bufsz)
{
	struct line l = { .buf = buf, .size = bufsz };
	struct agentd_event_hdr hdr;

	if (!bufsz)
		return -ENOSPC;
	buf[0] = '\0';
	if (len < sizeof(hdr))
		return -EINVAL;
	memcpy(&hdr, data, sizeof(hdr));
	if (hdr.len != len || hdr.version != AGENTD_EVENT_VERSION)
		return -EINVAL;

	switch (hdr.type) {
	case AGENTD_EV_FILE: {
		struct agentd_file_event e;

		if (len != sizeof(e))
			return -EINVAL;
		memcpy(&e, data, sizeof(e));
		format_file(&l, &e);
		break;
	}
	default:
		return -EINVAL;
	}
	return l.err ? l.err : (int)l.len;
}
