// SPDX-License-Identifier: GPL-2.0
/*
 * VM tier: the private /tmp and home agentctl run gives an agent, under BPF LSM (which denies
 * every mount call to an agent's task: agentctl makes the mounts before the agent exists).
 * The agent is a busybox shell; the whole sessions of the shipped profiles, in both tiers, are
 * selftests/sessions/test_sessions.c (with the tools selftests/vm/stage_sessions.sh stages).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "harness.h"
#include "testlib.h"

/* Writes a file in its /tmp and home, sets a file's times (a hook that sees no mount), tries to
 * unmount its /tmp, and reads a file outside any rule. */
static const char script[] = "echo private > /tmp/\"$0\" && echo wrote ok\n"
			     "echo home \"$HOME\" tmpdir \"$TMPDIR\"\n"
			     "echo h > \"$HOME/h\" && echo home_write ok\n"
			     "touch -d 2020-01-01 /tmp/\"$0\" && echo times ok\n"
			     "umount /tmp 2>/dev/null; echo umount $?\n"
			     "cat \"$1\" 2>/dev/null; echo outside $?\n";

TEST(private_tmp_under_bpf_lsm)
{
	char policy[PATH_MAX], text[1024], mark[64], host[PATH_MAX], priv[PATH_MAX + 16],
		file[2 * PATH_MAX], secret[PATH_MAX], out[8192];
	struct test_daemon d;

	test_daemon_init(&d, "ptmp");
	snprintf(policy, sizeof(policy), "%s/policy.json", d.dir);
	snprintf(secret, sizeof(secret), "%s/secret", d.dir);
	test_write(secret, "s3cr3t\n", 0644);
	snprintf(text, sizeof(text),
		 "{\"name\": \"pt\", \"files\": ["
		 "{\"path\": \"/bin\", \"rights\": [\"read\", \"exec\"]},"
		 "{\"path\": \"/lib\", \"rights\": [\"read\", \"exec\"]},"
		 "{\"path\": \"/dev/null\", \"rights\": [\"read\", \"write\"]},"
		 "{\"path\": \"${tmp}\", \"rights\": [\"read\", \"write\", \"create\", "
		 "\"remove\", \"truncate\", \"setattr\"]}],"
		 "\"exec\": {\"allow\": [\"/bin\"]}}\n");
	test_write(policy, text, 0644);
	test_daemon_start(&d, NULL);
	test_daemon_add(&d, "pt", policy, NULL, 0);
	snprintf(mark, sizeof(mark), "agentd-private-%d", getpid());
	snprintf(host, sizeof(host), "/tmp/%s", mark);
	test_unlink_at_end(host);

	ASSERT_EQ(agentctl_run(out, sizeof(out), "run", "pt", "--", "/bin/sh", "-c", script, mark,
			       secret, NULL),
		  0);
	if (!strstr(out, "wrote ok") || !strstr(out, "home /tmp/home tmpdir /tmp") ||
	    !strstr(out, "home_write ok") || !strstr(out, "times ok") || strstr(out, "umount 0") ||
	    !strstr(out, "outside 1"))
		FAIL("inside the agent: %s", out);
	ASSERT_EQ(access(host, F_OK) ? errno : 0, ENOENT);
	snprintf(priv, sizeof(priv), "%s/private/pt", d.state);
	snprintf(file, sizeof(file), "%s/tmp/%s", priv, mark);
	ASSERT_OK(access(file, F_OK));
	ASSERT_EQ(agentctl_run(out, sizeof(out), "agent", "rm", "pt", NULL), 0);
	ASSERT_EQ(access(priv, F_OK) ? errno : 0, ENOENT);
}
