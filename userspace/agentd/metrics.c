// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include "wire/accept.h"
#include "daemon.h"
#include "log.h"
#include "loop.h"
#include "metrics.h"
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
	int fd, err;

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
	if (d->metrics_fd <= 0)
		return;
	loop_del(d->loop, d->metrics_fd);
	close(d->metrics_fd);
	unlink(d->metrics_path);
	d->metrics_fd = 0;
}
