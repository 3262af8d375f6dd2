// SPDX-License-Identifier: GPL-2.0
/*
 * agentd: the privileged host daemon. With --agent-cgroup it confines one agent cgroup given on
 * the command line: self-protection and the structural network deny always, and a policy or,
 * with --deny-open, files it may not open. Without it, it is the daemon (daemon.c): agents are
 * added and removed over the control socket. Each decision the kernel reports is printed on
 * stdout, one line each.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "agentd/abi.h"
#include "cgroup.h"
#include "event.h"
#include "agentd.h"
#include "loss.h"
#include "log.h"
#include "probe.h"
#include "rules.h"

#define POLL_MS 100

static volatile sig_atomic_t stop;
static struct loss_tracker loss;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: agentd --probe [--json]\n"
		"       agentd --agent-cgroup PATH [--deny-open FILE]... [--audit-dir DIR] [-v]\n"
		"       agentd --agent-cgroup PATH --policy FILE [--var NAME=VALUE]...\n"
		"              [--tools FILE] [--audit-dir DIR] [-v]\n"
		"       agentd [--control PATH] [--state-dir DIR] [--audit-dir DIR]\n"
		"              [--pin-dir DIR] [--cgroup DIR] [--allow-partial]\n"
		"              [--stream PATH] [--stream-group GROUP]\n"
		"              [--proxy-idle-timeout SECONDS] [--ring-buffer-mb N] [-v]\n"
		"       agentd --teardown\n"
		"\n"
		"  --probe           report what this kernel can enforce (BPF LSM with a trial\n"
		"                    load, cgroup v2 and its controllers, Landlock ABI, seccomp,\n"
		"                    no_new_privs, user namespaces); exit 0 when full enforcement\n"
		"                    is possible (BPF LSM, cgroup-BPF, seccomp), 1 when it is "
		"not:\n"
		"                    agentd then needs --allow-partial, and agentctl policy check\n"
		"                    --layers says what a policy loses (docs/LAYERS.md)\n"
		"  --agent-cgroup    cgroup v2 directory whose tasks form the agent: self-\n"
		"                    protection and the structural network deny apply to it\n"
		"  --deny-open       a file the agent may not open (EPERM), all else allowed;\n"
		"                    needs BPF LSM\n"
		"  --policy          the agent's policy (docs/POLICY.md); needs BPF LSM\n"
		"  --var, --tools    as for agentctl policy check\n"
		"  --audit-dir       append every decision to the audit log there (docs/AUDIT.md)\n"
		"  --pin-dir DIR     bpffs directory for pinned programs and maps (default\n"
		"                    " DEFAULT_PIN_DIR "): enforcement outlives agentd, and a\n"
		"                    restarted agentd adopts it, pending events included\n"
		"  --teardown        unpin everything in the pin directory: enforcement ends\n"
		"\n"
		"daemon mode (no --agent-cgroup): agents are added, run and removed with agentctl\n"
		"  --control PATH    control socket (default " DEFAULT_CONTROL ")\n"
		"  --state-dir DIR   agents' state, re-adopted at start (default " DEFAULT_STATE_DIR
		")\n"
		"  --audit-dir DIR   the audit log (default STATE-DIR/audit)\n"
		"  --cgroup DIR      parent of the agents' cgroups (default CGROUP2-MOUNT/agentd)\n"
		"  --allow-partial   start without BPF LSM: network rules by cgroup-BPF, file,\n"
		"                    exec and self-protection rules by Landlock and seccomp for\n"
		"                    agents started by agentctl run, with a gap that agentctl\n"
		"                    status lists (docs/LAYERS.md)\n"
		"  --stream PATH     the live audit stream socket (default: audit.sock beside\n"
		"                    the control socket), root only (0600)\n"
		"  --stream-group G  the stream socket is 0660 and group G's: its members may\n"
		"                    subscribe (the socket's directory must let them in)\n"
		"  --proxy-idle-timeout SECONDS\n"
		"                    the egress proxy closes a tunnel or forwarded connection\n"
		"                    silent both ways this long (1-86400, default 600)\n"
		"  --ring-buffer-mb N\n"
		"                    the kernel's events ring buffer, MiB: a power of two, 1-1024\n"
		"                    (default 32); one pinned already keeps its size\n"
		"  SIGHUP reloads every agent's policy; SIGTERM stops, enforcement stays;\n"
		"  decisions go to the audit log (and, with -v, one line each on stdout)\n"
		"  -v, --verbose     debug logging, libbpf's included\n"
		"\n"
		"exit status: 0 success, 1 full enforcement not possible here (--probe), 2 usage,\n"
		"3 failure\n");
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "probe", no_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "agent-cgroup", required_argument, NULL, 'c' },
		{ "deny-open", required_argument, NULL, 'd' },
		{ "policy", required_argument, NULL, 'P' },
		{ "var", required_argument, NULL, 'V' },
		{ "tools", required_argument, NULL, 'T' },
		{ "audit-dir", required_argument, NULL, 'A' },
		{ "pin-dir", required_argument, NULL, 'D' },
		{ "teardown", no_argument, NULL, 'X' },
		{ "control", required_argument, NULL, 'S' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "cgroup", required_argument, NULL, 'G' },
		{ "allow-partial", no_argument, NULL, 'a' },
		{ "stream", required_argument, NULL, 'L' },
		{ "stream-group", required_argument, NULL, 'g' },
		{ "proxy-idle-timeout", required_argument, NULL, 'I' },
		{ "ring-buffer-mb", required_argument, NULL, 'R' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	enum log_level level = LOG_INFO;
	unsigned long v;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "jvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->probe = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'c':
			o->agent_cgroup = optarg;
			break;
		case 'd':
			if (o->ndeny == MAX_DENY) {
				log_err("at most %d --deny-open\n", MAX_DENY);
				return -EINVAL;
			}
			o->deny[o->ndeny++] = optarg;
			break;
		case 'P':
			o->policy = optarg;
			break;
		case 'V':
			if (o->nvars == MAX_VARS || !strchr(optarg, '=')) {
				log_err("--var NAME=VALUE, at most %d\n", MAX_VARS);
				return -EINVAL;
			}
			*strchr(optarg, '=') = '\0';
			o->vars[o->nvars].name = optarg;
			o->vars[o->nvars].value = optarg + strlen(optarg) + 1;
			o->nvars++;
			break;
		case 'T':
			o->tools = optarg;
			break;
		case 'A':
			o->audit_dir = optarg;
			break;
		case 'D':
			o->pin_dir = optarg;
			break;
		case 'X':
			o->teardown = true;
			break;
		case 'S':
			o->control = optarg;
			break;
		case 's':
			o->state_dir = optarg;
			break;
		case 'G':
			o->cgroup = optarg;
			break;
		case 'a':
			o->allow_partial = true;
			break;
		case 'L':
			o->stream = optarg;
			break;
		case 'g':
			o->stream_group = optarg;
			break;
		case 'I':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || *optarg == '-' || v < 1 ||
			    v > 86400) {
				log_err("--proxy-idle-timeout \"%s\": expected seconds, 1 to "
					"86400\n",
					optarg);
				return -EINVAL;
			}
			o->proxy_idle_sec = (unsigned)v;
			break;
		case 'R':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || *optarg == '-' || v < 1 || v > 1024 ||
			    (v & (v - 1))) {
				log_err("--ring-buffer-mb \"%s\": expected a power of two, 1 to "
					"1024\n",
					optarg);
				return -EINVAL;
			}
			o->ring_mb = (unsigned)v;
			break;
		case 'v':
			level = LOG_DEBUG;
			o->verbose = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -EINVAL;
		}
	}
	log_init("agentd", level);
	if (!o->pin_dir)
		o->pin_dir = DEFAULT_PIN_DIR;
	if (!o->control)
		o->control = DEFAULT_CONTROL;
	if (!o->state_dir)
		o->state_dir = DEFAULT_STATE_DIR;
	if (!o->proxy_idle_sec)
		o->proxy_idle_sec = DEFAULT_PROXY_IDLE_SEC;
	if (!o->ring_mb)
		o->ring_mb = ENFORCER_RING_BYTES_DEFAULT >> 20;
	/* Without --agent-cgroup, policies come over the control socket, not the command line. */
	if (optind != argc || (o->policy && o->ndeny) ||
	    (!o->agent_cgroup && (o->policy || o->ndeny || o->nvars || o->tools)) ||
	    (o->agent_cgroup && (o->stream || o->stream_group))) {
		usage(stderr);
		return -EINVAL;
	}
	return 0;
}

