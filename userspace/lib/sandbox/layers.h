/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The enforcement layers and the gap (docs/LAYERS.md): for a policy and the layers a kernel
 * offers, which layer enforces each part of the policy, and every rule that none of them can
 * enforce, with the reason. Computed from the policy, never guessed.
 */
#ifndef AGENTD_LAYERS_H
#define AGENTD_LAYERS_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "policy/policy.h"

#define LAYER_BPF_LSM (1U << 0)
#define LAYER_CGROUP (1U << 1) /* cgroup-BPF */
#define LAYER_LANDLOCK (1U << 2)
#define LAYER_SECCOMP (1U << 3)

struct layers {
	unsigned int set; /* LAYER_* */
	int landlock_abi; /* with LAYER_LANDLOCK: the ABI */
	char cgroup_root[256]; /* the cgroup v2 mount ("/sys/fs/cgroup" when unknown) */
	bool shadow; /* the agent is in shadow mode: Landlock is not applied (sandbox/shadow.h) */
};

/* The parts of a policy, each enforced by one set of layers. */
enum layer_part { PART_FILES, PART_EXEC, PART_SELF, PART_SOCKETS, PART_NETWORK, PART_COUNT };

struct gap_item {
	char *rule; /* the path, or the field ("exec.allow_memfd"), or the operation */
	char *why;
};

struct gap {
	struct gap_item *v;
	size_t n;
};

/*
 * Parses "bpf-lsm,cgroup,landlock,seccomp" (any subset, any order; "cgroup-bpf" too;
 * "landlock:N" pins the ABI, plain "landlock" takes abi_default). Returns 0 or -EINVAL.
 */
int layers_parse(const char *list, int abi_default, struct layers *l);
/* The layers an agent that agentctl run starts gets on a kernel: BPF LSM when lsm, cgroup-BPF,
 * seccomp where the kernel has it, and Landlock (abi > 0) where BPF LSM is not. */
void layers_for_run(bool lsm, int landlock_abi, bool seccomp, const char *cgroup_root,
		    struct layers *l);
/* "BPF LSM, cgroup-BPF, Landlock ABI 7, seccomp" */
void layers_format(const struct layers *l, char *buf, size_t bufsz);

const char *layers_part_name(enum layer_part part);
/* Which layers enforce a part ("Landlock ABI 7", "seccomp, Landlock ABI 7", "NOT ENFORCED"). */
void layers_enforcer(const struct layers *l, enum layer_part part, char *buf, size_t bufsz);

/* Whether Landlock is applied: a layer set with Landlock and without BPF LSM, out of shadow
 * mode. */
bool layers_use_landlock(const struct layers *l);

/* What p asks that l cannot enforce. Returns 0 or -ENOMEM. */
int layers_gap(const struct policy *p, const struct layers *l, struct gap *out);
void gap_free(struct gap *g);
/* One line: "RULE (WHY); RULE (WHY)...", cut to bufsz. */
void gap_format_line(const struct gap *g, char *buf, size_t bufsz);

/* {"layers": "...", "enforced_by": {part: layer...}, "gap": [{"rule", "why"}...]} */
json_t *layers_json(const struct policy *p, const struct layers *l);

#endif
