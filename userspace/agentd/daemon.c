// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon, agentd's one mode. One event loop (loop.c) serves the control socket, the
 * ring buffer and the audit writer's batch timer. Agents live under one parent cgroup, where
 * the cgroup programs are attached once; their state is kept in the state directory, so that a
 * restarted agentd re-adopts them. Stopping leaves every pin: enforcement goes on.
 */
#include <errno.h>
#include <time.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>
#include "wire/accept.h"
#include "audit_hold.h"
#include "kernel/cgroup.h"
#include "kernel/cglimits.h"
#include "daemon.h"
#include "grants.h"
#include "log.h"
#include "metrics.h"
#include "notify.h"
#include "server.h"
#include "services.h"
#include "stream.h"

#define POLL_MS 100
#define EVENTS_PER_PASS 4096

static volatile sig_atomic_t stop, hup;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_hup(int sig)
{
	(void)sig;
	hup = 1;
}

static void signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_hup;
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static int check_layers(struct daemon *d)
{
	d->lsm = probe_bpf_lsm_ok(&d->probe);
	if (d->lsm)
		return 0;
	if (!d->o->allow_partial) {
		log_err("BPF LSM is unavailable (agentd --probe): file, exec, socket-family and "
			"self-protection rules cannot be fully enforced; refusing to start "
			"(--allow-partial runs with cgroup-BPF, and Landlock and seccomp for "
			"agents "
			"started by agentctl run; docs/LAYERS.md)\n");
		return -EOPNOTSUPP;
	}
	log_warn("--allow-partial: BPF LSM is unavailable: network rules are enforced by "
		 "cgroup-BPF; file, exec, socket-family and self-protection rules by %s and "
		 "seccomp for agents started by agentctl run, with a gap that agentctl status "
		 "lists per agent (docs/LAYERS.md)\n",
		 d->probe.landlock_abi > 0 ? "Landlock" : "NOTHING (no Landlock here)");
	return 0;
}

static int open_audit(struct daemon *d)
{
	struct audit_writer_opts wo = { .committed = stream_committed,
					.hold = audit_hold_records,
					.ctx = d };
	int err;

	if (mkdir(d->o->state_dir, 0700) && errno != EEXIST) {
		log_err("state directory %s: %s\n", d->o->state_dir, strerror(errno));
		return -errno;
	}
	snprintf(d->audit_dir, sizeof(d->audit_dir), "%s",
		 d->o->audit_dir ? d->o->audit_dir : d->o->state_dir);
	if (!d->o->audit_dir)
		strncat(d->audit_dir, "/" PATH_AUDIT_DIR_NAME,
			sizeof(d->audit_dir) - strlen(d->audit_dir) - 1);
	d->sink.mono_to_real_ns = audit_mono_to_real_ns();
	err = stream_open(d);
	if (err)
		return err;
	err = audit_writer_open(&d->sink.audit, d->audit_dir, &wo);
	if (err)
		log_err("audit log in %s: %s\n", d->audit_dir, strerror(-err));
	return err;
}

/* The parent cgroup, with the cgroup programs attached once for every agent below it. */
/* cpu, memory and pids controllers for the agents' cgroups, where cgroup v2 has them. */
static int enable_limits(struct daemon *d)
{
	char root[PATH_MAX];
	int err = cgroup2_mount(root, sizeof(root));

	if (!err)
		err = limits_enable(root, d->cgroup, d->limits_missing, sizeof(d->limits_missing));
	if (err) {
		log_err("enabling controllers for %s: %s\n", d->cgroup, strerror(-err));
		return err;
	}
	if (d->limits_missing[0])
		log_warn("cgroup v2 offers no %s controller here: those limits are NOT ENFORCED\n",
			 d->limits_missing);
	return 0;
}

