/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the broker: the messages between the root side (broker.c) and the worker
 * (broker_worker.c) on their stream socketpair, and the tool runner (broker_exec.c).
 * A message is a struct bmsg and len bytes; a MSG_CONN carries the agent's connection as
 * SCM_RIGHTS.
 */
#ifndef AGENTD_BROKER_INT_H
#define AGENTD_BROKER_INT_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include "broker_proto.h"
#include "redact.h"

enum bmsg_type {
	/* root -> worker */
	MSG_CONN = 1, /* a checked connection (the fd), known from now on as conn */
	MSG_REPLY, /* a reply frame (header included) to send on conn */
	MSG_CLOSE, /* close conn */
	/* worker -> root */
	MSG_REQUEST, /* a request in canonical JSON (no frame header) */
	MSG_REFUSED, /* a frame the worker refused and answered: struct bmsg_refused */
	MSG_CLOSED, /* the agent closed conn */
};

struct bmsg {
	__u32 type;
	__u32 conn;
	__u32 len;
};

struct bmsg_refused {
	__u64 len; /* of the refused payload */
	unsigned char sha256[32];
	long long id;
	struct broker_error err;
};

#define BMSG_MAX (BROKER_HDR + BROKER_REPLY_MAX)
#define BROKER_CONNS_MAX 1024

/* Forks the worker on one end of a socketpair; *chan is the root's end (non-blocking). */
int broker_worker_spawn(pid_t *pid, int *chan);

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
};

struct loop;
/* Starts the tool; done is called once, from the loop, when it has exited and its cgroup is
 * empty. Returns 0 or -errno (nothing started; the redactor is cleared). */
int tool_run_start(struct loop *l, const struct tool_spec *spec, tool_done_fn done, void *ctx,
		   struct tool_run **out);
/* Kills the run's cgroup (agent down, daemon stop); done still comes. */
void tool_run_kill(struct tool_run *run);
/* Daemon stop: kills the run, waits for the tool, frees the run; done never comes. */
void tool_run_abort(struct tool_run *run);
/* After done: frees the run. */
void tool_run_free(struct tool_run *run);

#endif
