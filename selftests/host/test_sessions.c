// SPDX-License-Identifier: GPL-2.0
/*
 * Host tier: agents started by agentctl run as a user would start them, through agentd with
 * --allow-partial (Landlock, seccomp and cgroup-BPF: this host refuses BPF LSM): their private
 * /tmp and home, checked from inside. The whole sessions under the shipped profiles, which
 * both tiers run, are in selftests/sessions/.
 */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "harness.h"
#include "kernel/probe.h"
#include "sessions/session.h"

/* agentd with --allow-partial on a host without BPF LSM (the VM tier runs the rest), on d's
 * paths (test_daemon_init()). */
static void start_daemon_in(struct test_daemon *d)
{
	struct probe p;

	probe_kernel(&p);
	if (probe_bpf_lsm_ok(&p))
		SKIP("BPF LSM works here: the VM tier runs agents with it");
	test_daemon_start(d, "--allow-partial", NULL);
}

static void start_daemon(struct test_daemon *d, const char *name)
{
	test_daemon_init(d, name);
	start_daemon_in(d);
}

static const char tmp_policy[] =
	"{\"name\": \"pt\", \"extends\": [\"%s/../policies/base/linux-userland.json\"],\n"
	" \"files\": [{\"path\": \"${tmp}\", \"rights\": [\"read\", \"write\", \"create\",\n"
	"             \"remove\", \"truncate\"]},\n"
	"            {\"path\": \"/usr/bin\", \"rights\": [\"read\"]},\n"
	"            {\"path\": \"%s\", \"rights\": [\"read\"]}],\n"
	" \"exec\": {\"allow\": [\"/usr/bin/python3\"]}}\n";

/* Writes a file in /tmp, /var/tmp and its home, says who owns the home, reads the file the policy
 * names under the host's /tmp, and tries to take the mount away (umount2, lazily too) and to mount
 * over it. */
static const char tmp_probe[] =
	"import ctypes, errno, os, sys\n"
	"print('home', os.environ.get('HOME')); print('tmpdir', os.environ.get('TMPDIR'))\n"
	"open('/tmp/' + sys.argv[1], 'w').write('x')\n"
	"print('var_tmp', os.path.exists('/var/tmp/' + sys.argv[1]))\n"
	"open(os.environ['HOME'] + '/' + sys.argv[1], 'w').write('y')\n"
	"print('home_uid', os.stat(os.environ['HOME']).st_uid)\n"
	"print('named', open(sys.argv[2] + '/named').read())\n"
	"libc = ctypes.CDLL(None, use_errno=True)\n"
	"def err(r): return errno.errorcode[ctypes.get_errno()] if r else 'ok'\n"
	"print('umount', err(libc.umount2(b'/tmp', 0)))\n"
	"print('umount_detach', err(libc.umount2(b'/tmp', 2)))\n"
	"print('mount', err(libc.mount(b'/usr', b'/tmp', None, 4096, None)))\n";

/* agentctl run gives the agent a /tmp (and /var/tmp) and a home of its own, under agentd's state,
 * which it cannot unmount, owned by the user it runs as; agent rm removes them. What its policy
 * names under the host's /tmp is carried into its own at the same path. */
TEST(run_private_tmp_and_home)
{
	char policy[PATH_MAX], text[2 * PATH_MAX + 1024], mark[64], host[PATH_MAX], priv[PATH_MAX],
		file[PATH_MAX], out[8192], uid[16], named[PATH_MAX];
	char *cmd[] = { "/usr/bin/python3", "-c", (char *)tmp_probe, mark, named, NULL };
	struct test_daemon d;
	struct passwd *nobody = getpwnam("nobody");

	if (!nobody)
		SKIP("needs the user nobody");
	start_daemon(&d, "tmp");
	test_dir(named, sizeof(named)); /* under the host's /tmp */
	ASSERT_OK(chmod(named, 0755));
	path_in(file, sizeof(file), named, "named");
	test_write(file, "carried", 0644);
	snprintf(text, sizeof(text), tmp_policy, test_bin_dir(), named);
	path_in(policy, sizeof(policy), d.dir, "policy.json");
	test_write(policy, text, 0644);
	/* ${tmp} is agentd's: an operator's --var cannot point it at the host's /tmp. */
	ASSERT(agentctl_run(out, sizeof(out), "agent", "add", "pt", "--policy", policy, "--var",
			    "tmp=/tmp", NULL) != 0);
	test_daemon_add(&d, "pt", policy, NULL, 0);
	snprintf(mark, sizeof(mark), "agentd-private-%d", getpid());
	path_in(host, sizeof(host), "/tmp", mark);
	test_unlink_at_end(host);

	ASSERT_EQ(agent_exec("pt", NULL, NULL, cmd, out, sizeof(out)), 0);
	expect(out, "home", "/tmp/home");
	expect(out, "tmpdir", "/tmp");
	expect(out, "var_tmp", "True");
	expect(out, "home_uid", "0");
	expect(out, "named", "carried");
	expect(out, "umount", "EPERM");
	expect(out, "umount_detach", "EPERM");
	expect(out, "mount", "EPERM");
	/* Not in the host's /tmp: in the agent's directory under agentd's state. */
	ASSERT_EQ(access(host, F_OK) ? errno : 0, ENOENT);
	path_in(priv, sizeof(priv), d.state, "private/pt");
	path_in(file, sizeof(file), priv, "tmp");
	path_in(file, sizeof(file), strdupa(file), mark);
	ASSERT_OK(access(file, F_OK));

	/* Another user: the home is given to it. */
	strcat(mark, "-nobody");
	ASSERT_EQ(agent_exec("pt", "nobody", NULL, cmd, out, sizeof(out)), 0);
	snprintf(uid, sizeof(uid), "%u", nobody->pw_uid);
	expect(out, "home_uid", uid);
	expect(out, "umount", "EPERM");

	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "rm", "pt", NULL), 0);
	ASSERT_EQ(access(priv, F_OK) ? errno : 0, ENOENT);
}
