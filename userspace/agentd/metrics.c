// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include "wire/accept.h"
#include "broker/broker.h"
#include "daemon.h"
#include "log.h"
#include "loop.h"
#include "metrics.h"
#include "proxy.h"
#include "version.h"
#include "wire/prom.h"
#include "wire/unixsock.h"

static const char *const kind_labels[AUDIT_KIND_MAX] = {
	[AUDIT_KIND_FILE] = "file", [AUDIT_KIND_EXEC] = "exec", [AUDIT_KIND_NET] = "net",
	[AUDIT_KIND_SOCK] = "sock", [AUDIT_KIND_SELF] = "self", [AUDIT_KIND_TOOL] = "tool",
};

static void agents_metrics(struct daemon *d, struct metrics_buf *b)
{
	static const char *const decisions[AUDIT_DECISION_MAX] = { NULL, "allow", "deny" };
	const struct agent *a;
	__u64 drops;
	int id, k, v, n = 0;

	for (id = 1; id < AGENTD_MAX_AGENTS; id++)
		n += d->agents[id] != NULL;
	metrics_family(b, "agentd_agents", "gauge", "Agents the daemon supervises.");
	metrics_sample(b, "agentd_agents", n, PROM_END);
	metrics_family(b, "agentd_decisions_total", "counter",
		       "Kernel decisions recorded, by agent, kind and decision.");
	for (id = 1; id < AGENTD_MAX_AGENTS; id++) {
		a = d->agents[id];
		for (k = 0; a && k < AUDIT_KIND_MAX; k++)
			for (v = 1; kind_labels[k] && v < AUDIT_DECISION_MAX; v++)
				metrics_sample(b, "agentd_decisions_total",
					       d->sink.decisions[id][k][v], "agent", a->st.name,
					       "kind", kind_labels[k], "decision", decisions[v],
					       PROM_END);
	}
	metrics_family(b, "agentd_events_dropped_total", "counter",
		       "Events the kernel could not hand to agentd (ring buffer full), by agent; "
		       "each growth is also a loss record.");
	for (id = 1; id < AGENTD_MAX_AGENTS; id++)
		if ((a = d->agents[id]) && !enforcer_drops(d->e, id, &drops))
			metrics_sample(b, "agentd_events_dropped_total", drops, "agent", a->st.name,
				       PROM_END);
}

/* The ring buffer's fill, from its consumer and producer positions (the first two pages of the
 * map, as libbpf maps them). */
static void ring_metrics(struct daemon *d, struct metrics_buf *b)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = enforcer_map_fd(d->e, "events");
	void *cons, *prod;

	metrics_family(b, "agentd_ring_buffer_size_bytes", "gauge",
		       "Size of the kernel's event ring buffer.");
	metrics_sample(b, "agentd_ring_buffer_size_bytes", enforcer_ring_bytes(d->e), PROM_END);
	if (fd < 0)
		return;
	cons = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
	prod = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, page);
	if (cons != MAP_FAILED && prod != MAP_FAILED) {
		metrics_family(b, "agentd_ring_buffer_used_bytes", "gauge",
			       "Bytes of events in the ring buffer not yet consumed.");
		metrics_sample(b, "agentd_ring_buffer_used_bytes",
			       (double)(__atomic_load_n((unsigned long *)prod, __ATOMIC_ACQUIRE) -
					__atomic_load_n((unsigned long *)cons, __ATOMIC_ACQUIRE)),
			       PROM_END);
	}
	if (cons != MAP_FAILED)
		munmap(cons, page);
	if (prod != MAP_FAILED)
		munmap(prod, page);
}

