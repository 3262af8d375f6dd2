/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_EVENT_H
#define AGENTD_EVENT_H

#include <stddef.h>

/*
 * Formats one ring-buffer record as one human-readable line (no newline) into buf.
 * The record is checked before use: its length, header length, version and type.
 * Returns the line's length, or -EINVAL for a malformed record, -ENOSPC if buf is too small.
 */
int event_format(const void *data, size_t len, char *buf, size_t bufsz);

/* Names of the ABI's codes ("file_open", "structural-deny"); "unknown" for a code this build
 * does not know. */
const char *event_hook_name(unsigned int hook);
const char *event_reason_name(unsigned int reason);

#endif
