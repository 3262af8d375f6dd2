// SPDX-License-Identifier: GPL-2.0
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <systemd/sd-daemon.h>
#include "log.h"
#include "loop.h"
#include "notify.h"

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void send_state(const char *state)
{
	int r = sd_notify(0, state);

	if (r < 0)
		log_warn("notifying systemd (%s): %s, ignoring\n", state, strerror(-r));
}

void notify_ready(void)
{
	send_state("READY=1\nSTATUS=enforcing; control socket listening");
}

/* MONOTONIC_USEC lets systemd tell this reload's READY=1 from an earlier one. */
void notify_reloading(void)
{
	char state[64];

	snprintf(state, sizeof(state), "RELOADING=1\nMONOTONIC_USEC=%llu",
		 (unsigned long long)now_us());
	send_state(state);
}

void notify_stopping(void)
{
	send_state("STOPPING=1");
}

void notify_pass(struct loop *l)
{
	static uint64_t interval_us, next_us;
	static int enabled = -1;
	uint64_t now;

	if (enabled < 0) {
		enabled = sd_watchdog_enabled(0, &interval_us) > 0 && interval_us >= 2000;
		interval_us /= 2;
	}
	if (!enabled)
		return;
	now = now_us();
	if (now >= next_us) {
		send_state("WATCHDOG=1");
		next_us = now + interval_us;
	}
	loop_wake_within(l, (int)((next_us - now + 999) / 1000));
}
