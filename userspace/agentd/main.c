// SPDX-License-Identifier: GPL-2.0
/*
 * agentd: the privileged host daemon (daemon.c). Agents are added, run and removed over the
 * control socket with agentctl; --probe reports what the kernel can enforce, --teardown ends
 * enforcement.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agentd.h"
#include "log.h"
#include "kernel/probe.h"
#include "wire/prom.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: agentd --probe [--json]\n"
		"       agentd [--control PATH] [--state-dir DIR] [--audit-dir DIR]\n"
		"              [--pin-dir DIR] [--cgroup DIR] [--allow-partial]\n"
		"              [--stream PATH] [--stream-group GROUP]\n"
		"              [--proxy-idle-timeout SECONDS] [--ring-buffer-mb N]\n"
		"              [--metrics-listen ADDR:PORT] [-v]\n"
		"       agentd --teardown\n"
		"\n"
		"  --probe           report what this kernel can enforce (BPF LSM with a trial\n"
		"                    load, cgroup v2 and its controllers, Landlock ABI, seccomp,\n"
		"                    no_new_privs, user namespaces); exit 0 when full enforcement\n"
		"                    is possible (BPF LSM, cgroup-BPF, seccomp), 1 when it is "
		"not:\n"
		"                    agentd then needs --allow-partial, and agentctl policy check\n"
		"                    --layers says what a policy loses (docs/LAYERS.md)\n"
		"  --pin-dir DIR     bpffs directory for pinned programs and maps (default\n"
		"                    " PATH_PIN_DIR "): enforcement outlives agentd, and a\n"
		"                    restarted agentd adopts it, pending events included\n"
		"  --teardown        unpin everything in the pin directory: enforcement ends\n"
		"\n"
		"the daemon: agents are added, run and removed with agentctl (docs/CONTROL.md)\n"
		"  --control PATH    control socket (default " PATH_CONTROL_SOCK ")\n"
		"  --state-dir DIR   agents' state, re-adopted at start (default " PATH_STATE_DIR
		")\n"
		"  --audit-dir DIR   the audit log (default STATE-DIR/audit, docs/AUDIT.md)\n"
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
		"  --metrics-listen ADDR:PORT\n"
		"                    also serve the metrics (docs/METRICS.md) over HTTP, GET\n"
		"                    /metrics, on this loopback address: 127.0.0.0/8 or [::1]\n"
		"                    (the Unix socket metrics.sock is always there)\n"
		"  --shadow-structural\n"
		"                    agents in shadow mode get would-deny, not deny, from the\n"
		"                    structural network deny list too (docs/SHADOW.md)\n"
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
		/* The single-agent mode's, refused with the way to do it now. */
		{ "agent-cgroup", required_argument, NULL, 'r' },
		{ "deny-open", required_argument, NULL, 'r' },
		{ "policy", required_argument, NULL, 'r' },
		{ "var", required_argument, NULL, 'r' },
		{ "tools", required_argument, NULL, 'r' },
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
		{ "metrics-listen", required_argument, NULL, 'M' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "shadow-structural", no_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	enum log_level level = LOG_INFO;
	unsigned long v;
	int c, opt;
	char *end, why[256];

	while ((c = getopt_long(argc, argv, "jvh", longopts, &opt)) != -1) {
		switch (c) {
		case 'p':
			o->probe = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'r':
			log_err("--%s was removed with the single-agent mode: start agentd, then "
				"agentctl agent add NAME --policy FILE [--var NAME=VALUE]... "
				"[--tools FILE] (its cgroup: DIR/NAME, DIR as --cgroup; "
				"docs/CONTROL.md)\n",
				longopts[opt].name);
			return -EINVAL;
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
		case 'W':
			o->shadow_structural = true;
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
		case 'M':
			if (prom_listen_parse(optarg, &o->metrics_addr, &o->metrics_addr_len, why,
					      sizeof(why))) {
				log_err("%s\n", why);
				return -EINVAL;
			}
			o->metrics_listen = optarg;
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
		o->pin_dir = PATH_PIN_DIR;
	if (!o->control)
		o->control = PATH_CONTROL_SOCK;
	if (!o->state_dir)
		o->state_dir = PATH_STATE_DIR;
	if (!o->proxy_idle_sec)
		o->proxy_idle_sec = DEFAULT_PROXY_IDLE_SEC;
	if (!o->ring_mb)
		o->ring_mb = ENFORCER_RING_BYTES_DEFAULT >> 20;
	if (optind != argc) {
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

int main(int argc, char **argv)
{
	struct options o = {};

	if (parse_args(argc, argv, &o))
		return 2;
	log_libbpf();
	if (o.probe)
		return do_probe(&o);
	if (o.teardown)
		return do_teardown(&o);
	return daemon_run(&o) ? 3 : 0;
}
