// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "client.h"
#include "cmds.h"
#include "log.h"

#define DEFAULT_CONTROL "/run/agentd/control.sock"

int ctl_args(int argc, char **argv, struct ctl *c)
{
	int i, n = 1;

	c->control = getenv("AGENTD_CONTROL") ? getenv("AGENTD_CONTROL") : DEFAULT_CONTROL;
	c->json = false;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			while (i < argc)
				argv[n++] = argv[i++];
			break;
		}
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j"))
			c->json = true;
		else if (!strcmp(argv[i], "--control") && i + 1 < argc)
			c->control = argv[++i];
		else
			argv[n++] = argv[i];
	}
	argv[n] = NULL;
	return n;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -errno;
	}
	return fd;
}

/* Reads exactly len bytes before the deadline. */
static int read_full(int fd, char *buf, size_t len, long long deadline)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;

	while (len) {
		if (poll(&pfd, 1, (int)(deadline > now_ms() ? deadline - now_ms() : 0)) <= 0)
			return -ETIMEDOUT;
		n = recv(fd, buf, len, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return n ? -errno : -ECONNRESET;
		buf += n;
		len -= n;
	}
	return 0;
}

/* One request, one reply frame: the reply's payload in a malloc'ed *payload. */
static int exchange(int fd, const struct control_request *req, char **payload, size_t *n)
{
	long long deadline = now_ms() + CLIENT_TIMEOUT_MS;
	json_t *doc = control_request_json(req);
	char hdr[CONTROL_HDR], *frame;
	size_t len;
	int err;

	*payload = NULL;
	err = doc ? control_frame_encode(doc, &frame, &len) : -ENOMEM;
	json_decref(doc);
	if (err)
		return err;
	err = send(fd, frame, len, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -EIO;
	free(frame);
	if (!err)
		err = read_full(fd, hdr, sizeof(hdr), deadline);
	if (!err && control_frame_check(hdr, sizeof(hdr), n) < 0)
		err = -EBADMSG;
	*payload = err ? NULL : malloc(*n);
	if (!err && !*payload)
		err = -ENOMEM;
	if (!err)
		err = read_full(fd, *payload, *n, deadline);
	return err;
}

static int say_error(const struct ctl *c, long long id, const struct control_error *e)
{
	json_t *doc;

	if (c->json) {
		doc = control_reply_error(id, e->code, e->message);
		ctl_print_json(doc);
		json_decref(doc);
	} else {
		log_err("%s (%s)\n", e->message, e->code);
	}
	/* What the daemon refused is a no; a request it could not read is our failure. */
	if (!strcmp(e->code, CONTROL_E_JSON) || !strcmp(e->code, CONTROL_E_FRAME) ||
	    !strcmp(e->code, CONTROL_E_REQUEST) || !strcmp(e->code, CONTROL_E_COMMAND) ||
	    !strcmp(e->code, CONTROL_E_FAILED))
		return EXIT_FAIL;
	return EXIT_NO;
}

int ctl_call(const struct ctl *c, const struct control_request *req, json_t **reply)
{
	struct control_error e = { "", "" };
	char *payload = NULL;
	int fd, err, r;
	size_t n = 0;

	*reply = NULL;
	fd = connect_to(c->control);
	err = fd < 0 ? fd : exchange(fd, req, &payload, &n);
	if (fd >= 0)
		close(fd);
	if (err) {
		snprintf(e.code, sizeof(e.code), "%s", "unreachable");
		snprintf(e.message, sizeof(e.message), "agentd at %s: %s", c->control,
			 strerror(-err));
		say_error(c, req->id, &e);
		free(payload);
		return EXIT_FAIL;
	}
	r = control_reply_parse(payload, n, req->id, reply, &e);
	free(payload);
	return r == 1 ? 0 : say_error(c, req->id, &e);
}

void ctl_print_json(const json_t *reply)
{
	json_dumpf(reply, stdout, JSON_INDENT(2));
	printf("\n");
}
