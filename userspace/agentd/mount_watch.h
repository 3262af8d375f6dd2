/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_MOUNT_WATCH_H
#define AGENTD_MOUNT_WATCH_H

struct daemon;
struct agent;

/* Watches agentd's mount table (with BPF LSM only: no other layer uses mount roots). Returns 0
 * or -errno (logged). */
int mount_watch_start(struct daemon *d);
void mount_watch_stop(struct daemon *d);
/* Brings a's mount roots up to date (an adopted agent's may be older than the table). */
void mount_watch_agent(struct daemon *d, const struct agent *a);

#endif
