/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_EVENT_H
#define AGENTD_EVENT_H

#include <stddef.h>
#include "agentd/abi.h"

/* Any ring-buffer record, by hdr.type. */
union agentd_event {
	struct agentd_event_hdr hdr;
	struct agentd_file_event file;
	struct agentd_net_event net;
	struct agentd_self_event self;
};

/*
 * Copies one ring-buffer record into ev after checking it: its length, header length, version,
 * and that its type is known and its size that type's. The one place that reads the ring's
 * bytes: each record is decoded once, and everything after works on ev.
 * Returns the type (AGENTD_EV_*) or -EINVAL.
 */
int event_decode(const void *data, size_t len, union agentd_event *ev);

/*
 * Formats one decoded record (event_decode()) as one human-readable line (no newline) into buf.
 * Returns the line's length, or -EINVAL for an unknown type, -ENOSPC if buf is too small.
 */
int event_format(const union agentd_event *ev, char *buf, size_t bufsz);

/* Names of the ABI's codes ("file_open", "structural-deny"); "unknown" for a code this build
 * does not know. */
const char *event_hook_name(unsigned int hook);
const char *event_reason_name(unsigned int reason);

#endif
