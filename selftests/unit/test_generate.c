// SPDX-License-Identifier: GPL-2.0
/* policy generate's rules (policy/generate.c): what a deny record grants, how paths fold,
 * what is never granted, and that the output loads as a policy. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>
#include "harness.h"
#include "policy/generate.h"
#include "policy/policy.h"
#include "testlib.h"

/* A deny record as agentd writes it (the fields generate reads). */
static json_t *file_rec(const char *op, const char *path, const char *detail)
{
	return json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:i}, s:s, s:s}", "kind",
			 strcmp(op, "bprm_check_security") && strcmp(op, "mmap_file") ? "file"
										      : "exec",
			 "op", op, "agent_name", "t", "object", "path", path, "dev", "8:1", "ino",
			 1, "decision", "deny", "detail", detail);
}

static json_t *net_rec(const char *op, const char *addr, int port, const char *detail)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:i}, s:s, s:s}", "kind", "net", "op", op,
			 "object", "family", strchr(addr, ':') ? "inet6" : "inet", "addr", addr,
			 "port", port, "decision", "deny", "detail", detail);
}

static int feed(struct gen *g, json_t *rec)
{
	int r = gen_record(g, rec);

	json_decref(rec);
	return r;
}

static void read_of(struct gen *g, const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ASSERT_EQ(feed(g, file_rec("file_open", path, "reason=no-rule need=0x1 have=0x0")), 1);
}

static json_t *files_of(struct gen *g)
{
	json_t *doc = gen_policy(g, NULL), *files;

	ASSERT(doc);
	files = json_incref(json_object_get(doc, "files"));
	json_decref(doc);
	return files;
}

static bool has_rule(json_t *files, const char *path, const char *rights)
{
	char got[256] = "";
	json_t *r, *e;
	size_t i, k;

	json_array_foreach(files, i, r)
	{
		if (strcmp(json_string_value(json_object_get(r, "path")), path))
			continue;
		json_array_foreach(json_object_get(r, "rights"), k, e)
		{
			strcat(got, k ? "," : "");
			strcat(got, json_string_value(e));
		}
		return !strcmp(got, rights);
	}
	return false;
}

static struct gen *fresh(bool broad)
{
	static struct policy_vars none;
	struct gen_opts o = { .allow_broad = broad, .vars = &none };
	struct gen *g = gen_new(NULL, "t", &o);

	ASSERT(g);
	return g;
}

/* Two files of a directory stay two rules; the third makes the directory one rule, with the
 * union of their rights, and a directory of three folded directories folds again. */
TEST(generate_folds_three_entries_of_a_directory_into_it)
{
	char dir[PATH_MAX], sub[PATH_MAX + 16];
	struct gen *g = fresh(false);
	json_t *files;
	int i;

	test_tmpdir(dir, sizeof(dir), "gen-fold");
	read_of(g, dir, "a");
	read_of(g, dir, "b");
	files = files_of(g);
	ASSERT_EQ(json_array_size(files), 2);
	json_decref(files);
	ASSERT_EQ(feed(g, file_rec("path_truncate", strcat(strcpy(sub, dir), "/c"),
				   "reason=no-rule need=0x40 have=0x0")),
		  1);
	files = files_of(g);
	ASSERT_EQ(json_array_size(files), 1);
	ASSERT(has_rule(files, dir, "read,truncate"));
	json_decref(files);
	gen_free(g);

	g = fresh(false);
	for (i = 0; i < 3; i++) {
		snprintf(sub, sizeof(sub), "%s/d%d", dir, i);
		read_of(g, sub, "x");
		read_of(g, sub, "y");
		read_of(g, sub, "z");
	}
	files = files_of(g);
	if (json_array_size(files) != 1)
		FAIL("%s", json_dumps(files, 0));
	ASSERT(has_rule(files, dir, "read"));
	json_decref(files);
	gen_free(g);
}

/* Folding stops below /, a top-level directory and a home; a record on one of them is not
 * granted; --allow-broad lifts both. */
