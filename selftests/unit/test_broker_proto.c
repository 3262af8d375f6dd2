// SPDX-License-Identifier: GPL-2.0
/* The broker protocol: framing, requests and every way they are refused, the schema check of
 * arguments, and replies. */
#include <stdio.h>
#include <stdlib.h>
#include "wire/broker_proto.h"
#include "harness.h"

static void refused(const char *json, const char *code, const char *want)
{
	struct broker_request req;
	struct broker_error err = { 0 };

	ASSERT_EQ(broker_request_parse(json, strlen(json), &req, &err), -EINVAL);
	ASSERT(req.args == NULL);
	ASSERT_STREQ(err.code, code);
	if (!strstr(err.message, want))
		FAIL("%s: expected a message containing \"%s\", got \"%s\"", json, want,
		     err.message);
}

TEST(broker_frames)
{
	unsigned char buf[8] = { 0, 0, 0, 3, '{', '}', ' ' };
	json_t *doc = json_pack("{s:s}", "tool", "noop");
	size_t n = 0, len;
	char *frame;

	ASSERT_EQ(broker_frame_check(buf, 3, 100, &n), 0);
	ASSERT_EQ(broker_frame_check(buf, 6, 100, &n), 0);
	ASSERT_EQ(broker_frame_check(buf, 7, 100, &n), 1);
	ASSERT_EQ(n, 3);
	ASSERT_EQ(broker_frame_check(buf, 7, 2, &n), -EMSGSIZE);
	buf[3] = 0;
	ASSERT_EQ(broker_frame_check(buf, 7, 100, &n), -EINVAL);
	buf[0] = 0xff;
	ASSERT_EQ(broker_frame_check(buf, 4, BROKER_REQUEST_MAX, &n), -EMSGSIZE);
	ASSERT_EQ(broker_frame_encode(doc, 1000, &frame, &len), 0);
	ASSERT_EQ(len, BROKER_HDR + strlen("{\"tool\":\"noop\"}"));
	ASSERT(!memcmp(frame + BROKER_HDR, "{\"tool\":\"noop\"}", len - BROKER_HDR));
	ASSERT_EQ(broker_frame_check(frame, len, 1000, &n), 1);
	free(frame);
	ASSERT_EQ(broker_frame_encode(doc, 5, &frame, &len), -EMSGSIZE);
	ASSERT(frame == NULL);
	json_decref(doc);
}

TEST(broker_request_parsed_and_canonical)
{
	static const char json[] = "{\"args\": {\"b\": true, \"a\": \"x\", \"n\": -3}, \"tool\": "
				   "\"fs.read\", \"id\": 9007199254740991}";
	struct broker_request req, again;
	struct broker_error err = { 0 };
	size_t len;
	char *frame;
	json_t *doc;

	ASSERT_EQ(broker_request_parse(json, strlen(json), &req, &err), 0);
	ASSERT_EQ(req.id, 9007199254740991LL);
	ASSERT_STREQ(req.tool, "fs.read");
	ASSERT_EQ(json_object_size(req.args), 3);
	doc = broker_request_json(&req);
	ASSERT_EQ(broker_frame_encode(doc, BROKER_REQUEST_MAX, &frame, &len), 0);
	json_decref(doc);
	ASSERT(!memcmp(frame + BROKER_HDR,
		       "{\"args\":{\"a\":\"x\",\"b\":true,\"n\":-3},\"id\":9007199254740991,"
		       "\"tool\":\"fs.read\"}",
		       len - BROKER_HDR));
	ASSERT_EQ(broker_request_parse(frame + BROKER_HDR, len - BROKER_HDR, &again, &err), 0);
	ASSERT(json_equal(again.args, req.args));
	broker_request_free(&again);
	broker_request_free(&req);
	free(frame);
	/* No id, no args: id -1 (a null reply id), args {}. */
	ASSERT_EQ(broker_request_parse("{\"tool\": \"noop\"}", 16, &req, &err), 0);
	ASSERT_EQ(req.id, -1);
	ASSERT_EQ(json_object_size(req.args), 0);
	broker_request_free(&req);
}

