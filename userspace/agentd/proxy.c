// SPDX-License-Identifier: GPL-2.0
/*
 * The egress proxy, the daemon's half: it starts the unprivileged worker (agentd-worker proxy,
 * userspace/workers/proxy.c) through the spawn helper and
 * keeps, per agent, a loopback listener on a stable port (recorded in
 * <state_dir>/proxy/<name>.port, so the agent's HTTP_PROXY outlives a restart of agentd) and the
 * kernel endpoint that lets that agent, and no other, reach it. The worker's reports become
 * net audit records here. The daemon never touches an agent's bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include "kernel/cgroup.h"
#include "daemon.h"
#include "log.h"
#include "proxy.h"
#include "spawn.h"
#include "wire/unixsock.h"

#define RESPAWN_MIN_MS 1000

struct proxy_agent {
	int lfd;
	__u16 port;
	struct proxy_stats stats;
};

static struct {
	char name[PROXY_REASONS_MAX][sizeof(((struct proxy_report *)0)->why)];
	unsigned n;
} reasons;

static struct {
	char path[PATH_MAX]; /* agentd-worker */
	pid_t pid;
	int fd; /* the worker's socket; -1 when none */
	__u64 spawned_ms;
	int respawns;
} worker = { .fd = -1 };

static const __u8 loopback4[16] = { [10] = 0xff, [11] = 0xff, [12] = 127, [15] = 1 };

static __u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

static void port_path(const struct daemon *d, const char *name, char *buf, size_t bufsz)
{
	snprintf(buf, bufsz, "%s/proxy/%s.port", d->o->state_dir, name);
}

static __u16 port_load(const struct daemon *d, const char *name)
{
	char path[PATH_MAX], buf[16] = "";
	unsigned long v;
	char *end;
	FILE *f;

	port_path(d, name, path, sizeof(path));
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	v = strtoul(buf, &end, 10);
	return (end != buf && (*end == '\n' || !*end) && v < 65536) ? v : 0;
}

/* Written whole and renamed into place. */
static int port_save(const struct daemon *d, const char *name, __u16 port)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	int err = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/proxy", d->o->state_dir);
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	port_path(d, name, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	if (fprintf(f, "%u\n", port) < 0 || fflush(f) || fsync(fileno(f)))
		err = -EIO;
	if (fclose(f) && !err)
		err = -EIO;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

static int listen_on(__u16 port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 128)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* The port recorded for the agent when it is free, else a new one (and the agent's
 * HTTP_PROXY changes: said in the log). */
static int open_listener(struct daemon *d, const struct agent *a, struct proxy_agent *p)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	__u16 want = port_load(d, a->st.name);
	int fd = want ? listen_on(want) : -1;

	if (want && fd < 0) {
		/* Whoever holds the port now is not agentd: the agent must not reach it. */
		enforcer_remove_endpoint(d->e, a->st.id, loopback4, want, AGENTD_PROTO_TCP);
		log_warn("agent %s: proxy port %u is taken (%s); choosing another: its HTTP_PROXY "
			 "changes\n",
			 a->st.name, want, strerror(-fd));
	}
	if (fd < 0)
		fd = listen_on(0);
	if (fd < 0)
		return fd;
	if (getsockname(fd, (struct sockaddr *)&sa, &len)) {
		close(fd);
		return -errno;
	}
	p->lfd = fd;
	p->port = ntohs(sa.sin_port);
	return 0;
}

/* The cgroups whose sockets may use the agent's listener: its own and its attached ones. A
 * cgroup whose id cannot be read is left out (its processes are refused), said in the log. */
static void order_cgroups(const struct agent *a, struct proxy_msg *m)
{
	size_t k;
	__u64 id;
	int err;

	for (k = 0; k <= a->st.ncgroups && m->ncgroups < PROXY_CGROUPS_MAX; k++) {
		const char *cg = k ? a->st.cgroups[k - 1] : a->cgroup;

		err = cgroup_id(cg, &id);
		if (err)
			log_warn("agent %s: cgroup %s: %s: its processes cannot use the proxy\n",
				 a->st.name, cg, strerror(-err));
		else
			m->cgroups[m->ncgroups++] = id;
	}
}