static int parent_cgroup(struct daemon *d)
{
	char real[PATH_MAX];
	int fd, err;

	if (d->o->cgroup) {
		snprintf(d->cgroup, sizeof(d->cgroup), "%s", d->o->cgroup);
	} else {
		err = cgroup2_mount(d->cgroup, sizeof(d->cgroup) - 8);
		if (err) {
			log_err("no cgroup v2 mount: %s\n", strerror(-err));
			return err;
		}
		strcat(d->cgroup, "/agentd");
	}
	if (mkdir(d->cgroup, 0755) && errno != EEXIST) {
		err = -errno;
		log_err("creating cgroup %s: %s\n", d->cgroup, strerror(-err));
		return err;
	}
	/* Canonical, so that attach can tell by path which cgroups are agentd's. */
	if (!realpath(d->cgroup, real)) {
		err = -errno;
		log_err("cgroup %s: %s\n", d->cgroup, strerror(-err));
		return err;
	}
	snprintf(d->cgroup, sizeof(d->cgroup), "%s", real);
	err = enable_limits(d);
	if (err)
		return err;
	fd = open(d->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = fd < 0 ? -errno : enforcer_attach_cgroup(d->e, fd);
	if (fd >= 0)
		close(fd);
	if (err)
		log_err("attaching cgroup programs to %s: %s\n", d->cgroup, strerror(-err));
	return err;
}

static void on_events(void *ctx, int fd, uint32_t events)
{
	(void)ctx;
	(void)fd;
	(void)events;
}

static int load(struct daemon *d)
{
	struct enforcer_opts eo = {
		.lsm = d->lsm,
		.pin_dir = d->o->pin_dir,
		.ring_bytes = d->o->ring_mb << 20,
		.on_event = sink_event,
		.ctx = &d->sink,
	};

	d->sink.quiet = !d->o->verbose;
	d->sink.budget = EVENTS_PER_PASS;
	int err = enforcer_load(&d->e, &eo);

	if (err) {
		log_err("loading the BPF programs: %s\n", strerror(-err));
		return err;
	}
	if (enforcer_ring_bytes(d->e) != d->o->ring_mb << 20)
		log_info("events ring buffer: %u MiB, as pinned in %s (asked %u MiB: agentd "
			 "--teardown, then start, to change it)\n",
			 enforcer_ring_bytes(d->e) >> 20, d->o->pin_dir, d->o->ring_mb);
	/* The programs' forced wakeup (a backlog past wakeup_bytes) ends the loop's wait: each
	 * pass consumes the ring, so the callback has nothing to do. */
	err = loop_add(d->loop, enforcer_events_fd(d->e), EPOLLIN, on_events, d);
	if (err) {
		log_err("watching the events ring buffer: %s\n", strerror(-err));
		return err;
	}
	err = parent_cgroup(d);
	if (err || !d->lsm)
		return err;
	err = enforcer_attach_lsm(d->e);
	if (err)
		log_err("attaching BPF LSM programs: %s\n", strerror(-err));
	return err;
}

/* Every second, and at stop: lost events become loss records (loss.c). */
static void report_drops(struct daemon *d, bool now)
{
	struct timespec ts;
	__u64 t;
	int i;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	t = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	if (!now && t < d->next_loss_check_ns)
		return;
	d->next_loss_check_ns = t + 1000000000ULL;
	for (i = 1; i < AGENTD_MAX_AGENTS; i++)
		if (d->agents[i])
			loss_check(&d->loss, d->e, d->sink.audit, i, d->agents[i]->st.name);
	agents_enforce_deadlines(d);
	grants_tick(d);
	audit_hold_update(d, true);
}

/* The next pass: at once with events waiting, at the earliest timer asked of the loop, and at
 * least every POLL_MS for the ticks (losses every second, deadlines). */
static int timeout_ms(struct daemon *d, bool more)
{
	int t = more ? 0 : POLL_MS, a = audit_writer_timeout_ms(d->sink.audit), l;

	if (a >= 0)
		loop_wake_within(d->loop, a);
	l = loop_take_timeout(d->loop);
	return l >= 0 && l < t ? l : t;
}

/*
 * The daemon's one loop: every fd (control socket, ring buffer, services, streams) is watched by
 * d->loop; each pass runs their callbacks, then the control clients (server_service()), then the
 * ticks that run every pass (ring buffer, losses, streams, audit writer).
 */
static int serve(struct daemon *d, struct server *srv)
{
	bool more = false;
	int r, err = 0;

	while (!err && !stop) {
		if (hup) {
			hup = 0;
			notify_reloading();
			agents_reload_all(d);
			notify_ready();
		}
		notify_pass(d->loop);
		err = loop_dispatch(d->loop, timeout_ms(d, more));
		if (err == -EINTR) {
			err = 0;
			continue;
		}
		if (err) {
			log_err("waiting for the control socket and the services: %s\n",
				strerror(-err));
			break;
		}
		server_service(srv);
		/* The programs wake nobody per event: the ring buffer is read every pass, a
		 * bounded number of events at a time (-EAGAIN: more are waiting). */
		d->sink.used = 0;
		r = enforcer_consume(d->e, 0);
		more = r == -EAGAIN;
		if (r >= 0)
			sink_drained(&d->sink);
		if (r < 0 && !more) {
			log_err("reading events: %s\n", strerror(-r));
			err = r;
			break;
		}
		report_drops(d, false);
		stream_tick(d);
		/* A log that cannot be written is the writer's to log and retry, and the agents'
		 * to wait for (audit_hold.c). */
		audit_writer_tick(d->sink.audit);
		audit_hold_update(d, false);
	}
	return err;
}

static int setup(struct daemon *d)
{
	int err = mount_kernel_fs();

	if (err) {
		log_err("mounting securityfs and bpffs: %s\n", strerror(-err));
		return err;
	}
	probe_kernel(&d->probe);
	err = accept_reserve();
	if (err)
		log_err("a descriptor in reserve for the listeners: %s\n", strerror(-err));
	if (!err)
		err = check_layers(d);
	if (!err)
		err = open_audit(d);
	if (!err)
		err = load(d);
	if (!err)
		err = services_start(d);
	if (!err)
		err = agents_adopt(d);
	if (!err)
		err = grants_start(d);
	if (!err)
		drill_sweep(d);
	if (!err) {
		err = metrics_start(d);
		if (err)
			log_err("metrics socket %s: %s\n", d->metrics_path, strerror(-err));
	}
	if (!err)
		err = metrics_listen_start(d);
	return err;
}

static int admit_peer(void *ctx, int fd, char *why, size_t whysz)
{
	return daemon_peer_refused(ctx, fd, why, whysz);
}

int daemon_run(const struct options *o)
{
	struct daemon *d = calloc(1, sizeof(*d));
	struct server *srv = NULL;
	int err;

	if (!d)
		return -ENOMEM;
	d->o = o;
	signals();
	err = loop_new(&d->loop);
	if (err) {
		log_err("epoll: %s\n", strerror(-err));
		free(d);
		return err;
	}
	err = setup(d);
	if (!err) {
		err = server_open(&srv, o->control, d->loop, agents_handle, d);
		if (err)
			log_err("control socket %s: %s\n", o->control, strerror(-err));
		else
			server_set_admit(srv, admit_peer);
	}
	if (err)
		goto out;
	daemon_audit(d, AUDIT_KIND_LIFECYCLE, "daemon-start", NULL, "pid=%d layers=%s",
		     (int)getpid(), d->lsm ? "bpf-lsm,cgroup-bpf" : "cgroup-bpf");
	printf("agentd: ready\n");
	fflush(stdout);
	notify_ready();
	err = serve(d, srv);
	notify_stopping();
	/* Whatever is still in the ring buffer goes to the log before it closes. */
	d->sink.budget = 0;
	enforcer_consume(d->e, 0);
	report_drops(d, true);
	audit_hold_release(d);
	daemon_audit(d, AUDIT_KIND_LIFECYCLE, "daemon-stop", NULL,
		     "pid=%d enforcement continues (pinned in %s)", (int)getpid(), o->pin_dir);
	log_info("stopping; the agents stay enforced (pins in %s)\n", o->pin_dir);
out:
	metrics_stop(d);
	server_close(srv);
	agents_free(d);
	services_stop(d);
	if (d->e)
		loop_del(d->loop, enforcer_events_fd(d->e));
	enforcer_destroy(d->e);
	if (audit_writer_close(d->sink.audit) && !err)
		err = -EIO;
	stream_close(d);
	loop_free(d->loop);
	free(d);
	return err;
}
