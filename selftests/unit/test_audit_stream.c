// SPDX-License-Identifier: GPL-2.0
/* The audit stream: live subscribers, filters, and a stalled one dropped while the file keeps all. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "audit_test.h"
#include "harness.h"

struct fixture {
	char dir[64];
	int listen_fd;
	struct audit_stream *stream;
	struct audit_writer *w;
};

static void publish(void *ctx, const char *lines, size_t len, const struct audit_key *keys,
		    size_t n)
{
	audit_stream_publish(ctx, lines, len, keys, n);
}

static void close_fd(void *arg)
{
	close((int)(long)arg);
}

static void close_stream(void *arg)
{
	audit_stream_close(arg);
}

static int connect_sub(const char *dir, const char *filter)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ASSERT_OK(fd);
	test_defer(close_fd, (void *)(long)fd);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/stream.sock", dir);
	ASSERT_OK(connect(fd, (struct sockaddr *)&sun, sizeof(sun)));
	ASSERT_EQ(write(fd, filter, strlen(filter)), strlen(filter));
	return fd;
}

static void setup(struct fixture *f, size_t cap)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct audit_writer_opts o = { .host = "test", .no_append_flag = true };

	audit_test_dir(f->dir, sizeof(f->dir));
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/stream.sock", f->dir);
	f->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	ASSERT_OK(f->listen_fd);
	test_defer(close_fd, (void *)(long)f->listen_fd);
	ASSERT_OK(bind(f->listen_fd, (struct sockaddr *)&sun, sizeof(sun)));
	ASSERT_OK(listen(f->listen_fd, 8));
	ASSERT_EQ(audit_stream_open(&f->stream, f->listen_fd, cap), 0);
	test_defer(close_stream, f->stream);
	o.committed = publish;
	o.ctx = f->stream;
	o.batch_records = 64;
	ASSERT_EQ(audit_writer_open(&f->w, f->dir, &o), 0);
}

/* Lets the stream accept and read filters until it has n ready subscribers. */
static void service_until(struct fixture *f, size_t n)
{
	int i;

	for (i = 0; i < 1000 && audit_stream_subscribers(f->stream) < n; i++) {
		usleep(1000);
		ASSERT_EQ(audit_stream_service(f->stream), 0);
	}
	ASSERT_EQ(audit_stream_subscribers(f->stream), n);
	/* the filter lines, sent right after connect */
	for (i = 0; i < 20; i++) {
		usleep(1000);
		ASSERT_EQ(audit_stream_service(f->stream), 0);
	}
}

static size_t drain_lines(int fd)
{
	char buf[65536];
	size_t lines = 0;
	ssize_t n, i;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		for (i = 0; i < n; i++)
			lines += buf[i] == '\n';
	return lines;
}

TEST(audit_stream_filters_per_subscriber)
{
	struct fixture f;
	struct audit_record r;
	size_t all = 0, denies = 0;
	int a, d, i;

	setup(&f, 0);
	a = connect_sub(f.dir, "\n");
	d = connect_sub(f.dir, "decision=deny agent=2\n");
	service_until(&f, 2);
	for (i = 0; i < 100; i++) {
		audit_test_file_record(&r, 1 + i % 2, i % 4 == 1, i);
		ASSERT_EQ(audit_writer_append(f.w, &r), 0);
	}
	ASSERT_EQ(audit_writer_flush(f.w), 0);
	ASSERT_EQ(audit_stream_service(f.stream), 0);
	all = drain_lines(a);
	denies = drain_lines(d);
	ASSERT_EQ(all, 100);
	ASSERT_EQ(denies, 25);
	ASSERT_EQ(audit_writer_close(f.w), 0);
}

TEST(audit_stream_drops_a_stalled_subscriber_not_records)
{
	struct audit_verify_result res;
	struct fixture f;
	struct audit_record r;
	char path[128], *data;
	size_t healthy = 0, len;
	int stalled, reader, i;

	setup(&f, 64 * 1024);
	stalled = connect_sub(f.dir, "\n");
	reader = connect_sub(f.dir, "\n");
	service_until(&f, 2);
	for (i = 0; i < 20000; i++) {
		audit_test_file_record(&r, 1, true, i);
		ASSERT_EQ(audit_writer_append(f.w, &r), 0);
		if (i % 64 == 0) {
			ASSERT_EQ(audit_stream_service(f.stream), 0);
			healthy += drain_lines(reader);
		}
		if (audit_stream_pop_loss(f.stream, &r))
			ASSERT_EQ(audit_writer_append(f.w, &r), 0);
	}
	ASSERT_EQ(audit_stream_subscribers(f.stream), 1);
	ASSERT_EQ(audit_writer_flush(f.w), 0);
	ASSERT_EQ(audit_stream_service(f.stream), 0);
	healthy += drain_lines(reader);
	/* the healthy one got every record since it subscribed: seq 2 on, log-start before it */
	ASSERT_EQ(healthy, audit_writer_last_seq(f.w) - 1);
	ASSERT_EQ(audit_writer_close(f.w), 0);
	ASSERT_EQ(audit_test_verify(f.dir, &res), 0);
	ASSERT_EQ(res.records, 20000 + 3);
	snprintf(path, sizeof(path), "%s/" AUDIT_LIVE_NAME, f.dir);
	data = audit_test_slurp(path, &len);
	ASSERT(strstr(data, "\"kind\":\"loss\",\"op\":\"subscriber-dropped\",\"count\":1,"));
	free(data);
	(void)stalled;
}
