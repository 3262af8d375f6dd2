// SPDX-License-Identifier: GPL-2.0
/*
 * The one policy loader (agentd, agentctl run, policy check): tools, places, the digest; and the
 * objects it resolves, which every layer then applies.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "harness.h"
#include "policy/compile.h"
#include "policy/load.h"
#include "sandbox/landlock.h"
#include "testlib.h"

static const char tools_json[] =
	"{\"tools\": [{\"name\": \"noop\", \"effect\": \"observe\", \"builtin\": \"noop\"}]}\n";
static const char policy_json[] = "{\"name\": \"t\", \"tools\": [\"noop\"]}\n";

struct files {
	char policy[PATH_MAX], tools[PATH_MAX];
};

static void files(struct files *f, const char *policy, const char *tools)
{
	test_file(f->policy, sizeof(f->policy), "p.json", policy);
	test_file(f->tools, sizeof(f->tools), "tools.json", tools);
}

/* Loads src; the first error formatted in first. */
static int load(const struct policy_source *src, struct policy **p, struct tools_registry **reg,
		char *first, size_t firstsz)
{
	struct policy_errors errs = { 0 };
	int err = policy_load_full(src, p, reg, &errs);

	first[0] = '\0';
	if (errs.n)
		policy_error_format(&errs.v[0], first, firstsz);
	policy_errors_clear(&errs);
	return err;
}

TEST(policy_load_full_checks_tools_against_the_registry)
{
	struct tools_registry *reg;
	struct policy *p;
	struct files f;
	char first[1024];

	files(&f, policy_json, tools_json);
	ASSERT_EQ(load(&(struct policy_source){ .path = f.policy, .tools = f.tools }, &p, &reg,
		       first, sizeof(first)),
		  0);
	ASSERT(reg && p->n_tools == 1 && p->tools[0].def == &reg->tools[0]);
	policy_free(p);
	tools_free(reg);
	/* Without the registry handed over, the tools name no freed definition. */
	ASSERT_EQ(load(&(struct policy_source){ .path = f.policy, .tools = f.tools }, &p, NULL,
		       first, sizeof(first)),
		  0);
	ASSERT(p->tools[0].def == NULL);
	policy_free(p);
	/* No registry: unchecked, or each tool an error citing no_tools. */
	ASSERT_EQ(load(&(struct policy_source){ .path = f.policy }, &p, &reg, first, sizeof(first)),
		  0);
	ASSERT(reg == NULL);
	policy_free(p);
	ASSERT_EQ(load(&(struct policy_source){ .path = f.policy, .no_tools = "(none here)" }, &p,
		       &reg, first, sizeof(first)),
		  -EINVAL);
	ASSERT(p == NULL && strstr(first, "(none here)") && strstr(first, "noop"));
}

/* Errors keep their file:line:column, the registry's as the policy's. */
TEST(policy_load_full_errors_name_their_place)
{
	struct tools_registry *reg;
	struct policy *p;
	struct files f;
	char first[1024], want[PATH_MAX + 16];

	files(&f, "{\"name\": \"t\",\n \"mode\": \"loud\"}\n", "{\"tools\": [\n 7]}\n");
	ASSERT_EQ(load(&(struct policy_source){ .path = f.tools, .tools = f.tools }, &p, &reg,
		       first, sizeof(first)),
		  -EINVAL);
	snprintf(want, sizeof(want), "%s:2:2:", f.tools);
	ASSERT(!strncmp(first, want, strlen(want)));
	ASSERT_EQ(load(&(struct policy_source){ .path = f.policy }, &p, &reg, first, sizeof(first)),
		  -EINVAL);
	snprintf(want, sizeof(want), "%s:2:", f.policy);
	ASSERT(!strncmp(first, want, strlen(want)));
	ASSERT_EQ(load(&(struct policy_source){ 0 }, &p, &reg, first, sizeof(first)), -EINVAL);
}

/* agentctl run's check: the policy it loads must be the one agentd loaded. */
TEST(policy_load_full_refuses_another_digest)
{
	char digest[POLICY_DIGEST_HEX], first[1024];
	struct policy_source src = { 0 };
	struct policy *p;
	struct files f;

	files(&f, policy_json, tools_json);
	src.path = f.policy;
	ASSERT_EQ(load(&src, &p, NULL, first, sizeof(first)), 0);
	ASSERT_EQ(policy_digest(p, digest), 0);
	policy_free(p);
	src.digest = digest;
	ASSERT_EQ(load(&src, &p, NULL, first, sizeof(first)), 0);
	policy_free(p);
	test_write(f.policy, "{\"name\": \"t\", \"io_uring\": true}\n", 0644);
	ASSERT_EQ(load(&src, &p, NULL, first, sizeof(first)), -ESTALE);
	ASSERT(p == NULL && !first[0]);
}

static void free_policy(void *p)
{
	policy_free(p);
}

static void free_plan(void *pl)
{
	landlock_plan_free(pl);
}

/*
 * The object a path named at the load is the one every layer applies: the compiler emits its
 * device and inode; Landlock, which needs the path opened again, refuses when the path now names
 * another object; and the digest agentctl run checks against agentd's differs.
 */
TEST(policy_objects_are_the_ones_the_load_found)
{
	char dir[PATH_MAX], granted[PATH_MAX + 16], other[PATH_MAX + 16], policy[PATH_MAX + 16];
	char text[4 * PATH_MAX], digest[POLICY_DIGEST_HEX], first[1024];
	struct policy_source src = { .path = policy };
	struct landlock_plan *pl;
	static struct compiled c;
	struct policy *p, *q;
	const char *bad = "";
	struct stat st;

	test_dir(dir, sizeof(dir));
	snprintf(granted, sizeof(granted), "%s/granted", dir);
	snprintf(other, sizeof(other), "%s/other", dir);
	snprintf(policy, sizeof(policy), "%s/policy.json", dir);
	test_write(granted, "granted\n", 0644);
	test_write(other, "other\n", 0644);
	snprintf(text, sizeof(text),
		 "{\"name\": \"t\", \"files\": [{\"path\": \"%s\", \"rights\": [\"read\"]}]}\n",
		 granted);
	test_write(policy, text, 0644);
	ASSERT_OK(stat(granted, &st));
	ASSERT_EQ(load(&src, &p, NULL, first, sizeof(first)), 0);
	test_defer(free_policy, p);
	ASSERT_EQ(policy_digest(p, digest), 0);
	ASSERT_EQ(landlock_compile(p, 1, &pl), 0);
	test_defer(free_plan, pl);
	ASSERT_OK(rename(other, granted));

	ASSERT_EQ(policy_compile(p, &c), 0);
	ASSERT_EQ(c.rs.nfiles, 1);
	ASSERT(c.rs.objects == c.objects);
	ASSERT_EQ(c.objects[0].dev, st.st_dev);
	ASSERT_EQ(c.objects[0].ino, st.st_ino);
	compiled_free(&c);
	ASSERT_EQ(landlock_open(pl, &bad), -ESTALE);
	ASSERT_STREQ(bad, granted);
	src.digest = digest;
	ASSERT_EQ(load(&src, &q, NULL, first, sizeof(first)), -ESTALE);
}
