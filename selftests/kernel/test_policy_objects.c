// SPDX-License-Identifier: GPL-2.0
/*
 * A policy's file rules name the objects its load found: the compiler emits their device and
 * inode and the kernel's rules hold those, so a path renamed over between the load and the
 * apply gives its rights to nothing new.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ops.h"
#include "policy/compile.h"
#include "policy/load.h"

struct objects {
	char top[PATH_MAX], granted[PATH_MAX], second_name[PATH_MAX], other[PATH_MAX];
	char policy[PATH_MAX];
};

/*
 * top/ denied inside a readable "/", top/granted readable (with a second name,
 * top/second_name), top/other not named by the policy.
 */
static void objects(struct objects *o)
{
	char text[4 * PATH_MAX];

	test_dir(o->top, sizeof(o->top));
	test_write(PATHF(o->granted, "%s/granted", o->top), "granted\n", 0644);
	ASSERT_OK(link(o->granted, PATHF(o->second_name, "%s/second_name", o->top)));
	test_write(PATHF(o->other, "%s/other", o->top), "other\n", 0644);
	snprintf(text, sizeof(text),
		 "{\"name\": \"t\", \"files\": ["
		 "{\"path\": \"/\", \"rights\": [\"read\", \"exec\"]},"
		 "{\"path\": \"%s\", \"rights\": []},"
		 "{\"path\": \"%s\", \"rights\": [\"read\"]}]}\n",
		 o->top, o->granted);
	test_write(PATHF(o->policy, "%s/policy.json", o->top), text, 0644);
}

static void free_policy(void *p)
{
	policy_free(p);
}

static void free_compiled(void *c)
{
	compiled_free(c);
}

/* Opens path for reading in the agent's cgroup (outside any agent for NULL). */
static int read_in(const struct test_agent *ag, const char *path)
{
	return run_in_cgroup(ag ? ag->cgroup : NULL, op_open, OP(.a = path, .flags = O_RDONLY),
			     NULL);
}

TEST(policy_rule_holds_the_object_loaded_not_a_path_renamed_over)
{
	struct policy_errors errs = { 0 };
	static struct compiled c;
	struct test_agent ag;
	struct objects o;
	struct policy *p;

	objects(&o);
	ASSERT_EQ(policy_load_full(&(struct policy_source){ .path = o.policy }, &p, NULL, &errs),
		  0);
	test_defer(free_policy, p);
	/* Between the load and the apply, another file takes the granted one's path. */
	ASSERT_OK(rename(o.other, o.granted));
	ASSERT_EQ(policy_compile(p, &c), 0);
	test_defer(free_compiled, &c);
	test_agent_start(&ag, &c.rs, true);
	ASSERT_EQ(read_in(&ag, o.second_name), 0);
	ASSERT_EQ(read_in(&ag, o.granted), EPERM);
	ASSERT_EQ(read_in(NULL, o.granted), 0);
}
