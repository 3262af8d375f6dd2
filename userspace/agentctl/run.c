// SPDX-License-Identifier: GPL-2.0
/*
 * agentctl run NAME [--user USER] [--cwd DIR] [--require full] -- CMD [ARGS...]: CMD inside the
 * agent's cgroup from its first instruction (clone3 with CLONE_INTO_CGROUP), never a moment
 * outside it, under the layers this host has for the agent's policy (docs/LAYERS.md): the seccomp
 * filter and the capability limit always, and Landlock where BPF LSM is not available. What the
 * layers cannot enforce is said in one line before the command starts; --require full refuses to
 * start it then.
 *
 * The agent starts in a session of its own, in IPC and UTS namespaces of its own, with the
 * policy's capabilities only and a minimal environment (agent_env()). It inherits standard
 * input, output and error and no other descriptor, except that a terminal among them is replaced
 * by a pseudo-terminal agentctl relays (pty.c): the operator's terminal never reaches the agent.
 * A cgroup file opened for writing before the task became an agent would let it leave its cgroup
 * (the kernel checks cgroup writes at open, not at write), so one on 0-2 refuses the run.
 *
 * Over 800 lines, kept whole: what runs in the parent before the fork and what the child applies
 * to itself before exec are one sequence (the order of namespaces, ids, capabilities, Landlock and
 * seccomp matters), read best top to bottom.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/close_range.h>
#include <linux/magic.h>
#include <linux/sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kernel/cgroup.h"
#include "client.h"
#include "cmds.h"
#include "sandbox/landlock.h"
#include "sandbox/layers.h"
#include "log.h"
#include "policy/load.h"
#include "policy/policy.h"
#include "kernel/probe.h"
#include "pty.h"
#include "sandbox/sandbox_caps.h"
#include "sandbox/sandbox_seccomp.h"
#include "sandbox/shadow.h"

/* --require full refused to start the command: the policy is not fully enforced here. */
#define EXIT_NOT_FULL 125

/* Where the agent sees its private temp directory and home (docs/POLICY.md, "vars"). */
#define AGENT_TMP "/tmp"
#define AGENT_HOME AGENT_TMP "/home"

/* At most this many of the policy's objects under /tmp and /var/tmp are carried into the agent's. */
#define CARRY_MAX 32

/* The agent's PATH, whatever the operator's (a policy naming PATH in "env" passes that on). */
#define AGENT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

extern char **environ;

struct run_opts {
	const char *name, *user, *cwd;
	bool require_full;
	char **cmd;
};

/* What the child applies to itself before exec, all prepared by the parent as root. */
struct sandbox {
	struct policy *policy;
	struct layers layers;
	struct landlock_plan *plan;
	int ruleset_fd; /* -1 without Landlock */
	struct sandbox_seccomp seccomp;
	__u64 caps; /* the policy's capabilities, the only ones the agent keeps */
	char **env; /* the agent's whole environment, NULL-terminated */
	size_t n_env;
	struct pty tty;
	sigset_t sigmask; /* the operator's, given back to the child */
	char tmp[PATH_MAX]; /* the agent's ${tmp}, mounted on /tmp and /var/tmp */
	const char *carry[CARRY_MAX]; /* the policy's paths under /tmp and /var/tmp (carry()) */
	size_t n_carry;
};

static volatile sig_atomic_t child_pid;
static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

/* To the agent's process group: its first process leads a session of its own, so ^C at the
 * operator's terminal (which reaches agentctl alone) reaches the agent's children too, as it
 * would in the operator's. A session leader cannot leave its group; before setsid() the group
 * is not there yet, and the process alone gets it. */
static void forward(int sig)
{
	int saved = errno;

	if (child_pid > 0 && kill(-child_pid, sig))
		kill(child_pid, sig);
	errno = saved;
}

static int usage(void)
{
	log_err("usage: agentctl run NAME [--user USER] [--cwd DIR] [--require full]\n"
		"                    [--control PATH] -- CMD [ARGS...]\n"
		"  --require full  refuse to start unless every rule of the agent's policy is\n"
		"                  enforced on this host (the gap is empty)\n"
		"exit status: the command's (128+N when killed by signal N); 126 it could not be\n"
		"started; 127 not found; 125 --require full and a rule is not enforced here;\n"
		"1 no such agent; 2 usage; 3 failure (the daemon, the policy, the layers)\n");
	return EXIT_USAGE;
}

