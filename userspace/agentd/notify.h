/* SPDX-License-Identifier: GPL-2.0 */
/*
 * systemd's service notifications (sd_notify(3), through libsystemd): readiness once the
 * programs are loaded and pinned and the control socket listens, reloads, stopping, and the
 * watchdog pinged from the daemon's one loop, so that a loop that stalls is restarted. Without
 * $NOTIFY_SOCKET (not started by systemd as Type=notify) every call does nothing.
 */
#ifndef AGENTD_NOTIFY_H
#define AGENTD_NOTIFY_H

struct loop;

void notify_ready(void);
void notify_reloading(void);
void notify_stopping(void);
/* Once per pass of the loop: pings the watchdog when half its interval has passed, and asks
 * the loop to come back by the next ping. */
void notify_pass(struct loop *l);

#endif
