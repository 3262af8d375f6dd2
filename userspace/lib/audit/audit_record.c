// SPDX-License-Identifier: GPL-2.0
/* Audit records: the one schema (docs/AUDIT.md), its JSON line, times, hashes and filters. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include <openssl/evp.h>
#include "agentd/abi.h"
#include "audit/audit.h"
#include "kernel/event.h"

static const char *const kind_names[AUDIT_KIND_MAX] = {
	[AUDIT_KIND_NONE] = "none",	      [AUDIT_KIND_FILE] = "file",
	[AUDIT_KIND_EXEC] = "exec",	      [AUDIT_KIND_NET] = "net",
	[AUDIT_KIND_SOCK] = "sock",	      [AUDIT_KIND_SELF] = "self",
	[AUDIT_KIND_TOOL] = "tool",	      [AUDIT_KIND_POLICY] = "policy",
	[AUDIT_KIND_LIFECYCLE] = "lifecycle", [AUDIT_KIND_LOSS] = "loss",
};

static const char *const decision_names[AUDIT_DECISION_MAX] = {
	[AUDIT_DECISION_NONE] = "none",
	[AUDIT_DECISION_ALLOW] = "allow",
	[AUDIT_DECISION_DENY] = "deny",
	[AUDIT_DECISION_WOULD_DENY] = "would-deny",
};

const char *audit_kind_name(enum audit_kind k)
{
	return k < AUDIT_KIND_MAX ? kind_names[k] : "none";
}

const char *audit_decision_name(enum audit_decision d)
{
	return d < AUDIT_DECISION_MAX ? decision_names[d] : "none";
}

enum audit_kind audit_kind_parse(const char *s)
{
	int k;

	for (k = AUDIT_KIND_FILE; k < AUDIT_KIND_MAX; k++)
		if (!strcmp(s, kind_names[k]))
			return k;
	return AUDIT_KIND_NONE;
}

enum audit_decision audit_decision_parse(const char *s)
{
	int d;

	for (d = AUDIT_DECISION_ALLOW; d < AUDIT_DECISION_MAX; d++)
		if (!strcmp(s, decision_names[d]))
			return d;
	return AUDIT_DECISION_MAX;
}

/*
 * Hand-formatted rather than built with jansson: a record is on the hot path of every event, and
 * building and dumping a json_t costs several times the rest of the append (selftests/audit/
 * bench_writer.c -j measures it). The unit tests check every line against jansson's own output.
 */
struct out {
	char *p, *end;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->p && (size_t)(o->end - o->p) > n) {
		memcpy(o->p, s, n);
		o->p += n;
	} else {
		o->p = NULL;
	}
}

static void put_str(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void put_u64(struct out *o, unsigned long long v)
{
	char tmp[24];
	int i = sizeof(tmp);

	do {
		tmp[--i] = '0' + v % 10;
		v /= 10;
	} while (v);
	put(o, tmp + i, sizeof(tmp) - i);
}

/*
 * Strings hold bytes an agent chose: every byte outside printable ASCII, and '\' and '"', is
 * written as the four characters \xNN, so the JSON is ASCII and the bytes are recoverable.
 */
static void put_escaped(struct out *o, const char *s, size_t max)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, run = 0;

	put(o, "\"", 1);
	for (i = 0; i < max && s[i]; i++) {
		unsigned char c = s[i];
		char esc[5] = { '\\', '\\', 'x', hex[c >> 4], hex[c & 15] };

		if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"') {
			run++;
			continue;
		}
		put(o, s + i - run, run);
		run = 0;
		put(o, esc, sizeof(esc));
	}
	put(o, s + i - run, run);
	put(o, "\"", 1);
}

static void key_u64(struct out *o, const char *key, unsigned long long v)
{
	put_str(o, key);
	put_u64(o, v);
}

static void key_str(struct out *o, const char *key, const char *s, size_t max)
{
	put_str(o, key);
	put_escaped(o, s, max);
}

