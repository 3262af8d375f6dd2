// SPDX-License-Identifier: GPL-2.0
/*
 * VM tier (BPF LSM): agentctl inspect against tampering. A file rule's entry removed from the
 * pinned rule_buckets map, and an LSM program's link unpinned (which releases it: no other
 * holder), both behind agentd's back, make observed differ from declared and exit 1. Done with
 * bpf() on the pins: the guest has no bpftool. A launched agent's map is whole (exit 0).
 */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <jansson.h>
#include "agentd/abi.h"
#include "harness.h"
#include "kernel/probe.h"
#include "testlib.h"

struct ienv {
	struct test_daemon d;
	char policy[PATH_MAX], secret[PATH_MAX];
};

static struct ienv *setup(void)
{
	static struct ienv e;
	char text[PATH_MAX + 512];
	struct probe pr;

	probe_kernel(&pr);
	if (!probe_bpf_lsm_ok(&pr))
		SKIP("BPF LSM does not run here");
	test_daemon_init(&e.d, "insp");
	snprintf(e.policy, sizeof(e.policy), "%s/policy.json", e.d.dir);
	snprintf(e.secret, sizeof(e.secret), "%s/secret", e.d.dir);
	test_write(e.secret, "hush\n", 0644);
	snprintf(text, sizeof(text),
		 "{\"name\": \"t\", \"files\": [{\"path\": \"/\", \"rights\": [\"read\", "
		 "\"exec\"]}, {\"path\": \"%s\", \"rights\": []}],"
		 " \"network\": {\"sockets\": [\"inet\", \"unix\"]}}\n",
		 e.secret);
	test_write(e.policy, text, 0644);
	test_daemon_start(&e.d, NULL);
	return &e;
}

static int inspect(const char *name, json_t **in)
{
	static char out[1 << 20];
	json_error_t jerr;
	json_t *doc;
	int status = agentctl_run(out, sizeof(out), "inspect", name, "--json", NULL);

	doc = json_loads(out, 0, &jerr);
	*in = doc ? json_incref(json_object_get(doc, "inspect")) : NULL;
	json_decref(doc);
	if (!*in)
		FAIL("inspect %s: exit %d: %s", name, status, out);
	return status;
}

static bool matches(const json_t *in, const char *boundary)
{
	const json_t *r;
	size_t i;

	json_array_foreach(json_object_get(in, "boundaries"), i, r)
	{
		if (!strcmp(json_string_value(json_object_get(r, "boundary")), boundary))
			return json_is_true(json_object_get(r, "match"));
	}
	FAIL("no row %s", boundary);
	return false;
}

/* Frees one slot of agent_id's in the pinned rule table, as any root process could. */
static bool remove_one_file_rule(const char *pins, __u32 agent_id)
{
	char path[sizeof(((struct test_daemon *)0)->pins) + 16];
	struct agentd_rule_bucket b;
	bool done = false;
	__u32 i, k;
	int fd;

	snprintf(path, sizeof(path), "%.4000s/rule_buckets", pins);
	fd = bpf_obj_get(path);
	ASSERT_OK(fd);
	for (i = 0; !done && i < AGENTD_RULE_BUCKETS; i++) {
		ASSERT_OK(bpf_map_lookup_elem(fd, &i, &b));
		for (k = 0; !done && k < AGENTD_RULE_BUCKET_SLOTS; k++) {
			if (b.slot[k].owner >> 32 != agent_id)
				continue;
			memset(&b.slot[k], 0, sizeof(b.slot[k]));
			ASSERT_OK(bpf_map_update_elem(fd, &i, &b, BPF_ANY));
			done = true;
		}
	}
	close(fd);
	return done;
}

/*
 * One agentd for both (starting one takes most of a test under emulation): a file rule removed,
 * then put back by a policy reload (the fix a finding names), then an LSM link removed.
 */
TEST(inspect_vm_sees_a_file_rule_and_an_lsm_link_removed_behind_agentds_back)
{
	struct ienv *e = setup();
	char path[sizeof(((struct test_daemon *)0)->pins) + 32], out[4096];
	json_t *in;
	__u32 id;

	test_daemon_add(&e->d, "t-vm", e->policy, NULL, 0);
	ASSERT_EQ(inspect("t-vm", &in), 0);
	ASSERT(json_is_true(json_object_get(in, "consistent")));
	ASSERT(matches(in, "files"));
	id = json_integer_value(json_object_get(in, "id"));
	json_decref(in);

	ASSERT(remove_one_file_rule(e->d.pins, id));
	ASSERT_EQ(inspect("t-vm", &in), 1);
	ASSERT(!json_is_true(json_object_get(in, "consistent")));
	ASSERT(!matches(in, "files"));
	ASSERT(matches(in, "exec"));
	json_decref(in);

	ASSERT_EQ(agentctl_run(out, sizeof(out), "policy", "reload", "t-vm", NULL), 0);
	ASSERT_EQ(inspect("t-vm", &in), 0);
	ASSERT(matches(in, "files"));
	json_decref(in);

	/* The pin is the link's only holder: its removal detaches file_open. */
	snprintf(path, sizeof(path), "%.4000s/link-files-file_open", e->d.pins);
	ASSERT_OK(unlink(path));
	ASSERT_EQ(inspect("t-vm", &in), 1);
	ASSERT(!matches(in, "files"));
	ASSERT(matches(in, "egress"));
	json_decref(in);
}
