/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the broker: the tool runner (broker_exec.c), used by broker.c.
 */
#ifndef AGENTD_BROKER_INT_H
#define AGENTD_BROKER_INT_H

#include <limits.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <linux/types.h>
#include "wire/broker_proto.h"
#include "kernel/cglimits.h"
#include "wire/redact.h"
#include "sandbox/sandbox_seccomp.h"

/* A tool run: argv and env built, then watched in the daemon's loop until it is done. */
struct tool_run;
struct tool_run_result {
	int status; /* waitpid() status */
	bool timed_out;
	char *out, *err; /* redacted, NUL-terminated, owned by the run */
	size_t out_len, err_len;
	bool truncated;
	unsigned redacted;
	__u64 duration_us;
};
typedef void (*tool_done_fn)(void *ctx, struct tool_run *run, const struct tool_run_result *res);

struct tool_spec {
	const char *cgroup; /* to create for the run, under the broker's tools cgroup */
	char *const *argv;
	char *const *envp; /* secrets included: wiped by the caller after tool_run_start() */
	unsigned timeout_sec;
	size_t output_cap;
	struct redactor *redactor; /* taken over (the secrets of the call) */
	rlim_t nofile; /* the tool's RLIMIT_NOFILE soft limit: agentd's before it raised its own */
	const struct limits *limits; /* on the run's cgroup; one that cannot be set fails the run */
	unsigned int uid, gid; /* the run's ids (0: root), with no supplementary groups */
	int ruleset_fd; /* Landlock: what the run may reach (tool_sandbox.h); taken over */
	const struct sandbox_seccomp *seccomp; /* the caller's filter */
	/* The run's network in the kernel (net.bpf.c): its cgroup held to network
	 * (AGENTD_TOOL_NET_*) for agent_id before the tool starts; NULL: no network programs. */
	struct enforcer *enforcer;
	__u32 agent_id, network;
};

struct enforcer;

/* resolvers.c: the host's name servers that public tool runs reach (net.bpf.c). */
#define RESOLVERS_MAX 8
size_t resolvers_parse(const char *text, __u8 (*out)[16], size_t max);
/* /etc/resolv.conf's name servers, set in the kernel. Returns 0 or -errno. */
int resolvers_sync(struct enforcer *e);

struct loop;
/* Starts the tool; done is called once, from the loop, when it has exited and its cgroup is
 * empty. Returns 0 or -errno (nothing started; the redactor is cleared). Either way the ruleset
 * fd is closed. */
int tool_run_start(struct loop *l, const struct tool_spec *spec, tool_done_fn done, void *ctx,
		   struct tool_run **out);
/* Kills the run's cgroup (agent down, daemon stop); done still comes. */
void tool_run_kill(struct tool_run *run);
/* Daemon stop: kills the run, waits for the tool, frees the run; done never comes. */
void tool_run_abort(struct tool_run *run);
/* After done: frees the run. */
void tool_run_free(struct tool_run *run);

#endif
