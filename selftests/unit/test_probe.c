// SPDX-License-Identifier: GPL-2.0
#include <sys/sysmacros.h>
#include "kernel/enforcer.h"
#include "harness.h"
#include "kernel/probe.h"

TEST(lsm_list_parsing)
{
	ASSERT(lsm_list_has("lockdown,capability,landlock,bpf", "bpf"));
	ASSERT(lsm_list_has("bpf,landlock", "bpf"));
	ASSERT(lsm_list_has("capability,bpf\n", "bpf"));
	ASSERT(!lsm_list_has("lockdown,capability,landlock", "bpf"));
	ASSERT(!lsm_list_has("bpffoo,xbpf", "bpf"));
	ASSERT(!lsm_list_has("", "bpf"));
}

TEST(kernel_dev_encoding)
{
	/* The kernel's dev_t is major << 20 | minor (MKDEV), whatever glibc's encoding. */
	ASSERT_EQ(kernel_dev(makedev(0, 23)), 23);
	ASSERT_EQ(kernel_dev(makedev(8, 1)), (8ULL << 20) | 1);
	ASSERT_EQ(kernel_dev(makedev(259, 70000)), (259ULL << 20) | 70000);
}

/* Landlock's version answer is a positive ABI or one of the two documented errors. */
TEST(landlock_abi_answer)
{
	int abi = probe_landlock_abi();

	ASSERT(abi > 0 || abi == -EOPNOTSUPP || abi == -ENOSYS);
}