static void put_hex(struct out *o, const unsigned char *b, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	char tmp[64];
	size_t i;

	for (i = 0; i < n && i < 32; i++) {
		tmp[2 * i] = hex[b[i] >> 4];
		tmp[2 * i + 1] = hex[b[i] & 15];
	}
	put(o, "\"", 1);
	put(o, tmp, 2 * i);
	put(o, "\"", 1);
}

static void format_object(struct out *o, const struct audit_record *r)
{
	const char *sep = "";

	if (!r->path[0] && !(r->has & (AUDIT_HAS_INODE | AUDIT_HAS_NET)))
		return;
	put_str(o, ",\"object\":{");
	if (r->path[0]) {
		key_str(o, "\"path\":", r->path, sizeof(r->path));
		if (r->path_truncated)
			put_str(o, ",\"path_truncated\":true");
		sep = ",";
	}
	if (r->has & AUDIT_HAS_INODE) {
		put_str(o, sep);
		put_str(o, "\"dev\":\"");
		put_u64(o, r->dev >> 20);
		put(o, ":", 1);
		put_u64(o, r->dev & 0xfffff);
		key_u64(o, "\",\"ino\":", r->ino);
		sep = ",";
	}
	if (r->has & AUDIT_HAS_NET) {
		put_str(o, sep);
		key_str(o, "\"family\":", r->family, sizeof(r->family));
		key_str(o, ",\"addr\":", r->addr, sizeof(r->addr));
		key_u64(o, ",\"port\":", r->port);
	}
	put(o, "}", 1);
}

static void format_subject(struct out *o, const struct audit_record *r)
{
	if (r->agent)
		key_u64(o, ",\"agent\":", r->agent);
	if (r->agent_name[0])
		key_str(o, ",\"agent_name\":", r->agent_name, sizeof(r->agent_name));
	if (r->has & AUDIT_HAS_CGROUP)
		key_u64(o, ",\"cgroup\":", r->cgroup);
	if (r->has & AUDIT_HAS_PROC) {
		key_u64(o, ",\"pid\":", r->pid);
		key_u64(o, ",\"tid\":", r->tid);
		key_u64(o, ",\"uid\":", r->uid);
		key_str(o, ",\"comm\":", r->comm, sizeof(r->comm));
	}
}

static void format_outcome(struct out *o, const struct audit_record *r)
{
	if (r->decision != AUDIT_DECISION_NONE) {
		put_str(o, ",\"decision\":\"");
		put_str(o, audit_decision_name(r->decision));
		put(o, "\"", 1);
	}
	if (r->has & AUDIT_HAS_RULE) {
		key_u64(o, ",\"rule\":", r->rule);
		key_u64(o, ",\"gen\":", r->gen);
	}
	if (r->has & AUDIT_HAS_TOOL) {
		key_str(o, ",\"tool\":{\"name\":", r->tool, sizeof(r->tool));
		key_u64(o, ",\"args_len\":", r->args_len);
		put_str(o, ",\"args_sha256\":");
		put_hex(o, r->args_sha256, sizeof(r->args_sha256));
		key_u64(o, ",\"out_len\":", r->out_len);
		put_str(o, ",\"out_sha256\":");
		put_hex(o, r->out_sha256, sizeof(r->out_sha256));
		put(o, "}", 1);
	}
	if (r->has & AUDIT_HAS_COUNT) {
		key_u64(o, ",\"count\":", r->count);
		key_str(o, ",\"source\":", r->source, sizeof(r->source));
	}
	if (r->has & AUDIT_HAS_TORN)
		key_u64(o, ",\"torn\":", r->torn);
	if (r->detail[0])
		key_str(o, ",\"detail\":", r->detail, sizeof(r->detail));
}

