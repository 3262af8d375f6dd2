/* SPDX-License-Identifier: GPL-2.0 */
/* agentd-worker's modes: the broker's worker (main.c) and the egress proxy's (proxy.c). */
#ifndef AGENTD_WORKER_H
#define AGENTD_WORKER_H

/* agentd-worker proxy IDLE-MS. Returns only on a bad start (exit status). */
int proxy_main(int argc, char **argv);

#endif
