// SPDX-License-Identifier: GPL-2.0
/*
 * agentctl audit: verify, query and follow the audit log (docs/AUDIT.md). Records are printed as
 * stored, one JSON line each: they are the evidence, and jq reads them as they are.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "audit/audit.h"
#include "cmds.h"
#include "log.h"
#include "paths.h"
#include "wire/unixsock.h"

#define EXPECT_MAX 16

struct args {
	const char *dir;
	bool dir_given;
	const char *socket;
	bool json;
	struct audit_filter filter;
	char filter_line[512]; /* the same filter, as a stream subscriber sends it */
	char **files;
	int nfiles;
	struct audit_expect expect[EXPECT_MAX]; /* verify --expect */
	size_t nexpect;
};

enum {
	OPT_DIR = 256,
	OPT_SOCKET,
	OPT_JSON,
	OPT_AGENT,
	OPT_KIND,
	OPT_DECISION,
	OPT_SINCE,
	OPT_UNTIL,
	OPT_EXPECT
};

static const struct option options[] = {
	{ "dir", required_argument, NULL, OPT_DIR },
	{ "socket", required_argument, NULL, OPT_SOCKET },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "agent", required_argument, NULL, OPT_AGENT },
	{ "kind", required_argument, NULL, OPT_KIND },
	{ "decision", required_argument, NULL, OPT_DECISION },
	{ "since", required_argument, NULL, OPT_SINCE },
	{ "until", required_argument, NULL, OPT_UNTIL },
	{ "expect", required_argument, NULL, OPT_EXPECT },
	{ NULL, 0, NULL, 0 },
};

static int add_filter(struct args *a, const char *key, const char *value)
{
	size_t used = strlen(a->filter_line);

	if (audit_filter_set(&a->filter, key, value) || strchr(value, ' ')) {
		log_err("bad --%s '%s'\n", key, value);
		return -EINVAL;
	}
	snprintf(a->filter_line + used, sizeof(a->filter_line) - used, "%s%s=%s", used ? " " : "",
		 key, value);
	return 0;
}

static int parse_args(int argc, char **argv, struct args *a, bool filters)
{
	static const char *const keys[] = { "agent", "kind", "decision", "since", "until" };
	int c;

	memset(a, 0, sizeof(*a));
	audit_filter_init(&a->filter);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "j", options, NULL)) != -1) {
		if (c == OPT_DIR)
			a->dir = optarg;
		else if (c == OPT_SOCKET)
			a->socket = optarg;
		else if (c == OPT_JSON || c == 'j')
			a->json = true;
		else if (filters && c >= OPT_AGENT && c <= OPT_UNTIL) {
			if (add_filter(a, keys[c - OPT_AGENT], optarg))
				return -EINVAL;
		} else if (!filters && c == OPT_EXPECT) {
			if (a->nexpect == EXPECT_MAX ||
			    audit_expect_parse(optarg, &a->expect[a->nexpect])) {
				log_err("bad --expect '%s': SEQ or SEQ:HASH (64 hex digits), at "
					"most %d\n",
					optarg, EXPECT_MAX);
				return -EINVAL;
			}
			a->nexpect++;
		} else {
			log_err("audit %s: unknown option '%s'\n", argv[0], argv[optind - 1]);
			return -EINVAL;
		}
	}
	a->files = argv + optind;
	a->nfiles = argc - optind;
	a->dir_given = a->dir;
	if (a->dir && (a->socket || a->nfiles)) {
		log_err("audit %s: --dir excludes --socket and files\n", argv[0]);
		return -EINVAL;
	}
	if (!a->dir && !a->nfiles)
		a->dir = PATH_AUDIT_DIR;
	return 0;
}

