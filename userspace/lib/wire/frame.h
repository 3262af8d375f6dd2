/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The framing both of agentd's protocols use (control, docs/CONTROL.md; broker,
 * docs/BROKER.md): a 4-byte big-endian length, then that many bytes of JSON. Each protocol
 * names its own limit; a frame of length 0 is always an error.
 */
#ifndef AGENTD_FRAME_H
#define AGENTD_FRAME_H

#include <stddef.h>
#include <jansson.h>

#define FRAME_HDR 4

/*
 * Given len buffered bytes, returns 1 with *payload_len set when a whole frame is there
 * (FRAME_HDR + *payload_len bytes), 0 when more bytes are needed, -EMSGSIZE when the header
 * announces more than max, -EINVAL when it announces 0.
 */
int frame_check(const void *buf, size_t len, size_t max, size_t *payload_len);
/*
 * Serialises doc with jansson's flags (JSON_COMPACT, ...) as one frame of at most max payload
 * bytes in a malloc'ed buffer. Returns 0, -EMSGSIZE or -ENOMEM.
 */
int frame_encode(const json_t *doc, size_t flags, size_t max, char **out, size_t *outlen);

/*
 * A client's blocking side. frame_send() sends every byte (no SIGPIPE); returns 0 or -errno.
 * frame_read() reads one frame of at most max payload bytes, the payload in a malloc'ed
 * *payload; timeout_ms < 0 waits for ever. Returns 0, -ETIMEDOUT, -ECONNRESET (closed early),
 * -EBADMSG (a bad header), -ENOMEM or -errno.
 */
int frame_send(int fd, const void *buf, size_t len);
int frame_read(int fd, size_t max, int timeout_ms, char **payload, size_t *len);

#endif