static void audit_metrics(struct daemon *d, struct metrics_buf *b)
{
	struct audit_writer_stats s;

	if (!d->sink.audit)
		return;
	audit_writer_stats(d->sink.audit, &s);
	metrics_family(b, "agentd_audit_batches_total", "counter",
		       "Batches of audit records committed (written and fdatasync'ed).");
	metrics_sample(b, "agentd_audit_batches_total", s.batches, PROM_END);
	metrics_family(b, "agentd_audit_records_total", "counter", "Audit records committed.");
	metrics_sample(b, "agentd_audit_records_total", s.records, PROM_END);
	metrics_family(b, "agentd_audit_written_bytes_total", "counter",
		       "Bytes of audit records committed.");
	metrics_sample(b, "agentd_audit_written_bytes_total", s.bytes, PROM_END);
	metrics_family(
		b, "agentd_audit_write_errors_total", "counter",
		"Failed attempts to write the audit log (write, fdatasync, segment switch).");
	metrics_sample(b, "agentd_audit_write_errors_total", s.write_errors, PROM_END);
	metrics_family(b, "agentd_audit_records_behind", "gauge",
		       "Audit records appended and not yet committed.");
	metrics_sample(b, "agentd_audit_records_behind", s.behind, PROM_END);
	metrics_family(b, "agentd_audit_commit_duration_seconds", "histogram",
		       "Time to write and fdatasync one batch of audit records.");
	metrics_histogram_write(b, "agentd_audit_commit_duration_seconds", NULL, NULL,
				&s.commit_seconds);
}

static void broker_metrics(struct metrics_buf *b)
{
	static const char *const outcomes[] = BROKER_OUTCOMES, *const codes[] = BROKER_FRAME_CODES;
	const struct broker_stats *s = broker_stats();
	const struct broker_tool_stats *t;
	unsigned i, k;

	if (!s)
		return;
	metrics_family(b, "agentd_broker_calls_total", "counter",
		       "Tool calls by tool (\"?\": none of the caller's registry) and outcome.");
	for (i = 0; i < s->n_tools; i++)
		for (k = 0, t = &s->tools[i]; k < BROKER_N_OUTCOMES; k++)
			if (t->calls[k])
				metrics_sample(b, "agentd_broker_calls_total", t->calls[k], "tool",
					       t->name, "outcome", outcomes[k], PROM_END);
	metrics_family(b, "agentd_broker_call_duration_seconds", "histogram",
		       "Time a tool call ran, start to exit, by tool.");
	for (i = 0; i < s->n_tools; i++)
		if (s->tools[i].seconds.count)
			metrics_histogram_write(b, "agentd_broker_call_duration_seconds", "tool",
						s->tools[i].name, &s->tools[i].seconds);
	metrics_family(b, "agentd_broker_frames_refused_total", "counter",
		       "Frames the broker's worker refused to parse, by code.");
	for (k = 0; k < BROKER_N_FRAME_CODES; k++)
		metrics_sample(b, "agentd_broker_frames_refused_total", s->frames_refused[k],
			       "code", codes[k], PROM_END);
	metrics_family(b, "agentd_broker_connections_refused_total", "counter",
		       "Connections to a tool socket from a process not of the socket's agent.");
	metrics_sample(b, "agentd_broker_connections_refused_total", s->conns_refused, PROM_END);
}

