// SPDX-License-Identifier: GPL-2.0
/* Shadow mode and the fallback layers (shadow.h). */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include "sandbox/shadow.h"

void shadow_enforcer(const struct layers *l, enum layer_part part, char *buf, size_t bufsz)
{
	size_t n = strlen(buf);
	const char *say = NULL;

	if (!l->shadow || part == PART_SELF)
		return;
	if ((part == PART_FILES || part == PART_EXEC) && !(l->set & LAYER_BPF_LSM))
		say = (l->set & LAYER_LANDLOCK) ? " (shadow mode: Landlock NOT APPLIED, it cannot "
						  "record and allow)"
						: " (shadow mode)";
	else if (strcmp(buf, "NOT ENFORCED"))
		say = " (shadow mode: the agent's rules record would-deny and allow)";
	if (say && n < bufsz)
		snprintf(buf + n, bufsz - n, "%s", say);
}

size_t shadow_gap_items(const struct policy *p, const struct layers *l,
			struct shadow_gap_item v[SHADOW_GAP_MAX])
{
	size_t n = 0;

	if (p->n_files)
		v[n++] = (struct shadow_gap_item){
			"files",
			"shadow mode without BPF LSM: Landlock cannot record a deny and let "
			"the operation go on, so agentd does not apply it; file rules are "
			"neither enforced nor recorded"
		};
	if (p->exec.n_allow)
		v[n++] = (struct shadow_gap_item){ "exec.allow",
						   "shadow mode without BPF LSM: Landlock is not "
						   "applied; exec rules are neither enforced nor "
						   "recorded" };
	if (l->set & LAYER_SECCOMP)
		v[n++] = (struct shadow_gap_item){
			"network.sockets: shadow",
			"shadow mode without BPF LSM: seccomp's socket-family rules are not "
			"applied; "
			"only inet and inet6 sockets (cgroup-BPF) record would-deny"
		};
	return n;
}

void shadow_seccomp(struct sandbox_seccomp *s)
{
	s->families = (1ULL << AF_MAX) - 1;
	s->types = 0xffff;
}
