// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
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
	static const char *const decisions[AUDIT_DECISION_MAX] = { NULL, "allow", "deny",
								   "would-deny" };
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

/*
 * A scrape in progress: a client of metrics.sock (raw: the exposition alone, sent at once) or of
 * --metrics-listen (HTTP: the request read first). Either is sent as the socket takes it, in the
 * daemon's loop, within a deadline.
 */
#define SCRAPES_MAX 4 /* at once per listener; more are refused (HTTP: 503) and closed */
#define SCRAPE_DEADLINE_SEC 5 /* for the whole exchange: the request read, the response sent */

struct scrape {
	struct daemon *d;
	int fd, timer; /* -1: the slot is free */
	bool raw;
	char head[PROM_HTTP_HEAD_MAX];
	size_t len;
	struct metrics_buf out; /* the response; out.s + sent is what is left to send */
	size_t sent;
};

static struct {
	bool ready; /* the slots are marked free */
	int http_lfd; /* -1: not listening */
	struct scrape slots[2 * SCRAPES_MAX]; /* metrics.sock's, then --metrics-listen's */
} scrapes;

static void scrape_close(struct scrape *c)
{
	loop_del(c->d->loop, c->fd);
	loop_del(c->d->loop, c->timer);
	close(c->fd);
	close(c->timer);
	metrics_buf_free(&c->out);
	c->fd = c->timer = -1;
	c->len = c->sent = 0;
}

/* Sends what the socket takes; closes once all is sent or the peer is gone. */
static void scrape_send(struct scrape *c)
{
	ssize_t n;

	while (c->sent < c->out.len) {
		n = send(c->fd, c->out.s + c->sent, c->out.len - c->sent,
			 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EAGAIN) {
			loop_mod(c->d->loop, c->fd, EPOLLOUT);
			return;
		}
		if (n <= 0)
			break;
		c->sent += n;
	}
	if (c->sent < c->out.len)
		log_debug("metrics: a scraper left after %zu of %zu bytes\n", c->sent, c->out.len);
	scrape_close(c);
}

/* The response: the exposition (behind an HTTP head unless raw) for 200, for HTTP a line saying
 * why otherwise. */
static void scrape_respond(struct scrape *c, int status)
{
	static const char refused[] = "agentd serves GET /metrics only\n";
	struct metrics_buf body = { 0 };
	const char *text = refused;
	size_t len = sizeof(refused) - 1;
	char head[256];
	int n = 0;

	if (status == 200) {
		collect(c->d, &body);
		status = body.err ? 503 : 200;
		text = body.err ? "" : body.s;
		len = body.err ? 0 : body.len;
	}
	if (!c->raw)
		n = prom_http_head(status, len, head, sizeof(head));
	c->out.s = n < 0 || (c->raw && body.err) ? NULL : malloc(n + len);
	if (c->out.s) {
		memcpy(c->out.s, head, n);
		memcpy(c->out.s + n, text, len);
		c->out.len = n + len;
	}
	metrics_buf_free(&body);
	if (!c->out.s) {
		log_warn("metrics: no memory for a scrape\n");
		scrape_close(c);
		return;
	}
	loop_mod(c->d->loop, c->fd, 0);
	scrape_send(c);
}

static void on_scrape(void *ctx, int fd, uint32_t events)
{
	struct scrape *c = ctx;
	ssize_t n;
	int status;

	(void)fd;
	if (c->out.s) {
		scrape_send(c);
		return;
	}
	n = recv(c->fd, c->head + c->len, sizeof(c->head) - c->len, MSG_DONTWAIT);
	if (n < 0 && errno == EAGAIN && !(events & (EPOLLHUP | EPOLLERR)))
		return;
	if (n <= 0) {
		scrape_close(c);
		return;
	}
	c->len += n;
	status = prom_http_request(c->head, c->len);
	if (status)
		scrape_respond(c, status);
}

static void on_scrape_deadline(void *ctx, int fd, uint32_t events)
{
	struct scrape *c = ctx;

	(void)fd;
	(void)events;
	log_debug("metrics: a scrape took longer than %d s: closed\n", SCRAPE_DEADLINE_SEC);
	scrape_close(c);
}

