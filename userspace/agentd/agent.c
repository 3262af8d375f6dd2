// SPDX-License-Identifier: GPL-2.0
/* The agent agentd confines: its rules from a policy or a deny list, its cgroup, its programs. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "agentd.h"
#include "compile.h"
#include "log.h"
#include "netdeny.h"
#include "rules.h"
#include "tools.h"

/* --deny-open: everything allowed but the denied files (self-protection and the structural
 * network deny still hold). */
static int deny_list_rules(const struct options *o, struct compiled *c)
{
	int i;

	memset(c, 0, sizeof(*c));
	c->files = calloc(o->ndeny + 1, sizeof(*c->files));
	c->net = calloc(2, sizeof(*c->net));
	if (!c->files || !c->net)
		return -ENOMEM;
	c->files[0] = (struct file_rule){ "/", AGENTD_RIGHTS_ALL };
	for (i = 0; i < o->ndeny; i++)
		c->files[i + 1] = (struct file_rule){ o->deny[i], 0 };
	netdeny_parse_cidr("0.0.0.0/0", &c->net[0].cidr);
	netdeny_parse_cidr("::/0", &c->net[1].cidr);
	c->net[0].protocols = c->net[1].protocols = AGENTD_PROTO_TCP | AGENTD_PROTO_UDP;
	c->rs = (struct ruleset){
		.flags = AGENTD_AGENT_ALLOW_MEMFD_EXEC | AGENTD_AGENT_ALLOW_WRITABLE_EXEC |
			 AGENTD_AGENT_ALLOW_BIND | AGENTD_AGENT_ALLOW_DEVICES,
		.sock_families = ~0ULL,
		.sock_types = ~0U,
		.capabilities = ~0ULL,
		.files = c->files,
		.nfiles = o->ndeny + 1,
		.net = c->net,
		.nnet = 2,
	};
	return 0;
}

static void print_errors(const struct policy_errors *errs)
{
	char line[1024];
	size_t i;

	for (i = 0; i < errs->n; i++)
		if (policy_error_format(&errs->v[i], line, sizeof(line)) >= 0)
			log_err("%s\n", line);
}

int policy_rules_load(const char *policy, const char *tools, const struct policy_vars *vars,
		      struct policy **p, struct tools_registry **regp, struct compiled *c,
		      struct policy_errors *errs, char *why, size_t whysz)
{
	struct tools_registry *reg = NULL;
	int err;

	memset(c, 0, sizeof(*c));
	*p = NULL;
	if (regp)
		*regp = NULL;
	why[0] = '\0';
	if (tools && tools[0]) {
		err = tools_load(tools, &reg, errs);
		if (err)
			goto out;
	}
	err = policy_load(policy, vars, reg, p, errs);
	if (err)
		goto out;
	err = policy_compile(*p, c);
	if (err)
		snprintf(why, whysz, "%s: %s", policy, c->error);
out:
	if (errs->n)
		policy_error_format(&errs->v[0], why, whysz);
	else if (err && !why[0])
		snprintf(why, whysz, "%s: %s", policy, strerror(-err));
	/* The policy's tools point into the registry: kept with it when the caller asks. */
	if (regp && !err) {
		*regp = reg;
		return 0;
	}
	if (err) {
		policy_free(*p);
		*p = NULL;
	}
	tools_free(reg);
	return err;
}

static int policy_rules(const struct options *o, struct policy **p, struct compiled *c)
{
	const struct policy_vars vars = { o->vars, o->nvars };
	struct policy_errors errs = {};
	char why[1024];
	int err =
		policy_rules_load(o->policy, o->tools, &vars, p, NULL, c, &errs, why, sizeof(why));

	if (err == -EINVAL && c->error[0])
		log_err("%s\n", why);
	print_errors(&errs);
	policy_errors_clear(&errs);
	return err;
}

static int attach(struct enforcer *e, const struct options *o, bool lsm)
{
	int err, cgfd;

	/* The agent is registered after its rules: none of its tasks sees a partial rule set. */
	err = enforcer_add_cgroup(e, o->agent_cgroup, AGENT_ID);
	if (err) {
		log_err("registering cgroup %s: %s\n", o->agent_cgroup, strerror(-err));
		return err;
	}
	cgfd = open(o->agent_cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = cgfd < 0 ? -errno : enforcer_attach_cgroup(e, cgfd);
	if (cgfd >= 0)
		close(cgfd);
	if (err) {
		log_err("attaching cgroup programs to %s: %s\n", o->agent_cgroup, strerror(-err));
		return err;
	}
	if (!lsm)
		return 0;
	err = enforcer_attach_lsm(e);
	if (err)
		log_err("attaching BPF LSM programs: %s\n", strerror(-err));
	return err;
}

int agent_rules_prepare(const struct options *o, struct agent_rules *r)
{
	r->p = NULL;
	return o->policy ? policy_rules(o, &r->p, &r->c) : deny_list_rules(o, &r->c);
}

void agent_rules_free(struct agent_rules *r)
{
	compiled_free(&r->c);
	policy_free(r->p);
	r->p = NULL;
}

int agent_setup(struct enforcer *e, const struct options *o, bool lsm, struct agent_rules *r)
{
	int err, failed = -1;
	__u32 gen;

	err = rules_apply(e, AGENT_ID, &r->c.rs, &gen, &failed);
	if (err) {
		log_err("agent rules: %s%s%s\n", failed >= 0 ? r->c.files[failed].path : "",
			failed >= 0 ? ": " : "", rules_strerror(err, failed));
		return err;
	}
	return attach(e, o, lsm);
}