int audit_record_format(const struct audit_record *r, const struct audit_stamp *st, char *buf,
			size_t bufsz)
{
	struct out o = { buf, buf + bufsz };
	char time[32];

	audit_time_format(r->time_ns ? r->time_ns : st->time_ns, time);
	key_u64(&o, "{\"v\":", AUDIT_SCHEMA_VERSION);
	key_u64(&o, ",\"seq\":", st->seq);
	put_str(&o, ",\"time\":\"");
	put_str(&o, time);
	key_str(&o, "\",\"host\":", st->host, AUDIT_HOST_MAX);
	put_str(&o, ",\"kind\":\"");
	put_str(&o, audit_kind_name(r->kind));
	key_str(&o, "\",\"op\":", r->op, sizeof(r->op));
	format_subject(&o, r);
	format_object(&o, r);
	format_outcome(&o, r);
	put_str(&o, ",\"prev\":\"");
	put_str(&o, st->prev);
	put(&o, "\"}", 2);
	if (!o.p)
		return -ENOSPC;
	*o.p = '\0';
	return o.p - buf;
}

static enum audit_kind hook_kind(__u32 hook)
{
	if (hook == AGENTD_HOOK_BPRM_CHECK || hook == AGENTD_HOOK_MMAP_FILE ||
	    hook == AGENTD_HOOK_FILE_MPROTECT)
		return AUDIT_KIND_EXEC;
	if (hook == AGENTD_HOOK_SOCK_CREATE || hook == AGENTD_HOOK_UNIX_STREAM_CONNECT ||
	    hook == AGENTD_HOOK_UNIX_MAY_SEND)
		return AUDIT_KIND_SOCK;
	if (hook == AGENTD_HOOK_SOCKET_SETSOCKOPT)
		return AUDIT_KIND_SOCK;
	if ((hook >= AGENTD_HOOK_CONNECT4 && hook <= AGENTD_HOOK_BIND6) ||
	    (hook >= AGENTD_HOOK_SOCKET_CONNECT && hook <= AGENTD_HOOK_SOCKET_BIND &&
	     hook != AGENTD_HOOK_SOCKET_SETSOCKOPT))
		return AUDIT_KIND_NET;
	if (hook == AGENTD_HOOK_PATH_NOTIFY)
		return AUDIT_KIND_FILE;
	if (hook >= AGENTD_HOOK_BPF)
		return AUDIT_KIND_SELF;
	return AUDIT_KIND_FILE;
}

/*
 * Details are built by appending, not with snprintf: this runs once per kernel event, and
 * snprintf's parsing cost more than the rest of the conversion. Bounded; the detail's size
 * (AUDIT_DETAIL_MAX) is far above what these write.
 */
struct detail {
	char *p, *end; /* end: the last byte, kept for the NUL */
};

static void detail_str(struct detail *d, const char *s)
{
	while (*s && d->p < d->end)
		*d->p++ = *s++;
	*d->p = '\0';
}

static void detail_num(struct detail *d, unsigned int v, bool hex)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[16], *q = tmp + sizeof(tmp);
	unsigned int base = hex ? 16 : 10;

	*--q = '\0';
	do {
		*--q = digits[v % base];
		v /= base;
	} while (v);
	detail_str(d, q);
}

static struct detail detail_start(struct audit_record *r, const char *reason)
{
	struct detail d = { r->detail, r->detail + sizeof(r->detail) - 1 };

	detail_str(&d, "reason=");
	detail_str(&d, reason);
	return d;
}

static void from_common(struct audit_record *r, const struct agentd_task *t,
			const struct agentd_verdict *v)
{
	const char *op = event_hook_name(v->hook);
	size_t n = strnlen(op, sizeof(r->op) - 1);

	r->kind = hook_kind(v->hook);
	memcpy(r->op, op, n);
	r->op[n] = '\0';
	r->has = AUDIT_HAS_CGROUP | AUDIT_HAS_PROC | AUDIT_HAS_RULE;
	r->agent = t->agent_id;
	r->gen = t->generation;
	r->cgroup = t->cgroup_id;
	r->pid = t->pid;
	r->tid = t->tid;
	r->uid = t->uid;
	memcpy(r->comm, t->comm, sizeof(t->comm));
	r->comm[sizeof(t->comm)] = '\0';
	r->decision = v->decision == AGENTD_DECISION_DENY	  ? AUDIT_DECISION_DENY
		      : v->decision == AGENTD_DECISION_WOULD_DENY ? AUDIT_DECISION_WOULD_DENY
								  : AUDIT_DECISION_ALLOW;
	r->rule = v->rule_id;
	detail_start(r, event_reason_name(v->reason));
}

