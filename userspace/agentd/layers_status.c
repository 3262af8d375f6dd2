// SPDX-License-Identifier: GPL-2.0
/*
 * What the daemon tells agentctl and operators about the layers (docs/LAYERS.md): per agent,
 * the layers agentctl run applies, which of them enforces each part of the policy and the gap;
 * and what agentctl run needs to build its own layers from the same policy (the tools registry
 * path, the digest of the policy as loaded).
 */
#include "daemon.h"
#include "policy/load.h"
#include "sandbox/layers.h"
#include "layers_status.h"
#include "mode.h"

static void layers_of(const struct daemon *d, struct layers *l)
{
	layers_for_run(d->lsm, d->probe.landlock_abi, !d->probe.seccomp_err, d->probe.cgroup2, l);
}

void layers_status_agent_json(struct daemon *d, const struct agent *a, json_t *obj)
{
	char digest[POLICY_DIGEST_HEX];
	struct layers l;
	json_t *e;

	layers_of(d, &l);
	l.shadow = mode_shadow(a, NULL);
	e = layers_json(a->policy, &l);
	if (e)
		json_object_set_new(e, "bpf_lsm", json_boolean(d->lsm));
	json_object_set_new(obj, "enforcement", e);
	json_object_set_new(obj, "tools", json_string(a->st.tools));
	if (a->policy && !policy_digest(a->policy, digest))
		json_object_set_new(obj, "policy_digest", json_string(digest));
	else
		json_object_set_new(obj, "policy_digest", json_null());
}

json_t *layers_status_parts(struct daemon *d)
{
	json_t *o = json_object();
	char buf[128];
	struct layers l;
	int part;

	layers_of(d, &l);
	for (part = 0; o && part < PART_COUNT; part++) {
		layers_enforcer(&l, part, buf, sizeof(buf));
		json_object_set_new(o, layers_part_name(part), json_string(buf));
	}
	return o;
}

void layers_status_json(struct daemon *d, json_t *reply)
{
	const struct probe *p = &d->probe;
	json_t *k = json_object_get(reply, "kernel");

	if (!k)
		return;
	json_object_set_new(k, "landlock_abi",
			    json_integer(p->landlock_abi > 0 ? p->landlock_abi : 0));
	json_object_set_new(k, "seccomp", json_boolean(!p->seccomp_err));
	json_object_set_new(k, "no_new_privs", json_boolean(p->no_new_privs));
	json_object_set_new(k, "cgroup2_controllers", json_string(p->cgroup2_controllers));
	json_object_set_new(k, "unprivileged_userns",
			    p->userns < 0 ? json_null() : json_boolean(p->userns));
	json_object_set_new(k, "full_enforcement",
			    json_boolean(d->lsm && probe_full_enforcement(p)));
}
