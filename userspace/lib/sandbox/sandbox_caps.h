/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Capabilities of an agent agentctl run starts: only the policy's "capabilities", in every set
 * (bounding, permitted, effective, inheritable, ambient), with the securebits locked so that
 * neither uid 0 nor a uid change brings the others back. It holds where BPF LSM is missing.
 */
#ifndef AGENTD_SANDBOX_CAPS_H
#define AGENTD_SANDBOX_CAPS_H

#include <linux/securebits.h>
#include <linux/types.h>

/* The securebits an agent runs with, each locked: root is not special at exec (NOROOT), a uid
 * change away from 0 clears the capabilities (NO_SETUID_FIXUP and KEEP_CAPS off), and no
 * capability can be raised into the ambient set. */
#define SANDBOX_SECUREBITS                                                                         \
	(SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP_LOCKED |                    \
	 SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |                                   \
	 SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)

/*
 * Two steps around the change of uid (which needs CAP_SETUID and CAP_SETGID, kept until then).
 * Before it: drops every capability not in keep (bit n: CAP n) from the bounding set and sets
 * KEEP_CAPS so that the change keeps the rest. Needs CAP_SETPCAP.
 */
int sandbox_caps_begin(__u64 keep);
/* After it: permitted, effective, inheritable and ambient become keep, which execve() then
 * carries (through the ambient set, uid 0 included); the securebits are locked. Returns 0 or
 * -errno (-EPERM when a capability of keep is not held). */
int sandbox_caps_finish(__u64 keep);

#endif