static int do_teardown(const struct options *o)
{
	int err = enforcer_teardown(o->pin_dir);

	if (err) {
		log_err("teardown of %s: %s\n", o->pin_dir, strerror(-err));
		return 3;
	}
	log_info("unpinned %s: agentd's programs are detached once no process holds them\n",
		 o->pin_dir);
	return 0;
}

static int do_probe(const struct options *o)
{
	struct probe p;

	/* Failure to mount is recorded by the probe itself, as an unreadable LSM list. */
	mount_kernel_fs();
	probe_kernel(&p);
	if (o->json)
		probe_print_json(stdout, &p);
	else
		probe_print(stdout, &p);
	return probe_full_enforcement(&p) ? 0 : 1;
}

static void report_layers(struct enforcer *e, bool lsm)
{
	const char *const *missing;

	if (!lsm) {
		log_warn(
			"BPF LSM is unavailable (agentd --probe): file, exec, socket-family and "
			"self-protection rules are NOT enforced; network rules are (cgroup-BPF)\n");
		return;
	}
	for (missing = enforcer_missing_hooks(e); *missing; missing++)
		log_warn("this kernel has no LSM hook %s: not enforced\n", *missing);
}

static int open_audit(const struct options *o, struct sink *sink)
{
	int err;

	sink->mono_to_real_ns = audit_mono_to_real_ns();
	if (!o->audit_dir)
		return 0;
	err = audit_writer_open(&sink->audit, o->audit_dir, NULL);
	if (err)
		log_err("audit log in %s: %s\n", o->audit_dir, strerror(-err));
	return err;
}

