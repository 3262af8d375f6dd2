// SPDX-License-Identifier: GPL-2.0
/*
 * agentd: the privileged host daemon. Today it probes the kernel and confines one agent cgroup
 * given on the command line: self-protection and the structural network deny always, and with
 * --deny-open, files it may not open (everything else stays allowed). Each decision the kernel
 * reports is printed on stdout, one line each.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "agentd/abi.h"
#include "cgroup.h"
#include "event.h"
#include "enforcer.h"
#include "rules.h"
#include "log.h"
#include "netdeny.h"
#include "probe.h"

#define MAX_DENY 64
#define AGENT_ID 1
#define POLL_MS 100

struct options {
	bool probe;
	bool json;
	const char *agent_cgroup;
	const char *deny[MAX_DENY];
	int ndeny;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: agentd --probe [--json]\n"
		"       agentd --agent-cgroup PATH [--deny-open FILE]... [-v]\n"
		"\n"
		"  --probe           report what this kernel can enforce; exit 0 when BPF LSM\n"
		"                    is available, 1 when it is not\n"
		"  --agent-cgroup    cgroup v2 directory whose tasks form the agent: self-\n"
		"                    protection and the structural network deny apply to it\n"
		"  --deny-open       a file the agent may not open (EPERM); needs BPF LSM\n"
		"  -v, --verbose     debug logging, libbpf's included\n"
		"\n"
		"exit status: 0 success, 1 BPF LSM unavailable (--probe), 2 usage, 3 failure\n");
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "probe", no_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "agent-cgroup", required_argument, NULL, 'c' },
		{ "deny-open", required_argument, NULL, 'd' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	enum log_level level = LOG_INFO;
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
		case 'v':
			level = LOG_DEBUG;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -EINVAL;
		}
	}
	log_init("agentd", level);
	if (optind != argc || (!o->probe && !o->agent_cgroup)) {
		usage(stderr);
		return -EINVAL;
	}
	return 0;
}

static int print_event(void *ctx, void *data, size_t len)
{
	char line[1024];
	int n;

	(void)ctx;
	n = event_format(data, len, line, sizeof(line));
	if (n < 0) {
		log_warn("malformed event (%zu bytes): %s, ignoring\n", len, strerror(-n));
		return 0;
	}
	printf("%s\n", line);
	fflush(stdout);
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
	return probe_bpf_lsm_ok(&p) ? 0 : 1;
}

/* Everything allowed but the denied files: the command-line agent until policies arrive. */
static int setup_agent(struct enforcer *e, const struct options *o, bool lsm)
{
	struct file_rule files[MAX_DENY + 1] = { { "/", AGENTD_RIGHTS_ALL } };
	struct net_rule net[2] = { { .protocols = AGENTD_PROTO_TCP | AGENTD_PROTO_UDP },
				   { .protocols = AGENTD_PROTO_TCP | AGENTD_PROTO_UDP } };
	struct ruleset rs = {
		.flags = AGENTD_AGENT_ALLOW_MEMFD_EXEC | AGENTD_AGENT_ALLOW_WRITABLE_EXEC |
			 AGENTD_AGENT_ALLOW_BIND,
		.sock_families = ~0ULL,
		.sock_types = ~0U,
		.files = files,
		.nfiles = o->ndeny + 1,
		.net = net,
		.nnet = 2,
	};
	int err, i, failed = -1, cgfd;
	__u32 gen;

	netdeny_parse_cidr("0.0.0.0/0", &net[0].cidr);
	netdeny_parse_cidr("::/0", &net[1].cidr);
	for (i = 0; i < o->ndeny; i++)
		files[i + 1] = (struct file_rule){ o->deny[i], 0 };
	err = rules_apply(e, AGENT_ID, &rs, &gen, &failed);
	if (err) {
		log_err("agent rules: %s%s%s\n", failed >= 0 ? files[failed].path : "",
			failed >= 0 ? ": " : "", strerror(-err));
		return err;
	}
	/* The agent is registered after its rules: none of its tasks sees a partial rule set. */
	err = enforcer_add_cgroup(e, o->agent_cgroup, AGENT_ID);
	if (err) {
		log_err("registering cgroup %s: %s\n", o->agent_cgroup, strerror(-err));
		return err;
	}
	cgfd = open(o->agent_cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = cgfd < 0 ? -errno : enforcer_attach_cgroup(e, cgfd);
	if (cgfd >= 0)
		close(cgfd);
	if (err) {
		log_err("attaching cgroup programs to %s: %s\n", o->agent_cgroup, strerror(-err));
		return err;
	}
	if (!lsm)
		return 0;
	err = enforcer_attach_lsm(e);
	if (err)
		log_err("attaching BPF LSM programs: %s\n", strerror(-err));
	return err;
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

static int run(const struct options *o)
{
	struct enforcer_opts eo = { .on_event = print_event };
	struct enforcer *e = NULL;
	struct probe p;
	__u64 drops = 0;
	int err;

	err = mount_kernel_fs();
	if (err)
		return err;
	probe_kernel(&p);
	eo.lsm = probe_bpf_lsm_ok(&p);
	if (!eo.lsm && o->ndeny) {
		log_err("--deny-open needs BPF LSM, which this kernel does not run (agentd "
			"--probe): "
			"refusing to start rather than run unconfined\n");
		return -EOPNOTSUPP;
	}
	err = enforcer_load(&e, &eo);
	if (err) {
		log_err("loading the BPF programs: %s\n", strerror(-err));
		return err;
	}
	err = setup_agent(e, o, eo.lsm);
	if (err)
		goto out;
	report_layers(e, eo.lsm);
	printf("agentd: ready\n");
	fflush(stdout);
	while (!stop) {
		err = enforcer_consume(e, POLL_MS);
		if (err < 0) {
			log_err("reading events: %s\n", strerror(-err));
			goto out;
		}
	}
	err = enforcer_drops(e, AGENT_ID, &drops);
	if (!err && drops)
		log_warn("%llu events were lost: the ring buffer was full\n",
			 (unsigned long long)drops);
	err = 0;
out:
	enforcer_destroy(e);
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
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return run(&o) ? 3 : 0;
}
