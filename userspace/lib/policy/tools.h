/* SPDX-License-Identifier: GPL-2.0 */
/* The tools registry (policies/tools.json): the tools a policy may grant, and how each runs. */
#ifndef AGENTD_TOOLS_H
#define AGENTD_TOOLS_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include "kernel/cglimits.h"
#include "policy/jsondoc.h"

#define TOOL_NAME_MAX 64
#define TOOL_TIMEOUT_DEFAULT 30
#define TOOL_TIMEOUT_MAX 3600
#define TOOL_OUTPUT_CAP_DEFAULT 65536
#define TOOL_OUTPUT_CAP_MAX (16 << 20)
#define TOOL_ARG_MAX_LENGTH_DEFAULT 4096
#define TOOL_ID_MAX 4294967294U /* (uid_t)-1 means "unchanged" to setresuid() */
#define TOOL_DESCRIPTION_MAX 4096 /* bytes */
/* A name no registry may use: the broker answers it with the calling agent's granted tools. */
#define TOOLS_LIST_NAME "agentd.tools"

/* What a tool does to the world: report-only policies may not grant TOOL_ACTUATE. */
enum tool_effect { TOOL_OBSERVE, TOOL_REPORT, TOOL_ACTUATE };
enum tool_arg_type { TOOL_ARG_STRING, TOOL_ARG_INTEGER, TOOL_ARG_BOOLEAN };

struct tool_arg {
	char *name;
	enum tool_arg_type type;
	size_t max_length; /* strings: bytes */
	char *pattern; /* strings: POSIX extended regex the value must match, or NULL */
	regex_t *re; /* pattern, compiled once when the registry is loaded */
	char **enum_values; /* strings: the only values allowed, when n_enum > 0 */
	size_t n_enum;
};

struct tool {
	char *name;
	char *description; /* for the agent (MCP's tools/list), or NULL */
	enum tool_effect effect;
	char **exec; /* argv with {arg} placeholders; exec[0] absolute; NULL for a builtin */
	size_t n_exec;
	char *builtin; /* "noop", "report"; NULL for an exec tool */
	struct tool_arg *args;
	size_t n_args;
	unsigned int timeout_sec;
	size_t output_cap; /* bytes of output kept */
	char **env; /* "NAME=value" */
	size_t n_env;
	char **secrets; /* names of secrets the broker passes as environment variables */
	size_t n_secrets;
	/* On each run's cgroup: cpu, memory, pids (0: none); wall_clock unused. */
	struct limits limits;
	/* The run's ids, no supplementary groups; 0: the broker's default, an id of the calling
	 * agent's own that no user has (docs/BROKER.md), unless root is set. */
	unsigned int uid, gid;
	bool root; /* "user": "root": runs as root, with root's capabilities (policy check warns) */
	/* "network": "public": the run may reach addresses outside the structural deny list and
	 * the host's name servers; false ("none", the default): no inet destination at all. */
	bool network_public;
	/* Programs the tool may execute besides exec[0] (a shell's commands): absolute paths */
	char **programs;
	size_t n_programs;
};

struct tools_registry {
	char *path;
	struct tool *tools;
	size_t n;
};

/* Loads and validates a registry; every error goes to errs. Returns 0, -EINVAL (invalid,
 * reported), -ENOMEM, or -errno reading the file (reported). *out is NULL on failure. */
int tools_load(const char *path, struct tools_registry **out, struct policy_errors *errs);
int tools_load_buffer(const char *name, const char *buf, size_t len, struct tools_registry **out,
		      struct policy_errors *errs);
const struct tool *tools_find(const struct tools_registry *reg, const char *name);
const char *tool_effect_name(enum tool_effect effect);
/* The tool's arguments as a JSON Schema object (every argument required, no other): what MCP
 * calls the tool's inputSchema. NULL when out of memory. */
json_t *tool_input_schema(const struct tool *t);
void tools_free(struct tools_registry *reg);

#endif
