// SPDX-License-Identifier: GPL-2.0
/*
 * agentctl grant NAME --path P --rights R | --exec P | --connect CIDR:PORT | --tool T
 *                     [--for DURATION] [--once]
 * agentctl grants [NAME]    agentctl revoke ID
 * Time-limited grants (docs/POLICY.md "Grants", docs/CONTROL.md grant.add, grant.ls, grant.rm).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "client.h"
#include "cmds.h"
#include "log.h"

#define GRANT_USAGE                                                                                \
	"usage: agentctl grant NAME (--path P --rights R | --exec P | --connect CIDR:PORT |\n"     \
	"                            --host NAME | --tool T) [--for DURATION] [--once]\n"          \
	"  DURATION: N followed by ms, s, m, h or d (\"90s\", \"15m\"); at most 366d\n"

/* "N" + ms, s, m, h or d into *ms (> 0, at most CONTROL_GRANT_FOR_MAX_MS). */
static int parse_duration(const char *s, long long *ms)
{
	static const struct {
		const char *unit;
		long long ms;
	} units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 }, { "d", 86400000 }
	};
	char *end;
	long long n;
	size_t i;

	errno = 0;
	n = strtoll(s, &end, 10);
	if (errno || end == s || n < 1 || s[0] == '-' || s[0] == '+')
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		if (n > CONTROL_GRANT_FOR_MAX_MS / units[i].ms)
			return -ERANGE;
		*ms = n * units[i].ms;
		return 0;
	}
	return -EINVAL;
}

/* One --KIND VALUE option into the grant: 0, 1 when opt is not one, -EINVAL. */
static int kind_opt(struct control_grant *g, const char *opt, const char *value)
{
	static const char *const kinds[] = { "path", "exec", "connect", "host", "tool" };
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (strncmp(opt, "--", 2) || strcmp(opt + 2, kinds[i]))
			continue;
		if (g->kind[0]) {
			log_err("agentctl grant: one of --path, --exec, --connect, --host, "
				"--tool\n");
			return -EINVAL;
		}
		if (strlen(value) >= sizeof(g->target)) {
			log_err("agentctl grant: %s: longer than %zu bytes\n", opt,
				sizeof(g->target) - 1);
			return -EINVAL;
		}
		strcpy(g->kind, kinds[i]);
		strcpy(g->target, value);
		return 0;
	}
	return 1;
}

/* --rights or --for: 0 or -EINVAL. */
static int other_opt(struct control_grant *g, const char *opt, const char *value)
{
	if (!strcmp(opt, "--rights") && strlen(value) < sizeof(g->rights)) {
		strcpy(g->rights, value);
		return 0;
	}
	if (strcmp(opt, "--for"))
		return -EINVAL;
	if (parse_duration(value, &g->for_ms)) {
		log_err("agentctl grant: --for %s: want N followed by ms, s, m, h or d, at most "
			"366d\n",
			value);
		return -EINVAL;
	}
	return 0;
}

static int grant_args(int argc, char **argv, struct control_grant *g)
{
	int i, r;

	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--once")) {
			g->once = true;
			continue;
		}
		if (i + 1 >= argc)
			return -EINVAL;
		r = kind_opt(g, argv[i], argv[i + 1]);
		if (r == 1)
			r = other_opt(g, argv[i], argv[i + 1]);
		if (r)
			return r;
		i++;
	}
	return g->kind[0] && (g->for_ms || g->once) ? 0 : -EINVAL;
}

/* "in 1.5s", "ended", or "when used" for a grant's expiry on the boot clock. */
static void left(char *buf, size_t bufsz, long long expires, long long now)
{
	if (!expires)
		snprintf(buf, bufsz, "when used");
	else if (expires <= now)
		snprintf(buf, bufsz, "ended");
	else
		snprintf(buf, bufsz, "in %.1fs", (expires - now) / 1e9);
}

static void print_grant(json_t *g, long long now)
{
	long long expires = json_integer_value(json_object_get(g, "expires_boot_ns"));
	const char *kind = json_string_value(json_object_get(g, "kind"));
	char when[32];

	left(when, sizeof(when), expires, now);
	printf("%-5lld %-16s %-8s %-32s %-10s %-5s %-5lld %lld\n",
	       json_integer_value(json_object_get(g, "id")),
	       json_string_value(json_object_get(g, "agent")), kind,
	       json_string_value(json_object_get(g, "target")), when,
	       json_is_true(json_object_get(g, "once")) ? "yes" : "no",
	       json_integer_value(json_object_get(g, "used")), expires);
}

int do_grant(int argc, char **argv)
{
	struct control_request req = { .id = 1, .cmd = CONTROL_GRANT_ADD };
	json_t *reply, *g;
	struct ctl c;
	int status;

	argc = ctl_args(argc, argv, &c);
	if (argc < 3 || !control_name_valid(argv[1]) || grant_args(argc, argv, &req.grant)) {
		log_err(GRANT_USAGE);
		return EXIT_USAGE;
	}
	strcpy(req.name, argv[1]);
	status = ctl_call(&c, &req, &reply);
	if (status)
		return status;
	g = json_object_get(reply, "grant");
	if (c.json)
		ctl_print_json(reply);
	else
		printf("grant %lld: agent %s, %s %s\n",
		       json_integer_value(json_object_get(g, "id")), req.name, req.grant.kind,
		       req.grant.target);
	json_decref(reply);
	return 0;
}

int do_grants(int argc, char **argv)
{
	struct control_request req = { .id = 1, .cmd = CONTROL_GRANT_LS };
	json_t *reply, *arr, *g;
	struct ctl c;
	size_t i;
	int status;

	argc = ctl_args(argc, argv, &c);
	if (argc > 2 || (argc == 2 && !control_name_valid(argv[1]))) {
		log_err("usage: agentctl grants [NAME] [--json] [--control PATH]\n");
		return EXIT_USAGE;
	}
	if (argc == 2)
		strcpy(req.name, argv[1]);
	status = ctl_call(&c, &req, &reply);
	if (status)
		return status;
	if (c.json) {
		ctl_print_json(reply);
	} else {
		arr = json_object_get(reply, "grants");
		printf("%-5s %-16s %-8s %-32s %-10s %-5s %-5s %s\n", "ID", "AGENT", "KIND",
		       "TARGET", "ENDS", "ONCE", "USED", "EXPIRES_BOOT_NS");
		json_array_foreach(arr, i, g)
		{
			print_grant(g, json_integer_value(json_object_get(reply, "boot_ns")));
		}
	}
	json_decref(reply);
	return 0;
}

int do_revoke(int argc, char **argv)
{
	struct control_request req = { .id = 1, .cmd = CONTROL_GRANT_RM };
	json_t *reply;
	struct ctl c;
	char *end;
	int status;

	argc = ctl_args(argc, argv, &c);
	if (argc == 2) {
		errno = 0;
		req.grant.id = strtoll(argv[1], &end, 10);
	}
	if (argc != 2 || errno || *end || req.grant.id < 1 || req.grant.id > CONTROL_ID_MAX) {
		log_err("usage: agentctl revoke ID [--json] [--control PATH]\n");
		return EXIT_USAGE;
	}
	status = ctl_call(&c, &req, &reply);
	if (status)
		return status;
	if (c.json)
		ctl_print_json(reply);
	else
		printf("grant %lld revoked\n", req.grant.id);
	json_decref(reply);
	return 0;
}
