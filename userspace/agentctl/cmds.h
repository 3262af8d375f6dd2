/* SPDX-License-Identifier: GPL-2.0 */
/* agentctl's nouns, one file each (bpftool style): do_<noun>(argc, argv) with argv[0] the noun.
 * Each returns the process exit status: 0 success, 1 the answer is no (a check failed, a
 * verification found tampering), 2 usage, 3 failure. */
#ifndef AGENTCTL_CMDS_H
#define AGENTCTL_CMDS_H

#define EXIT_NO 1
#define EXIT_USAGE 2
#define EXIT_FAIL 3

/* Whether argv holds --json or -j (every command accepts it). */
int want_json(int argc, char **argv);

/* policy check [--tools FILE] [--var NAME=VALUE]... [--json] FILE... | policy reload [NAME] */
int do_policy(int argc, char **argv);
/* policy generate NAME ...: a policy from the agent's deny records (generate.c) */
int policy_generate(int argc, char **argv);
/* agentctl audit verify|query|follow (audit.c) */
int do_audit(int argc, char **argv);
/* The audit stream socket: $AGENTD_STREAM, else audit.sock beside the control socket (control,
 * else $AGENTD_CONTROL, else /run/agentd). A subscription with its filter line sent: the fd, or
 * -errno (audit.c). */
const char *stream_default_path(const char *control);
int stream_subscribe(const char *path, const char *filter_line);
/* attach NAME [--pid PID | --cgroup PATH] | detach NAME --cgroup PATH (attach.c) */
int do_attach(int argc, char **argv);
int do_detach(int argc, char **argv);
/* The daemon's nouns, over the control socket (client.c): agent.c, run.c, kill.c, status.c;
 * policy reload in policy.c. */
int do_agent(int argc, char **argv);
int do_run(int argc, char **argv);
int do_kill(int argc, char **argv);
/* tools accept SERVER.TOOL (tools.c) */
int do_tools(int argc, char **argv);
int do_status(int argc, char **argv);
/* inspect NAME [--fail-on SEVERITY] (inspect.c) */
int do_inspect(int argc, char **argv);
/* approvals | approve ID [--for DURATION] | deny ID: held tool calls (approval.c) */
int do_approvals(int argc, char **argv);
int do_approve(int argc, char **argv);
int do_deny(int argc, char **argv);
/* grant NAME ... | grants [NAME] | revoke ID: time-limited grants (grant.c) */
int do_grant(int argc, char **argv);
int do_grants(int argc, char **argv);
int do_revoke(int argc, char **argv);
/* drill NAME [--boundary B]... (drill.c) */
int do_drill(int argc, char **argv);
/* agentd's counters, Prometheus text (metrics.c) */
int do_metrics(int argc, char **argv);

#endif