static void print_result_json(const struct audit_verify_result *r, bool ok)
{
	json_t *o = json_pack("{s:b, s:s, s:I, s:I, s:I, s:s, s:b, s:b}", "intact", ok, "problem",
			      audit_problem_name(r->problem), "records", (json_int_t)r->records,
			      "first_seq", (json_int_t)r->first_seq, "last_seq",
			      (json_int_t)r->last_seq, "last_hash", r->last_hash, "torn_tail",
			      r->torn_tail, "head_missing", r->head_missing);

	if (o && !ok) {
		json_object_set_new(o, "file", json_string(r->file));
		json_object_set_new(o, "line", json_integer(r->line));
		json_object_set_new(o, "seq", json_integer(r->seq));
		json_object_set_new(o, "what", json_string(r->what));
	}
	if (o)
		json_dumpf(o, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
	printf("\n");
	json_decref(o);
}

static void print_result(const struct audit_verify_result *r, bool ok, size_t files)
{
	if (!ok) {
		printf("TAMPERED %s:%llu: seq %llu: %s: %s\n", r->file, (unsigned long long)r->line,
		       (unsigned long long)r->seq, audit_problem_name(r->problem), r->what);
		printf("intact before it: %llu records, seq %llu..%llu\n",
		       (unsigned long long)r->records, (unsigned long long)r->first_seq,
		       (unsigned long long)r->last_seq);
		return;
	}
	printf("intact: %zu files, %llu records, seq %llu..%llu, last hash %s\n", files,
	       (unsigned long long)r->records, (unsigned long long)r->first_seq,
	       (unsigned long long)r->last_seq, r->last_hash);
	printf("checkpoint (keep it where the log's writer cannot reach): --expect %llu:%s\n",
	       (unsigned long long)r->last_seq, r->last_hash);
	if (r->head_missing)
		printf("note: the log begins at a segment-start: older segments were removed\n");
	if (r->torn_tail)
		printf("note: the live file ends in an incomplete record (a crash); the next "
		       "writer start records it\n");
}

static int list(const struct args *a, struct audit_segments *segs)
{
	int err = audit_segments_list(a->dir, segs);

	if (err)
		log_err("cannot read the audit directory %s: %s\n", a->dir, strerror(-err));
	else if (!segs->n)
		log_err("no audit log in %s\n", a->dir);
	return err ? err : segs->n ? 0 : -ENOENT;
}

static int do_verify(int argc, char **argv)
{
	struct audit_verify_result res;
	struct audit_segments segs = { 0 };
	struct args a;
	int bad;

	if (parse_args(argc, argv, &a, false) || a.socket)
		return EXIT_USAGE;
	if (a.dir && list(&a, &segs))
		return EXIT_FAIL;
	if (a.dir)
		bad = audit_verify_files_expect(segs.paths, segs.n, a.expect, a.nexpect, &res);
	else
		bad = audit_verify_files_expect(a.files, a.nfiles, a.expect, a.nexpect, &res);
	if (a.json)
		print_result_json(&res, !bad);
	else
		print_result(&res, !bad, a.dir ? segs.n : (size_t)a.nfiles);
	audit_segments_free(&segs);
	if (bad && res.problem == AUDIT_IO)
		return EXIT_FAIL;
	return bad ? EXIT_NO : 0;
}

/* Filters the line as verify parsed it: each line is parsed once. */
static void print_match(void *ctx, const char *line, size_t len, json_t *rec)
{
	if (audit_filter_match_json(ctx, rec)) {
		fwrite(line, 1, len, stdout);
		putchar('\n');
	}
}

/*
 * The matching records, verified as they are read: only records the chain covers are printed,
 * so lines inserted into the log, or anything after a break in the chain, never are.
 */
static int do_query(int argc, char **argv)
{
	struct audit_verify_result res;
	struct audit_segments segs = { 0 };
	struct args a;
	int bad;

	if (parse_args(argc, argv, &a, true) || a.socket)
		return EXIT_USAGE;
	if (a.dir && list(&a, &segs))
		return EXIT_FAIL;
	if (a.dir)
		bad = audit_verify_files_each(segs.paths, segs.n, NULL, 0, &res, print_match,
					      &a.filter);
	else
		bad = audit_verify_files_each(a.files, a.nfiles, NULL, 0, &res, print_match,
					      &a.filter);
	fflush(stdout);
	audit_segments_free(&segs);
	if (!bad)
		return 0;
	log_err("TAMPERED %s:%llu: seq %llu: %s: %s; nothing from there on is printed "
		"(agentctl audit verify)\n",
		res.file, (unsigned long long)res.line, (unsigned long long)res.seq,
		audit_problem_name(res.problem), res.what);
	return res.problem == AUDIT_IO ? EXIT_FAIL : EXIT_NO;
}

struct tail {
	int fd;
	ino_t ino;
	char buf[AUDIT_LINE_MAX + 1];
	size_t len;
};

/* Prints the complete lines that have arrived; keeps a partial one for later. */
static void tail_drain(struct tail *t, const struct audit_filter *f)
{
	ssize_t n;

	while ((n = read(t->fd, t->buf + t->len, sizeof(t->buf) - 1 - t->len)) > 0) {
		char *p = t->buf, *nl;

		t->len += n;
		while ((nl = memchr(p, '\n', t->buf + t->len - p))) {
			if (audit_filter_match(f, p, nl - p))
				fwrite(p, 1, nl + 1 - p, stdout);
			p = nl + 1;
		}
		t->len -= p - t->buf;
		memmove(t->buf, p, t->len);
		if (t->len == sizeof(t->buf) - 1)
			t->len = 0; /* longer than any record: not one */
	}
	fflush(stdout);
}

static int tail_open(struct tail *t, const char *path, bool at_end)
{
	struct stat st;

	t->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (t->fd < 0 || fstat(t->fd, &st))
		return -errno;
	t->ino = st.st_ino;
	t->len = 0;
	if (at_end)
		lseek(t->fd, 0, SEEK_END);
	return 0;
}

static int follow_dir(const struct args *a)
{
	char path[PATH_MAX], ev[4096];
	struct tail *t = calloc(1, sizeof(*t));
	struct pollfd pfd = { .events = POLLIN };
	struct stat st;

	snprintf(path, sizeof(path), "%s/" AUDIT_LIVE_NAME, a->dir);
	pfd.fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (!t || pfd.fd < 0 ||
	    inotify_add_watch(pfd.fd, a->dir, IN_MODIFY | IN_CREATE | IN_MOVED_TO) < 0 ||
	    tail_open(t, path, true)) {
		log_err("cannot follow %s: %s\n", path, strerror(errno));
		free(t);
		return EXIT_FAIL;
	}
	for (;;) {
		if (t->fd >= 0)
			tail_drain(t, &a->filter);
		/* Rotated: finish the old file, then read the new one from its start. */
		if (stat(path, &st) == 0 && (t->fd < 0 || st.st_ino != t->ino)) {
			if (t->fd >= 0) {
				tail_drain(t, &a->filter);
				close(t->fd);
			}
			if (!tail_open(t, path, false))
				continue;
		}
		/* The timeout only covers what inotify cannot see (a log on a network file system). */
		if (poll(&pfd, 1, 1000) > 0)
			while (read(pfd.fd, ev, sizeof(ev)) > 0)
				;
	}
}

int stream_subscribe(const char *path, const char *filter_line)
{
	int fd = unix_connect(path), err;

	if (fd >= 0 && dprintf(fd, "%s\n", filter_line) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

const char *stream_default_path(const char *control)
{
	static char path[PATH_MAX];

	if (getenv("AGENTD_STREAM"))
		return getenv("AGENTD_STREAM");
	if (!control)
		control = getenv("AGENTD_CONTROL");
	/* agentd's default: audit.sock beside the control socket */
	if (!control || path_beside(control, PATH_AUDIT_SOCK_NAME, path, sizeof(path)))
		return PATH_AUDIT_SOCK;
	return path;
}

static int follow_fd(int fd, const char *path)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		fwrite(buf, 1, n, stdout);
		fflush(stdout);
	}
	close(fd);
	log_err("%s closed the stream: agentd stopped, or this reader fell behind and was "
		"dropped (a loss record says so; resume from the log by seq)\n",
		path);
	return EXIT_FAIL;
}

/* The stream when agentd is up; the live file when it is not (or with --dir). */
static int do_follow(int argc, char **argv)
{
	const char *path;
	struct args a;
	int fd;

	if (parse_args(argc, argv, &a, true) || a.nfiles)
		return EXIT_USAGE;
	if (a.dir_given)
		return follow_dir(&a);
	path = a.socket ? a.socket : stream_default_path(NULL);
	fd = stream_subscribe(path, a.filter_line);
	if (fd >= 0)
		return follow_fd(fd, path);
	if (a.socket || (fd != -ENOENT && fd != -ECONNREFUSED)) {
		log_err("cannot subscribe to %s: %s\n", path, strerror(-fd));
		return EXIT_FAIL;
	}
	log_info("no audit stream at %s (agentd is not running): following %s\n", path, a.dir);
	return follow_dir(&a);
}

static int do_audit_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("usage: agentctl audit verify [--json] [--expect SEQ[:HASH]]... [--dir DIR | "
	       "FILE...]\n"
	       "       agentctl audit query [--dir DIR | FILE...] [FILTERS]\n"
	       "       agentctl audit follow [--dir DIR | --socket PATH] [FILTERS]\n"
	       "follow subscribes to agentd's stream socket (--socket, default $AGENTD_STREAM,\n"
	       "else audit.sock beside $AGENTD_CONTROL, else %s) when agentd\n"
	       "is up, else follows DIR/audit.log; --dir always follows the file\n"
	       "FILTERS: --agent ID|NAME --kind KIND --decision allow|deny|would-deny --since "
	       "TIME\n"
	       "         --until TIME\n"
	       "TIME is RFC 3339 (2024-05-01, 2024-05-01T12:00:00Z, ...+02:00); DIR defaults to "
	       "%s\n"
	       "query prints only records the hash chain covers, and exits 1 at a break in it\n"
	       "verify exits 0 when the log is intact, 1 when it was tampered with (or a\n"
	       "checkpoint --expect SEQ:HASH, noted from an earlier verify, no longer holds: the\n"
	       "log was rewritten or cut), 3 when it cannot be read\n",
	       PATH_AUDIT_SOCK, PATH_AUDIT_DIR);
	return 0;
}

int do_audit(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} verbs[] = {
		{ "verify", do_verify },
		{ "query", do_query },
		{ "follow", do_follow },
		{ "help", do_audit_help },
	};
	size_t i;

	if (argc < 2)
		return do_audit_help(argc, argv), EXIT_USAGE;
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(argv[1], verbs[i].name))
			return verbs[i].fn(argc - 1, argv + 1);
	log_err("unknown audit command '%s' (try agentctl audit help)\n", argv[1]);
	return EXIT_USAGE;
}