/* The agent's allowlist, ports and cgroups as one message (with the listener fd for
 * PROXY_MSG_UP). An agent whose policy does not load gets no host and no port. */
static int send_order(const struct agent *a, enum proxy_msg_type type, int lfd)
{
	const struct policy *p = type != PROXY_MSG_DOWN ? a->policy : NULL;
	struct proxy_msg *m;
	size_t len = 0, i, n = 0;
	ssize_t sent;

	if (worker.fd < 0)
		return -ESRCH;
	for (i = 0; p && i < p->net.n_proxy_hosts; i++)
		len += strlen(p->net.proxy_hosts[i]) + 1;
	if (len > PROXY_MSG_MAX)
		return -E2BIG;
	m = calloc(1, sizeof(*m) + len);
	if (!m)
		return -ENOMEM;
	*m = (struct proxy_msg){ .type = type, .agent = a->st.id, .len = len };
	if (!a->policy)
		m->flags |= PROXY_F_NO_POLICY;
	for (i = 0; p && i < p->net.n_proxy_hosts; i++) {
		strcpy(m->hosts + n, p->net.proxy_hosts[i]);
		n += strlen(p->net.proxy_hosts[i]) + 1;
	}
	for (i = 0; p && i < p->net.n_proxy_ports && i < PROXY_PORTS_MAX; i++)
		m->ports[m->nports++] = p->net.proxy_ports[i];
	if (type != PROXY_MSG_DOWN)
		order_cgroups(a, m);
	sent = unix_send_fd(worker.fd, m, sizeof(*m) + len, lfd, MSG_NOSIGNAL);
	free(m);
	return sent < 0 ? (int)sent : 0;
}

static void audit_report(struct daemon *d, const struct proxy_report *rep)
{
	const struct agent *a = rep->agent < AGENTD_MAX_AGENTS ? d->agents[rep->agent] : NULL;
	struct audit_record *r;
	int err;

	if (!d->sink.audit)
		return;
	r = calloc(1, sizeof(*r));
	if (!r)
		return;
	r->kind = AUDIT_KIND_NET;
	snprintf(r->op, sizeof(r->op), "proxy");
	r->agent = rep->agent;
	if (a)
		snprintf(r->agent_name, sizeof(r->agent_name), "%s", a->st.name);
	snprintf(r->path, sizeof(r->path), "%s", rep->host);
	if (rep->has_addr) {
		r->has |= AUDIT_HAS_NET;
		snprintf(r->family, sizeof(r->family), "%s", rep->family);
		snprintf(r->addr, sizeof(r->addr), "%s", rep->addr);
		r->port = rep->port;
	}
	r->decision = rep->status == 200 ? AUDIT_DECISION_ALLOW : AUDIT_DECISION_DENY;
	snprintf(r->detail, sizeof(r->detail), "status=%u%s%s port=%u up=%llu down=%llu",
		 rep->status, rep->why[0] ? " why=" : "", rep->why, rep->port,
		 (unsigned long long)rep->up, (unsigned long long)rep->down);
	err = audit_writer_append(d->sink.audit, r);
	if (err)
		log_err("audit log: proxy record: %s\n", strerror(-err));
	free(r);
}

/* The worker is less trusted than the daemon (it reads agents' bytes): its reports are checked
 * like any input, strings bounded before use. */
static bool report_ok(struct proxy_report *rep)
{
	rep->family[sizeof(rep->family) - 1] = '\0';
	rep->addr[sizeof(rep->addr) - 1] = '\0';
	rep->host[sizeof(rep->host) - 1] = '\0';
	rep->why[sizeof(rep->why) - 1] = '\0';
	return rep->agent && rep->agent < AGENTD_MAX_AGENTS;
}

