// SPDX-License-Identifier: GPL-2.0
/*
 * agentctl attach: NAME alone is the operator's live view of an agent (the audit stream,
 * filtered to it, one readable line per record); with --pid or --cgroup it puts running work
 * under the agent's policy. agentctl detach NAME --cgroup PATH gives an attached cgroup back.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "audit/audit.h"
#include "client.h"
#include "cmds.h"
#include "grant_hint.h"
#include "log.h"

static int usage(void)
{
	log_err("usage: agentctl attach NAME [--socket PATH]    live view, until interrupted\n"
		"       agentctl attach NAME --pid PID [--allow-partial]\n"
		"       agentctl attach NAME --cgroup PATH [--allow-partial]\n"
		"       agentctl detach NAME --cgroup PATH\n"
		"       (each with [--json] [--control PATH])\n");
	return EXIT_USAGE;
}

struct attach_args {
	struct control_request req;
	const char *socket;
};

static int parse(int argc, char **argv, struct attach_args *a)
{
	char *end;
	int i;

	if (argc < 2 || !control_name_valid(argv[1]))
		return -EINVAL;
	snprintf(a->req.name, sizeof(a->req.name), "%s", argv[1]);
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--allow-partial")) {
			a->req.allow_partial = true;
			continue;
		}
		if (i + 1 >= argc)
			return -EINVAL;
		if (!strcmp(argv[i], "--pid")) {
			a->req.pid = strtol(argv[++i], &end, 10);
			if (*end || a->req.pid < 1 || a->req.pid > CONTROL_PID_MAX)
				return -EINVAL;
		} else if (!strcmp(argv[i], "--cgroup")) {
			if (!realpath(argv[++i], a->req.cgroup)) {
				log_err("%s: %s\n", argv[i], strerror(errno));
				return -EINVAL;
			}
		} else if (!strcmp(argv[i], "--socket")) {
			a->socket = argv[++i];
		} else {
			return -EINVAL;
		}
	}
	return 0;
}

static void print_layers(json_t *layers)
{
	const char *key;
	json_t *v;

	json_object_foreach(layers, key, v)
	{
		printf("  %-8s %s\n", key, json_string_value(v));
	}
}

/* --pid or --cgroup: one request; the reply says which layers now hold. */
static int attach_work(const struct ctl *c, struct attach_args *a)
{
	json_t *reply;
	int err;

	a->req.id = 1;
	a->req.cmd = CONTROL_AGENT_ATTACH;
	err = ctl_call(c, &a->req, &reply);
	if (err)
		return err;
	if (c->json) {
		ctl_print_json(reply);
	} else {
		if (a->req.pid)
			printf("process %d attached to agent %s: %lld processes moved into %s\n",
			       a->req.pid, a->req.name,
			       json_integer_value(json_object_get(reply, "moved")),
			       json_string_value(json_object_get(reply, "cgroup")));
		else
			printf("cgroup %s attached to agent %s\n",
			       json_string_value(json_object_get(reply, "cgroup")), a->req.name);
		if (json_integer_value(json_object_get(reply, "skipped")))
			printf("%lld descendants belong to other agents and stay there\n",
			       json_integer_value(json_object_get(reply, "skipped")));
		printf("layers now holding for it:\n");
		print_layers(json_object_get(reply, "layers"));
	}
	json_decref(reply);
	return 0;
}

static const char *str(json_t *rec, const char *key)
{
	const char *s = json_string_value(json_object_get(rec, key));

	return s ? s : "";
}

/* The object: a path, or an address and port. */
static void object_text(json_t *rec, char *out, size_t sz)
{
	json_t *o = json_object_get(rec, "object"), *tool = json_object_get(rec, "tool");
	const char *addr = str(o, "addr");

	out[0] = '\0';
	if (addr[0])
		snprintf(out, sz, strchr(addr, ':') ? "[%s]:%lld" : "%s:%lld", addr,
			 json_integer_value(json_object_get(o, "port")));
	else if (json_object_get(o, "path"))
		snprintf(out, sz, "%s%s", str(o, "path"),
			 json_is_true(json_object_get(o, "path_truncated")) ? "..." : "");
	else if (tool)
		snprintf(out, sz, "tool %s (%lld bytes in, %lld out)", str(tool, "name"),
			 json_integer_value(json_object_get(tool, "args_len")),
			 json_integer_value(json_object_get(tool, "out_len")));
}

/* A call held for an operator: its id, its arguments' digest, the commands that answer it. */
static void print_pending(json_t *rec)
{
	const char *detail = str(rec, "detail"), *id = strstr(detail, "approval=");
	int len = id ? (int)strcspn(id + 9, " ") : 0;

	if (!id)
		return;
	printf("      waits for approval %.*s: args sha256 %s; agentctl approve %.*s | agentctl "
	       "deny %.*s\n",
	       len, id + 9, str(json_object_get(rec, "tool"), "args_sha256"), len, id + 9, len,
	       id + 9);
}

