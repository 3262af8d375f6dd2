// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: bytes an agent sends the egress proxy, through the request parser as the
 * proxy reads them, and through the host rules. What is accepted must be well formed. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "wire/http_proxy.h"

static char out[HTTP_OUT_MAX];

static void check_accepted(const struct http_request *req, size_t size, size_t outlen)
{
	char again[HTTP_HOST_MAX + 1];
	char *list[] = { "a.example", "*.example" };
	size_t i;

	if (req->head_len > size || req->head_len > HTTP_HEAD_MAX || !req->port)
		__builtin_trap();
	if (http_host_normalise(req->host, strlen(req->host), again) || strcmp(again, req->host))
		__builtin_trap();
	http_host_allowed(req->host, list, 2);
	if (req->connect != !outlen || outlen > HTTP_OUT_MAX)
		__builtin_trap();
	if (!outlen)
		return;
	/* The forwarded head ends the head once, and holds no bare CR or LF. */
	if (outlen < 4 || memcmp(out + outlen - 4, "\r\n\r\n", 4))
		__builtin_trap();
	for (i = 0; i < outlen; i++)
		if ((out[i] == '\n') != (i && out[i - 1] == '\r' && out[i] == '\n') ||
		    (out[i] == '\r' && (i + 1 == outlen || out[i + 1] != '\n')))
			__builtin_trap();
	if (memmem(out, outlen, "\r\n\r\n", 4) != out + outlen - 4)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char host[HTTP_HOST_MAX + 1];
	struct http_request req;
	size_t outlen;
	int r;

	r = http_request_parse((const char *)data, size, &req, out, &outlen);
	if (r == 1)
		check_accepted(&req, size, outlen);
	else if (r == -EINVAL && (!req.why || !req.status))
		__builtin_trap();
	else if (r != 1 && r != 0 && r != -EINVAL)
		__builtin_trap();
	if (!http_host_normalise((const char *)data, size, host) && strlen(host) > HTTP_HOST_MAX)
		__builtin_trap();
	return 0;
}
