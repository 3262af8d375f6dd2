// SPDX-License-Identifier: GPL-2.0
/*
 * The capability limit (sandbox_caps.h), with the kernel's own interface (prctl and capset):
 * a few calls, not worth libcap as a dependency.
 */
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include "sandbox/sandbox_caps.h"

/* The highest capability this kernel knows (PR_CAPBSET_READ says EINVAL past it). */
static int cap_last(void)
{
	int c = 0;

	while (c < 64 && prctl(PR_CAPBSET_READ, c, 0, 0, 0) >= 0)
		c++;
	return c - 1;
}

int sandbox_caps_begin(__u64 keep)
{
	int c, last = cap_last();

	for (c = 0; c <= last; c++)
		if (!(keep & (1ULL << c)) && prctl(PR_CAPBSET_DROP, c, 0, 0, 0))
			return -errno;
	return prctl(PR_SET_SECUREBITS, SECBIT_KEEP_CAPS, 0, 0, 0) ? -errno : 0;
}

static int caps_set(__u64 eff, __u64 perm, __u64 inh)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {
		{ .effective = (__u32)eff, .permitted = (__u32)perm, .inheritable = (__u32)inh },
		{ .effective = eff >> 32, .permitted = perm >> 32, .inheritable = inh >> 32 },
	};

	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

static int caps_permitted(__u64 *perm)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -errno;
	*perm = d[0].permitted | (__u64)d[1].permitted << 32;
	return 0;
}

int sandbox_caps_finish(__u64 keep)
{
	__u64 perm = 0;
	int err, c;

	/* Effective again after a uid change (CAP_SETPCAP locks the securebits), and the kept ones
	 * inheritable: the ambient set holds only what is permitted and inheritable. */
	err = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) ? -errno : 0;
	if (!err)
		err = caps_permitted(&perm);
	if (!err && (keep & ~perm))
		err = -EPERM;
	if (!err)
		err = caps_set(perm, perm, keep);
	for (c = 0; !err && c < 64; c++)
		if ((keep & (1ULL << c)) && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0))
			err = -errno;
	if (!err && prctl(PR_SET_SECUREBITS, SANDBOX_SECUREBITS, 0, 0, 0))
		err = -errno;
	return err ? err : caps_set(keep, keep, keep);
}
