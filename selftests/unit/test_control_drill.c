// SPDX-License-Identifier: GPL-2.0
/* agent.drill's request: its boundaries, each a name boundary.h knows, each once. */
#include <stdlib.h>
#include <string.h>
#include "boundary.h"
#include "harness.h"
#include "wire/control.h"

static int parse(const char *s, struct control_request *req, struct control_error *err)
{
	return control_request_parse(s, strlen(s), req, err);
}

TEST(control_drill_boundaries)
{
	static const char *const bad[] = {
		"{\"id\": 1, \"cmd\": \"agent.drill\"}",
		"{\"id\": 1, \"cmd\": \"agent.drill\", \"name\": \"a\", \"boundaries\": []}",
		"{\"id\": 1, \"cmd\": \"agent.drill\", \"name\": \"a\", \"boundaries\": \"files\"}",
		"{\"id\": 1, \"cmd\": \"agent.drill\", \"name\": \"a\", \"boundaries\": "
		"[\"disk\"]}",
		"{\"id\": 1, \"cmd\": \"agent.drill\", \"name\": \"a\", \"boundaries\": [1]}",
		"{\"id\": 1, \"cmd\": \"agent.drill\", \"name\": \"a\", "
		"\"boundaries\": [\"exec\", \"exec\"]}",
		"{\"id\": 1, \"cmd\": \"agent.info\", \"name\": \"a\", \"boundaries\": [\"exec\"]}",
	};
	struct control_request req, again;
	struct control_error err;
	json_t *doc;
	char *s;
	size_t i;

	ASSERT_OK(parse("{\"id\": 1, \"cmd\": \"agent.drill\", \"name\": \"a\"}", &req, &err));
	ASSERT_EQ(req.cmd, CONTROL_AGENT_DRILL);
	ASSERT_EQ(req.boundaries, 0U);
	ASSERT_OK(parse("{\"id\": 2, \"cmd\": \"agent.drill\", \"name\": \"a\", "
			"\"boundaries\": [\"audit\", \"files\"]}",
			&req, &err));
	ASSERT_EQ(req.boundaries, (1U << BOUNDARY_AUDIT) | (1U << BOUNDARY_FILES));
	doc = control_request_json(&req);
	s = json_dumps(doc, JSON_COMPACT);
	ASSERT_OK(parse(s, &again, &err));
	ASSERT_EQ(again.boundaries, req.boundaries);
	free(s);
	json_decref(doc);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!parse(bad[i], &req, &err))
			FAIL("accepted: %s", bad[i]);
		ASSERT(!strcmp(err.code, CONTROL_E_REQUEST));
	}
}
