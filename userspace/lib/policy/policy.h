/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Agent policies (docs/POLICY.md): JSON files, merged through "extends", with ${var} paths
 * resolved to objects. The result is plain arrays, ready to compile into BPF maps.
 */
#ifndef AGENTD_POLICY_H
#define AGENTD_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>
#include "policy/jsondoc.h"
#include "policy/tools.h"

#define POLICY_NAME_MAX 63
#define POLICY_EXTENDS_DEPTH_MAX 8
#define POLICY_ENV_NAME_MAX 128

/* What agentctl run sets for the agent itself (its proxy and tool broker): "env" cannot name
 * them. NULL-terminated. */
extern const char *const policy_env_reserved[];

/* "act" (or "enforce"), "report-only", and "shadow": the agent's own rules record their denies
 * as would-deny and let the operation go on (docs/SHADOW.md). */
enum policy_mode { POLICY_MODE_ACT, POLICY_MODE_REPORT_ONLY, POLICY_MODE_SHADOW };
/* What an agent does while the audit log cannot be written (docs/AUDIT.md). */
enum policy_audit_failure { POLICY_AUDIT_FREEZE, POLICY_AUDIT_CONTINUE };

/* policy.sockets: the socket families an agent may create. */
#define POLICY_SOCK_INET (1U << 0)
#define POLICY_SOCK_INET6 (1U << 1)
#define POLICY_SOCK_UNIX (1U << 2)
#define POLICY_SOCK_NETLINK (1U << 3)
#define POLICY_SOCK_PACKET (1U << 4)
#define POLICY_SOCK_RAW (1U << 5) /* SOCK_RAW in AF_INET/AF_INET6 */
#define POLICY_SOCK_ICMP (1U << 6) /* ICMP echo sockets: SOCK_DGRAM, IPPROTO_ICMP(V6) */

/* A file-system object (and the tree under it, when a directory), resolved at load time. */
struct policy_path {
	char *path; /* after ${var} substitution: absolute, normalised */
	__u32 rights; /* AGENTD_RIGHT_*; 0 denies the tree inside an allowed one */
	bool optional; /* the policy allows it to be absent */
	bool exists; /* stat() found it; dev and ino are 0 when not */
	dev_t dev; /* st_dev as stat() gives it (kernel_dev() converts it for the maps) */
	ino_t ino;
};

struct policy_connect {
	int family; /* AF_INET or AF_INET6 */
	__u8 addr[16]; /* network byte order; AF_INET uses the first 4 bytes */
	__u8 prefix_len;
	__u16 port_lo, port_hi; /* host byte order, inclusive; 1-65535 when the rule gives none */
	int protocol; /* IPPROTO_TCP, IPPROTO_UDP, or 0 for both */
};

struct policy_tool {
	char *name;
	const struct tool *def; /* in the registry given to policy_load(); NULL without one */
	/* {"name", "approval": "required"}: this agent's calls wait for an operator, whatever
	 * the registry says (policy_tool_approval() combines both) */
	bool approval;
	unsigned int approval_timeout_sec; /* 0: the registry's */
};

/* Whether the agent's calls of the tool wait for an operator, and for how long at most. */
bool policy_tool_approval(const struct policy_tool *pt, unsigned int *timeout_sec);

#define POLICY_PROXY_PORTS_MAX 32

struct policy {
	char *name;
	char *path; /* the file loaded */
	enum policy_mode mode;
	struct policy_path *files;
	size_t n_files;
	struct {
		struct policy_path *allow; /* rights unused (0) */
		size_t n_allow;
		bool allow_memfd, allow_writable;
	} exec;
	struct {
		struct policy_connect *connect;
		size_t n_connect;
		bool bind;
		__u32 sockets; /* POLICY_SOCK_* */
		char **proxy_hosts; /* "name" or "*.suffix", lower case */
		size_t n_proxy_hosts;
		/* The ports the proxy connects to (CONNECT and plain HTTP); 443 and 80 when the
		 * policy names none. */
		__u16 proxy_ports[POLICY_PROXY_PORTS_MAX];
		size_t n_proxy_ports;
	} net;
	struct policy_tool *tools;
	size_t n_tools;
	struct limits limits; /* 0 = unset */
	struct {
		bool log_allows;
		enum policy_audit_failure on_failure;
	} audit;
	bool io_uring; /* io_uring_setup/enter/register, which the seccomp layer denies else */
	__u64 capabilities; /* bit n: the agent's tasks may use capability n (CAP_*) */
	struct {
		bool create; /* mknod of character and block devices */
	} devices;
	char **env; /* names of the operator's variables agentctl run passes on, from "env" */
	size_t n_env;
};

/* The caller's --var NAME=VALUE: they override the policy's "vars". */
struct policy_var {
	const char *name, *value;
};

struct policy_vars {
	const struct policy_var *v;
	size_t n;
};

/*
 * Loads path and the bases it extends, substitutes vars (may be NULL), resolves every path with
 * stat() and, with a registry (may be NULL: tools are then not checked), checks the tools named.
 * Every error of every file goes to errs. Returns 0, -EINVAL (invalid: see errs), -ENOMEM, or
 * -errno reading the file (reported too). *out is NULL on failure.
 */
int policy_load(const char *path, const struct policy_vars *vars, const struct tools_registry *reg,
		struct policy **out, struct policy_errors *errs);
/* The same for bytes in memory named name (relative extends resolve against its directory). */
int policy_load_buffer(const char *name, const char *buf, size_t len,
		       const struct policy_vars *vars, const struct tools_registry *reg,
		       struct policy **out, struct policy_errors *errs);
void policy_free(struct policy *p);

const char *policy_mode_name(enum policy_mode mode);
/* "act" and "enforce" (one mode), "report-only", "shadow". Returns 0 or -EINVAL. */
int policy_mode_parse(const char *s, enum policy_mode *mode);
/* The capability called name ("sys_admin" or "CAP_SYS_ADMIN", any case): its number, or -1. */
int policy_capability(const char *name);
/* Capability number cap's name ("sys_admin"), or NULL. */
const char *policy_capability_name(int cap);
/* The names of rights, comma-separated ("read,write"), "none" for 0. */
int policy_rights_format(__u32 rights, char *buf, size_t bufsz);
/* The rights of names, comma-separated ("read,write"): 0 with *rights, or -EINVAL (none, or a
 * name no right has). */
int policy_rights_parse(const char *names, __u32 *rights);

#endif