static void from_file_event(struct audit_record *r, const struct agentd_file_event *e)
{
	size_t n = e->path_len < sizeof(e->path) ? e->path_len : sizeof(e->path);
	struct detail d;

	from_common(r, &e->task, &e->verdict);
	r->has |= AUDIT_HAS_INODE;
	memcpy(r->path, e->path, n);
	r->path[strnlen(r->path, n)] = '\0';
	r->path_truncated = e->flags & AGENTD_EVF_PATH_TRUNCATED;
	r->dev = e->dev;
	r->ino = e->ino;
	d = detail_start(r, event_reason_name(e->verdict.reason));
	detail_str(&d, " need=0x");
	detail_num(&d, e->rights_needed, true);
	detail_str(&d, " have=0x");
	detail_num(&d, e->rights_held, true);
	if (e->flags & AGENTD_EVF_INTERNAL)
		detail_str(&d, " internal");
}

static void from_net_event(struct audit_record *r, const struct agentd_net_event *e)
{
	static const __u8 mapped[12] = { [10] = 0xff, [11] = 0xff };

	from_common(r, &e->task, &e->verdict);
	if (e->verdict.hook == AGENTD_HOOK_SOCK_CREATE ||
	    e->verdict.hook == AGENTD_HOOK_UNIX_STREAM_CONNECT ||
	    e->verdict.hook == AGENTD_HOOK_UNIX_MAY_SEND ||
	    e->verdict.hook == AGENTD_HOOK_SOCKET_SETSOCKOPT) {
		struct detail d = detail_start(r, event_reason_name(e->verdict.reason));

		detail_str(&d, " family=");
		detail_num(&d, e->family, false);
		detail_str(&d, " type=");
		detail_num(&d, e->protocol, false);
		return;
	}
	r->has |= AUDIT_HAS_NET;
	strcpy(r->family, e->family == AF_INET ? "inet" : "inet6");
	if (e->family == AF_INET && !memcmp(e->addr, mapped, sizeof(mapped)))
		inet_ntop(AF_INET, e->addr + 12, r->addr, sizeof(r->addr));
	else
		inet_ntop(AF_INET6, e->addr, r->addr, sizeof(r->addr));
	r->port = e->port;
}

static void from_self_event(struct audit_record *r, const struct agentd_self_event *e)
{
	struct detail d;

	from_common(r, &e->task, &e->verdict);
	d = detail_start(r, event_reason_name(e->verdict.reason));
	detail_str(&d, " target_pid=");
	detail_num(&d, e->target_pid, false);
	detail_str(&d, " arg=");
	detail_num(&d, e->arg, false);
}

int audit_record_from_event(struct audit_record *r, const union agentd_event *ev,
			    __s64 mono_to_real_ns)
{
	memset(r, 0, sizeof(*r));
	switch (ev->hdr.type) {
	case AGENTD_EV_FILE:
		from_file_event(r, &ev->file);
		break;
	case AGENTD_EV_NET:
		from_net_event(r, &ev->net);
		break;
	case AGENTD_EV_SELF:
		from_self_event(r, &ev->self);
		break;
	default:
		return -EINVAL;
	}
	r->time_ns = ev->hdr.ts_ns + mono_to_real_ns;
	return 0;
}

__s64 audit_mono_to_real_ns(void)
{
	struct timespec real, mono;

	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	return (real.tv_sec - mono.tv_sec) * 1000000000LL + (real.tv_nsec - mono.tv_nsec);
}