static void proxy_metrics(struct daemon *d, struct metrics_buf *b)
{
	const struct proxy_stats *s[AGENTD_MAX_AGENTS] = { 0 };
	const char *name;
	unsigned i;
	int id;

	for (id = 1; id < AGENTD_MAX_AGENTS; id++)
		s[id] = d->agents[id] ? proxy_agent_stats(d->agents[id]) : NULL;
	metrics_family(b, "agentd_proxy_connections_total", "counter",
		       "Connections to the egress proxy, by agent and outcome (relayed, refused).");
	for (id = 1; id < AGENTD_MAX_AGENTS; id++)
		if (s[id]) {
			metrics_sample(b, "agentd_proxy_connections_total", s[id]->relayed, "agent",
				       d->agents[id]->st.name, "outcome", "relayed", PROM_END);
			metrics_sample(b, "agentd_proxy_connections_total", s[id]->refused, "agent",
				       d->agents[id]->st.name, "outcome", "refused", PROM_END);
		}
	metrics_family(b, "agentd_proxy_refusals_total", "counter",
		       "Connections the egress proxy refused, by agent and reason.");
	for (id = 1; id < AGENTD_MAX_AGENTS; id++)
		for (i = 0; s[id] && i <= PROXY_REASONS_MAX; i++)
			if (s[id]->refusals[i] && (name = proxy_reason(i)))
				metrics_sample(b, "agentd_proxy_refusals_total", s[id]->refusals[i],
					       "agent", d->agents[id]->st.name, "reason", name,
					       PROM_END);
	metrics_family(b, "agentd_proxy_relayed_bytes_total", "counter",
		       "Bytes the egress proxy relayed, by agent and direction (to_origin, "
		       "to_agent).");
	for (id = 1; id < AGENTD_MAX_AGENTS; id++)
		if (s[id]) {
			metrics_sample(b, "agentd_proxy_relayed_bytes_total", s[id]->bytes_up,
				       "agent", d->agents[id]->st.name, "direction", "to_origin",
				       PROM_END);
			metrics_sample(b, "agentd_proxy_relayed_bytes_total", s[id]->bytes_down,
				       "agent", d->agents[id]->st.name, "direction", "to_agent",
				       PROM_END);
		}
}

static void collect(struct daemon *d, struct metrics_buf *b)
{
	metrics_family(b, "agentd_build_info", "gauge", "agentd's version; always 1.");
	metrics_sample(b, "agentd_build_info", 1, "version", AGENTD_VERSION, PROM_END);
	metrics_family(b, "agentd_bpf_lsm", "gauge",
		       "1 when BPF LSM enforces file, exec and self-protection rules, 0 when the "
		       "fallback layers do (--allow-partial).");
	metrics_sample(b, "agentd_bpf_lsm", d->lsm, PROM_END);
	agents_metrics(d, b);
	ring_metrics(d, b);
	audit_metrics(d, b);
	broker_metrics(b);
	proxy_metrics(d, b);
}

static void on_client(void *ctx, int lfd, uint32_t events)
{
	struct daemon *d = ctx;
	struct metrics_buf b = { 0 };
	char why[128];
	ssize_t n;
	int fd;

	(void)events;
	fd = accept_shedding(lfd, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	if (daemon_peer_refused(d, fd, why, sizeof(why))) {
		log_warn("metrics: refused a client: %s\n", why);
		close(fd);
		return;
	}
	collect(d, &b);
	/* One send into an empty socket buffer: a client that does not read gets what fits. */
	n = b.err ? -1 : send(fd, b.s, b.len, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n < 0 || (size_t)n < b.len)
		log_warn("metrics: sent %zd of %zu bytes%s\n", n, b.len,
			 b.err ? " (no memory)" : "");
	metrics_buf_free(&b);
	close(fd);
}

/* metrics.sock beside the control socket. */
int metrics_start(struct daemon *d)
{
	char copy[PATH_MAX];
	int fd, err;

	snprintf(copy, sizeof(copy), "%s", d->o->control);
	if (snprintf(d->metrics_path, sizeof(d->metrics_path), "%s/metrics.sock", dirname(copy)) >=
	    (int)sizeof(d->metrics_path))
		return -ENAMETOOLONG;
	fd = unix_listen(d->metrics_path, 0600, 16);
	if (fd < 0)
		return fd;
	err = loop_add(d->loop, fd, EPOLLIN, on_client, d);
	if (err) {
		close(fd);
		return err;
	}
	d->metrics_fd = fd;
	return 0;
}

void metrics_stop(struct daemon *d)
{
	if (d->metrics_fd <= 0)
		return;
	loop_del(d->loop, d->metrics_fd);
	close(d->metrics_fd);
	unlink(d->metrics_path);
	d->metrics_fd = 0;
}