/*
 * Single-agent mode's mount watch (daemon mode has mount_watch.c): a mount table change since
 * the last look (POLLPRI on /proc/self/mountinfo) refreshes the agent's mount roots. Looked at
 * once per pass of the loop, so within about POLL_MS of the change.
 */
static void follow_mounts(struct enforcer *e, int mountinfo_fd)
{
	struct pollfd pfd = { .fd = mountinfo_fd, .events = POLLPRI };
	int err;

	if (mountinfo_fd < 0 || poll(&pfd, 1, 0) <= 0 || !(pfd.revents & (POLLPRI | POLLERR)))
		return;
	err = rules_refresh_mounts(e, AGENT_ID);
	if (err) {
		log_warn("mount roots not refreshed (%s): file systems mounted since the policy "
			 "loaded refuse utimes, xattrs and ACLs\n",
			 strerror(-err));
		return;
	}
	printf("agentd: mount roots refreshed\n");
	fflush(stdout);
}

/* Opened before the policy's rules read the mount table: a change after that read is seen. */
static int open_mountinfo(bool lsm)
{
	int fd;

	if (!lsm)
		return -1;
	fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		log_warn("opening /proc/self/mountinfo: %s: mounts made from now on are not "
			 "followed\n",
			 strerror(errno));
	return fd;
}

static int serve(struct enforcer *e, struct sink *sink, int mountinfo_fd)
{
	int err, timeout;

	while (!stop) {
		follow_mounts(e, mountinfo_fd);
		timeout = sink->audit ? audit_writer_timeout_ms(sink->audit) : -1;
		err = enforcer_consume(e, timeout >= 0 && timeout < POLL_MS ? timeout : POLL_MS);
		if (err < 0) {
			log_err("reading events: %s\n", strerror(-err));
			return err;
		}
		/* Lost events become loss records as they happen (about every 100 ms). */
		loss_check(&loss, e, sink->audit, AGENT_ID);
		err = sink->audit ? audit_writer_tick(sink->audit) : 0;
		if (err)
			log_err("audit log: %s\n", strerror(-err));
	}
	return 0;
}

static int run(const struct options *o)
{
	struct enforcer_opts eo = { .pin_dir = o->pin_dir, .ring_bytes = o->ring_mb << 20 };
	struct agent_rules rules = {};
	struct sink sink = {};
	struct enforcer *e = NULL;
	int err, mountinfo_fd = -1;
	struct probe p;

	err = mount_kernel_fs();
	if (err)
		return err;
	probe_kernel(&p);
	eo.lsm = probe_bpf_lsm_ok(&p);
	if (!eo.lsm && (o->ndeny || o->policy)) {
		log_err("file and exec rules need BPF LSM, which this kernel does not run (agentd "
			"--probe): refusing to start rather than run unconfined\n");
		return -EOPNOTSUPP;
	}
	/* The policy first: refused, it leaves nothing loaded, pinned or written. */
	err = agent_rules_prepare(o, &rules);
	if (err)
		goto out_rules;
	err = open_audit(o, &sink);
	if (err)
		goto out_rules;
	eo.on_event = sink_event;
	eo.ctx = &sink;
	err = enforcer_load(&e, &eo);
	if (err) {
		log_err("loading the BPF programs: %s\n", strerror(-err));
		goto out;
	}
	mountinfo_fd = open_mountinfo(eo.lsm);
	err = agent_setup(e, o, eo.lsm, &rules);
	if (err)
		goto out;
	report_layers(e, eo.lsm);
	printf("agentd: ready\n");
	fflush(stdout);
	err = serve(e, &sink, mountinfo_fd);
	/* Whatever is still in the ring buffer goes to the log before it closes. */
	enforcer_consume(e, 0);
	loss_check(&loss, e, sink.audit, AGENT_ID);
out:
	if (mountinfo_fd >= 0)
		close(mountinfo_fd);
	enforcer_destroy(e);
	if (audit_writer_close(sink.audit) && !err)
		err = -EIO;
out_rules:
	agent_rules_free(&rules);
	return err;
}

int main(int argc, char **argv)
{
	struct options o = {};
	struct sigaction sa = { .sa_handler = on_signal };

	if (parse_args(argc, argv, &o))
		return 2;
	log_libbpf();
	if (o.probe)
		return do_probe(&o);
	if (o.teardown)
		return do_teardown(&o);
	if (!o.agent_cgroup)
		return daemon_run(&o) ? 3 : 0;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return run(&o) ? 3 : 0;
}