static int parse(int argc, char **argv, struct run_opts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	if (argc < 2 || !control_name_valid(argv[1]))
		return -EINVAL;
	o->name = argv[1];
	for (i = 2; i < argc && strcmp(argv[i], "--"); i++) {
		if (i + 1 >= argc)
			return -EINVAL;
		if (!strcmp(argv[i], "--user"))
			o->user = argv[++i];
		else if (!strcmp(argv[i], "--cwd"))
			o->cwd = argv[++i];
		else if (!strcmp(argv[i], "--require") && !strcmp(argv[++i], "full"))
			o->require_full = true;
		else
			return -EINVAL;
	}
	if (i + 1 >= argc)
		return -EINVAL;
	o->cmd = argv + i + 1;
	return 0;
}

/* In the child: its own session, with the agent's terminal as its controlling one. */
static int enter_session(const struct sandbox *sb)
{
	size_t i;

	for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		signal(forwarded[i], SIG_DFL);
	sigprocmask(SIG_SETMASK, &sb->sigmask, NULL);
	if (setsid() < 0)
		return -errno;
	/* Every inherited descriptor above 2 closes at exec (Landlock's ruleset is used before). */
	if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC))
		return -errno;
	return pty_child(&sb->tty);
}

/* Bind-mounts the directory of fd on at, without set-user-ID programs or devices through it. */
static int bind_tmp(int fd, const char *at)
{
	char dir[32];

	snprintf(dir, sizeof(dir), "/proc/self/fd/%d", fd);
	if (mount(dir, at, NULL, MS_BIND, NULL) ||
	    mount(NULL, at, NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV, NULL))
		return -errno;
	return 0;
}

/* Makes the mount point for the object of fd at path (under the agent's /tmp, as root), each
 * component walked without following a symlink (the agent owns that tree); returns an O_PATH
 * descriptor of it or -errno. */
static int mount_point(int fd, const char *path)
{
	char buf[PATH_MAX], *name, *next;
	struct stat st;
	int dir, sub;

	if (fstat(fd, &st))
		return -errno;
	if ((size_t)snprintf(buf, sizeof(buf), "%s", path) >= sizeof(buf))
		return -ENAMETOOLONG;
	dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (name = buf + 1; dir >= 0 && name; name = next) {
		next = strchr(name, '/');
		if (next)
			*next++ = '\0';
		if (next || S_ISDIR(st.st_mode))
			mkdirat(dir, name, 0755);
		else
			close(openat(dir, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644));
		sub = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC | (next ? O_DIRECTORY : 0));
		close(dir);
		dir = sub;
	}
	return dir < 0 ? -errno : dir;
}

/* Bind-mounts the object of fd on the object of at (descriptors, so no path is followed again). */
static int bind_fd(int fd, int at)
{
	char from[32], to[32];

	snprintf(from, sizeof(from), "/proc/self/fd/%d", fd);
	snprintf(to, sizeof(to), "/proc/self/fd/%d", at);
	return mount(from, to, NULL, MS_BIND | MS_REC, NULL) ? -errno : 0;
}

/* The policy's objects under /tmp and /var/tmp back at their paths in the agent's (each fds[i],
 * opened before the private ones covered them). */
static int carry_in(const struct sandbox *sb, const int *fds, const char **step)
{
	size_t i;
	int at, err = 0;

	for (i = 0; !err && i < sb->n_carry; i++) {
		*step = sb->carry[i];
		at = mount_point(fds[i], sb->carry[i]);
		err = at < 0 ? at : bind_fd(fds[i], at);
		if (at >= 0)
			close(at);
	}
	return err;
}

/*
 * In agentctl, just before the agent's clone3: a mount namespace of its own that the agent
 * inherits, made here because the agent's first process is an agent's from its first
 * instruction, to which BPF LSM denies every mount call. In it, every mount made private
 * (nothing reaches the host's namespace), the agent's ${tmp} on /tmp and /var/tmp, and the
 * objects the policy names under either carried over, so that its rules (on objects) keep meaning
 * what their paths say. The agent cannot undo them: the mount calls are denied to it (seccomp,
 * Landlock or BPF LSM, and its capabilities, which never include CAP_SYS_ADMIN unless the policy
 * grants sys_admin). agentctl reads no path after this.
 */
