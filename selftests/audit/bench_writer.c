// SPDX-License-Identifier: GPL-2.0
/*
 * Audit writer throughput: synthetic kernel file events converted to records and appended
 * through the writer (group commit, fdatasync, rotation, gzip), as agentd will. Prints events/s.
 *   bench_audit_writer [-n EVENTS] [-d DIR] [-b BATCH] [-s SEGMENT_MB] [-j]
 * -j also times building and dumping each record with jansson, for comparison with the
 * hand-formatted line. The directory is removed afterwards.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "agentd/abi.h"
#include "audit/audit.h"
#include "kernel/event.h"

static double clock_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

static void synth(struct agentd_file_event *e, unsigned long i)
{
	memset(e, 0, sizeof(*e));
	e->hdr = (struct agentd_event_hdr){ .type = AGENTD_EV_FILE,
					    .version = AGENTD_EVENT_VERSION,
					    .len = sizeof(*e),
					    .ts_ns = i * 1000 };
	e->task.cgroup_id = 4242 + i % 4;
	e->task.agent_id = 1 + i % 4;
	e->task.generation = 3;
	e->task.pid = 1000 + i % 50;
	e->task.tid = e->task.pid;
	e->task.uid = 1000;
	e->verdict.hook = AGENTD_HOOK_FILE_OPEN;
	e->verdict.decision = i % 10 ? AGENTD_DECISION_ALLOW : AGENTD_DECISION_DENY;
	e->verdict.rule_id = i % 7;
	e->verdict.reason = AGENTD_REASON_RULE;
	e->dev = (8ULL << 20) | 1;
	e->ino = 100000 + i % 1000;
	strcpy(e->task.comm, "python3");
	e->path_len =
		snprintf(e->path, sizeof(e->path), "/home/agent/src/pkg/module_%lu.py", i % 1000);
}

/* The same record built as a json_t and dumped: what the hand formatter replaces. */
static size_t jansson_line(const struct audit_record *r, const char *prev)
{
	char time[32], dev[32];
	json_t *o;
	char *s;
	size_t n;

	audit_time_format(r->time_ns, time);
	snprintf(dev, sizeof(dev), "%llu:%llu", (unsigned long long)(r->dev >> 20),
		 (unsigned long long)(r->dev & 0xfffff));
	o = json_pack("{s:i, s:I, s:s, s:s, s:s, s:s, s:i, s:I, s:i, s:i, s:i, s:s, "
		      "s:{s:s, s:s, s:I}, s:s, s:i, s:i, s:s}",
		      "v", 1, "seq", (json_int_t)1, "time", time, "host", "bench", "kind", "file",
		      "op", r->op, "agent", r->agent, "cgroup", (json_int_t)r->cgroup, "pid",
		      r->pid, "tid", r->tid, "uid", r->uid, "comm", r->comm, "object", "path",
		      r->path, "dev", dev, "ino", (json_int_t)r->ino, "decision", "allow", "rule",
		      r->rule, "gen", r->gen, "prev", prev);
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	n = s ? strlen(s) : 0;
	free(s);
	json_decref(o);
	return n;
}

static void bench_serialise(unsigned long n)
{
	struct audit_stamp st = { .seq = 1, .host = "bench", .prev = AUDIT_GENESIS };
	union agentd_event e;
	struct audit_record r;
	char line[AUDIT_LINE_MAX];
	double t0, hand, jans;
	unsigned long i;
	size_t sink = 0;

	t0 = now();
	for (i = 0; i < n; i++) {
		synth(&e.file, i);
		audit_record_from_event(&r, &e, 0);
		sink += audit_record_format(&r, &st, line, sizeof(line));
	}
	hand = now() - t0;
	t0 = now();
	for (i = 0; i < n; i++) {
		synth(&e.file, i);
		audit_record_from_event(&r, &e, 0);
		sink += jansson_line(&r, AUDIT_GENESIS);
	}
	jans = now() - t0;
	printf("serialise only: hand %.0f records/s, jansson %.0f records/s (%zu bytes)\n",
	       n / hand, n / jans, sink);
}

int main(int argc, char **argv)
{
	struct audit_writer_opts o = { .host = "bench", .no_append_flag = true };
	char dir[] = "/tmp/agentd-bench-audit-XXXXXX", cmd[128];
	unsigned long n = 5000000, i;
	union agentd_event e;
	struct audit_writer *w;
	struct audit_record r;
	struct audit_verify_result res;
	struct audit_segments segs;
	double t0, t1, cpu0, cpu1;
	__s64 off = audit_mono_to_real_ns();
	bool json = false;
	int c, err;

	while ((c = getopt(argc, argv, "n:d:b:s:j")) != -1) {
		if (c == 'n')
			n = strtoul(optarg, NULL, 10);
		else if (c == 'd')
			snprintf(dir, sizeof(dir), "%s/agentd-bench-XXXXXX", optarg);
		else if (c == 'b')
			o.batch_records = strtoul(optarg, NULL, 10);
		else if (c == 's')
			o.segment_bytes = strtoull(optarg, NULL, 10) << 20;
		else if (c == 'j')
			json = true;
		else
			return 2;
	}
	if (json)
		bench_serialise(n < 1000000 ? n : 1000000);
	if (!mkdtemp(dir) || audit_writer_open(&w, dir, &o))
		return 3;
	t0 = now();
	cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	for (i = 0; i < n; i++) {
		synth(&e.file, i);
		if (audit_record_from_event(&r, &e, off) || (err = audit_writer_append(w, &r))) {
			fprintf(stderr, "append %lu failed\n", i);
			return 3;
		}
	}
	err = audit_writer_flush(w);
	t1 = now();
	cpu1 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	/* Closing waits for the compressor to finish the queued segments. */
	err = err ?: audit_writer_close(w);
	if (err || audit_segments_list(dir, &segs))
		return 3;
	printf("writer: %lu events in %.2f s: %.0f events/s (batch %u, fdatasync per batch, "
	       "%zu segment files; compression done %.2f s after the last commit); the appending "
	       "thread's CPU: %.0f ns/event\n",
	       n, t1 - t0, n / (t1 - t0), o.batch_records ? o.batch_records : 4096, segs.n,
	       now() - t1, (cpu1 - cpu0) * 1e9 / n);
	t0 = now();
	err = audit_verify_files(segs.paths, segs.n, &res);
	t1 = now();
	printf("verify: %s, %llu records in %.2f s: %.0f records/s\n", err ? "TAMPERED" : "intact",
	       (unsigned long long)res.records, t1 - t0, res.records / (t1 - t0));
	audit_segments_free(&segs);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	/* n records, log-start and log-stop, and a segment-end/segment-start pair per rotation. */
	return system(cmd) || err || res.records < n + 2 ? 1 : 0;
}
