// SPDX-License-Identifier: GPL-2.0
/* The files a load reads, recorded and replayed (a policy pinned with its rules). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "harness.h"
#include "policy/jsondoc.h"
#include "testlib.h"

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ASSERT(f);
	ASSERT(fputs(text, f) >= 0);
	ASSERT(!fclose(f));
}

static void load_ok(const char *path, struct jdoc_files *record, const struct jdoc_files *replay)
{
	struct policy_errors errs = { 0 };
	struct jdoc *d;

	jdoc_files_use(record, replay);
	ASSERT_EQ(jdoc_load_file(path, &d, &errs), 0);
	jdoc_files_use(NULL, NULL);
	jdoc_free(d);
	policy_errors_clear(&errs);
}

TEST(jdoc_files_record_replay_and_differ)
{
	struct jdoc_files rec = {}, back = {}, now = {}, again = {};
	struct policy_errors errs = { 0 };
	char dir[PATH_MAX], a[PATH_MAX + 8], b[PATH_MAX + 8], diff[512];
	struct jdoc *d;
	json_t *j;

	test_dir(dir, sizeof(dir));
	snprintf(a, sizeof(a), "%s/a.json", dir);
	snprintf(b, sizeof(b), "%s/b.json", dir);
	write_file(a, "{\"v\": 1}");
	write_file(b, "{\"w\": \"\\u00e9\"}");
	load_ok(a, &rec, NULL);
	load_ok(b, &rec, NULL);
	ASSERT_EQ(rec.n, 2);
	/* Through JSON and back, as kept in the state directory. */
	j = jdoc_files_json(&rec);
	ASSERT(j);
	ASSERT_EQ(jdoc_files_parse(j, &back), 0);
	json_decref(j);
	ASSERT(!jdoc_files_differ(&rec, &back, diff, sizeof(diff)));
	/* Changed on disk: the replay still reads what was recorded; a path never recorded is
	 * an error, not a read of the disk. */
	write_file(a, "{\"v\": 2}");
	unlink(b);
	jdoc_files_use(&again, &back);
	ASSERT_EQ(jdoc_load_file(a, &d, &errs), 0);
	ASSERT(json_integer_value(json_object_get(d->root, "v")) == 1);
	jdoc_free(d);
	ASSERT_EQ(jdoc_load_file("/nonexistent.json", &d, &errs), -ENOENT);
	jdoc_files_use(NULL, NULL);
	ASSERT_EQ(again.n, 1);
	policy_errors_clear(&errs);
	load_ok(a, &now, NULL);
	ASSERT(jdoc_files_differ(&back, &now, diff, sizeof(diff)));
	if (!strstr(diff, "changed: ") || !strstr(diff, "a.json") || !strstr(diff, "gone: ") ||
	    !strstr(diff, "b.json"))
		FAIL("difference: %s", diff);
	jdoc_files_free(&rec);
	jdoc_files_free(&back);
	jdoc_files_free(&now);
	jdoc_files_free(&again);
}