static int enter_mounts(const struct sandbox *sb, const char **step)
{
	int fd, fds[CARRY_MAX], err = 0;
	size_t i, n = 0;

	*step = "mount namespace";
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -errno;
	/* Opened in this namespace (a mount of another cannot be bound), before the first bind
	 * hides what lies under /tmp or /var/tmp. */
	*step = sb->tmp;
	fd = open(sb->tmp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	for (; fd >= 0 && n < sb->n_carry; n++) {
		*step = sb->carry[n];
		fds[n] = open(sb->carry[n], O_PATH | O_CLOEXEC);
		if (fds[n] < 0)
			break;
	}
	if (fd < 0 || n < sb->n_carry)
		err = -errno;
	if (!err) {
		*step = AGENT_TMP;
		err = bind_tmp(fd, AGENT_TMP);
	}
	if (!err && !access("/var/tmp", F_OK)) {
		*step = "/var/tmp";
		err = bind_tmp(fd, "/var/tmp");
	}
	if (!err)
		err = carry_in(sb, fds, step);
	for (i = 0; i < n; i++)
		close(fds[i]);
	if (fd >= 0)
		close(fd);
	return err;
}

/* In the child: the user it runs as, between the two steps of the capability limit. */
static int become(const struct passwd *pw, const struct sandbox *sb)
{
	int err = sandbox_caps_begin(sb->caps);

	if (!err && pw &&
	    (initgroups(pw->pw_name, pw->pw_gid) || setgid(pw->pw_gid) || setuid(pw->pw_uid)))
		err = -errno;
	return err ?: sandbox_caps_finish(sb->caps);
}

/* In the child: who it runs as, where, its layers, then the command. Never returns. */
static void child(const struct run_opts *o, const struct passwd *pw, const struct sandbox *sb)
{
	const char *step = "session";
	int err = enter_session(sb);

	if (!err && (err = become(pw, sb)))
		step = pw ? pw->pw_name : "capabilities";
	if (!err && o->cwd && chdir(o->cwd)) {
		err = -errno;
		step = o->cwd;
	}
	/* no_new_privs first: Landlock and seccomp need it, and setuid binaries lose their power. */
	if (!err && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		err = -errno;
		step = "no_new_privs";
	}
	if (!err && sb->ruleset_fd >= 0 && (err = landlock_restrict(sb->ruleset_fd)))
		step = "Landlock";
	if (!err && (sb->layers.set & LAYER_SECCOMP) && (err = sandbox_seccomp_load(&sb->seccomp)))
		step = "seccomp";
	if (err) {
		fprintf(stderr, "agentctl: run: %s: %s\n", step, strerror(-err));
		_exit(126);
	}
	/* The agent's environment, its PATH for the search too. */
	environ = sb->env;
	execvp(o->cmd[0], o->cmd);
	fprintf(stderr, "agentctl: run: %s: %s\n", o->cmd[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* Refuses a standard descriptor that is a cgroup file open for writing (see the top). */
static int check_stdio(const char *name)
{
	char link[32], target[PATH_MAX];
	struct statfs sfs;
	int fd, flags;
	ssize_t n;

	for (fd = 0; fd <= 2; fd++) {
		flags = fcntl(fd, F_GETFL);
		if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY || fstatfs(fd, &sfs))
			continue; /* closed, read-only (O_PATH too), or not a file system object */
		if (sfs.f_type != CGROUP2_SUPER_MAGIC && sfs.f_type != CGROUP_SUPER_MAGIC)
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		log_err("run: agent %s: descriptor %d is a cgroup file open for writing (%s): the "
			"agent could leave its cgroup through it; redirect it elsewhere\n",
			name, fd, n > 0 ? target : "?");
		return EXIT_FAIL;
	}
	return 0;
}

/* Whether the child ended (with options WNOHANG it may not have): *code is then its status as
 * a shell reports it. */
static bool reap(pid_t pid, int options, int *code)
{
	int status;
	pid_t r;

	for (;;) {
		r = waitpid(pid, &status, options);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			*code = EXIT_FAIL;
			return true;
		}
		if (r == 0)
			return false;
		/* Without WUNTRACED only a ptrace stop is reported: the child made agentctl its
		 * tracer (PTRACE_TRACEME), which it never meant to be: pass the signal on. */
		if (!WIFSTOPPED(status))
			break;
		ptrace(PTRACE_CONT, pid, NULL, (void *)(long)WSTOPSIG(status));
	}
	*code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
	return true;
}

struct reaped {
	pid_t pid;
	int code;
};

static bool exited(void *arg)
{
	struct reaped *r = arg;

	return reap(r->pid, WNOHANG, &r->code);
}

/* Waits for the child, relaying its terminal when it has one, forwarding signals. */
static int wait_child(struct sandbox *sb, pid_t pid)
{
	struct reaped r = { .pid = pid };
	int err;

	if (sb->tty.master >= 0) {
		err = pty_relay(&sb->tty, exited, &r);
		if (!err)
			return r.code;
		log_err("run: relaying the agent's terminal: %s\n", strerror(-err));
	}
	reap(pid, 0, &r.code);
	return r.code;
}

/* The daemon's view of the agent ("agent" of the agent-info reply, a new reference). */
static int agent_info(const struct ctl *c, const char *name, json_t **agent)
{
	struct control_request req = { .id = 1, .cmd = CONTROL_AGENT_INFO };
	json_t *reply;
	int status;

	snprintf(req.name, sizeof(req.name), "%s", name);
	status = ctl_call(c, &req, &reply);
	if (status)
		return status;
	*agent = json_incref(json_object_get(reply, "agent"));
	json_decref(reply);
	return *agent ? 0 : EXIT_FAIL;
}

static int open_cgroup(const json_t *agent, const char *name, int *fd)
{
	const char *path = json_string_value(json_object_get(agent, "cgroup"));

	*fd = path ? open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (*fd < 0)
		log_err("agent %s: cgroup %s: %s\n", name, path ? path : "(none)", strerror(errno));
	return *fd < 0 ? EXIT_FAIL : 0;
}

/*
 * The agent's policy, loaded here (agentctl runs as root) with the daemon's vars and tools
 * registry. It must be the policy the daemon loaded: a file changed since then would give the
 * kernel's rules and these layers two different policies, so a differing digest refuses.
 */
static int load_policy(const json_t *agent, const char *name, struct policy **out)
{
	struct policy_var vars[CONTROL_VARS_MAX];
	struct policy_vars pv = { .v = vars };
	struct policy_source src = {
		.path = json_string_value(json_object_get(agent, "policy")),
		.tools = json_string_value(json_object_get(agent, "tools")),
		.vars = &pv,
		.digest = json_string_value(json_object_get(agent, "policy_digest")),
	};
	struct policy_errors errs = { 0 };
	char line[1024];
	const char *k;
	json_t *v;
	int err;

	json_object_foreach(json_object_get(agent, "vars"), k, v)
	{
		if (pv.n == CONTROL_VARS_MAX)
			break;
		vars[pv.n].name = k;
		vars[pv.n++].value = json_string_value(v) ? json_string_value(v) : "";
	}
	/* agentd reports no digest for a policy it could not load: none matches "". */
	if (!src.digest)
		src.digest = "";
	err = policy_load_full(&src, out, NULL, &errs);
	if (errs.n)
		policy_error_format(&errs.v[0], line, sizeof(line));
	policy_errors_clear(&errs);
	if (err == -ESTALE)
		log_err("run: agent %s: %s changed since agentd loaded it (or agentd could not "
			"load it): run agentctl policy reload %s first\n",
			name, src.path, name);
	else if (err)
		log_err("run: agent %s: its policy %s does not load: %s\n", name,
			src.path ? src.path : "(none)", errs.n ? line : strerror(-err));
	return err ? EXIT_FAIL : 0;
}

/* The gap in one line; with --require full, the whole list and a refusal. */
static int say_gap(const struct run_opts *o, const struct sandbox *sb)
{
	char names[128], line[2048];
	struct gap g;
	size_t i;

	if (layers_gap(sb->policy, &sb->layers, &g)) {
		log_err("run: out of memory\n");
		return EXIT_FAIL;
	}
	layers_format(&sb->layers, names, sizeof(names));
	if (g.n && o->require_full) {
		log_err("run: agent %s: --require full, and %zu rule%s NOT ENFORCED by %s here:\n",
			o->name, g.n, g.n == 1 ? " is" : "s are", names);
		for (i = 0; i < g.n; i++)
			fprintf(stderr, "  %s: %s\n", g.v[i].rule, g.v[i].why);
		gap_free(&g);
		return EXIT_NOT_FULL;
	}
	if (g.n) {
		gap_format_line(&g, line, sizeof(line));
		log_warn("run: agent %s: NOT ENFORCED by %s here: %s (agentctl status lists "
			 "why)\n",
			 o->name, names, line);
	}
	gap_free(&g);
	return 0;
}

/* Whether the agent is in shadow mode (docs/SHADOW.md), said before it starts. */
static bool say_shadow(const struct run_opts *o, const json_t *agent)
{
	const char *mode = json_string_value(json_object_get(agent, "mode"));

	if (!mode || strcmp(mode, "shadow"))
		return false;
	log_warn("run: agent %s is in SHADOW mode: its file, exec, socket and network rules record "
		 "would-deny and do NOT deny; %s (agentctl agent mode %s enforce ends it)\n",
		 o->name,
		 json_is_true(json_object_get(agent, "shadow_structural"))
			 ? "self-protection stays enforced, the structural network deny does not "
			   "(agentd --shadow-structural)"
			 : "self-protection and the structural network deny stay enforced",
		 o->name);
	return true;
}

/* Everything the child needs, prepared as root: Landlock's paths are opened here. */
static int prepare(const struct run_opts *o, const json_t *agent, struct sandbox *sb)
{
	const json_t *e = json_object_get(agent, "enforcement");
	char root[256];
	const char *bad = "";
	int status, err;

	status = load_policy(agent, o->name, &sb->policy);
	if (status)
		return status;
	if (cgroup2_mount(root, sizeof(root)))
		root[0] = '\0';
	layers_for_run(json_is_true(json_object_get(e, "bpf_lsm")), probe_landlock_abi(),
		       probe_seccomp() == 0, root, &sb->layers);
	sb->layers.shadow = say_shadow(o, agent);
	status = say_gap(o, sb);
	if (status)
		return status;
	sandbox_seccomp_from_policy(sb->policy, &sb->seccomp);
	if (sb->layers.shadow)
		shadow_seccomp(&sb->seccomp);
	sb->caps = sb->policy->capabilities;
	if (!layers_use_landlock(&sb->layers))
		return 0;
	err = landlock_compile(sb->policy, sb->layers.landlock_abi, &sb->plan);
	if (!err)
		err = landlock_open(sb->plan, &bad);
	if (!err) {
		sb->ruleset_fd = landlock_ruleset(sb->plan);
		err = sb->ruleset_fd < 0 ? sb->ruleset_fd : 0;
	}
	if (err) {
		log_err("run: agent %s: Landlock ruleset%s%s: %s\n", o->name, *bad ? " at " : "",
			bad, landlock_strerror(err));
		return EXIT_FAIL;
	}
	return 0;
}

static void sandbox_free(struct sandbox *sb)
{
	size_t i;

	if (sb->ruleset_fd >= 0)
		close(sb->ruleset_fd);
	landlock_plan_free(sb->plan);
	policy_free(sb->policy);
	for (i = 0; i < sb->n_env; i++)
		free(sb->env[i]);
	free(sb->env);
	pty_close(&sb->tty);
	*sb = (struct sandbox){ .ruleset_fd = -1, .tty = { .master = -1, .slave = -1 } };
}

/* NAME=value into the agent's environment, replacing an earlier NAME; nothing when value is
 * NULL. Returns 0 or -ENOMEM. */
static int env_put(struct sandbox *sb, const char *name, const char *value)
{
	size_t len = strlen(name), i;
	char *s, **v;

	if (!value)
		return 0;
	if (asprintf(&s, "%s=%s", name, value) < 0)
		return -ENOMEM;
	for (i = 0; i < sb->n_env; i++)
		if (!strncmp(sb->env[i], name, len) && sb->env[i][len] == '=') {
			free(sb->env[i]);
			sb->env[i] = s;
			return 0;
		}
	v = realloc(sb->env, (sb->n_env + 2) * sizeof(*v));
	if (!v) {
		free(s);
		return -ENOMEM;
	}
	sb->env = v;
	v[sb->n_env++] = s;
	v[sb->n_env] = NULL;
	return 0;
}

/*
 * The agent's environment, none of the operator's but what is named (docs/POLICY.md, "env"):
 * PATH (AGENT_PATH), HOME and USER of the user it runs as, the operator's LANG and TERM; then the
 * operator's value of each name in the policy's "env"; then its doors, from the daemon, which
 * nothing overrides: its egress proxy (the only way out by host name: the kernel denies every
 * other destination) and its tool broker's socket.
 */
static int agent_env(const json_t *agent, const struct passwd *pw, struct sandbox *sb)
{
	static const char *const proxy_vars[] = { "HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
						  "https_proxy" };
	const char *proxy = json_string_value(json_object_get(agent, "proxy"));
	const char *tools =
		json_string_value(json_object_get(json_object_get(agent, "broker"), "socket"));
	const char *local = proxy ? "localhost,127.0.0.1,::1" : NULL;
	const struct policy *p = sb->policy;
	size_t i;
	int err;

	if (!pw)
		pw = getpwuid(getuid());
	err = env_put(sb, "PATH", AGENT_PATH) ?: env_put(sb, "HOME", AGENT_HOME);
	err = err ?: env_put(sb, "TMPDIR", AGENT_TMP);
	err = err ?: env_put(sb, "USER", pw ? pw->pw_name : NULL);
	err = err ?: env_put(sb, "LANG", getenv("LANG")) ?: env_put(sb, "TERM", getenv("TERM"));
	for (i = 0; !err && i < p->n_env; i++)
		err = env_put(sb, p->env[i], getenv(p->env[i]));
	for (i = 0; i < sizeof(proxy_vars) / sizeof(proxy_vars[0]); i++)
		err = err ?: env_put(sb, proxy_vars[i], proxy);
	err = err ?: env_put(sb, "NO_PROXY", local) ?: env_put(sb, "no_proxy", local);
	err = err ?: env_put(sb, "AGENTD_TOOL_SOCKET", tools);
	/* An empty environment is still one: execvp() needs the array. */
	if (!err && !sb->env)
		err = (sb->env = calloc(1, sizeof(*sb->env))) ? 0 : -ENOMEM;
	if (err)
		log_err("run: the agent's environment: %s\n", strerror(-err));
	return err ? EXIT_FAIL : 0;
}

/* clone3 into the agent's cgroup, in IPC and UTS namespaces of its own: System V IPC objects and
 * POSIX message queues of the host and of other runs are out of its reach, and the host name it
 * may set is its own. agentctl makes them, outside the agent, with its own CAP_SYS_ADMIN; the
 * agent shares agentctl's mount namespace (enter_mounts()). */
static pid_t fork_agent(int cgroup_fd)
{
	struct clone_args args = {
		.flags = CLONE_INTO_CGROUP | CLONE_NEWIPC | CLONE_NEWUTS,
		.exit_signal = SIGCHLD,
		.cgroup = (__u64)cgroup_fd,
	};
	long pid = syscall(SYS_clone3, &args, sizeof(args));

	return pid < 0 ? -errno : (pid_t)pid;
}

/*
 * The agent's ${tmp} from the daemon (made at agent add, docs/POLICY.md "vars"), and its home
 * inside given to the user the agent runs as. Without them (an agent added by an agentd that
 * made none) the run is refused rather than given the host's /tmp.
 */
static int private_dirs(const json_t *agent, const char *name, const struct passwd *pw,
			struct sandbox *sb)
{
	const char *tmp = json_string_value(json_object_get(json_object_get(agent, "vars"), "tmp"));
	int dir, fd;

	dir = tmp ? open(tmp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	if (dir < 0 || (size_t)snprintf(sb->tmp, sizeof(sb->tmp), "%s", tmp) >= sizeof(sb->tmp)) {
		log_err("run: agent %s: no private temp directory (${tmp} %s%s%s): remove the "
			"agent and add it again\n",
			name, tmp ? tmp : "unset", tmp ? ": " : "", tmp ? strerror(errno) : "");
		if (dir >= 0)
			close(dir);
		return EXIT_FAIL;
	}
	fd = openat(dir, "home", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(dir);
	if (fd < 0 || fchown(fd, pw ? pw->pw_uid : getuid(), pw ? pw->pw_gid : getgid()) ||
	    fchmod(fd, 0700)) {
		log_err("run: agent %s: its home %s/home: %s\n", name, tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		return EXIT_FAIL;
	}
	close(fd);
	return 0;
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

static int carry_one(struct sandbox *sb, const char *name, const char *path)
{
	size_t i;

	if ((!under(path, "/tmp") && !under(path, "/var/tmp")) || !strcmp(path, "/tmp") ||
	    !strcmp(path, "/var/tmp") || under(path, sb->tmp))
		return 0;
	for (i = 0; i < sb->n_carry;) {
		if (under(path, sb->carry[i]))
			return 0;
		if (under(sb->carry[i], path)) /* inside path: carried with it */
			sb->carry[i] = sb->carry[--sb->n_carry];
		else
			i++;
	}
	if (sb->n_carry == CARRY_MAX) {
		log_err("run: agent %s: its policy names more than %d objects under /tmp and "
			"/var/tmp\n",
			name, CARRY_MAX);
		return EXIT_FAIL;
	}
	sb->carry[sb->n_carry++] = path;
	return 0;
}

/* The objects the policy grants under /tmp and /var/tmp (outermost ones: a tree carries what is
 * inside): the agent's own cover those paths, its rules name the host's objects. */
static int carry(struct sandbox *sb, const char *name)
{
	const struct policy *p = sb->policy;
	size_t i;
	int status = 0;

	for (i = 0; !status && i < p->n_files; i++)
		if (p->files[i].exists && p->files[i].rights)
			status = carry_one(sb, name, p->files[i].path);
	for (i = 0; !status && i < p->exec.n_allow; i++)
		if (p->exec.allow[i].exists)
			status = carry_one(sb, name, p->exec.allow[i].path);
	return status;
}

static int private_tmp(const char *name, const struct sandbox *sb)
{
	const char *step;
	int err = enter_mounts(sb, &step);

	if (err)
		log_err("run: agent %s: its private /tmp: %s: %s\n", name, step, strerror(-err));
	return err ? EXIT_FAIL : 0;
}

static int open_tty(const char *name, struct pty *t)
{
	int err = pty_open(t);

	/* Never the operator's terminal instead (docs/LAYERS.md): refused, with the way round. */
	if (err)
		log_err("run: agent %s: a pseudo-terminal for it: %s (is devpts mounted on "
			"/dev/pts?); the agent never gets the operator's terminal: redirect "
			"descriptors 0-2 away from the terminal to run it without one\n",
			name, strerror(-err));
	return err ? EXIT_FAIL : 0;
}

int do_run(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = forward };
	struct sandbox sb = { .ruleset_fd = -1, .tty = { .master = -1, .slave = -1 } };
	struct passwd *pw = NULL;
	sigset_t fwd;
	json_t *agent = NULL;
	struct run_opts o;
	int status, fd = -1;
	struct ctl c;
	pid_t pid;
	size_t i;

	argc = ctl_args(argc, argv, &c);
	if (parse(argc, argv, &o))
		return usage();
	if (o.user && !(pw = getpwnam(o.user))) {
		log_err("run: no user %s\n", o.user);
		return EXIT_FAIL;
	}
	status = check_stdio(o.name);
	if (!status)
		status = agent_info(&c, o.name, &agent);
	if (!status)
		status = prepare(&o, agent, &sb);
	if (!status)
		status = open_cgroup(agent, o.name, &fd);
	if (!status)
		status = private_dirs(agent, o.name, pw, &sb);
	if (!status)
		status = carry(&sb, o.name);
	if (!status)
		status = agent_env(agent, pw, &sb);
	if (!status)
		status = open_tty(o.name, &sb.tty);
	if (!status)
		status = private_tmp(o.name, &sb);
	json_decref(agent);
	if (status)
		goto out;
	/* SIGCHLD and SIGWINCH wait for the relay's ppoll() (none is missed before it). */
	if (sb.tty.master >= 0)
		pty_block(&sb.sigmask);
	else
		sigprocmask(SIG_BLOCK, NULL, &sb.sigmask);
	/* A signal to forward waits until child_pid names the child: one that came between the
	 * fork and the assignment would find no child and be lost, leaving the agent running. */
	sigemptyset(&fwd);
	for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++) {
		sigaction(forwarded[i], &sa, NULL);
		sigaddset(&fwd, forwarded[i]);
	}
	sigprocmask(SIG_BLOCK, &fwd, NULL);
	pid = fork_agent(fd);
	if (pid == 0)
		child(&o, pw, &sb);
	if (pid < 0) {
		log_err("run: clone3 into the cgroup of agent %s: %s\n", o.name, strerror(-pid));
		status = EXIT_FAIL;
		goto out;
	}
	/* The agent holds its terminal now; agentctl keeps the master side only. */
	close(sb.tty.slave);
	sb.tty.slave = -1;
	child_pid = pid;
	sigprocmask(SIG_UNBLOCK, &fwd, NULL);
	status = wait_child(&sb, pid);
out:
	if (fd >= 0)
		close(fd);
	sandbox_free(&sb);
	return status;
}
