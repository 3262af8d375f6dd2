// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdarg.h>
#include <stdlib.h>
#include "agentd.h"
#include "daemon.h"
#include "kernel/event.h"
#include "log.h"

/*
 * One event from the ring buffer, decoded once: printed when verbose, appended to the audit log
 * with the name of the agent its id belongs to. The text form is made only when it is printed:
 * escaping a path byte by byte costs more than the whole audit record (about 2 us against
 * 0.8 us an event), and quiet is the daemon's normal mode.
 */
int sink_event(void *ctx, void *data, size_t len)
{
	struct sink *s = ctx;
	union agentd_event ev;
	struct audit_record r;
	char line[4096]; /* a 512-byte path, each byte escaped to 4 */
	int n, err;

	n = event_decode(data, len, &ev);
	if (n >= 0 && !s->quiet)
		n = event_format(&ev, line, sizeof(line));
	if (n < 0) {
		log_warn("malformed event (%zu bytes): %s, ignoring\n", len, strerror(-n));
		return 0;
	}
	if (!s->quiet) {
		printf("%s\n", line);
		fflush(stdout);
	}
	if (s->audit && !audit_record_from_event(&r, &ev, s->mono_to_real_ns)) {
		if (r.agent < AGENTD_MAX_AGENTS) {
			memcpy(r.agent_name, s->names[r.agent], sizeof(r.agent_name));
			if (r.kind < AUDIT_KIND_MAX && r.decision < AUDIT_DECISION_MAX)
				s->decisions[r.agent][r.kind][r.decision]++;
		}
		if (s->tap)
			s->tap(s->tap_ctx, &r);
		err = audit_writer_append(s->audit, &r);
		/* Stopping the consumer would fill the ring buffer and lose events: log, go on. */
		if (err)
			log_err("audit log: %s\n", strerror(-err));
	}
	/* This record is consumed either way; the rest wait for the next pass. */
	return s->budget && ++s->used >= s->budget ? -EAGAIN : 0;
}

void sink_name(struct sink *s, __u32 id, const char *name)
{
	if (id >= AGENTD_MAX_AGENTS)
		return;
	snprintf(s->names[id], sizeof(s->names[id]), "%s", name);
	s->retiring[id] = false;
}

void sink_retire(struct sink *s, __u32 id)
{
	if (id >= AGENTD_MAX_AGENTS)
		return;
	s->retiring[id] = true;
	s->any_retiring = true;
}

bool sink_id_free(const struct sink *s, __u32 id)
{
	return id < AGENTD_MAX_AGENTS && !s->retiring[id];
}

void sink_drained(struct sink *s)
{
	__u32 id;

	if (!s->any_retiring)
		return;
	for (id = 1; id < AGENTD_MAX_AGENTS; id++) {
		if (!s->retiring[id])
			continue;
		s->retiring[id] = false;
		s->names[id][0] = '\0';
	}
	s->any_retiring = false;
}

/* A record of agentd's own (policy, lifecycle, tool), committed at once. */
void daemon_audit(struct daemon *d, enum audit_kind kind, const char *op, const struct agent *a,
		  const char *fmt, ...)
{
	struct audit_record *r;
	va_list ap;
	int err;

	if (!d->sink.audit)
		return;
	r = calloc(1, sizeof(*r));
	if (!r)
		return;
	r->kind = kind;
	snprintf(r->op, sizeof(r->op), "%s", op);
	if (a) {
		r->agent = a->st.id;
		snprintf(r->agent_name, sizeof(r->agent_name), "%s", a->st.name);
	}
	va_start(ap, fmt);
	vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
	va_end(ap);
	err = audit_writer_append(d->sink.audit, r);
	if (!err)
		err = audit_writer_flush(d->sink.audit);
	if (err)
		log_err("audit log: %s record: %s\n", op, strerror(-err));
	free(r);
}