TEST(broker_request_errors)
{
	struct broker_request req;
	struct broker_error err = { 0 };

	refused("", BROKER_E_JSON, "not a JSON object");
	refused("[1]", BROKER_E_JSON, "not a JSON object");
	refused("{\"tool\": \"noop\"", BROKER_E_JSON, "not a JSON object");
	refused("{\"tool\": \"noop\", \"tool\": \"x\"}", BROKER_E_JSON, "not a JSON object");
	refused("{\"id\": 1}", BROKER_E_REQUEST, "\"tool\" is missing");
	refused("{\"tool\": 5}", BROKER_E_REQUEST, "\"tool\" must be a tool name");
	refused("{\"tool\": \"Bad\"}", BROKER_E_REQUEST, "\"tool\" must be a tool name");
	refused("{\"tool\": \"\"}", BROKER_E_REQUEST, "\"tool\" must be a tool name");
	refused("{\"tool\": \"a\\u0000b\"}", BROKER_E_JSON, "not a JSON object");
	refused("{\"tool\": "
		"\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}",
		BROKER_E_REQUEST, "\"tool\" must be a tool name");
	refused("{\"tool\": \"noop\", \"id\": -1}", BROKER_E_REQUEST, "\"id\" must be");
	refused("{\"tool\": \"noop\", \"id\": 9007199254740992}", BROKER_E_REQUEST,
		"\"id\" must be");
	refused("{\"tool\": \"noop\", \"id\": \"1\"}", BROKER_E_REQUEST, "\"id\" must be");
	refused("{\"tool\": \"noop\", \"id\": 1.5}", BROKER_E_REQUEST, "\"id\" must be");
	refused("{\"tool\": \"noop\", \"args\": []}", BROKER_E_REQUEST,
		"\"args\" must be an object");
	refused("{\"tool\": \"noop\", \"args\": {\"a\": null}}", BROKER_E_REQUEST,
		"\"a\" must be a string, an integer or a boolean");
	refused("{\"tool\": \"noop\", \"args\": {\"a\": {}}}", BROKER_E_REQUEST,
		"must be a string, an integer or a boolean");
	refused("{\"tool\": \"noop\", \"args\": {\"a\": 1.0}}", BROKER_E_REQUEST,
		"must be a string, an integer or a boolean");
	/* Nothing in the payload names the caller. */
	refused("{\"tool\": \"noop\", \"agent\": \"b\"}", BROKER_E_REQUEST,
		"unknown key \"agent\"");
	refused("{\"tool\": \"noop\", \"uid\": 0}", BROKER_E_REQUEST, "unknown key \"uid\"");
	{
		char json[4096];
		int i, n = snprintf(json, sizeof(json), "{\"tool\": \"noop\", \"args\": {");

		for (i = 0; i <= BROKER_ARGS_MAX; i++)
			n += snprintf(json + n, sizeof(json) - n, "%s\"a%d\": 1", i ? ", " : "", i);
		snprintf(json + n, sizeof(json) - n, "}}");
		refused(json, BROKER_E_REQUEST, "at most 32 arguments");
	}
	/* A usable id is kept for the error reply. */
	ASSERT_EQ(broker_request_parse("{\"id\": 4, \"tool\": 1}", 20, &req, &err), -EINVAL);
	ASSERT_EQ(req.id, 4);
}

static struct tool_arg args[] = {
	{ .name = "path", .type = TOOL_ARG_STRING, .max_length = 8, .pattern = "^/[a-z]*$" },
	{ .name = "mode",
	  .type = TOOL_ARG_STRING,
	  .max_length = 100,
	  .enum_values = (char *[]){ "fast", "slow" },
	  .n_enum = 2 },
	{ .name = "n", .type = TOOL_ARG_INTEGER },
	{ .name = "all", .type = TOOL_ARG_BOOLEAN },
};
static const struct tool tool = { .name = "t", .args = args, .n_args = 4 };

static void args_refused(const char *json, const char *want)
{
	json_t *a = json_loads(json, 0, NULL);
	struct broker_error err = { 0 };

	ASSERT(a);
	ASSERT_EQ(broker_args_check(&tool, a, &err), -EINVAL);
	json_decref(a);
	ASSERT_STREQ(err.code, BROKER_E_ARGS);
	if (!strstr(err.message, want))
		FAIL("%s: expected \"%s\", got \"%s\"", json, want, err.message);
}

