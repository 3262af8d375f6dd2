// SPDX-License-Identifier: GPL-2.0
/*
 * The gap (layers.h). Each rule below is one thing BPF LSM enforces that a fallback layer
 * cannot, found by reading the policy as Landlock and seccomp would hold it; docs/LAYERS.md
 * lists them, and selftests/host/test_fallback.c checks each against the kernel.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agentd/abi.h"
#include "sandbox/layers.h"
#include "sandbox/shadow.h"

static const char *const part_names[PART_COUNT] = { "files", "exec", "self", "sockets", "network" };

const char *layers_part_name(enum layer_part part)
{
	return part < PART_COUNT ? part_names[part] : "?";
}

bool layers_use_landlock(const struct layers *l)
{
	return (l->set & LAYER_LANDLOCK) && !(l->set & LAYER_BPF_LSM) && l->landlock_abi > 0 &&
	       !l->shadow;
}

int layers_parse(const char *list, int abi_default, struct layers *l)
{
	char buf[256], *tok, *save = NULL, *end;
	long abi;

	memset(l, 0, sizeof(*l));
	snprintf(l->cgroup_root, sizeof(l->cgroup_root), "/sys/fs/cgroup");
	if (snprintf(buf, sizeof(buf), "%s", list) >= (int)sizeof(buf))
		return -EINVAL;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "bpf-lsm")) {
			l->set |= LAYER_BPF_LSM;
		} else if (!strcmp(tok, "cgroup") || !strcmp(tok, "cgroup-bpf")) {
			l->set |= LAYER_CGROUP;
		} else if (!strcmp(tok, "seccomp")) {
			l->set |= LAYER_SECCOMP;
		} else if (!strcmp(tok, "landlock")) {
			l->set |= LAYER_LANDLOCK;
			l->landlock_abi = abi_default;
		} else if (!strncmp(tok, "landlock:", 9)) {
			errno = 0;
			abi = strtol(tok + 9, &end, 10);
			if (errno || *end || end == tok + 9 || abi < 1 || abi > 1000)
				return -EINVAL;
			l->set |= LAYER_LANDLOCK;
			l->landlock_abi = (int)abi;
		} else {
			return -EINVAL;
		}
	}
	return l->set ? 0 : -EINVAL;
}

void layers_for_run(bool lsm, int landlock_abi, bool seccomp, const char *cgroup_root,
		    struct layers *l)
{
	memset(l, 0, sizeof(*l));
	l->set = LAYER_CGROUP | (seccomp ? LAYER_SECCOMP : 0);
	if (lsm)
		l->set |= LAYER_BPF_LSM;
	else if (landlock_abi > 0)
		l->set |= LAYER_LANDLOCK;
	l->landlock_abi = lsm ? 0 : landlock_abi;
	snprintf(l->cgroup_root, sizeof(l->cgroup_root), "%s",
		 cgroup_root && *cgroup_root ? cgroup_root : "/sys/fs/cgroup");
}

static void append(char *buf, size_t bufsz, const char *s)
{
	size_t n = strlen(buf);

	if (n < bufsz)
		snprintf(buf + n, bufsz - n, "%s%s", n ? ", " : "", s);
}

void layers_format(const struct layers *l, char *buf, size_t bufsz)
{
	char ll[32];

	buf[0] = '\0';
	if (l->set & LAYER_BPF_LSM)
		append(buf, bufsz, "BPF LSM");
	if (l->set & LAYER_CGROUP)
		append(buf, bufsz, "cgroup-BPF");
	if (l->set & LAYER_LANDLOCK) {
		snprintf(ll, sizeof(ll), "Landlock ABI %d", l->landlock_abi);
		append(buf, bufsz, ll);
	}
	if (l->set & LAYER_SECCOMP)
		append(buf, bufsz, "seccomp");
	if (!buf[0])
		snprintf(buf, bufsz, "none");
}

void layers_enforcer(const struct layers *l, enum layer_part part, char *buf, size_t bufsz)
{
	bool lsm = l->set & LAYER_BPF_LSM, cg = l->set & LAYER_CGROUP, sc = l->set & LAYER_SECCOMP,
	     ll = layers_use_landlock(l);
	char abi[32];

	buf[0] = '\0';
	snprintf(abi, sizeof(abi), "Landlock ABI %d", l->landlock_abi);
	switch (part) {
	case PART_FILES:
	case PART_EXEC:
		if (lsm)
			append(buf, bufsz, "BPF LSM");
		else if (ll)
			append(buf, bufsz, abi);
		break;
	case PART_SELF:
		if (lsm)
			append(buf, bufsz, "BPF LSM");
		if (sc)
			append(buf, bufsz, "seccomp");
		if (ll)
			append(buf, bufsz, abi);
		break;
	case PART_SOCKETS:
		if (lsm)
			append(buf, bufsz, "BPF LSM");
		if (sc)
			append(buf, bufsz, "seccomp");
		if (cg)
			append(buf, bufsz, "cgroup-BPF");
		break;
	case PART_NETWORK:
		if (cg)
			append(buf, bufsz, "cgroup-BPF");
		break;
	default:
		break;
	}
	if (!buf[0])
		snprintf(buf, bufsz, "NOT ENFORCED");
	shadow_enforcer(l, part, buf, bufsz);
}

/* The rules as Landlock sees them: one per existing object named with rights or as a deny,
 * by real path (Landlock follows the path the agent uses, so ancestry is by real path). */
