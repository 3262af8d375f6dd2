// SPDX-License-Identifier: GPL-2.0
/*
 * VM tier, BPF LSM: agentctl drill through a real agentd. Every shipped policy holds: every
 * boundary the drill tries is blocked (the gap is empty here, so the layers claim them all) and
 * every allowed operation works. Tampering behind agentd's back makes the drill fail, naming the
 * boundary: a rule deleted from the pinned net_rules map (the allowed connection is refused:
 * allow-failed), the connect4 link detached (the structural deny list no longer holds: escaped).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <jansson.h>
#include "agentd/abi.h"
#include "boundary.h"
#include "harness.h"
#include "testlib.h"

#define BUSYBOX "/bin/busybox"

/* The shipped policies, and the guest demo's (its exec list names trees: busybox's links
 * elsewhere are allowed binaries too, not ones outside the list), first: the objects made for
 * the others, hard links, would hide those links. */
static const char *const shipped[] = { "guest-demo",   "coding-agent",	 "demo-agent",
				       "report-agent", "research-agent", NULL };

static void mkdirs(const char *path)
{
	char buf[PATH_MAX], *s;

	snprintf(buf, sizeof(buf), "%s", path);
	for (s = buf + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(buf, 0755);
		*s = '/';
	}
	mkdir(buf, 0755);
}

/* ${name} of the policy's vars (the test's workspace for workspace and dropbox). */
static void expand(const char *in, const json_t *vars, const char *ws, char *out, size_t outsz)
{
	const char *end, *val;
	char name[64];
	size_t n = 0;

	while (*in && n + 1 < outsz) {
		end = !strncmp(in, "${", 2) ? strchr(in, '}') : NULL;
		if (!end) {
			out[n++] = *in++;
			continue;
		}
		snprintf(name, sizeof(name), "%.*s", (int)(end - in - 2), in + 2);
		val = !strcmp(name, "workspace") || !strcmp(name, "dropbox")
			      ? ws
			      : json_string_value(json_object_get(vars, name));
		n += snprintf(out + n, outsz - n, "%s", val ? val : "");
		in = end + 1;
	}
	out[n < outsz ? n : outsz - 1] = '\0';
}

/* Each object the policy needs (busybox's guest lacks most): a directory, an empty file, or for
 * exec.allow a link to busybox. */
static void provide(const json_t *e, bool exec, const json_t *vars, const char *ws)
{
	const json_t *p = json_is_string(e) ? e : json_object_get(e, "path");
	char path[PATH_MAX], dir[PATH_MAX];
	const char *base;
	int fd;

	if (!json_is_string(p) || json_is_true(json_object_get(e, "optional")))
		return;
	expand(json_string_value(p), vars, ws, path, sizeof(path));
	if (!access(path, F_OK))
		return;
	snprintf(dir, sizeof(dir), "%s", path);
	mkdirs(dirname(dir));
	base = strrchr(path, '/') + 1;
	if (exec) {
		ASSERT_OK(link(BUSYBOX, path));
	} else if (strchr(base, '.') || !strncmp(path, "/etc/", 5)) {
		fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		ASSERT(fd >= 0);
		close(fd);
	} else {
		mkdirs(path);
	}
}

static void provide_file(const char *file, const char *ws)
{
	json_t *j = json_load_file(file, 0, NULL), *e, *base;
	char path[PATH_MAX], dir[PATH_MAX];
	size_t i;

	ASSERT(j != NULL);
	json_array_foreach(json_object_get(j, "files"), i, e)
		provide(e, false, json_object_get(j, "vars"), ws);
	json_array_foreach(json_object_get(json_object_get(j, "exec"), "allow"), i, e)
		provide(e, true, json_object_get(j, "vars"), ws);
	json_array_foreach(json_object_get(j, "extends"), i, base)
	{
		snprintf(dir, sizeof(dir), "%s", file);
		if (json_string_value(base)[0] == '/')
			snprintf(path, sizeof(path), "%s", json_string_value(base));
		else
			snprintf(path, sizeof(path), "%s/%s", dirname(dir),
				 json_string_value(base));
		provide_file(path, ws);
	}
	json_decref(j);
}

/* A binary of its own (not a name of busybox, which the exec lists allow) for the drill to find
 * outside every exec list. */
static void outsider_binary(void)
{
	unlink("/usr/bin/hostid");
	test_copy(BUSYBOX, "/usr/bin/hostid", 0755);
}

/* agentd started and ready. Its first start in a boot loads and verifies every program under
 * software emulation, on a host other work loads too: the bound on failure is longer than
 * TEST_READY_MS. */
static void start(struct test_daemon *d)
{
	const char *ready[] = { "agentd: ready", NULL };

	if (!proc_wait_line(test_daemon_spawn(d, NULL), 4 * TEST_READY_MS, ready))
		FAIL("agentd did not get ready: \"%s\"", d->agentd->buf);
}

static void add(const char *name, const char *policy, const char *ws)
{
	char var[PATH_MAX + 64], dvar[PATH_MAX + 64], out[4096];
	int status;

	snprintf(var, sizeof(var), "workspace=%s", ws);
	snprintf(dvar, sizeof(dvar), "dropbox=%s", ws);
	status = agentctl_run(out, sizeof(out), "agent", "add", name, "--policy", policy, "--var",
			      var, "--var", dvar, NULL);
	if (status)
		FAIL("agent add %s: exit %d: %s", name, status, out);
}