TEST(generate_never_widens_to_a_top_level_directory_or_home)
{
	struct gen *g = fresh(false);
	json_t *files;
	size_t n;

	read_of(g, "/etc", "hostname");
	read_of(g, "/etc", "hosts");
	read_of(g, "/etc", "passwd");
	read_of(g, "/home/u", "a");
	read_of(g, "/home/u", "b");
	read_of(g, "/home/u", "c");
	ASSERT_EQ(feed(g, file_rec("file_open", "/etc", "reason=no-rule need=0x1 have=0x0")), 0);
	ASSERT_EQ(feed(g, file_rec("file_open", "/root", "reason=no-rule need=0x1 have=0x0")), 0);
	files = files_of(g);
	ASSERT_EQ(json_array_size(files), 6);
	ASSERT(has_rule(files, "/etc/hosts", "read"));
	ASSERT(!has_rule(files, "/etc", "read"));
	json_decref(files);
	gen_skips(g, &n);
	ASSERT_EQ(n, 2);
	gen_free(g);

	g = fresh(true);
	read_of(g, "/etc", "hostname");
	read_of(g, "/etc", "hosts");
	read_of(g, "/etc", "passwd");
	files = files_of(g);
	ASSERT_EQ(json_array_size(files), 1);
	ASSERT(has_rule(files, "/etc", "read"));
	json_decref(files);
	gen_free(g);
	ASSERT(gen_path_broad("/"));
	ASSERT(gen_path_broad("/usr"));
	ASSERT(gen_path_broad("/home/u"));
	ASSERT(gen_path_broad("/tmp/home"));
	ASSERT(!gen_path_broad("/tmp"));
	ASSERT(!gen_path_broad("/usr/lib"));
	ASSERT(!gen_path_broad("/home/u/proj"));
}

/* Structural destinations, self-protection, truncated paths, internal objects, explicit denies
 * and reasons no grant answers are kept out, each with its why; the public host is granted. */
TEST(generate_never_grants_structural_self_protection_or_unnamed_objects)
{
	struct gen *g = fresh(false);
	const struct gen_skip *s;
	json_t *doc, *connect, *rec;
	size_t n;

	ASSERT_EQ(feed(g, net_rec("connect4", "169.254.169.254", 80, "reason=rule")), 0);
	ASSERT_EQ(feed(g, net_rec("connect4", "10.1.2.3", 443, "reason=structural-deny")), 0);
	ASSERT_EQ(feed(g, net_rec("connect6", "::ffff:127.0.0.1", 22, "reason=no-rule")), 0);
	ASSERT_EQ(feed(g, net_rec("connect6", "64:ff9b::a9fe:a9fe", 80, "reason=no-rule")), 0);
	ASSERT_EQ(feed(g, net_rec("connect4", "192.0.2.1", 8080, "reason=no-rule")), 1);
	ASSERT_EQ(feed(g, net_rec("sendmsg4", "192.0.2.1", 53, "reason=no-rule")), 1);
	rec = file_rec("file_open", "/tmp/x", "reason=no-rule need=0x1 have=0x0");
	json_object_set_new(json_object_get(rec, "object"), "path_truncated", json_true());
	ASSERT_EQ(feed(g, rec), 0);
	ASSERT_EQ(feed(g, file_rec("file_open", "pipe:[77]",
				   "reason=no-rule need=0x1 have=0x0 internal")),
		  0);
	ASSERT_EQ(feed(g, file_rec("file_open", "/srv/w/.git/hooks/x",
				   "reason=rule need=0x1 have=0x0")),
		  0);
	ASSERT_EQ(feed(g, file_rec("bprm_check_security", "/srv/w/a.out",
				   "reason=exec-from-writable-tree need=0x4 have=0x7")),
		  0);
	ASSERT_EQ(feed(g, json_pack("{s:s, s:s, s:s, s:s}", "kind", "self", "op", "bpf", "decision",
				    "deny", "detail", "reason=self-protection")),
		  0);
	ASSERT_EQ(feed(g, json_pack("{s:s, s:s, s:s, s:s}", "kind", "self", "op", "capable",
				    "decision", "would-deny", "detail",
				    "reason=capability-not-granted target_pid=0 arg=10")),
		  1);
	ASSERT_EQ(feed(g, json_pack("{s:s, s:s, s:s, s:s}", "kind", "self", "op", "task_kill",
				    "decision", "deny", "detail", "reason=target-outside-agent")),
		  0);
	s = gen_skips(g, &n);
	ASSERT_EQ(n, 10);
	ASSERT(strstr(s[0].why, "structural"));
	doc = gen_policy(g, NULL);
	connect = json_object_get(json_object_get(doc, "network"), "connect");
	ASSERT_EQ(json_array_size(connect), 2);
	ASSERT_STREQ(json_string_value(json_object_get(json_array_get(connect, 0), "cidr")),
		     "192.0.2.1/32");
	ASSERT_STREQ(json_string_value(json_object_get(json_array_get(connect, 0), "protocol")),
		     "any");
	ASSERT_STREQ(json_string_value(json_object_get(json_array_get(connect, 1), "protocol")),
		     "udp");
	ASSERT_STREQ(json_string_value(json_array_get(json_object_get(doc, "capabilities"), 0)),
		     "net_bind_service");
	ASSERT(!json_object_get(doc, "files") || !json_array_size(json_object_get(doc, "files")));
	json_decref(doc);
	gen_free(g);
}