/* One record as a line for people: time, verdict, what, who, on what, why. */
static void print_record(const char *line, size_t len)
{
	json_t *rec = audit_json_loadb(line, len, 0);
	const char *time, *decision;
	char obj[1200], who[64] = "", hint[1400];

	if (!json_is_object(rec)) {
		json_decref(rec);
		return;
	}
	time = str(rec, "time");
	decision = str(rec, "decision");
	if (json_object_get(rec, "pid"))
		snprintf(who, sizeof(who), "pid %lld %s",
			 json_integer_value(json_object_get(rec, "pid")), str(rec, "comm"));
	object_text(rec, obj, sizeof(obj));
	printf("%.12s  %-10s %-9s %-16s %-24s %s", strlen(time) > 11 ? time + 11 : time,
	       decision[0] ? decision : "-", str(rec, "kind"), str(rec, "op"), who, obj);
	if (json_object_get(rec, "rule"))
		printf("  rule %lld gen %lld", json_integer_value(json_object_get(rec, "rule")),
		       json_integer_value(json_object_get(rec, "gen")));
	if (json_object_get(rec, "count"))
		printf("  %lld lost (%s)", json_integer_value(json_object_get(rec, "count")),
		       str(rec, "source"));
	if (str(rec, "detail")[0])
		printf("  %s", str(rec, "detail"));
	printf("\n");
	if (!strcmp(str(rec, "op"), "approval-request"))
		print_pending(rec);
	if (grant_hint(rec, hint, sizeof(hint)))
		printf("              to allow it for a while: %s\n", hint);
	fflush(stdout);
	json_decref(rec);
}

/* Prints the stream's lines until it ends. */
static int view(int fd, bool json)
{
	static char buf[AUDIT_LINE_MAX + 1];
	size_t len = 0;
	char *p, *nl;
	ssize_t n;

	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0) {
		len += n;
		p = buf;
		while ((nl = memchr(p, '\n', buf + len - p))) {
			if (json) {
				fwrite(p, 1, nl + 1 - p, stdout);
				fflush(stdout);
			} else {
				print_record(p, nl - p);
			}
			p = nl + 1;
		}
		len -= p - buf;
		memmove(buf, p, len);
		if (len == sizeof(buf) - 1)
			len = 0; /* longer than any record: not one */
	}
	return n < 0 ? -errno : 0;
}

/*
 * NAME alone: the agent's records as they are committed, until interrupted: the stream with the
 * filter agentctl audit follow --agent NAME sends (every record names its agent).
 */
static int live_view(const struct ctl *c, struct attach_args *a)
{
	const char *path = a->socket ? a->socket : stream_default_path(c->control);
	char filter[sizeof(a->req.name) + 8], mode[16];
	json_t *reply;
	int fd, err;

	/* Asked first so that an agent that does not exist is an error, not a silent view. */
	a->req.id = 1;
	a->req.cmd = CONTROL_AGENT_INFO;
	err = ctl_call(c, &a->req, &reply);
	if (err)
		return err;
	snprintf(mode, sizeof(mode), "%s",
		 json_string_value(json_object_get(json_object_get(reply, "agent"), "mode"))
			 ?: "?");
	json_decref(reply);
	snprintf(filter, sizeof(filter), "agent=%s", a->req.name);
	fd = stream_subscribe(path, filter);
	if (fd < 0) {
		log_err("cannot subscribe to the audit stream %s: %s\n", path, strerror(-fd));
		return EXIT_FAIL;
	}
	if (!c->json) {
		printf("agent %s (mode %s%s), live from %s; interrupt to stop\n", a->req.name, mode,
		       strcmp(mode, "shadow") ? "" : ": would-deny is let through", path);
		fflush(stdout);
	}
	err = view(fd, c->json);
	close(fd);
	log_err("the audit stream %s ended: agentd stopped, or this view fell behind and was "
		"dropped (agentctl audit query --agent %s has every record)%s%s\n",
		path, a->req.name, err ? ": " : "", err ? strerror(-err) : "");
	return EXIT_FAIL;
}

int do_attach(int argc, char **argv)
{
	struct attach_args *a = calloc(1, sizeof(*a));
	struct ctl c;
	int ret;

	if (!a)
		return EXIT_FAIL;
	argc = ctl_args(argc, argv, &c);
	if (parse(argc, argv, a) || (a->socket && (a->req.pid || a->req.cgroup[0])) ||
	    (a->req.pid && a->req.cgroup[0]) ||
	    (a->req.allow_partial && !a->req.pid && !a->req.cgroup[0]))
		ret = usage();
	else if (a->req.pid || a->req.cgroup[0])
		ret = attach_work(&c, a);
	else
		ret = live_view(&c, a);
	free(a);
	return ret;
}

int do_detach(int argc, char **argv)
{
	struct attach_args *a = calloc(1, sizeof(*a));
	json_t *reply;
	struct ctl c;
	int ret;

	if (!a)
		return EXIT_FAIL;
	argc = ctl_args(argc, argv, &c);
	if (parse(argc, argv, a) || !a->req.cgroup[0] || a->req.pid || a->req.allow_partial ||
	    a->socket) {
		free(a);
		return usage();
	}
	a->req.id = 1;
	a->req.cmd = CONTROL_AGENT_DETACH;
	ret = ctl_call(&c, &a->req, &reply);
	if (!ret && c.json)
		ctl_print_json(reply);
	else if (!ret)
		printf("cgroup %s detached from agent %s: its processes are no longer the "
		       "agent's\n",
		       json_string_value(json_object_get(reply, "cgroup")), a->req.name);
	json_decref(reply);
	free(a);
	return ret;
}