/* The drill's verdict of boundary b in a --json reply. */
static const char *verdict(const json_t *reply, int b)
{
	const json_t *v;
	size_t i;

	json_array_foreach(
		json_object_get(json_object_get(reply, "drill"), "boundaries"), i,
		v) if (!strcmp(json_string_value(json_object_get(v, "boundary")),
			       boundary_name(
				       b))) return json_string_value(json_object_get(v, "verdict"));
	return "absent";
}

static void expect_verdict(const json_t *reply, int b, const char *want)
{
	if (strcmp(verdict(reply, b), want))
		FAIL("%s: %s, expected %s", boundary_name(b), verdict(reply, b), want);
}

static json_t *drill(const char *name, const char *only, int want_status)
{
	char out[65536];
	json_error_t jerr;
	json_t *j;
	int status = only ? agentctl_run(out, sizeof(out), "drill", name, "--json", "--boundary",
					 only, NULL)
			  : agentctl_run(out, sizeof(out), "drill", name, "--json", NULL);

	j = json_loads(out, 0, &jerr);
	if (!j)
		FAIL("drill %s: not JSON (%s): %s", name, jerr.text, out);
	if (status != want_status)
		FAIL("drill %s: exit %d, expected %d: %s", name, status, want_status, out);
	return j;
}

TEST(drill_blocks_every_boundary_of_every_shipped_policy)
{
	char policy[PATH_MAX], ws[PATH_MAX / 2];
	struct test_daemon d;
	const char *v;
	json_t *j;
	size_t k;
	int b;

	test_daemon_init(&d, "drill");
	outsider_binary();
	start(&d);
	for (k = 0; shipped[k]; k++) {
		if (!strcmp(shipped[k], "guest-demo"))
			snprintf(policy, sizeof(policy), "%s/demo-policy.json", test_bin_dir());
		else
			snprintf(policy, sizeof(policy), "%s/policies/%s.json", test_bin_dir(),
				 shipped[k]);
		snprintf(ws, sizeof(ws), "%s/%s", d.dir, shipped[k]);
		ASSERT_OK(mkdir(ws, 0755));
		provide_file(policy, ws);
		add(shipped[k], policy, ws);
		j = drill(shipped[k], NULL, 0);
		/* Every boundary a kernel layer holds was tried, and held. */
		for (b = 0; b <= BOUNDARY_CGROUP; b++) {
			v = verdict(j, b);
			if (strcmp(v, "blocked"))
				FAIL("%s: %s: %s, expected blocked", shipped[k], boundary_name(b),
				     v);
		}
		json_decref(j);
	}
}

static const char tamper_fmt[] =
	"{\"name\": \"tamper\", \"extends\": [\"%s/policies/base/linux-userland.json\"],\n"
	" \"network\": {\"sockets\": [\"inet\"],\n"
	"  \"connect\": [{\"cidr\": \"192.0.2.3/32\", \"ports\": [80], \"protocol\": \"tcp\"}]}}\n";

static void start_tamper(struct test_daemon *d)
{
	char policy[PATH_MAX + 16], text[PATH_MAX + 512];
	json_t *j;

	test_daemon_init(d, "tamper");
	snprintf(policy, sizeof(policy), "%s/tamper.json", d->dir);
	snprintf(text, sizeof(text), tamper_fmt, test_bin_dir());
	test_write(policy, text, 0644);
	provide_file(policy, d->dir);
	start(d);
	test_daemon_add(d, "tamper", policy, NULL, 0);
	j = drill("tamper", "egress", 0);
	expect_verdict(j, BOUNDARY_EGRESS, "blocked");
	json_decref(j);
}

TEST(drill_fails_naming_egress_when_a_rule_is_deleted_behind_agentds_back)
{
	struct agentd_net_key key, next;
	char path[PATH_MAX + 16];
	struct test_daemon d;
	int fd, n = 0;
	json_t *j;

	start_tamper(&d);
	snprintf(path, sizeof(path), "%s/net_rules", d.pins);
	fd = bpf_obj_get(path);
	ASSERT(fd >= 0);
	while (!bpf_map_get_next_key(fd, NULL, &next)) {
		key = next;
		ASSERT_OK(bpf_map_delete_elem(fd, &key));
		n++;
	}
	close(fd);
	ASSERT(n > 0);
	j = drill("tamper", "egress", 1);
	expect_verdict(j, BOUNDARY_EGRESS, "allow-failed");
	json_decref(j);
}

TEST(drill_fails_naming_egress_when_a_link_is_detached_behind_agentds_back)
{
	char path[PATH_MAX + 300];
	struct test_daemon d;
	struct dirent *e;
	int fd = -1;
	json_t *j;
	DIR *dir;

	start_tamper(&d);
	dir = opendir(d.pins);
	ASSERT(dir != NULL);
	while (fd < 0 && (e = readdir(dir)))
		if (!strncmp(e->d_name, "link-", 5) && strstr(e->d_name, "connect4")) {
			snprintf(path, sizeof(path), "%s/%s", d.pins, e->d_name);
			fd = bpf_obj_get(path);
		}
	closedir(dir);
	ASSERT(fd >= 0);
	ASSERT_OK(bpf_link_detach(fd));
	close(fd);
	j = drill("tamper", "egress", 1);
	expect_verdict(j, BOUNDARY_EGRESS, "escaped");
	json_decref(j);
}
