// SPDX-License-Identifier: GPL-2.0
/*
 * An agentd of another build left its pins: a link pinned under the name of one of this build's
 * programs that runs other code is replaced by this build's, the link of a program this build
 * lacks is removed (its hook would go on running the old code), and a link of this very build is
 * adopted, not attached twice.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "enforcer.h"
#include "harness.h"
#include "testlib.h"
#include "probe.skel.h"

/* The link pinned at path: its id, and its program's name. */
static __u32 pinned_link(const char *path, char *prog, size_t sz)
{
	struct bpf_link_info link = {};
	struct bpf_prog_info info = {};
	__u32 len = sizeof(link);
	int fd = bpf_obj_get(path), pfd;

	ASSERT_OK(fd);
	ASSERT_OK(bpf_obj_get_info_by_fd(fd, &link, &len));
	pfd = bpf_prog_get_fd_by_id(link.prog_id);
	ASSERT_OK(pfd);
	len = sizeof(info);
	ASSERT_OK(bpf_obj_get_info_by_fd(pfd, &info, &len));
	snprintf(prog, sz, "%s", info.name);
	close(pfd);
	close(fd);
	return link.id;
}

static void start_and_stop(const char *pins)
{
	struct enforcer *e;

	ASSERT_EQ(enforcer_load(&e, &(struct enforcer_opts){ .lsm = true, .pin_dir = pins }), 0);
	ASSERT_EQ(enforcer_attach_lsm(e), 0);
	enforcer_destroy(e);
}

TEST(upgrade_replaces_changed_programs_and_removes_stale_links)
{
	char pins[PATH_MAX], open_pin[PATH_MAX + 64], stale[PATH_MAX + 64], prog[64];
	struct probe_bpf *skel;
	struct bpf_link *link;
	__u32 id;

	test_pin_dir(pins, sizeof(pins));
	ASSERT_OK(mkdir(pins, 0700));
	snprintf(open_pin, sizeof(open_pin), "%s/link-files-file_open", pins);
	snprintf(stale, sizeof(stale), "%s/link-self-inode_permission", pins);
	/* The "old build": another program on file_open, pinned as file_open's and as a program
	 * this build does not have. */
	skel = probe_bpf__open_and_load();
	ASSERT(skel);
	link = bpf_program__attach(skel->progs.probe_file_open);
	ASSERT(link);
	ASSERT_OK(bpf_obj_pin(bpf_link__fd(link), open_pin));
	ASSERT_OK(bpf_obj_pin(bpf_link__fd(link), stale));
	bpf_link__disconnect(link);
	bpf_link__destroy(link);
	probe_bpf__destroy(skel);
	pinned_link(open_pin, prog, sizeof(prog));
	ASSERT_STREQ(prog, "probe_file_open");

	start_and_stop(pins);
	ASSERT(access(stale, F_OK) && errno == ENOENT);
	id = pinned_link(open_pin, prog, sizeof(prog));
	ASSERT_STREQ(prog, "file_open");
	/* The same build again: adopted. */
	start_and_stop(pins);
	ASSERT_EQ(pinned_link(open_pin, prog, sizeof(prog)), id);
}