void audit_time_format(__u64 ns, char *buf)
{
	/* Records come in bursts within one second: format its date once. */
	static __thread time_t last_sec = -1;
	static __thread char last[24];
	time_t sec = ns / 1000000000ULL;
	unsigned long frac = ns % 1000000000ULL;
	int i;

	if (sec != last_sec) {
		struct tm tm;

		gmtime_r(&sec, &tm);
		strftime(last, sizeof(last), "%Y-%m-%dT%H:%M:%S", &tm);
		last_sec = sec;
	}
	memcpy(buf, last, 19);
	buf[19] = '.';
	for (i = 28; i > 19; i--, frac /= 10)
		buf[i] = '0' + frac % 10;
	buf[29] = 'Z';
	buf[30] = '\0';
}

static int parse_digits(const char **s, int n, int *out)
{
	int v = 0;

	while (n--) {
		if (**s < '0' || **s > '9')
			return -EINVAL;
		v = v * 10 + (*(*s)++ - '0');
	}
	*out = v;
	return 0;
}

static int parse_clock(const char **s, struct tm *tm, __u64 *frac_ns)
{
	int hh, mm, ss, d, n = 0;

	if ((**s != 'T' && **s != 't' && **s != ' ') || (++*s, parse_digits(s, 2, &hh)) ||
	    *(*s)++ != ':' || parse_digits(s, 2, &mm) || *(*s)++ != ':' || parse_digits(s, 2, &ss))
		return -EINVAL;
	if (hh > 23 || mm > 59 || ss > 60)
		return -EINVAL;
	tm->tm_hour = hh;
	tm->tm_min = mm;
	tm->tm_sec = ss;
	*frac_ns = 0;
	if (**s != '.')
		return 0;
	for ((*s)++; **s >= '0' && **s <= '9'; (*s)++, n++)
		if (n < 9)
			*frac_ns = *frac_ns * 10 + (**s - '0');
	if (!n)
		return -EINVAL;
	for (d = n; d < 9; d++)
		*frac_ns *= 10;
	return 0;
}

int audit_time_parse(const char *s, __u64 *ns)
{
	struct tm tm = { 0 };
	int y, mo, d, oh = 0, om = 0, sign = 0;
	__u64 frac = 0;
	time_t t;

	if (parse_digits(&s, 4, &y) || *s++ != '-' || parse_digits(&s, 2, &mo) || *s++ != '-' ||
	    parse_digits(&s, 2, &d) || mo < 1 || mo > 12 || d < 1 || d > 31 || y < 1970)
		return -EINVAL;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	if (*s && parse_clock(&s, &tm, &frac))
		return -EINVAL;
	if (*s == 'Z' || *s == 'z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		sign = *s++ == '-' ? -1 : 1;
		if (parse_digits(&s, 2, &oh) || *s++ != ':' || parse_digits(&s, 2, &om))
			return -EINVAL;
	}
	if (*s)
		return -EINVAL;
	t = timegm(&tm) - sign * (oh * 3600 + om * 60);
	if (t < 0)
		return -EINVAL;
	*ns = (__u64)t * 1000000000ULL + frac;
	return 0;
}

