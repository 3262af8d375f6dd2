/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a tool run may reach (docs/BROKER.md, "A tool never reaches what its caller could not"):
 * the calling agent's file rights, read-only unless the tool actuates (then the agent's write
 * rights too), never the agent's exec rights; plus read on the shared libraries and read and
 * exec on the tool's own programs and the dynamic loader. Held by Landlock in the tool's
 * process before it executes, on every kernel that has Landlock.
 */
#ifndef AGENTD_TOOL_SANDBOX_H
#define AGENTD_TOOL_SANDBOX_H

#include <stddef.h>
#include "sandbox/landlock.h"
#include "policy/policy.h"
#include "policy/tools.h"

/*
 * The Landlock plan of a run of t for an agent with policy agent, for ABI abi. Returns 0,
 * -EPERM when the agent's policy denies a tree inside one it grants (Landlock cannot hold that:
 * the run is refused; why says so), -EINVAL (abi < 1) or -ENOMEM.
 */
int tool_sandbox_plan(const struct policy *agent, const struct tool *t, int abi,
		      struct landlock_plan **out, char *why, size_t whysz);

#endif
