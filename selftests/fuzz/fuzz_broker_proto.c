// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: broker frames as the worker reads them from an agent (framing, request
 * parse, the canonical re-encoding and its re-parse that the root side does), the schema check
 * against a fixed tool, and replies as agent-tool reads them.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "broker_proto.h"

static struct tool_arg args[] = {
	{ .name = "path", .type = TOOL_ARG_STRING, .max_length = 64, .pattern = "^/[a-z/]*$" },
	{ .name = "mode",
	  .type = TOOL_ARG_STRING,
	  .max_length = 8,
	  .enum_values = (char *[]){ "fast", "slow" },
	  .n_enum = 2 },
	{ .name = "n", .type = TOOL_ARG_INTEGER },
	{ .name = "all", .type = TOOL_ARG_BOOLEAN },
};
static const struct tool tool = { .name = "t", .args = args, .n_args = 4 };

static void request(const char *payload, size_t len)
{
	struct broker_request req, again;
	struct broker_error err = { 0 };
	size_t flen;
	char *frame;
	json_t *doc;

	if (broker_request_parse(payload, len, &req, &err))
		return;
	broker_args_check(&tool, req.args, &err);
	doc = broker_request_json(&req);
	if (doc && !broker_frame_encode(doc, BROKER_REQUEST_MAX, &frame, &flen)) {
		/* The canonical form parses back to the same request. */
		if (broker_request_parse(frame + BROKER_HDR, flen - BROKER_HDR, &again, &err) ||
		    !json_equal(again.args, req.args) || again.id != req.id)
			abort();
		broker_request_free(&again);
		free(frame);
	}
	json_decref(doc);
	broker_request_free(&req);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct broker_reply r = { 0 };
	size_t n;

	if (broker_frame_check(data, size, BROKER_REQUEST_MAX, &n) == 1)
		request((const char *)data + BROKER_HDR, n);
	else
		request((const char *)data, size);
	if (!broker_reply_parse((const char *)data, size, &r))
		broker_reply_free(&r);
	return 0;
}
