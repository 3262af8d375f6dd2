// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include "wire/frame.h"

int frame_check(const void *buf, size_t len, size_t max, size_t *payload_len)
{
	const unsigned char *b = buf;
	size_t n;

	if (len < FRAME_HDR)
		return 0;
	n = (size_t)b[0] << 24 | (size_t)b[1] << 16 | (size_t)b[2] << 8 | b[3];
	if (n > max)
		return -EMSGSIZE;
	if (!n)
		return -EINVAL;
	*payload_len = n;
	return len - FRAME_HDR >= n ? 1 : 0;
}

int frame_encode(const json_t *doc, size_t flags, size_t max, char **out, size_t *outlen)
{
	size_t n = json_dumpb(doc, NULL, 0, flags);
	char *buf;

	*out = NULL;
	if (!n)
		return -ENOMEM;
	if (n > max)
		return -EMSGSIZE;
	buf = malloc(FRAME_HDR + n);
	if (!buf)
		return -ENOMEM;
	if (json_dumpb(doc, buf + FRAME_HDR, n, flags) != n) {
		free(buf);
		return -ENOMEM;
	}
	buf[0] = (char)(n >> 24);
	buf[1] = (char)(n >> 16);
	buf[2] = (char)(n >> 8);
	buf[3] = (char)n;
	*out = buf;
	*outlen = FRAME_HDR + n;
	return 0;
}

int frame_send(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n, len -= n;
	}
	return 0;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Reads exactly len bytes before the deadline (-1: none). */
static int read_full(int fd, char *buf, size_t len, long long deadline)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	long long left;
	ssize_t n;

	while (len) {
		left = deadline < 0 ? -1 : deadline > now_ms() ? deadline - now_ms() : 0;
		n = poll(&pfd, 1, (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : -ETIMEDOUT;
		n = recv(fd, buf, len, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return n ? -errno : -ECONNRESET;
		buf += n, len -= n;
	}
	return 0;
}

int frame_read(int fd, size_t max, int timeout_ms, char **payload, size_t *len)
{
	long long deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	char hdr[FRAME_HDR];
	int err;

	*payload = NULL;
	err = read_full(fd, hdr, sizeof(hdr), deadline);
	if (!err && frame_check(hdr, sizeof(hdr), max, len) < 0)
		err = -EBADMSG;
	if (err)
		return err;
	*payload = malloc(*len);
	if (!*payload)
		return -ENOMEM;
	err = read_full(fd, *payload, *len, deadline);
	if (err) {
		free(*payload);
		*payload = NULL;
	}
	return err;
}
