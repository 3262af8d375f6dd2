/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_KDEV_H
#define AGENTD_KDEV_H

#include <sys/sysmacros.h>
#include <sys/types.h>
#include <linux/types.h>

/* The kernel's internal dev_t (as super_block.s_dev, the maps' dev) for a userspace st_dev. */
static inline __u64 kernel_dev(dev_t st_dev)
{
	return ((__u64)major(st_dev) << 20) | minor(st_dev);
}

#endif /* AGENTD_KDEV_H */