TEST(broker_args_schema)
{
	json_t *a = json_loads("{\"path\": \"/abc\", \"mode\": \"slow\", \"n\": 5, \"all\": false}",
			       0, NULL);
	struct broker_error err = { 0 };
	static regex_t re;
	char buf[32];

	/* Not compiled (the registry compiles it when it loads): refused, never unchecked. */
	args_refused("{\"path\": \"/abc\", \"mode\": \"slow\", \"n\": 5, \"all\": false}",
		     "the registry's pattern is not compiled");
	ASSERT_EQ(regcomp(&re, args[0].pattern, REG_EXTENDED | REG_NOSUB), 0);
	args[0].re = &re;

	ASSERT_EQ(broker_args_check(&tool, a, &err), 0);
	ASSERT_STREQ(broker_arg_text(a, "n", buf, sizeof(buf)), "5");
	ASSERT_STREQ(broker_arg_text(a, "all", buf, sizeof(buf)), "false");
	ASSERT_STREQ(broker_arg_text(a, "path", buf, sizeof(buf)), "/abc");
	ASSERT(broker_arg_text(a, "nope", buf, sizeof(buf)) == NULL);
	json_decref(a);
	args_refused("{\"path\": \"/abc\", \"mode\": \"slow\", \"n\": 5}", "\"all\": missing");
	args_refused("{\"path\": \"/a\", \"mode\": \"slow\", \"n\": 5, \"all\": true, \"x\": 1}",
		     "\"x\": t takes no such argument");
	args_refused("{\"path\": 1, \"mode\": \"slow\", \"n\": 5, \"all\": true}",
		     "\"path\": expected a string");
	args_refused("{\"path\": \"/abcdefgh\", \"mode\": \"slow\", \"n\": 5, \"all\": true}",
		     "\"path\": longer than 8 bytes");
	args_refused("{\"path\": \"abc\", \"mode\": \"slow\", \"n\": 5, \"all\": true}",
		     "\"path\": does not match the pattern ^/[a-z]*$");
	args_refused("{\"path\": \"/a\", \"mode\": \"medium\", \"n\": 5, \"all\": true}",
		     "\"mode\": not one of the allowed values");
	args_refused("{\"path\": \"/a\", \"mode\": \"fast\", \"n\": \"5\", \"all\": true}",
		     "\"n\": expected an integer");
	args_refused("{\"path\": \"/a\", \"mode\": \"fast\", \"n\": 5, \"all\": 1}",
		     "\"all\": expected a boolean");
}

static int rp(const char *s, struct broker_reply *r)
{
	return broker_reply_parse(s, strlen(s), r);
}

