// SPDX-License-Identifier: GPL-2.0
/*
 * For the attach live view: the agentctl grant command that would let a denied operation
 * through, printed for the operator, never run. Only for denies a grant can lift (the agent's
 * own rules: reason rule or no-rule), never for structural deny or self-protection.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy/policy.h"
#include "grant_hint.h"

static const char *str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* The detail's value of key ("need=0x4" -> 4), 0 when absent. */
static unsigned long detail_hex(const char *detail, const char *key)
{
	const char *p = strstr(detail, key);

	return p ? strtoul(p + strlen(key), NULL, 16) : 0;
}

/* s in single quotes for a shell, a quote inside as '\''. */
static void quote(const char *s, char *out, size_t sz)
{
	size_t n = 0;

	if (sz < 3)
		return;
	out[n++] = '\'';
	for (; *s && n + 6 < sz; s++) {
		if (*s == '\'') {
			memcpy(out + n, "'\\''", 4);
			n += 4;
		} else {
			out[n++] = *s;
		}
	}
	out[n++] = '\'';
	out[n] = '\0';
}

int grant_hint(json_t *rec, char *out, size_t sz)
{
	const char *kind = str(rec, "kind"), *detail = str(rec, "detail"), *name;
	json_t *o = json_object_get(rec, "object");
	char q[1100], rights[128];
	unsigned long need;

	name = str(rec, "agent_name");
	if (!name[0] || strcmp(str(rec, "decision"), "deny"))
		return 0;
	if (!strcmp(kind, "tool") && strstr(detail, "outcome=denied"))
		return snprintf(out, sz, "agentctl grant %s --tool %s --once", name,
				str(json_object_get(rec, "tool"), "name")) > 0;
	if (strncmp(detail, "reason=rule", 11) && strncmp(detail, "reason=no-rule", 14))
		return 0;
	if (!strcmp(kind, "net") && str(o, "addr")[0])
		return snprintf(out, sz,
				strchr(str(o, "addr"), ':')
					? "agentctl grant %s --connect [%s/128]:%lld --for 10m"
					: "agentctl grant %s --connect %s/32:%lld --for 10m",
				name, str(o, "addr"),
				json_integer_value(json_object_get(o, "port"))) > 0;
	if (!str(o, "path")[0] || str(o, "path")[0] != '/' ||
	    json_is_true(json_object_get(o, "path_truncated")))
		return 0;
	quote(str(o, "path"), q, sizeof(q));
	if (!strcmp(kind, "exec"))
		return snprintf(out, sz, "agentctl grant %s --exec %s --for 10m", name, q) > 0;
	need = detail_hex(detail, "need=0x") & ~detail_hex(detail, "have=0x");
	if (strcmp(kind, "file") || !need)
		return 0;
	policy_rights_format(need, rights, sizeof(rights));
	return snprintf(out, sz, "agentctl grant %s --path %s --rights %s --for 10m", name, q,
			rights) > 0;
}
