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
 * One event from the ring buffer: printed when verbose, appended to the audit log. The text form
 * is made only when it is printed: escaping a path byte by byte costs more than the whole audit
 * record (about 2 us against 0.8 us an event), and quiet is the daemon's normal mode.
 */
int sink_event(void *ctx, void *data, size_t len)
{
	struct sink *s = ctx;
	union agentd_event ev;
	struct audit_record r;
	char line[4096]; /* a 512-byte path, each byte escaped to 4 */
	int n, err;

	n = s->quiet ? event_decode(data, len, &ev) : event_format(data, len, line, sizeof(line));
	if (n < 0) {
		log_warn("malformed event (%zu bytes): %s, ignoring\n", len, strerror(-n));
		return 0;
	}
	if (!s->quiet) {
		printf("%s\n", line);
		fflush(stdout);
	}
	if (s->audit && !audit_record_from_event(&r, data, len, s->mono_to_real_ns)) {
		if (r.agent < AGENTD_MAX_AGENTS && r.kind < AUDIT_KIND_MAX &&
		    r.decision < AUDIT_DECISION_MAX)
			s->decisions[r.agent][r.kind][r.decision]++;
		err = audit_writer_append(s->audit, &r);
		/* Stopping the consumer would fill the ring buffer and lose events: log, go on. */
		if (err)
			log_err("audit log: %s\n", strerror(-err));
	}
	/* This record is consumed either way; the rest wait for the next pass. */
	return s->budget && ++s->used >= s->budget ? -EAGAIN : 0;
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
