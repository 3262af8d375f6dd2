/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the broker: who calls, and the tool runner (broker_exec.c), used by broker.c.
 */
#ifndef AGENTD_BROKER_INT_H
#define AGENTD_BROKER_INT_H

#include <limits.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <linux/types.h>
#include "audit/audit.h"
#include "wire/broker_proto.h"
#include "kernel/cglimits.h"
#include "wire/redact.h"
#include "sandbox/sandbox_seccomp.h"

/* Who called, and what: for the reply and the audit record. */
struct caller {
	__u32 agent;
	char agent_name[AUDIT_NAME_MAX];
	pid_t pid;
	uid_t uid;
	char comm[AUDIT_COMM_MAX];
};

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
/* In a child about to execute spec->argv: the rlimit, ids, no_new_privs, Landlock and seccomp
 * of the spec; exits 127 when one cannot be set. */
void tool_child_confine(const struct tool_spec *spec);

struct policy;
struct tool;
/* <state-dir>/secrets/NAME: a root-owned regular file no one else may read; one trailing
 * newline dropped. Returns 0 or -errno. */
int broker_secret_read(const char *state_dir, const char *name, char *buf, size_t bufsz,
		       size_t *len);
/* The Landlock ruleset of a run of t under the file rights of policy p (tool_sandbox.h), for
 * Landlock ABI abi (< 1: none here, refused). Returns the ruleset fd, or -errno with why. */
int broker_tool_ruleset(int abi, const struct policy *p, const struct tool *t, char *why,
			size_t whysz);

#endif
