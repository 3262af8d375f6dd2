/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Upstream MCP servers (docs/MCP.md, "Upstream servers"): a registry entry of kind "mcp" names a
 * server agentd runs outside every agent (its own uid, cgroup, policy and filter) and speaks
 * MCP to as a client; its tools are the registry's SERVER.TOOL. The broker checks identity and
 * the agent's policy first; the hub checks the server's inputSchema and the tool's digest (a
 * tool whose name, description or inputSchema changed since it was accepted is refused until
 * `agentctl tools accept`), calls, and redacts the reply with the server's secrets.
 */
#ifndef AGENTD_MCP_UPSTREAM_H
#define AGENTD_MCP_UPSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <jansson.h>
#include <linux/types.h>
#include "policy/tools.h"

struct loop;
struct enforcer;
struct mcp_hub;
struct mcp_pending;

struct mcp_hub_env {
	struct loop *loop;
	const char *state_dir; /* secrets/ and mcp/ (the accepted digests) */
	const char *tools_cg; /* the servers' cgroups go below it */
	rlim_t nofile;
	int landlock_abi;
	/* Each server's cgroup is held to its entry's "network" (net.bpf.c's tool runs, for no
	 * agent); NULL: no network programs here. */
	struct enforcer *enforcer;
};

/* How a call ended: code NULL when the server answered (text, is_error), else a broker error
 * code and message. */
struct mcp_result {
	const char *code;
	const char *message;
	const char *text; /* redacted, cut at the tool's output cap */
	size_t len;
	bool is_error, truncated;
	unsigned redacted;
	__u64 duration_us;
};
typedef void (*mcp_done_fn)(void *ctx, const struct mcp_result *r);
/* A waiter on a server's tools list; gone: its owner went first (mcp_hub_forget()). */
typedef void (*mcp_wait_fn)(void *ctx, bool gone);

int mcp_hub_new(const struct mcp_hub_env *env, struct mcp_hub **out);
/* Kills every server; pending calls' done never comes (their owners went first). */
void mcp_hub_free(struct mcp_hub *h);
/* Starts t's server when it is not running (an agent granting it came up or reloaded). */
void mcp_hub_start(struct mcp_hub *h, const struct tool *t);
/*
 * t as the server lists it: 0 with its description and inputSchema (borrowed, valid until the
 * loop runs again), -EAGAIN while its server starts or lists, -ENOENT when it is not offered
 * (the server failed, does not list it, or it changed and is not accepted).
 */
int mcp_hub_describe(struct mcp_hub *h, const struct tool *t, const char **description,
		     json_t **schema);
/* fn(ctx, false) once t's server has listed or failed (0), or -ENOMEM. owner: for forget. */
int mcp_hub_wait(struct mcp_hub *h, const struct tool *t, mcp_wait_fn fn, void *ctx,
		 const void *owner);
/* The owner goes: its waiters are called with gone. */
void mcp_hub_forget(struct mcp_hub *h, const void *owner);
/* A call of t with args (strings, integers, booleans); done comes once, from the loop. */
int mcp_hub_call(struct mcp_hub *h, const struct tool *t, const json_t *args, mcp_done_fn done,
		 void *ctx, struct mcp_pending **out);
/* The caller went: the server is told (notifications/cancelled), done comes ("killed"). */
void mcp_hub_cancel(struct mcp_pending *p);
/* `agentctl tools accept SERVER.TOOL`: its current digest becomes the accepted one. */
int mcp_hub_accept(struct mcp_hub *h, const char *name, char *why, size_t whysz);
/* The servers, their state and their tools, for agentctl status --json. */
json_t *mcp_hub_json(const struct mcp_hub *h);

#endif
