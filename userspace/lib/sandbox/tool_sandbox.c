// SPDX-License-Identifier: GPL-2.0
/* A tool run's file rights (tool_sandbox.h): a policy derived from the caller's, compiled by the
 * Landlock layer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "agentd/abi.h"
#include "sandbox/tool_sandbox.h"

/* Rights an actuating tool keeps where its caller has them; any other tool keeps read only. */
#define ACTUATE_RIGHTS                                                                             \
	(AGENTD_RIGHT_READ | AGENTD_RIGHT_WRITE | AGENTD_RIGHT_CREATE | AGENTD_RIGHT_REMOVE |      \
	 AGENTD_RIGHT_LINK | AGENTD_RIGHT_TRUNCATE | AGENTD_RIGHT_SETATTR)

/* The tool's own code: shared libraries (read; mapping them needs no exec right in Landlock). */
static const char *const libraries[] = { "/usr/lib", "/lib", "/lib64", "/usr/lib64",
					 "/etc/ld.so.cache" };
/* The dynamic loaders the kernel opens for an exec (an exec right): those present are granted. */
static const char *const loaders[] = {
	"/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1", "/lib/ld-linux-armhf.so.3",
	"/lib/ld-linux.so.2",	       "/lib/ld-musl-x86_64.so.1",   "/lib/ld-musl-aarch64.so.1",
};

struct derived {
	struct policy p;
};

/* A path of the tool's own (not the agent's policy), resolved as a policy's load does. */
static struct policy_path own(const char *path, __u32 rights)
{
	struct policy_path r = { .path = (char *)path, .rights = rights };
	struct stat st;

	if (!stat(path, &st)) {
		r.exists = true;
		r.dev = st.st_dev;
		r.ino = st.st_ino;
	}
	return r;
}

/* One of the agent's paths (the object its policy's load found) with rights. */
static void add_file(struct derived *d, const struct policy_path *pp, __u32 rights)
{
	struct policy_path *r = &d->p.files[d->p.n_files++];

	*r = *pp;
	r->rights = rights;
}

static void add_exec(struct derived *d, const char *path)
{
	d->p.exec.allow[d->p.exec.n_allow++] = own(path, 0);
}

/* Landlock only adds rights down a tree: a rule that keeps fewer of the tool's rights than a
 * rule above it cannot be held. */
static bool narrower_inside(const struct policy *agent, const struct policy_path *f, __u32 keep)
{
	const struct policy_path *g;
	size_t i, n;

	for (i = 0; i < agent->n_files; i++) {
		g = &agent->files[i];
		n = strlen(g->path);
		if (g == f || strncmp(f->path, g->path, n) ||
		    (f->path[n] != '/' && strcmp(g->path, "/")))
			continue;
		if ((g->rights & keep) & ~(f->rights & keep))
			return true;
	}
	return false;
}

int tool_sandbox_plan(const struct policy *agent, const struct tool *t, int abi,
		      struct landlock_plan **out, char *why, size_t whysz)
{
	__u32 keep = t->effect == TOOL_ACTUATE ? ACTUATE_RIGHTS : AGENTD_RIGHT_READ;
	size_t n_lib = sizeof(libraries) / sizeof(libraries[0]);
	size_t n_ld = sizeof(loaders) / sizeof(loaders[0]);
	struct derived d = { 0 };
	const struct policy_path *f;
	size_t i;
	int err;

	*out = NULL;
	d.p.files = calloc(agent->n_files + agent->exec.n_allow + n_lib + 1, sizeof(*d.p.files));
	d.p.exec.allow = calloc(1 + t->n_programs + n_ld, sizeof(*d.p.exec.allow));
	err = d.p.files && d.p.exec.allow ? 0 : -ENOMEM;
	for (i = 0; !err && i < agent->n_files; i++) {
		f = &agent->files[i];
		if (f->exists && narrower_inside(agent, f, keep)) {
			snprintf(why, whysz,
				 "the agent's policy takes rights away at %s inside a tree it "
				 "grants, "
				 "which Landlock cannot hold for a tool: not run",
				 f->path);
			err = -EPERM;
		} else if (f->rights & keep) {
			add_file(&d, f, f->rights & keep);
		}
	}
	/* What the agent may execute, the tool may read: only its own programs run. */
	for (i = 0; !err && i < agent->exec.n_allow; i++)
		add_file(&d, &agent->exec.allow[i], AGENTD_RIGHT_READ);
	for (i = 0; !err && i < n_lib; i++)
		d.p.files[d.p.n_files++] = own(libraries[i], AGENTD_RIGHT_READ);
	if (!err) {
		/* Its stdin; and where tools send what they discard. */
		d.p.files[d.p.n_files++] = own("/dev/null", AGENTD_RIGHT_READ | AGENTD_RIGHT_WRITE);
		add_exec(&d, t->exec[0]);
	}
	for (i = 0; !err && i < t->n_programs; i++)
		add_exec(&d, t->programs[i]);
	for (i = 0; !err && i < n_ld; i++)
		add_exec(&d, loaders[i]);
	if (!err)
		err = landlock_compile(&d.p, abi, out);
	free(d.p.files);
	free(d.p.exec.allow);
	return err;
}