/* A free slot of its listener's for fd, watched with a timerfd at its deadline; NULL when none
 * is free (or the watches fail): the caller closes fd. A silent scraper of one listener never
 * holds the other's. */
static struct scrape *scrape_new(struct daemon *d, int fd, bool raw)
{
	struct itimerspec at = { .it_value.tv_sec = SCRAPE_DEADLINE_SEC };
	struct scrape *c = NULL;
	int i = raw ? 0 : SCRAPES_MAX;

	for (; i < (raw ? SCRAPES_MAX : 2 * SCRAPES_MAX) && !c; i++)
		if (scrapes.slots[i].fd < 0)
			c = &scrapes.slots[i];
	if (!c)
		return NULL;
	*c = (struct scrape){ .d = d, .fd = fd, .raw = raw };
	c->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (c->timer < 0)
		goto free_slot;
	if (timerfd_settime(c->timer, 0, &at, NULL) ||
	    loop_add(d->loop, c->timer, EPOLLIN, on_scrape_deadline, c))
		goto close_timer;
	if (loop_add(d->loop, fd, raw ? 0 : EPOLLIN, on_scrape, c))
		goto del_timer;
	return c;
del_timer:
	loop_del(d->loop, c->timer);
close_timer:
	close(c->timer);
free_slot:
	c->fd = c->timer = -1;
	return NULL;
}

/* metrics.sock: the peer checked, then the exposition. */
static void on_client(void *ctx, int lfd, uint32_t events)
{
	struct daemon *d = ctx;
	struct scrape *c;
	char why[128];
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
	c = scrape_new(d, fd, true);
	if (!c) {
		log_warn("metrics: %d scrapes in progress: a client refused\n", SCRAPES_MAX);
		close(fd);
		return;
	}
	scrape_respond(c, 200);
}

/* --metrics-listen: the request first. */
static void on_http_client(void *ctx, int lfd, uint32_t events)
{
	static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
				   "Connection: close\r\n\r\n";
	struct daemon *d = ctx;
	int fd;

	(void)events;
	fd = accept_shedding(lfd, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0 || scrape_new(d, fd, false))
		return;
	if (send(fd, busy, sizeof(busy) - 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		log_debug("metrics: refusing a scrape: %s\n", strerror(errno));
	close(fd);
}

/* The --metrics-listen listener, when asked for; logs its own failure. */
int metrics_listen_start(struct daemon *d)
{
	const struct sockaddr *sa = (const struct sockaddr *)&d->o->metrics_addr;
	int fd, err, one = 1;

	if (!d->o->metrics_listen)
		return 0;
	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		err = -errno;
		goto fail;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, sa, d->o->metrics_addr_len) || listen(fd, 16)) {
		err = -errno;
		goto close_fd;
	}
	err = loop_add(d->loop, fd, EPOLLIN, on_http_client, d);
	if (err)
		goto close_fd;
	scrapes.http_lfd = fd;
	log_info("metrics: serving GET /metrics on %s\n", d->o->metrics_listen);
	return 0;
close_fd:
	close(fd);
fail:
	log_err("--metrics-listen %s: %s\n", d->o->metrics_listen, strerror(-err));
	return err;
}

/* metrics.sock beside the control socket. */
int metrics_start(struct daemon *d)
{
	int fd, err, i;

	for (i = 0; i < 2 * SCRAPES_MAX; i++)
		scrapes.slots[i].fd = scrapes.slots[i].timer = -1;
	scrapes.http_lfd = -1;
	scrapes.ready = true;
	fd = path_beside(d->o->control, PATH_METRICS_SOCK_NAME, d->metrics_path,
			 sizeof(d->metrics_path));
	if (!fd)
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
	int i;

	for (i = 0; scrapes.ready && i < 2 * SCRAPES_MAX; i++)
		if (scrapes.slots[i].fd >= 0)
			scrape_close(&scrapes.slots[i]);
	if (scrapes.ready && scrapes.http_lfd >= 0) {
		loop_del(d->loop, scrapes.http_lfd);
		close(scrapes.http_lfd);
		scrapes.http_lfd = -1;
	}
	if (d->metrics_fd <= 0)
		return;
	loop_del(d->loop, d->metrics_fd);
	close(d->metrics_fd);
	unlink(d->metrics_path);
	d->metrics_fd = 0;
}