TEST(broker_replies)
{
	struct broker_output out = { "ok\n\xff\0x", 6 }, err = { "", 0 };
	struct broker_reply r = { 0 };
	size_t len;
	char *frame;
	json_t *doc;

	doc = broker_reply_ok(3, 7, out, err, true, 2);
	ASSERT_EQ(broker_frame_encode(doc, BROKER_REPLY_MAX, &frame, &len), 0);
	json_decref(doc);
	ASSERT_EQ(broker_reply_parse(frame + BROKER_HDR, len - BROKER_HDR, &r), 0);
	free(frame);
	ASSERT(r.ok);
	ASSERT_EQ(r.id, 3);
	ASSERT_EQ(r.exit_code, 7);
	ASSERT(r.truncated);
	ASSERT_EQ(r.redacted, 2);
	/* Not UTF-8, and NUL: U+FFFD each. */
	ASSERT_STREQ(r.out, "ok\n\xef\xbf\xbd\xef\xbf\xbdx");
	ASSERT_EQ(r.err_len, 0);
	broker_reply_free(&r);

	doc = broker_reply_error(-1, BROKER_E_DENIED, "no");
	ASSERT_EQ(broker_frame_encode(doc, BROKER_REPLY_MAX, &frame, &len), 0);
	json_decref(doc);
	ASSERT_EQ(broker_reply_parse(frame + BROKER_HDR, len - BROKER_HDR, &r), 0);
	free(frame);
	ASSERT(!r.ok);
	ASSERT_EQ(r.id, -1);
	ASSERT_STREQ(r.error.code, BROKER_E_DENIED);
	ASSERT_STREQ(r.error.message, "no");

	ASSERT_EQ(rp("[]", &r), -EINVAL);
	ASSERT_EQ(rp("{\"id\": 1}", &r), -EINVAL);
	ASSERT_STREQ(r.error.message, "the reply has no \"ok\"");
	ASSERT_EQ(rp("{\"id\": \"x\", \"ok\": true}", &r), -EINVAL);
	ASSERT_EQ(rp("{\"id\": 1, \"ok\": true, \"exit\": 300, \"truncated\": "
		     "false, \"redacted\": 0, \"stdout\": \"\", \"stderr\": \"\"}",
		     &r),
		  -EINVAL);
	ASSERT_EQ(rp("{\"id\": 1, \"ok\": true, \"exit\": 0, \"truncated\": "
		     "false, \"redacted\": 0, \"stdout\": 1, \"stderr\": \"\"}",
		     &r),
		  -EINVAL);
	ASSERT_STREQ(r.error.message, "the reply's \"stdout\" is not a string");
	ASSERT_EQ(rp("{\"id\": 1, \"ok\": false}", &r), -EINVAL);
}

/* The binary request of a JSON one, for the tests below to corrupt. */
static char *binary_of(const char *json, size_t *len)
{
	struct broker_error err = { 0 };
	struct broker_request req;
	char *bin;

	ASSERT_EQ(broker_request_parse(json, strlen(json), &req, &err), 0);
	ASSERT_EQ(broker_request_encode(&req, &bin, len), 0);
	broker_request_free(&req);
	return bin;
}

static void decode_refused(const char *bin, size_t len, const char *want)
{
	struct broker_error err = { 0 };
	struct broker_request req;

	ASSERT_EQ(broker_request_decode(bin, len, &req, &err), -EINVAL);
	ASSERT(req.args == NULL);
	ASSERT_STREQ(err.code, BROKER_E_REQUEST);
	if (!strstr(err.message, want))
		FAIL("expected a message containing \"%s\", got \"%s\"", want, err.message);
}

TEST(broker_binary_request_round_trip)
{
	static const char json[] = "{\"args\": {\"path\": \"/w\\u00e9\", \"all\": true, \"n\": "
				   "-9223372036854775807, \"b\": false, \"\": \"\"}, \"tool\": "
				   "\"fs.read\", \"id\": 9007199254740991}";
	struct broker_request req, back;
	struct broker_error err = { 0 };
	struct bmsg_request h;
	struct bmsg_arg a;
	size_t len;
	char *bin;

	ASSERT_EQ(broker_request_parse(json, strlen(json), &req, &err), 0);
	ASSERT_EQ(broker_request_encode(&req, &bin, &len), 0);
	memcpy(&h, bin, sizeof(h));
	ASSERT_EQ(h.id, 9007199254740991LL);
	ASSERT_EQ(h.nargs, 5);
	ASSERT_EQ(h.tool_len, 7);
	/* Sorted by name: "" first. */
	memcpy(&a, bin + sizeof(h), sizeof(a));
	ASSERT_EQ(a.type, BMSG_ARG_STRING);
	ASSERT_EQ(a.name_len, 0);
	ASSERT_EQ(broker_request_decode(bin, len, &back, &err), 0);
	ASSERT_EQ(back.id, req.id);
	ASSERT_STREQ(back.tool, "fs.read");
	ASSERT(json_equal(back.args, req.args));
	broker_request_free(&back);
	broker_request_free(&req);
	free(bin);
	/* No id, no args. */
	bin = binary_of("{\"tool\": \"noop\"}", &len);
	ASSERT_EQ(len, sizeof(h));
	ASSERT_EQ(broker_request_decode(bin, len, &back, &err), 0);
	ASSERT_EQ(back.id, -1);
	ASSERT_EQ(json_object_size(back.args), 0);
	broker_request_free(&back);
	free(bin);
}