void audit_hash_hex(const void *data, size_t len, char out[AUDIT_HASH_HEX])
{
	static const char hex[] = "0123456789abcdef";
	static __thread EVP_MD_CTX *ctx;
	static __thread EVP_MD *md;
	unsigned char d[32];
	unsigned int n = 0;
	int i;

	/* Fetched once: a one-shot SHA256() looks the algorithm up on every call. */
	if (!md) {
		md = EVP_MD_fetch(NULL, "SHA256", NULL);
		ctx = EVP_MD_CTX_new();
	}
	if (!md || !ctx || !EVP_DigestInit_ex(ctx, md, NULL) || !EVP_DigestUpdate(ctx, data, len) ||
	    !EVP_DigestFinal_ex(ctx, d, &n) || n != sizeof(d))
		abort(); /* out of memory in libcrypto: no chain can be built */
	for (i = 0; i < 32; i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	out[64] = '\0';
}

void audit_filter_init(struct audit_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->decision = AUDIT_DECISION_MAX;
}

bool audit_filter_empty(const struct audit_filter *f)
{
	return !f->agent[0] && f->kind == AUDIT_KIND_NONE && f->decision == AUDIT_DECISION_MAX &&
	       !f->since_ns && !f->until_ns;
}

int audit_filter_set(struct audit_filter *f, const char *key, const char *value)
{
	if (!strcmp(key, "agent")) {
		if (!value[0] || strlen(value) >= sizeof(f->agent))
			return -EINVAL;
		strcpy(f->agent, value);
		return 0;
	}
	if (!strcmp(key, "kind"))
		return (f->kind = audit_kind_parse(value)) == AUDIT_KIND_NONE ? -EINVAL : 0;
	if (!strcmp(key, "decision"))
		return (f->decision = audit_decision_parse(value)) == AUDIT_DECISION_MAX ? -EINVAL
											 : 0;
	if (!strcmp(key, "since"))
		return audit_time_parse(value, &f->since_ns);
	if (!strcmp(key, "until"))
		return audit_time_parse(value, &f->until_ns);
	return -EINVAL;
}

int audit_filter_parse(struct audit_filter *f, const char *line)
{
	char *copy = strdup(line), *save = NULL, *tok;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	audit_filter_init(f);
	for (tok = strtok_r(copy, " \t\r\n", &save); tok && !err;
	     tok = strtok_r(NULL, " \t\r\n", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq) {
			err = -EINVAL;
			break;
		}
		*eq = '\0';
		err = audit_filter_set(f, tok, eq + 1);
	}
	free(copy);
	return err;
}

/* Whether the run of digits is a number past INT64_MAX (no sign: the log writes none). */
static bool past_int64(const char *d, size_t n)
{
	static const char max[] = "9223372036854775807";

	while (n > 1 && *d == '0')
		d++, n--;
	return n > sizeof(max) - 1 || (n == sizeof(max) - 1 && memcmp(d, max, n) > 0);
}

/* The length of the JSON number token at s (at most n bytes): sign, digits, fraction, exponent;
 * *integer tells whether it was digits alone. */
static size_t number_token(const char *s, size_t n, bool *integer)
{
	size_t i = 0;

	*integer = true;
	while (i < n && (isdigit((unsigned char)s[i]) || (s[i] && strchr("-+.eE", s[i])))) {
		if (!isdigit((unsigned char)s[i]))
			*integer = false;
		i++;
	}
	return i;
}

/* line with each unsigned integer past INT64_MAX outside strings quoted; *outlen its length. */
static char *quote_big_integers(const char *line, size_t len, size_t *outlen)
{
	char *out = malloc(2 * len + 1);
	size_t i = 0, o = 0, n;
	bool in_string = false, integer, big;

	if (!out)
		return NULL;
	while (i < len) {
		if (in_string || (line[i] != '-' && !isdigit((unsigned char)line[i]))) {
			if (in_string && line[i] == '\\' && i + 1 < len)
				out[o++] = line[i++];
			else if (line[i] == '"')
				in_string = !in_string;
			out[o++] = line[i++];
			continue;
		}
		n = number_token(line + i, len - i, &integer);
		big = integer && past_int64(line + i, n);
		if (big)
			out[o++] = '"';
		memcpy(out + o, line + i, n);
		o += n;
		if (big)
			out[o++] = '"';
		i += n;
	}
	*outlen = o;
	return out;
}

json_t *audit_json_loadb(const char *line, size_t len, size_t flags)
{
	json_error_t err;
	json_t *rec = json_loadb(line, len, flags, &err);
	size_t n;
	char *quoted;

	if (rec || json_error_code(&err) != json_error_numeric_overflow)
		return rec;
	quoted = quote_big_integers(line, len, &n);
	if (!quoted)
		return NULL;
	rec = json_loadb(quoted, n, flags, NULL);
	free(quoted);
	return rec;
}

/* The name as a reader of its line gets it (put_escaped(): \xNN for every byte outside
 * printable ASCII, and for '\' and '"'), so that both keys of a record agree; "" when that is
 * longer than a filter can hold. */
static void key_name(char *out, const char *name, size_t max)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, o = 0;

	for (i = 0; i < max && name[i]; i++) {
		unsigned char c = name[i];
		bool plain = c >= 0x20 && c < 0x7f && c != '\\' && c != '"';

		if (o + (plain ? 1 : 4) >= AUDIT_NAME_MAX) {
			o = 0;
			break;
		}
		if (plain) {
			out[o++] = c;
			continue;
		}
		out[o++] = '\\';
		out[o++] = 'x';
		out[o++] = hex[c >> 4];
		out[o++] = hex[c & 15];
	}
	out[o] = '\0';
}

