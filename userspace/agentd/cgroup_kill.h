/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_CGROUP_KILL_H
#define AGENTD_CGROUP_KILL_H

/* SIGKILL to every process in the cgroup: cgroup.kill (5.14+), else one by one; then a wait for
 * it to empty, up to timeout_ms (-EBUSY past it). Each returns 0 or -errno. */
int cgroup_kill(const char *cg);
int cgroup_wait_empty(const char *cg, int timeout_ms);

#endif
