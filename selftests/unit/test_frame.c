// SPDX-License-Identifier: GPL-2.0
/* The clients' side of the framing (wire/frame.c): what frame_read() makes of what a peer
 * sends, and frame_send() across a socket buffer smaller than the frame. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "wire/frame.h"
#include "harness.h"

static void pair(int sv[2])
{
	ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
}

/* Sends raw bytes, then closes the sending end. Returns what frame_read() says. */
static int read_after(const void *bytes, size_t n, size_t max, char **payload, size_t *len)
{
	int sv[2], err;

	pair(sv);
	ASSERT_EQ(send(sv[0], bytes, n, 0), (ssize_t)n);
	close(sv[0]);
	err = frame_read(sv[1], max, 1000, payload, len);
	close(sv[1]);
	return err;
}

TEST(frame_read_takes_one_whole_frame)
{
	char *payload;
	size_t len;

	ASSERT_EQ(read_after("\0\0\0\x02{}\0\0\0\x01x", 11, 100, &payload, &len), 0);
	ASSERT_EQ(len, 2);
	ASSERT(!memcmp(payload, "{}", 2));
	free(payload);
}

TEST(frame_read_refuses_bad_headers_and_short_frames)
{
	char *payload = (char *)1;
	size_t len;

	ASSERT_EQ(read_after("\0\0\0\0", 4, 100, &payload, &len), -EBADMSG);
	ASSERT(!payload);
	ASSERT_EQ(read_after("\0\0\0\x65", 4, 100, &payload, &len), -EBADMSG);
	ASSERT_EQ(read_after("\0\0", 2, 100, &payload, &len), -ECONNRESET);
	ASSERT_EQ(read_after("\0\0\0\x05{}", 6, 100, &payload, &len), -ECONNRESET);
	ASSERT(!payload);
}

TEST(frame_read_gives_up_at_its_timeout)
{
	char *payload;
	size_t len;
	int sv[2];

	pair(sv);
	ASSERT_EQ(send(sv[0], "\0\0\0\x05{", 5, 0), 5);
	ASSERT_EQ(frame_read(sv[1], 100, 0, &payload, &len), -ETIMEDOUT);
	close(sv[0]);
	close(sv[1]);
}

struct sink {
	int fd;
	char *payload;
	size_t len;
	int err;
};

static void *read_one(void *arg)
{
	struct sink *s = arg;

	s->err = frame_read(s->fd, 8 << 20, -1, &s->payload, &s->len);
	return NULL;
}

TEST(frame_send_and_read_carry_a_frame_larger_than_the_socket_buffer)
{
	json_t *doc = json_object();
	struct sink s = { 0 };
	char *big = malloc(4 << 20), *frame;
	pthread_t t;
	size_t len;
	int sv[2];

	ASSERT(doc && big);
	memset(big, 'a', (4 << 20) - 1);
	big[(4 << 20) - 1] = '\0';
	ASSERT_OK(json_object_set_new(doc, "s", json_string(big)));
	ASSERT_EQ(frame_encode(doc, JSON_COMPACT, 1 << 20, &frame, &len), -EMSGSIZE);
	ASSERT_EQ(frame_encode(doc, JSON_COMPACT, 8 << 20, &frame, &len), 0);
	pair(sv);
	s.fd = sv[1];
	ASSERT_OK(pthread_create(&t, NULL, read_one, &s));
	ASSERT_EQ(frame_send(sv[0], frame, len), 0);
	ASSERT_OK(pthread_join(t, NULL));
	ASSERT_EQ(s.err, 0);
	ASSERT_EQ(s.len + FRAME_HDR, len);
	ASSERT(!memcmp(s.payload, frame + FRAME_HDR, s.len));
	free(s.payload);
	free(frame);
	free(big);
	json_decref(doc);
	close(sv[0]);
	close(sv[1]);
}
