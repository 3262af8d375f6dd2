// SPDX-License-Identifier: GPL-2.0
/*
 * agentd: the privileged host daemon. Today it probes the kernel, and runs the first enforced
 * rule: deny opening named files to the tasks of one agent cgroup, printing each deny.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "agentd/abi.h"
#include "cgroup.h"
#include "event.h"
#include "files.h"
#include "log.h"
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
		"       agentd --agent-cgroup PATH --deny-open FILE [--deny-open FILE...] [-v]\n"
		"\n"
		"  --probe           report what this kernel can enforce; exit 0 when BPF LSM\n"
		"                    is available, 1 when it is not\n"
		"  --agent-cgroup    cgroup v2 directory whose tasks form the agent\n"
		"  --deny-open       file the agent may not open (EPERM); each deny is printed\n"
		"                    on stdout as one line\n"
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
	if (optind != argc || (!o->probe && (!o->agent_cgroup || !o->ndeny))) {
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

static int setup_rules(struct files *f, const struct options *o)
{
	__u64 cgid;
	int err, i;

	err = cgroup_id(o->agent_cgroup, &cgid);
	if (err) {
		log_err("agent cgroup %s: %s\n", o->agent_cgroup, strerror(-err));
		return err;
	}
	for (i = 0; i < o->ndeny; i++) {
		err = files_deny(f, AGENT_ID, o->deny[i], i + 1);
		if (err) {
			log_err("deny rule %d (%s): %s\n", i + 1, o->deny[i], strerror(-err));
			return err;
		}
	}
	/* The agent is registered last: its rules are complete before any of its tasks match. */
	err = files_add_agent(f, cgid, AGENT_ID, 1);
	if (err)
		log_err("registering cgroup %s: %s\n", o->agent_cgroup, strerror(-err));
	return err;
}

static int run(const struct options *o)
{
	struct files *f = NULL;
	__u64 drops = 0;
	int err;

	err = mount_kernel_fs();
	if (err)
		return err;
	err = files_load(&f, print_event, NULL);
	if (err) {
		log_err("loading the file policy programs: %s\n", strerror(-err));
		return err;
	}
	err = setup_rules(f, o);
	if (err)
		goto out;
	err = files_attach(f);
	if (err) {
		log_err("attaching lsm/file_open: %s (is BPF LSM active? try agentd --probe)\n",
			strerror(-err));
		goto out;
	}
	printf("agentd: ready\n");
	fflush(stdout);
	while (!stop) {
		err = files_consume(f, POLL_MS);
		if (err < 0) {
			log_err("reading events: %s\n", strerror(-err));
			goto out;
		}
	}
	err = files_drops(f, AGENT_ID, &drops);
	if (!err && drops)
		log_warn("%llu events were lost: the ring buffer was full\n",
			 (unsigned long long)drops);
	err = 0;
out:
	files_destroy(f);
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