/* The report's counts, on its agent's proxy (none once the agent is down). */
static void count_report(struct daemon *d, const struct proxy_report *rep)
{
	struct proxy_agent *p = d->agents[rep->agent] ? d->agents[rep->agent]->proxy : NULL;
	const char *why = rep->why[0] ? rep->why : "unknown";
	unsigned i;

	if (!p)
		return;
	p->stats.bytes_up += rep->up;
	p->stats.bytes_down += rep->down;
	if (rep->status == 200) {
		p->stats.relayed++;
		return;
	}
	p->stats.refused++;
	for (i = 0; i < reasons.n && strcmp(reasons.name[i], why); i++)
		;
	if (i == reasons.n && i < PROXY_REASONS_MAX)
		snprintf(reasons.name[reasons.n++], sizeof(reasons.name[0]), "%s", why);
	p->stats.refusals[i]++;
}

const struct proxy_stats *proxy_agent_stats(const struct agent *a)
{
	const struct proxy_agent *p = a->proxy;

	return p ? &p->stats : NULL;
}

const char *proxy_reason(unsigned i)
{
	if (i >= PROXY_REASONS_MAX)
		return i == PROXY_REASONS_MAX ? "other" : NULL;
	return i < reasons.n ? reasons.name[i] : NULL;
}

static int spawn(struct daemon *d);

static void worker_gone(struct daemon *d)
{
	int status, i;

	loop_del(d->loop, worker.fd);
	close(worker.fd);
	worker.fd = -1;
	waitpid(worker.pid, &status, 0);
	log_err("proxy worker %d ended (status %#x)\n", (int)worker.pid, status);
	worker.pid = 0;
	if (now_ms() - worker.spawned_ms < RESPAWN_MIN_MS) {
		log_err("proxy worker dies at start: the egress proxy is down, every agent's proxy "
			"connections wait unanswered\n");
		return;
	}
	if (spawn(d))
		return;
	worker.respawns++;
	for (i = 1; i < AGENTD_MAX_AGENTS; i++) {
		struct proxy_agent *p = d->agents[i] ? d->agents[i]->proxy : NULL;

		if (p && send_order(d->agents[i], PROXY_MSG_UP, p->lfd))
			log_err("agent %s: proxy listener not passed to the new worker\n",
				d->agents[i]->st.name);
	}
}

static void on_worker(void *ctx, int fd, uint32_t events)
{
	struct daemon *d = ctx;
	struct proxy_report rep;
	ssize_t n;

	for (;;) {
		n = recv(fd, &rep, sizeof(rep), MSG_DONTWAIT | MSG_TRUNC);
		if (n == sizeof(rep) && report_ok(&rep)) {
			audit_report(d, &rep);
			count_report(d, &rep);
		} else if (n > 0)
			log_err("proxy worker: malformed report (%zd bytes), ignoring\n", n);
		else
			break;
	}
	if (!n || (n < 0 && errno != EAGAIN) || (events & (EPOLLHUP | EPOLLERR)))
		worker_gone(d);
}

