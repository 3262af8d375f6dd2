// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: bytes a scraper sends agentd's --metrics-listen port, through the request
 * head parser as the daemon reads them (in growing prefixes), and --metrics-listen's argument
 * through the address parser. Only GET /metrics is served; a served address is loopback. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include "wire/prom.h"

static int check_request(const char *s, size_t size)
{
	int r = prom_http_request(s, size);

	if (r != 0 && r != 200 && r != 400 && r != 404 && r != 405 && r != 431 && r != 505)
		__builtin_trap();
	if (r == 200 && (size < 13 || memcmp(s, "GET /metrics", 12)))
		__builtin_trap();
	if (r == 0 && size >= PROM_HTTP_HEAD_MAX)
		__builtin_trap();
	return r;
}

static void check_listen(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), why[256];
	struct sockaddr_storage sa;
	socklen_t len;

	if (!s)
		return;
	memcpy(s, data, size);
	s[size] = '\0';
	if (!prom_listen_parse(s, &sa, &len, why, sizeof(why))) {
		if (sa.ss_family == AF_INET) {
			const struct sockaddr_in *in4 = (const struct sockaddr_in *)&sa;

			if ((ntohl(in4->sin_addr.s_addr) >> 24) != 127 || !in4->sin_port ||
			    len != sizeof(*in4))
				__builtin_trap();
		} else if (sa.ss_family != AF_INET6 ||
			   !IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)&sa)->sin6_addr) ||
			   !((const struct sockaddr_in6 *)&sa)->sin6_port ||
			   len != sizeof(struct sockaddr_in6)) {
			__builtin_trap();
		}
	} else if (!why[0]) {
		__builtin_trap();
	}
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	size_t cut = size / 2;
	int whole = check_request(s, size), part = check_request(s, cut);

	/* A verdict on a prefix stands once more bytes come (the daemon answers at the first). */
	if (part && whole != part && cut < PROM_HTTP_HEAD_MAX)
		__builtin_trap();
	check_listen(data, size);
	return 0;
}
