/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The metrics socket (docs/METRICS.md): a Unix stream socket beside the control socket, root
 * only, refusing agents' and tools' processes like the control socket; each connection gets one
 * Prometheus text exposition of the daemon's counters, sent as the reader drains it (never
 * blocking the loop), and is closed. agentctl metrics reads it.
 * With --metrics-listen, the same exposition over HTTP (GET /metrics) on a loopback address,
 * which agents cannot reach (cgroup-BPF's structural deny list).
 */
#ifndef AGENTD_METRICS_H
#define AGENTD_METRICS_H

struct daemon;

int metrics_start(struct daemon *d);
/* The --metrics-listen listener (none without the option); logs its own failure. */
int metrics_listen_start(struct daemon *d);
/* Both listeners, and the scrapes in progress. */
void metrics_stop(struct daemon *d);

#endif
