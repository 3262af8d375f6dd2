// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: the filter line a stream subscriber sends (agentd reads it from anyone the
 * stream socket admits), then the filter matched against records and against the same bytes
 * taken as a record line; a record's key taken in memory (the stream's) must match as its line
 * does (query's and follow's). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "audit/audit.h"

#define FILTER_MAX 512 /* what audit_stream.c reads */

static const char *const records[] = {
	"{\"v\":1,\"seq\":5,\"time\":\"2026-11-30T02:07:13.424120121Z\",\"host\":\"h\",\"kind\":"
	"\"net\",\"op\":\"connect4\",\"agent\":1,\"cgroup\":9,\"pid\":2,\"tid\":2,\"uid\":0,"
	"\"comm\":\"bash\",\"object\":{\"family\":\"inet\",\"addr\":\"127.0.0.1\",\"port\":22},"
	"\"decision\":\"deny\",\"rule\":0,\"gen\":1,\"prev\":\"00\"}",
	"{\"v\":1,\"seq\":6,\"time\":\"2026-11-30T02:07:13Z\",\"host\":\"h\",\"kind\":"
	"\"lifecycle\","
	"\"op\":\"agent-add\",\"agent\":3,\"agent_name\":\"coder\",\"prev\":\"00\"}",
	/* an inode number past INT64_MAX: read again with it quoted */
	"{\"v\":1,\"seq\":7,\"time\":\"2026-11-30T02:07:14Z\",\"host\":\"h\",\"kind\":\"file\","
	"\"op\":\"file-open\",\"agent\":1,\"object\":{\"path\":\"/w/\\\"9\",\"dev\":\"0:1\","
	"\"ino\":18446744073709551614},\"decision\":\"deny\",\"prev\":\"00\"}",
	/* a kernel record with its agent's name */
	"{\"v\":1,\"seq\":8,\"time\":\"2026-11-30T02:07:15.000000001Z\",\"host\":\"h\",\"kind\":"
	"\"file\",\"op\":\"file_open\",\"agent\":3,\"agent_name\":\"coder\",\"decision\":"
	"\"deny\",\"rule\":0,\"gen\":1,\"prev\":\"00\"}",
};

/* The same record built in memory: the key the stream's filter reads. */
static void match_in_memory(const struct audit_filter *f)
{
	struct audit_record r = { .kind = AUDIT_KIND_FILE,
				  .agent = 3,
				  .decision = AUDIT_DECISION_DENY };
	const char *line = records[3];
	struct audit_key k;

	strcpy(r.agent_name, "coder");
	audit_key_of(&r, 1796004435000000001ULL, &k);
	if (audit_filter_match_key(f, &k) != audit_filter_match(f, line, strlen(line)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct audit_filter f;
	char line[FILTER_MAX];
	size_t i, n = size < FILTER_MAX - 1 ? size : FILTER_MAX - 1;

	memcpy(line, data, n);
	line[n] = '\0';
	if (audit_filter_parse(&f, line))
		return 0;
	for (i = 0; i < sizeof(records) / sizeof(records[0]); i++)
		audit_filter_match(&f, records[i], strlen(records[i]));
	audit_filter_match(&f, (const char *)data, size);
	match_in_memory(&f);
	return 0;
}
