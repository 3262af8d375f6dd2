/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_JSONPOS_H
#define AGENTD_JSONPOS_H

#include <stddef.h>

/* Deeper values are never located (jansson itself refuses documents nested deeper than 2048). */
#define JSONPOS_MAX_DEPTH 256

/*
 * Finds where the value at an RFC 6901 JSON pointer ("" is the document, "/files/2/rights/0" a
 * nested value) starts in the raw bytes of a JSON document: 1-based line and column, the column
 * counted in characters as jansson counts it. jansson keeps no positions after parsing; this is a
 * minimal scanner used only for locating, never for meaning. It accepts any bytes, reads none
 * outside buf, and gives up on what is not JSON. Returns 0, or -ENOENT when the value is not found.
 */
int jsonpos_locate(const char *buf, size_t len, const char *pointer, int *line, int *column);

#endif
