// SPDX-License-Identifier: GPL-2.0
/* grant.add, grant.ls and grant.rm in the control codec: what each needs, and the round trip. */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "wire/control.h"
#include "harness.h"

static int parse(const char *json, struct control_request *req, struct control_error *err)
{
	memset(err, 0, sizeof(*err));
	return control_request_parse(json, strlen(json), req, err);
}

static void refused(const char *json, const char *code)
{
	struct control_request req;
	struct control_error err;

	if (parse(json, &req, &err) != -EINVAL)
		FAIL("accepted: %s", json);
	if (strcmp(err.code, code) || !err.message[0])
		FAIL("%s: code %s (%s), expected %s", json, err.code, err.message, code);
}

TEST(control_grant_fields_checked)
{
	refused("{\"id\":1,\"cmd\":\"grant.add\",\"name\":\"a\"}", CONTROL_E_REQUEST);
	/* A grant ends: for_ms or once. */
	refused("{\"id\":1,\"cmd\":\"grant.add\",\"name\":\"a\",\"kind\":\"exec\",\"target\":\"/"
		"x\"}",
		CONTROL_E_REQUEST);
	refused("{\"id\":1,\"cmd\":\"grant.add\",\"name\":\"a\",\"kind\":\"file\",\"target\":\"/"
		"x\","
		"\"once\":true}",
		CONTROL_E_REQUEST);
	/* Rights for a path grant, and for it only. */
	refused("{\"id\":1,\"cmd\":\"grant.add\",\"name\":\"a\",\"kind\":\"path\",\"target\":\"/"
		"x\","
		"\"once\":true}",
		CONTROL_E_REQUEST);
	refused("{\"id\":1,\"cmd\":\"grant.add\",\"name\":\"a\",\"kind\":\"exec\",\"target\":\"/"
		"x\","
		"\"rights\":\"read\",\"once\":true}",
		CONTROL_E_REQUEST);
	refused("{\"id\":1,\"cmd\":\"grant.add\",\"name\":\"a\",\"kind\":\"exec\",\"target\":\"/"
		"x\","
		"\"for_ms\":0}",
		CONTROL_E_REQUEST);
	refused("{\"id\":1,\"cmd\":\"grant.add\",\"name\":\"a\",\"kind\":\"exec\",\"target\":\"/"
		"x\","
		"\"for_ms\":31622400001}",
		CONTROL_E_REQUEST);
	refused("{\"id\":1,\"cmd\":\"grant.rm\"}", CONTROL_E_REQUEST);
	refused("{\"id\":1,\"cmd\":\"grant.rm\",\"grant\":0}", CONTROL_E_REQUEST);
	/* Fields of another command. */
	refused("{\"id\":1,\"cmd\":\"grant.ls\",\"grant\":3}", CONTROL_E_REQUEST);
	refused("{\"id\":1,\"cmd\":\"grant.rm\",\"grant\":3,\"once\":true}", CONTROL_E_REQUEST);
	refused("{\"id\":1,\"cmd\":\"agent.add\",\"name\":\"a\",\"policy\":\"/p\",\"once\":true}",
		CONTROL_E_REQUEST);
}

TEST(control_grant_roundtrip)
{
	struct control_request in = { .id = 9, .cmd = CONTROL_GRANT_ADD }, out;
	struct control_error err = { "", "" };
	json_t *doc;
	char *text;

	strcpy(in.name, "a");
	strcpy(in.grant.kind, "path");
	strcpy(in.grant.target, "/srv/x");
	strcpy(in.grant.rights, "read,write");
	in.grant.for_ms = 1500;
	in.grant.once = true;
	doc = control_request_json(&in);
	text = json_dumps(doc, JSON_COMPACT);
	ASSERT(text);
	ASSERT_EQ(parse(text, &out, &err), 0);
	ASSERT(!memcmp(&in.grant, &out.grant, sizeof(in.grant)));
	ASSERT(!strcmp(out.name, "a"));
	free(text);
	json_decref(doc);
}