/* agentd-worker proxy IDLE-MS, exec'd by the one spawn helper, its channel as fd PROXY_FD. */
static int spawn(struct daemon *d)
{
	static const struct timeval order_timeout = { .tv_sec = 1 };
	char idle[16];
	char *argv[] = { "agentd-worker", "proxy", idle, NULL };
	int fd, err;
	pid_t pid;

	_Static_assert(PROXY_FD == SPAWN_CHAN_FD, "the proxy worker's channel");
	snprintf(idle, sizeof(idle), "%u", d->o->proxy_idle_sec * 1000);
	err = spawn_worker(d->loop, "proxy worker", worker.path, argv, SOCK_SEQPACKET, &pid, &fd);
	if (err)
		return err;
	/* Orders are small and the worker reads them at once; a hung worker must not hang the
	 * daemon's loop either. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &order_timeout, sizeof(order_timeout));
	worker.pid = pid;
	worker.fd = fd;
	worker.spawned_ms = now_ms();
	err = loop_add(d->loop, fd, EPOLLIN, on_worker, d);
	if (err) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(fd);
		worker.fd = -1;
	}
	return err;
}

int proxy_start(struct daemon *d)
{
	int err = spawn_path("agentd-worker", worker.path, sizeof(worker.path));

	if (!err)
		err = spawn(d);

	if (err)
		log_err("starting the proxy worker: %s\n", strerror(-err));
	return err;
}

void proxy_stop(struct daemon *d)
{
	if (worker.fd < 0)
		return;
	loop_del(d->loop, worker.fd);
	/* The worker ends when its socket closes. */
	close(worker.fd);
	worker.fd = -1;
	waitpid(worker.pid, NULL, 0);
}

int proxy_agent_up(struct daemon *d, struct agent *a, char *why, size_t whysz)
{
	struct proxy_agent *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	err = open_listener(d, a, p);
	if (err) {
		snprintf(why, whysz, "proxy listener: %s", strerror(-err));
		free(p);
		return err;
	}
	err = port_save(d, a->st.name, p->port);
	if (err)
		snprintf(why, whysz, "recording the proxy port: %s", strerror(-err));
	if (!err) {
		err = enforcer_add_endpoint(d->e, a->st.id, loopback4, p->port, AGENTD_PROTO_TCP);
		if (err)
			snprintf(why, whysz, "proxy endpoint: %s", strerror(-err));
	}
	if (!err) {
		err = send_order(a, PROXY_MSG_UP, p->lfd);
		if (err) {
			snprintf(why, whysz, "passing the proxy listener: %s", strerror(-err));
			enforcer_remove_endpoint(d->e, a->st.id, loopback4, p->port,
						 AGENTD_PROTO_TCP);
		}
	}
	if (err) {
		close(p->lfd);
		free(p);
		return err;
	}
	a->proxy = p;
	return 0;
}

void proxy_agent_reloaded(struct daemon *d, struct agent *a)
{
	int err;

	(void)d;
	if (!a->proxy)
		return;
	err = send_order(a, PROXY_MSG_HOSTS, -1);
	if (err)
		log_err("agent %s: proxy allowlist not replaced: %s\n", a->st.name, strerror(-err));
}

void proxy_agent_down(struct daemon *d, struct agent *a)
{
	struct proxy_agent *p = a->proxy;
	char path[PATH_MAX];

	if (!p)
		return;
	send_order(a, PROXY_MSG_DOWN, -1);
	enforcer_remove_endpoint(d->e, a->st.id, loopback4, p->port, AGENTD_PROTO_TCP);
	close(p->lfd);
	/* Removed (its state file is gone), not the daemon stopping: its port is forgotten. */
	snprintf(path, sizeof(path), "%s/agents/%s.json", d->o->state_dir, a->st.name);
	if (access(path, F_OK) && errno == ENOENT) {
		port_path(d, a->st.name, path, sizeof(path));
		unlink(path);
	}
	free(p);
	a->proxy = NULL;
}

void proxy_agent_json(struct daemon *d, const struct agent *a, json_t *obj)
{
	const struct proxy_agent *p = a->proxy;
	char url[64];

	(void)d;
	if (!p)
		return;
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", p->port);
	json_object_set_new(obj, "proxy", json_string(url));
}

void proxy_status_json(struct daemon *d, json_t *reply)
{
	(void)d;
	json_object_set_new(reply, "proxy",
			    json_pack("{s:b, s:i, s:i, s:i}", "running", worker.fd >= 0, "pid",
				      (int)worker.pid, "uid", PROXY_WORKER_UID, "respawns",
				      worker.respawns));
}
