/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where agentd, agentctl and agent-tool look when not told otherwise: the one table of default
 * paths (agentd(8) and agentctl(1), FILES, list the same). The option or environment variable
 * that moves each is named beside it.
 */
#ifndef AGENTD_PATHS_H
#define AGENTD_PATHS_H

#include <stddef.h>

#define PATH_RUN_DIR "/run/agentd"
#define PATH_CONTROL_SOCK PATH_RUN_DIR "/control.sock" /* --control, $AGENTD_CONTROL */
/* Beside the control socket, wherever it is (path_beside()). */
#define PATH_AUDIT_SOCK_NAME "audit.sock" /* agentd --stream, $AGENTD_STREAM */
#define PATH_METRICS_SOCK_NAME "metrics.sock" /* $AGENTD_METRICS */
#define PATH_AGENTS_DIR_NAME "agents" /* each agent's broker socket: agents/NAME/tool.sock */
#define PATH_AUDIT_SOCK PATH_RUN_DIR "/" PATH_AUDIT_SOCK_NAME

#define PATH_STATE_DIR "/var/lib/agentd" /* agentd --state-dir */
#define PATH_AUDIT_DIR_NAME "audit" /* in the state directory: agentd --audit-dir */
#define PATH_AUDIT_DIR PATH_STATE_DIR "/" PATH_AUDIT_DIR_NAME /* agentctl audit --dir */

#define PATH_RESOLV_CONF "/etc/resolv.conf" /* the name servers public tool runs reach */

#define PATH_BPFFS "/sys/fs/bpf" /* mounted by agentd when absent */
#define PATH_PIN_DIR PATH_BPFFS "/agentd" /* agentd --pin-dir */

/* The workers' folder when installed (spawn_path()) is AGENTD_LIBEXECDIR, which the Makefile
 * sets from LIBEXECDIR. */

/* dir(control)/name into out. Returns 0 or -ENAMETOOLONG. */
int path_beside(const char *control, const char *name, char *out, size_t outsz);

#endif