/* agentd's side: every field of a worker's request is checked. */
TEST(broker_binary_request_refusals)
{
	struct bmsg_request h;
	struct bmsg_arg a;
	size_t len, off;
	char *bin = binary_of("{\"tool\": \"t\", \"id\": 1, \"args\": {\"a\": \"xy\", \"b\": 1, "
			      "\"c\": true}}",
			      &len);
	char *tmp = malloc(len + 1);

	ASSERT(tmp);
	decode_refused(bin, sizeof(h) - 1, "under its header");
	decode_refused(bin, len - 1, "truncated");
	memcpy(tmp, bin, len);
	tmp[len] = 0;
	decode_refused(tmp, len + 1, "1 bytes after the arguments");
	/* The header. */
	memcpy(&h, bin, sizeof(h));
#define HDR_REFUSED(field, value)                                                                  \
	do {                                                                                       \
		struct bmsg_request x = h;                                                         \
		x.field = value;                                                                   \
		memcpy(tmp, bin, len);                                                             \
		memcpy(tmp, &x, sizeof(x));                                                        \
		decode_refused(tmp, len, "header out of range");                                   \
	} while (0)
	HDR_REFUSED(id, -2);
	HDR_REFUSED(id, BROKER_ID_MAX + 1);
	HDR_REFUSED(nargs, BROKER_ARGS_MAX + 1);
	HDR_REFUSED(tool_len, 0);
	HDR_REFUSED(tool_len, TOOL_NAME_MAX + 1);
	HDR_REFUSED(tool_len, 2); /* "t\0": a NUL in the name */
	HDR_REFUSED(tool[0], 'T');
	HDR_REFUSED(tool[5], 'x'); /* past tool_len: not zero */
	/* The first argument ("a": "xy"), then the others. */
	off = sizeof(h);
	memcpy(&a, bin + off, sizeof(a));
#define ARG_REFUSED(at, field, value, want)                                                        \
	do {                                                                                       \
		struct bmsg_arg x;                                                                 \
		memcpy(tmp, bin, len);                                                             \
		memcpy(&x, tmp + (at), sizeof(x));                                                 \
		x.field = value;                                                                   \
		memcpy(tmp + (at), &x, sizeof(x));                                                 \
		decode_refused(tmp, len, want);                                                    \
	} while (0)
	ARG_REFUSED(off, pad, 1, "truncated or padded");
	ARG_REFUSED(off, type, 0, "a bad type");
	ARG_REFUSED(off, type, BMSG_ARG_BOOLEAN, "a bad type");
	ARG_REFUSED(off, type, BMSG_ARG_INTEGER, "a bad type");
	ARG_REFUSED(off, value_len, 1000, "truncated");
	/* The string's bytes: a NUL, then not UTF-8. */
	memcpy(tmp, bin, len);
	tmp[off + sizeof(a) + 1] = '\0';
	decode_refused(tmp, len, "a bad type, value or name");
	tmp[off + sizeof(a) + 1] = (char)0xc3;
	decode_refused(tmp, len, "a bad type, value or name");
	/* Names: out of order, twice the same, not UTF-8. */
	memcpy(tmp, bin, len);
	tmp[off + sizeof(a)] = 'z';
	decode_refused(tmp, len, "out of order");
	tmp[off + sizeof(a)] = 'b';
	decode_refused(tmp, len, "out of order");
	tmp[off + sizeof(a)] = (char)0xff;
	decode_refused(tmp, len, "a bad type, value or name");
	/* The boolean (the last argument, "c"): 2 is no boolean. */
	memcpy(tmp, bin, len);
	tmp[len - 1] = 2;
	decode_refused(tmp, len, "a bad type, value or name");
	free(tmp);
	free(bin);
}

TEST(broker_argument_names_fit_the_binary_form)
{
	char json[600], name[300];

	memset(name, 'k', 256);
	name[256] = '\0';
	snprintf(json, sizeof(json), "{\"tool\": \"t\", \"args\": {\"%s\": 1}}", name);
	refused(json, BROKER_E_REQUEST, "names are at most 255 bytes");
}