struct lrule {
	char path[PATH_MAX];
	__u32 rights;
	bool deny; /* a files rule with no right */
};

struct view {
	struct lrule *r;
	size_t n;
};

static int view_add(struct view *v, const char *path, __u32 rights, bool deny)
{
	char real[PATH_MAX];
	struct lrule *r;
	size_t i;

	if (!realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	for (i = 0; i < v->n; i++)
		if (!strcmp(v->r[i].path, real))
			break;
	if (i == v->n) {
		r = realloc(v->r, (v->n + 1) * sizeof(*r));
		if (!r)
			return -ENOMEM;
		v->r = r;
		memset(&r[v->n], 0, sizeof(*r));
		snprintf(r[v->n].path, sizeof(r[v->n].path), "%s", real);
		r[v->n].deny = deny;
		v->n++;
	}
	v->r[i].rights |= rights;
	if (!deny)
		v->r[i].deny = false;
	return 0;
}

static int view_build(const struct policy *p, struct view *v)
{
	int err = 0;
	size_t i;

	for (i = 0; !err && i < p->n_files; i++)
		if (p->files[i].exists)
			err = view_add(v, p->files[i].path, p->files[i].rights,
				       !p->files[i].rights);
	for (i = 0; !err && i < p->exec.n_allow; i++)
		if (p->exec.allow[i].exists)
			err = view_add(v, p->exec.allow[i].path,
				       AGENTD_RIGHT_EXEC | AGENTD_RIGHT_READ, false);
	return err;
}

/* Whether a is a strict ancestor of b (both absolute, normalised). */
static bool ancestor(const char *a, const char *b)
{
	size_t n = strlen(a);

	if (!strcmp(a, b))
		return false;
	if (!strcmp(a, "/"))
		return true;
	return !strncmp(a, b, n) && b[n] == '/';
}

/* The rights Landlock gives the object: its own and every enclosing rule's (a union). */
static __u32 union_rights(const struct view *v, size_t i, char *from, size_t fromsz)
{
	__u32 u = v->r[i].rights;
	size_t j, best = 0;

	from[0] = '\0';
	for (j = 0; j < v->n; j++) {
		if (!ancestor(v->r[j].path, v->r[i].path) || !(v->r[j].rights & ~v->r[i].rights))
			continue;
		u |= v->r[j].rights;
		/* Name the nearest enclosing rule that widens it. */
		if (strlen(v->r[j].path) >= best) {
			best = strlen(v->r[j].path);
			snprintf(from, fromsz, "%s", v->r[j].path);
		}
	}
	return u;
}

/* The rights that Landlock can tell apart at an ABI (setattr never; link from ABI 2; truncate
 * from ABI 3). */
static __u32 expressible(int abi)
{
	__u32 r = AGENTD_RIGHT_READ | AGENTD_RIGHT_WRITE | AGENTD_RIGHT_EXEC | AGENTD_RIGHT_CREATE |
		  AGENTD_RIGHT_REMOVE;

	if (abi >= 2)
		r |= AGENTD_RIGHT_LINK;
	if (abi >= 3)
		r |= AGENTD_RIGHT_TRUNCATE;
	return r;
}

__attribute__((format(printf, 3, 4))) static int item(struct gap *g, const char *rule,
						      const char *fmt, ...)
{
	struct gap_item *v;
	va_list ap;
	char why[1024];

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	v = realloc(g->v, (g->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	g->v = v;
	v[g->n].rule = strdup(rule);
	v[g->n].why = strdup(why);
	if (!v[g->n].rule || !v[g->n].why) {
		free(v[g->n].rule);
		free(v[g->n].why);
		return -ENOMEM;
	}
	g->n++;
	return 0;
}

/* Shadow mode without BPF LSM: what Landlock and seccomp's socket rules would have held. */
static int gap_shadow(const struct policy *p, const struct layers *l, struct gap *g)
{
	struct shadow_gap_item v[SHADOW_GAP_MAX];
	size_t i, n = shadow_gap_items(p, l, v);
	int err = 0;

	for (i = 0; !err && i < n; i++)
		err = item(g, v[i].rule, "%s", v[i].why);
	return err;
}

/* Deny or narrower rules inside a wider tree: Landlock only adds rights going down a path. */
static int gap_narrowing(const struct view *v, int abi, struct gap *g)
{
	char from[PATH_MAX], names[128];
	__u32 lost;
	size_t i;
	int err = 0;

	for (i = 0; !err && i < v->n; i++) {
		lost = union_rights(v, i, from, sizeof(from)) & ~v->r[i].rights & expressible(abi);
		if (!lost)
			continue;
		policy_rights_format(lost, names, sizeof(names));
		if (v->r[i].deny)
			err = item(
				g, v->r[i].path,
				"deny inside the allowed tree %s: Landlock cannot take back what "
				"an enclosing rule grants (%s stay allowed)",
				from, names);
		else
			err = item(
				g, v->r[i].path,
				"narrower than the enclosing rule %s: Landlock grants the union, "
				"so %s stay allowed",
				from, names);
	}
	return err;
}

/*
 * Rules follow objects under BPF LSM (an object's own rule decides, by whatever name it is
 * reached) and paths under Landlock (the rights of the name's tree are added): an object with a
 * rule of its own that also has a name in a tree granting more, a hard link or a bind mount made
 * before the agent started, gets more. Said once, when some rule grants what another lacks.
 */
static int gap_other_names(const struct view *v, int abi, struct gap *g)
{
	size_t i, j;

	for (i = 0; i < v->n; i++)
		for (j = 0; j < v->n; j++)
			if (i != j && (v->r[j].rights & ~v->r[i].rights & expressible(abi)))
				return item(
					g, "files: other names",
					"a rule follows its object under BPF LSM, the path under "
					"Landlock: a hard link or bind mount of an object into a "
					"tree granting more (made before the agent started) gets "
					"that tree's rights");
	return 0;
}

/* Rights Landlock has no bit for, or gets only from a later ABI: denied nowhere. */
static int gap_rights(const struct view *v, int abi, struct gap *g)
{
	__u32 everywhere = 0;
	int err = 0;
	size_t i;

	for (i = 0; i < v->n; i++)
		if (!strcmp(v->r[i].path, "/"))
			everywhere = v->r[i].rights;
	if (!(everywhere & AGENTD_RIGHT_SETATTR))
		err = item(g, "files: setattr",
			   "Landlock has no right for chmod, chown, utimes or extended attributes: "
			   "only file ownership refuses them");
	if (!err && abi < 3 && !(everywhere & AGENTD_RIGHT_TRUNCATE))
		err = item(g, "files: truncate",
			   "Landlock ABI %d cannot restrict truncate (ABI 3 can): only write "
			   "permission refuses it",
			   abi);
	/* Within one directory, link and rename need only Landlock's make (and remove) rights. */
	for (i = 0; !err && i < v->n; i++)
		if ((v->r[i].rights & AGENTD_RIGHT_CREATE) && !(v->r[i].rights & AGENTD_RIGHT_LINK))
			err = item(g, v->r[i].path,
				   "link and rename within one directory need only create under "
				   "Landlock: the link right is checked across directories only");
	return err;
}

static int gap_exec(const struct policy *p, const struct view *v, struct gap *g)
{
	bool readable_only = false;
	char from[PATH_MAX];
	__u32 u;
	size_t i;
	int err = 0;

	for (i = 0; !err && i < v->n; i++) {
		u = union_rights(v, i, from, sizeof(from));
		if ((u & AGENTD_RIGHT_READ) && !(u & AGENTD_RIGHT_EXEC))
			readable_only = true;
		if (!p->exec.allow_writable && (u & AGENTD_RIGHT_EXEC) &&
		    (u & (AGENTD_RIGHT_WRITE | AGENTD_RIGHT_CREATE)))
			err = item(g, v->r[i].path,
				   "exec from a tree the agent can write (exec.allow_writable is "
				   "false): Landlock checks the exec right alone");
	}
	if (!err && readable_only)
		err = item(g, "exec: executable mappings",
			   "mmap with PROT_EXEC of a file the agent may only read (ld.so ./binary) "
			   "is not checked by Landlock");
	if (!err && !p->exec.allow_memfd)
		err = item(
			g, "exec.allow_memfd",
			"exec of a memfd (fexecve) is not checked by Landlock: memfds live on an "
			"internal mount it lets through");
	return err;
}

static bool writes_cgroups(const struct view *v, const char *root)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if ((v->r[i].rights & (AGENTD_RIGHT_WRITE | AGENTD_RIGHT_CREATE)) &&
		    (!strcmp(v->r[i].path, root) || ancestor(v->r[i].path, root) ||
		     ancestor(root, v->r[i].path)))
			return true;
	return false;
}

static int gap_files(const struct policy *p, const struct layers *l, struct gap *g)
{
	struct view v = { 0 };
	int err;

	if (!layers_use_landlock(l)) {
		err = p->n_files
			      ? item(g, "files",
				     "no file rule is enforced: neither BPF LSM nor Landlock; a "
				     "root agent without capabilities still owns every file root "
				     "owns (/proc/sys, /etc/shadow, device nodes such as disks)")
			      : 0;
		if (!err && p->exec.n_allow)
			err = item(g, "exec.allow",
				   "no exec rule is enforced: neither BPF LSM nor Landlock");
		return err;
	}
	err = view_build(p, &v);
	if (!err)
		err = gap_narrowing(&v, l->landlock_abi, g);
	if (!err)
		err = gap_other_names(&v, l->landlock_abi, g);
	if (!err)
		err = gap_rights(&v, l->landlock_abi, g);
	if (!err)
		err = gap_exec(p, &v, g);
	if (!err && writes_cgroups(&v, l->cgroup_root))
		err = item(g, "self: cgroup files",
			   "the policy lets the agent write under %s, and only BPF LSM refuses "
			   "cgroup file writes whatever the file rules say",
			   l->cgroup_root);
	free(v.r);
	return err;
}

static int gap_self(const struct layers *l, struct gap *g)
{
	bool ll = layers_use_landlock(l);
	int err;

	err = item(g, "self: module autoload",
		   "implicit module and firmware loading (kernel_module_request, "
		   "kernel_read_file, kernel_load_data) has no syscall of its own: only BPF LSM "
		   "sees it");
	if (!err && !(l->set & LAYER_SECCOMP))
		err = item(
			g, "self: syscalls",
			"bpf, perf_event_open, mounts, user namespaces, keyrings, module loading, "
			"leaving the cgroup with clone3, typing into a terminal (TIOCSTI), "
			"fanotify and ICMP sockets need seccomp without BPF LSM");
	if (!err && !ll)
		err = item(g, "self: ptrace",
			   "ptrace of tasks outside the agent needs Landlock without BPF LSM");
	/* Landlock lets a task choose a tracer outside its domain (agentctl, which never traces). */
	if (!err)
		err = item(
			g, "self: ptrace_traceme",
			"PTRACE_TRACEME, which makes the parent outside the agent its tracer, is "
			"refused by BPF LSM only");
	/* Landlock does not check inotify_add_watch; DAC alone decides. */
	if (!err && ll)
		err = item(
			g, "self: inotify",
			"inotify watches are not checked by Landlock: an agent watches trees its "
			"file rules deny, where file permissions let it read, and learns the "
			"names and activity of files there");
	if (!err)
		err = item(
			g, "self: tasks by pid",
			"setpriority, ioprio_set, sched_setattr, sched_setscheduler, "
			"sched_setaffinity and prlimit64 name their target by pid, which seccomp "
			"cannot tell inside the agent from outside: the agent reaches the tasks of "
			"its uid outside it (a root agent without capabilities lowers host "
			"daemons' priorities and resource limits); seccomp refuses only the "
			"uid-wide forms (PRIO_USER, IOPRIO_WHO_USER, kill -1)");
	if (!err && (!ll || l->landlock_abi < 6))
		err = item(g, "self: signals",
			   "signals to tasks outside the agent, by kill or through a SIGIO owner "
			   "(F_SETOWN), need Landlock ABI 6 (scoped signals) without BPF LSM");
	if (!err && (l->set & (LAYER_LANDLOCK | LAYER_SECCOMP)))
		err = item(g, "agentctl attach",
			   "Landlock, seccomp, the capability limit, the environment, the session, "
			   "the pseudo-terminal and the IPC namespace are given by agentctl run "
			   "before exec: a process attached while running gets cgroup-BPF only");
	return err;
}

static int gap_sockets(const struct policy *p, const struct layers *l, struct gap *g)
{
	bool ll = layers_use_landlock(l);
	int err;

	if (!(l->set & LAYER_SECCOMP))
		err = item(g, "network.sockets", "%s",
			   (l->set & LAYER_CGROUP)
				   ? "socket families other than inet and inet6 need seccomp "
				     "without BPF LSM"
				   : "no socket family rule is enforced");
	else if (p->io_uring)
		err = item(g, "io_uring",
			   "io_uring's operations never pass through seccomp: IORING_OP_SOCKET "
			   "creates sockets of families the policy does not grant");
	else
		err = 0;
	/* Unix sockets the agent can create reach others' only where BPF LSM says no. */
	if (!err && (!(l->set & LAYER_SECCOMP) || (p->net.sockets & POLICY_SOCK_UNIX)))
		err = item(
			g, "network.sockets: unix", "%s",
			ll && l->landlock_abi >= 6
				? "path-named unix sockets of host daemons and other agents stay "
				  "reachable without BPF LSM (Landlock ABI 6 scopes abstract ones)"
				: "unix sockets of host daemons and other agents, path-named and "
				  "abstract, stay reachable without BPF LSM");
	/* The cgroup programs see connect() of ping sockets, never their unconnected sends. */
	if (!err && (p->net.sockets & (POLICY_SOCK_ICMP | POLICY_SOCK_RAW)))
		err = item(g, "network.sockets: icmp, raw",
			   "sendto() and sendmsg() of an unconnected ICMP echo or raw socket reach "
			   "any address, structurally denied ones too, without BPF LSM: the cgroup "
			   "programs check only connect()");
	return err;
}

int layers_gap(const struct policy *p, const struct layers *l, struct gap *out)
{
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!(l->set & LAYER_BPF_LSM)) {
		err = l->shadow ? gap_shadow(p, l, out) : gap_files(p, l, out);
		if (!err)
			err = gap_self(l, out);
		if (!err)
			err = gap_sockets(p, l, out);
		if (!err && p->audit.log_allows)
			err = item(out, "audit.log_allows",
				   "allowed file and exec operations are recorded by BPF LSM only");
	}
	if (!err && !(l->set & LAYER_CGROUP))
		err = item(out, "network",
			   "the structural deny list, connect, sendmsg and bind rules need "
			   "cgroup-BPF");
	if (err)
		gap_free(out);
	return err;
}

void gap_free(struct gap *g)
{
	size_t i;

	for (i = 0; i < g->n; i++) {
		free(g->v[i].rule);
		free(g->v[i].why);
	}
	free(g->v);
	memset(g, 0, sizeof(*g));
}

void gap_format_line(const struct gap *g, char *buf, size_t bufsz)
{
	size_t i, n;

	buf[0] = '\0';
	for (i = 0; i < g->n; i++) {
		n = strlen(buf);
		if (n + 1 >= bufsz)
			break;
		snprintf(buf + n, bufsz - n, "%s%s", i ? "; " : "", g->v[i].rule);
	}
}

json_t *layers_json(const struct policy *p, const struct layers *l)
{
	json_t *o, *by = json_object(), *items = json_array();
	char buf[256];
	struct gap g;
	size_t i;
	int part;

	for (part = 0; by && part < PART_COUNT; part++) {
		layers_enforcer(l, part, buf, sizeof(buf));
		json_object_set_new(by, part_names[part], json_string(buf));
	}
	if (p && items && !layers_gap(p, l, &g)) {
		for (i = 0; i < g.n; i++)
			json_array_append_new(items, json_pack("{s:s, s:s}", "rule", g.v[i].rule,
							       "why", g.v[i].why));
		gap_free(&g);
	}
	layers_format(l, buf, sizeof(buf));
	o = json_pack("{s:s, s:i, s:o, s:o}", "layers", buf, "landlock_abi",
		      layers_use_landlock(l) ? l->landlock_abi : 0, "enforced_by", by, "gap",
		      p ? items : json_null());
	if (!p)
		json_decref(items);
	return o;
}
