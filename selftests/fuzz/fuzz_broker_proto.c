// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: broker frames as the worker reads them from an agent (framing, request
 * parse, the canonical re-encoding), the binary request the worker passes to agentd (encoded
 * from what parsed, and decoded from raw bytes as agentd decodes a worker's), the schema check
 * against a fixed tool, and replies as agent-tool reads them.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "wire/broker_proto.h"

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

/* What the worker sends decodes in agentd to the same request. */
static void binary_round_trip(const struct broker_request *req)
{
	struct broker_error err = { 0 };
	struct broker_request back;
	size_t blen;
	char *bin;

	if (broker_request_encode(req, &bin, &blen))
		return;
	if (broker_request_decode(bin, blen, &back, &err) || back.id != req->id ||
	    strcmp(back.tool, req->tool) || !json_equal(back.args, req->args))
		abort();
	broker_request_free(&back);
	free(bin);
}

/* Raw bytes as a worker's MSG_REQUEST: what decodes has one encoding, the bytes given. */
static void binary_raw(const uint8_t *data, size_t size)
{
	struct broker_error err = { 0 };
	struct broker_request req;
	size_t blen;
	char *bin;

	if (broker_request_decode(data, size, &req, &err))
		return;
	if (broker_request_encode(&req, &bin, &blen) || blen != size || memcmp(bin, data, size))
		abort();
	free(bin);
	broker_request_free(&req);
}

static void request(const char *payload, size_t len)
{
	struct broker_request req, again;
	struct broker_error err = { 0 };
	size_t flen;
	char *frame;
	json_t *doc;

	if (broker_request_parse(payload, len, &req, &err))
		return;
	binary_round_trip(&req);
	if (!args[0].re) { /* as the registry does when it loads */
		static regex_t re;

		if (regcomp(&re, args[0].pattern, REG_EXTENDED | REG_NOSUB))
			abort();
		args[0].re = &re;
	}
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
	binary_raw(data, size);
	if (!broker_reply_parse((const char *)data, size, &r))
		broker_reply_free(&r);
	return 0;
}
