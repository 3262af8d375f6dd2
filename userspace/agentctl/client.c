// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "client.h"
#include "cmds.h"
#include "log.h"
#include "paths.h"
#include "wire/unixsock.h"

int ctl_args(int argc, char **argv, struct ctl *c)
{
	int i, n = 1;

	c->control = getenv("AGENTD_CONTROL") ? getenv("AGENTD_CONTROL") : PATH_CONTROL_SOCK;
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

/* One request, one reply frame: the reply's payload in a malloc'ed *payload. */
static int exchange(int fd, const struct control_request *req, char **payload, size_t *n)
{
	json_t *doc = control_request_json(req);
	char *frame;
	size_t len;
	int err;

	*payload = NULL;
	err = doc ? control_frame_encode(doc, &frame, &len) : -ENOMEM;
	json_decref(doc);
	if (err)
		return err;
	err = frame_send(fd, frame, len);
	free(frame);
	/* agentd may have refused the peer and closed before reading: its reply says why. */
	if (err == -EPIPE || err == -ECONNRESET)
		return frame_read(fd, CONTROL_FRAME_MAX, CLIENT_TIMEOUT_MS, payload, n) ? err : 0;
	return err ? err : frame_read(fd, CONTROL_FRAME_MAX, CLIENT_TIMEOUT_MS, payload, n);
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
	fd = unix_connect(c->control);
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
