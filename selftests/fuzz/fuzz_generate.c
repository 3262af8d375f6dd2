// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: audit record lines as agentctl policy generate reads them (each parsed as
 * the verified reader parses it), each fed to the generator, then the policy built: whatever a
 * record holds, no crash, and every rule written is one the generator may write. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "audit/audit.h"
#include "policy/generate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct policy_vars none;
	struct gen_opts o = { .vars = &none };
	struct gen *g = gen_new(NULL, "f", &o);
	const char *p = (const char *)data, *end = p + size, *nl;
	json_t *rec, *doc;

	if (!g)
		return 0;
	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', end - p);
		if (!nl)
			nl = end;
		rec = audit_json_loadb(p, nl - p, 0);
		if (rec)
			gen_record(g, rec);
		json_decref(rec);
	}
	doc = gen_policy(g, NULL);
	/* Never /, a top-level tree or a home without --allow-broad. */
	if (doc) {
		json_t *r;
		size_t i;

		json_array_foreach(json_object_get(doc, "files"), i, r)
		{
			const char *path = json_string_value(json_object_get(r, "path"));

			/* ${var} paths are the operator's trees */
			if (path[0] == '/' && gen_path_broad(path))
				abort();
		}
	}
	json_decref(doc);
	gen_free(g);
	return 0;
}