void audit_key_of(const struct audit_record *r, __u64 time_ns, struct audit_key *k)
{
	k->time_ns = time_ns;
	k->has_time = true;
	k->agent = r->agent;
	k->has_agent = r->agent; /* the line leaves out agent 0 */
	k->kind = r->kind;
	k->decision = r->decision;
	key_name(k->agent_name, r->agent_name, sizeof(r->agent_name));
}

int audit_key_from_json(json_t *rec, struct audit_key *k)
{
	json_t *agent = json_object_get(rec, "agent");
	const char *kind = json_string_value(json_object_get(rec, "kind"));
	const char *decision = json_string_value(json_object_get(rec, "decision"));
	const char *name = json_string_value(json_object_get(rec, "agent_name"));
	const char *time = json_string_value(json_object_get(rec, "time"));

	if (!json_is_object(rec))
		return -EINVAL;
	k->has_agent = json_is_integer(agent);
	k->agent = k->has_agent ? json_integer_value(agent) : 0;
	k->kind = kind ? audit_kind_parse(kind) : AUDIT_KIND_NONE;
	k->decision = decision ? audit_decision_parse(decision) : AUDIT_DECISION_NONE;
	k->has_time = time && !audit_time_parse(time, &k->time_ns);
	k->agent_name[0] = '\0';
	/* a longer name than a filter can hold matches no filter */
	if (name && strlen(name) < sizeof(k->agent_name))
		strcpy(k->agent_name, name);
	k->len = 0;
	return 0;
}

static bool match_agent(const char *want, const struct audit_key *k)
{
	char num[24];

	if (!strcmp(k->agent_name, want))
		return true;
	snprintf(num, sizeof(num), "%lld", k->agent);
	return k->has_agent && !strcmp(num, want);
}

bool audit_filter_match_key(const struct audit_filter *f, const struct audit_key *k)
{
	if (f->agent[0] && !match_agent(f->agent, k))
		return false;
	if (f->kind != AUDIT_KIND_NONE && k->kind != f->kind)
		return false;
	if (f->decision != AUDIT_DECISION_MAX && k->decision != f->decision)
		return false;
	if ((f->since_ns || f->until_ns) &&
	    (!k->has_time || k->time_ns < f->since_ns || (f->until_ns && k->time_ns > f->until_ns)))
		return false;
	return true;
}

bool audit_filter_match_json(const struct audit_filter *f, json_t *rec)
{
	struct audit_key k;

	if (audit_filter_empty(f))
		return true;
	return !audit_key_from_json(rec, &k) && audit_filter_match_key(f, &k);
}

bool audit_filter_match(const struct audit_filter *f, const char *line, size_t len)
{
	json_t *rec;
	bool ok;

	if (audit_filter_empty(f))
		return true;
	rec = audit_json_loadb(line, len, JSON_REJECT_DUPLICATES);
	ok = audit_filter_match_json(f, rec);
	json_decref(rec);
	return ok;
}
