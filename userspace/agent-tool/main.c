// SPDX-License-Identifier: GPL-2.0
/*
 * agent-tool: calls one broker tool from inside an agent, like any command. The socket is
 * $AGENTD_TOOL_SOCKET (agentctl run sets it); arguments are key=value (a string) or key:=JSON
 * (an integer or a boolean). Prints the tool's stdout and stderr and exits with its status.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "wire/broker_proto.h"
#include "wire/unixsock.h"
#include "agent-tool.h"

#define EXIT_USAGE 2
#define EXIT_REFUSED 125 /* the broker refused or failed the call */
#define EXIT_TIMEOUT 124 /* the tool ran past its timeout */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: agent-tool [--json] NAME [KEY=VALUE | KEY:=JSON]...\n"
		"       agent-tool mcp\n"
		"\n"
		"Calls the broker tool NAME over $AGENTD_TOOL_SOCKET. KEY=VALUE passes a string,\n"
		"KEY:=JSON an integer or a boolean (n:=3, all:=true). agent-tool mcp serves the\n"
		"agent's tools to an MCP client on stdin and stdout (docs/MCP.md).\n"
		"  --json   print the broker's reply as JSON instead\n"
		"\n"
		"Exit status: the tool's; %d when it timed out; %d when the broker refused the\n"
		"call (the reason on stderr); %d for usage errors.\n",
		EXIT_TIMEOUT, EXIT_REFUSED, EXIT_USAGE);
}

static int parse_args(json_t *args, int argc, char **argv)
{
	char *eq, key[64];
	json_t *v;
	int i;

	for (i = 0; i < argc; i++) {
		eq = strchr(argv[i], '=');
		if (!eq || eq == argv[i] || (size_t)(eq - argv[i]) >= sizeof(key)) {
			fprintf(stderr, "agent-tool: argument \"%s\": expected KEY=VALUE\n",
				argv[i]);
			return -EINVAL;
		}
		memcpy(key, argv[i], eq - argv[i]);
		key[eq - argv[i]] = '\0';
		if (eq[-1] == ':') {
			key[eq - argv[i] - 1] = '\0';
			v = json_loads(eq + 1, JSON_DECODE_ANY, NULL);
			if (!json_is_integer(v) && !json_is_boolean(v)) {
				json_decref(v);
				fprintf(stderr,
					"agent-tool: argument \"%s\": expected an integer or "
					"true/false after :=\n",
					argv[i]);
				return -EINVAL;
			}
		} else {
			v = json_string(eq + 1);
		}
		if (!v || json_object_set_new(args, key, v)) {
			fprintf(stderr, "agent-tool: argument \"%s\": not UTF-8 text\n", argv[i]);
			return -EINVAL;
		}
	}
	return 0;
}

static void write_out(FILE *f, const char *s, size_t n)
{
	fwrite(s, 1, n, f);
	fflush(f);
}

static int show(const char *payload, size_t len, bool json)
{
	struct broker_reply r = { 0 };
	int code;

	if (broker_reply_parse(payload, len, &r)) {
		fprintf(stderr, "agent-tool: a malformed reply: %s\n", r.error.message);
		return EXIT_REFUSED;
	}
	if (json) {
		write_out(stdout, payload, len);
		putchar('\n');
	}
	if (!r.ok) {
		if (!json)
			fprintf(stderr, "agent-tool: %s: %s\n", r.error.code, r.error.message);
		code = strcmp(r.error.code, BROKER_E_TIMEOUT) ? EXIT_REFUSED : EXIT_TIMEOUT;
	} else {
		if (!json) {
			write_out(stdout, r.out, r.out_len);
			write_out(stderr, r.err, r.err_len);
		}
		code = r.exit_code;
	}
	broker_reply_free(&r);
	return code;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "json", no_argument, NULL, 'j' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	struct broker_request req = { .id = 1 };
	const char *sock = getenv("AGENTD_TOOL_SOCKET");
	bool json = false;
	char *frame = NULL, *reply = NULL;
	size_t flen, n;
	int c, fd, err, code = EXIT_REFUSED;
	json_t *doc;

	/* agent-tool -- mcp calls a tool named mcp. */
	if (argc == 2 && !strcmp(argv[1], "mcp")) {
		if (!sock || !*sock) {
			fprintf(stderr, "agent-tool: AGENTD_TOOL_SOCKET is not set (run the agent "
					"with agentctl run)\n");
			return EXIT_USAGE;
		}
		return mcp_main(sock);
	}
	while ((c = getopt_long(argc, argv, "+jh", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 0;
		}
		if (c != 'j') {
			usage(stderr);
			return EXIT_USAGE;
		}
		json = true;
	}
	if (optind >= argc || strlen(argv[optind]) > TOOL_NAME_MAX) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!sock || !*sock) {
		fprintf(stderr, "agent-tool: AGENTD_TOOL_SOCKET is not set (run the agent with "
				"agentctl run)\n");
		return EXIT_USAGE;
	}
	snprintf(req.tool, sizeof(req.tool), "%s", argv[optind]);
	req.args = json_object();
	if (!req.args || parse_args(req.args, argc - optind - 1, argv + optind + 1)) {
		json_decref(req.args);
		return EXIT_USAGE;
	}
	doc = broker_request_json(&req);
	json_decref(req.args);
	err = doc ? broker_frame_encode(doc, BROKER_REQUEST_MAX, &frame, &flen) : -ENOMEM;
	json_decref(doc);
	if (err) {
		fprintf(stderr, "agent-tool: the request: %s\n", strerror(-err));
		return EXIT_USAGE;
	}
	fd = unix_connect(sock);
	if (fd < 0) {
		fprintf(stderr, "agent-tool: %s: %s\n", sock, strerror(-fd));
		free(frame);
		return EXIT_REFUSED;
	}
	err = send_request(fd, frame, flen);
	free(frame);
	if (!err)
		err = frame_read(fd, BROKER_REPLY_MAX, -1, &reply, &n);
	close(fd);
	if (err)
		fprintf(stderr, "agent-tool: %s: %s\n", sock, strerror(-err));
	else
		code = show(reply, n, json);
	free(reply);
	return code;
}