static char *generate(const char *const *paths, size_t n, bool reverse)
{
	struct gen *g = fresh(false);
	json_t *doc;
	char *out;
	size_t i;

	for (i = 0; i < n; i++)
		read_of(g, paths[reverse ? n - 1 - i : i], "f");
	feed(g, net_rec("connect4", "192.0.2.9", reverse ? 80 : 443, "reason=no-rule"));
	feed(g, net_rec("connect4", "192.0.2.9", reverse ? 443 : 80, "reason=no-rule"));
	doc = gen_policy(g, NULL);
	out = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(doc);
	gen_free(g);
	return out;
}

/* The same records in another order give the same bytes. */
TEST(generate_output_is_deterministic)
{
	static const char *const paths[] = { "/srv/q", "/srv/a", "/opt/m/n", "/srv/b/c" };
	char *a = generate(paths, 4, false), *b = generate(paths, 4, true);

	ASSERT(a && b);
	ASSERT_STREQ(a, b);
	free(a);
	free(b);
}

/* A rule of the current policy that gave too little is widened in place (and the diff says
 * so), paths under the policy's vars are written with them, and the output loads. */
TEST(generate_widens_the_current_rule_and_loads_as_a_policy)
{
	struct policy_errors errs = { 0 };
	struct policy_var var[2];
	struct policy_vars vars = { var, 2 };
	struct gen_opts o = { .vars = &vars };
	char dir[PATH_MAX], tmp[PATH_MAX], f[PATH_MAX + 8], path[PATH_MAX + 16], *out;
	json_t *cur, *doc, *changes;
	struct policy *p = NULL;
	struct gen *g;

	test_tmpdir(dir, sizeof(dir), "gen-widen");
	test_tmpdir(tmp, sizeof(tmp), "gen-tmp");
	snprintf(f, sizeof(f), "%s/f", dir);
	test_write(f, "x\n", 0644);
	var[0] = (struct policy_var){ "tmp", tmp };
	var[1] = (struct policy_var){ "home", tmp };
	cur = json_pack("{s:s, s:{s:s}, s:[{s:s, s:[s]}]}", "name", "t", "vars", "workspace", dir,
			"files", "path", "${workspace}/f", "rights", "read");
	g = gen_new(cur, "t", &o);
	ASSERT(g);
	ASSERT_EQ(feed(g, file_rec("file_open", f, "reason=rule need=0x2 have=0x1")), 1);
	ASSERT_EQ(feed(g, file_rec("path_mkdir", "/tmp/new", "reason=no-rule need=0x8 have=0x0")),
		  1);
	ASSERT_EQ(feed(g, file_rec("bprm_check_security", "/bin/true",
				   "reason=no-rule need=0x4 have=0x0")),
		  1);
	doc = gen_policy(g, &changes);
	ASSERT_EQ(json_array_size(changes), 3);
	ASSERT_STREQ(json_string_value(json_array_get(changes, 0)), "+ files ${tmp}: create");
	ASSERT_STREQ(json_string_value(json_array_get(changes, 1)),
		     "~ files ${workspace}/f: read -> read,write");
	ASSERT_STREQ(json_string_value(json_array_get(changes, 2)), "+ exec /bin/true");
	out = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	snprintf(path, sizeof(path), "%s/gen.json", tmp);
	test_write(path, out, 0644);
	if (policy_load(path, &vars, NULL, &p, &errs))
		FAIL("the generated policy does not load (%zu errors): %s", errs.n,
		     errs.n ? errs.v[0].msg : "");
	ASSERT_EQ(p->exec.n_allow, 1);
	policy_free(p);
	policy_errors_clear(&errs);
	free(out);
	json_decref(changes);
	json_decref(doc);
	json_decref(cur);
	gen_free(g);
}
