// SPDX-License-Identifier: GPL-2.0
/* The drill record's reader: a record parses whole; a malformed one names the file, line and
 * column of what is wrong; a missing one is "never drilled". */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "harness.h"
#include "testlib.h"
#include "policy/drill_record.h"

#define HEAD                                                                                       \
	"{\"agent\": \"demo\", \"generation\": 7, \"policy_digest\": \"ab12\",\n"                  \
	" \"started\": \"2026-12-03T15:00:00.000000000Z\",\n"                                      \
	" \"ended\": \"2026-12-03T15:00:02.100000000Z\",\n"

static int parse(const char *text, struct drill_record *r, char *err, size_t errsz)
{
	err[0] = '\0';
	return drill_record_parse("d.json", text, strlen(text), r, err, errsz);
}

TEST(drill_record_parses_every_field)
{
	const char *text = HEAD " \"boundaries\": [\n"
				"  {\"boundary\": \"files\", \"verdict\": \"blocked\", \"denied\": "
				"{\"op\": \"open /etc/shadow\", \"errno\": \"EACCES\", \"layer\": "
				"\"BPF LSM\"}, \"allowed\": {\"op\": \"open w\", \"ok\": true}},\n"
				"  {\"boundary\": \"egress\", \"verdict\": \"escaped\"},\n"
				"  {\"boundary\": \"ipc\", \"verdict\": \"not-drilled\", \"why\": "
				"\"no IPC here\"}]}";
	struct drill_record r;
	char err[256];

	ASSERT_OK(parse(text, &r, err, sizeof(err)));
	ASSERT_STREQ(r.agent, "demo");
	ASSERT_EQ(r.generation, 7);
	ASSERT_STREQ(r.policy_digest, "ab12");
	ASSERT_EQ(r.ended_sec, 1796310002LL);
	ASSERT_EQ(r.b[BOUNDARY_FILES].verdict, DRILL_BLOCKED);
	ASSERT_STREQ(r.b[BOUNDARY_FILES].denied_errno, "EACCES");
	ASSERT_STREQ(r.b[BOUNDARY_FILES].layer, "BPF LSM");
	ASSERT_EQ(r.b[BOUNDARY_EGRESS].verdict, DRILL_ESCAPED);
	ASSERT_EQ(r.b[BOUNDARY_IPC].verdict, DRILL_NOT_DRILLED);
	ASSERT_STREQ(r.b[BOUNDARY_IPC].why, "no IPC here");
	ASSERT_EQ(r.b[BOUNDARY_EXEC].verdict, DRILL_NONE);
	ASSERT_STREQ(drill_verdict_name(r.b[BOUNDARY_EXEC].verdict), "never drilled");
}

TEST(drill_record_errors_name_line_and_column)
{
	struct drill_record r;
	char err[256];

	ASSERT_EQ(parse(HEAD " \"boundaries\": [\n  {\"boundary\": \"files\", \"verdict\": "
			     "\"maybe\"}]}",
			&r, err, sizeof(err)),
		  -EINVAL);
	ASSERT(strstr(err, "d.json:5:3: /boundaries/0: verdict \"maybe\""));
	ASSERT_EQ(parse(HEAD " \"boundaries\": [{\"boundary\": \"files\", \"verdict\": "
			     "\"blocked\"},\n {\"boundary\": \"files\", \"verdict\": "
			     "\"blocked\"}]}",
			&r, err, sizeof(err)),
		  -EINVAL);
	ASSERT(strstr(err,
		      "d.json:5:15: /boundaries/1/boundary: boundary \"files\" appears twice"));
	ASSERT_EQ(parse(HEAD " \"boundaries\": [{\"boundary\": \"moat\", \"verdict\": "
			     "\"blocked\"}]}",
			&r, err, sizeof(err)),
		  -EINVAL);
	ASSERT(strstr(err, "no boundary \"moat\""));
	ASSERT_EQ(parse("{\"agent\": \"demo\", \"generation\": 0}", &r, err, sizeof(err)), -EINVAL);
	ASSERT(strstr(err, "d.json:1:33: /generation: must be an integer"));
	ASSERT_EQ(parse(HEAD " \"boundaries\": 3}", &r, err, sizeof(err)), -EINVAL);
	ASSERT(strstr(err, "d.json:4:16: /boundaries:"));
	ASSERT_EQ(parse("{\"agent\": \"demo\",\n \"generation\": 7, \"policy_digest\": \"x\", "
			"\"started\": \"yesterday\"}",
			&r, err, sizeof(err)),
		  -EINVAL);
	ASSERT(strstr(err, "d.json:2:52: /started: not a UTC time"));
	/* Not JSON: jansson's own line and column. */
	ASSERT_EQ(parse("{\"agent\":\n ]", &r, err, sizeof(err)), -EINVAL);
	ASSERT(!strncmp(err, "d.json:2:", 9));
}

TEST(drill_record_missing_is_never_drilled)
{
	char dir[256], path[300], err[256] = "";
	struct drill_record r;
	FILE *f;

	test_dir(dir, sizeof(dir));
	ASSERT_EQ(drill_record_load(dir, "demo", &r, err, sizeof(err)), -ENOENT);
	snprintf(path, sizeof(path), "%s/drill", dir);
	ASSERT_OK(mkdir(path, 0700));
	snprintf(path, sizeof(path), "%s/drill/demo.json", dir);
	f = fopen(path, "w");
	ASSERT(f);
	fputs("{\"agent\": \"demo\"", f);
	fclose(f);
	ASSERT_EQ(drill_record_load(dir, "demo", &r, err, sizeof(err)), -EINVAL);
	ASSERT(strstr(err, "/drill/demo.json:1:"));
}
