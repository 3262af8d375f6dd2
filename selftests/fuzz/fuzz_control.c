// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: bytes from a control socket peer, through the framing and the request
 * codec as agentd reads them, and the same bytes as a reply, as agentctl reads them. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "wire/control.h"

static void check_request(const char *payload, size_t n)
{
	struct control_request req;
	struct control_error err;
	json_t *doc, *reply;
	size_t len;
	char *buf;

	if (control_request_parse(payload, n, &req, &err)) {
		reply = control_reply_error(req.id, err.code, err.message);
	} else {
		/* What parses must survive a round trip unchanged. */
		doc = control_request_json(&req);
		if (control_frame_encode(doc, &buf, &len))
			__builtin_trap();
		json_decref(doc);
		if (control_request_parse(buf + CONTROL_HDR, len - CONTROL_HDR, &req, &err))
			__builtin_trap();
		free(buf);
		reply = control_reply_ok(req.id);
	}
	if (!reply || control_frame_encode(reply, &buf, &len))
		__builtin_trap();
	json_decref(reply);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct control_error err;
	size_t off = 0, n;
	json_t *body;

	/* A stream of frames, as one client might send them. */
	while (control_frame_check(data + off, size - off, &n) == 1) {
		check_request((const char *)data + off + CONTROL_HDR, n);
		off += CONTROL_HDR + n;
	}
	if (control_reply_parse((const char *)data, size, 1, &body, &err) == 1)
		json_decref(body);
	return 0;
}
