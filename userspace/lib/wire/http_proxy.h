/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The egress proxy's parser and host rules (docs/EGRESS.md): the request head an agent sends
 * (CONNECT host:port for TLS, absolute-URI requests for plain HTTP), checked strictly, and the
 * agent's host allowlist. Pure functions over bytes: no I/O, so the unit tests and the fuzz
 * target call them directly. Whatever is ambiguous is refused rather than interpreted.
 */
#ifndef AGENTD_HTTP_PROXY_H
#define AGENTD_HTTP_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define HTTP_HEAD_MAX 16384 /* the whole request head, through its empty line */
#define HTTP_LINE_MAX 8192 /* the request line and each header line */
#define HTTP_HEADERS_MAX 100
#define HTTP_METHOD_MAX 16
#define HTTP_HOST_MAX 253 /* a DNS name without its trailing dot */
/* A forwarded head holds at most the received one plus the Host and Connection lines. */
#define HTTP_OUT_MAX (HTTP_HEAD_MAX + HTTP_HOST_MAX + 64)

struct http_request {
	bool connect; /* CONNECT host:port; otherwise an absolute-URI request to forward */
	char method[HTTP_METHOD_MAX + 1];
	char host[HTTP_HOST_MAX + 1]; /* lower case, no trailing dot */
	__u16 port;
	unsigned int minor; /* HTTP/1.minor: 0 or 1 */
	size_t head_len; /* bytes of the head, through the empty line */
	/* When refused: the status to answer (400, 403, 431) and a short reason (audit detail). */
	int status;
	const char *why;
};

/*
 * Parses the request head at the start of buf (len bytes). For a request to forward, writes
 * the head to send upstream into out (at least HTTP_OUT_MAX bytes): origin-form target, Host
 * from the URI, hop-by-hop headers removed, "Connection: close"; *outlen is its length (0 for
 * CONNECT). Returns 1 when complete and acceptable, 0 when more bytes are needed, -EINVAL when
 * refused (req->status and req->why say why).
 */
int http_request_parse(const char *buf, size_t len, struct http_request *req, char *out,
		       size_t *outlen);

/*
 * Normalises a host name from a request: lower case, one trailing dot dropped, labels of
 * a-z 0-9 - (1-63 bytes, no leading or trailing -), at most 253 bytes. Returns 0, -EINVAL for a
 * malformed name, -EADDRNOTAVAIL for an IP literal (dotted or numeric IPv4 in any form the
 * resolver accepts, or a bracketed IPv6 address): the proxy takes names only.
 */
int http_host_normalise(const char *in, size_t len, char out[HTTP_HOST_MAX + 1]);

/*
 * Whether the normalised host matches a pattern of the list: "name" exactly, or "*.suffix" for
 * names below suffix (at least one more whole label: "*.example.org" matches "a.example.org",
 * not "example.org" nor "badexample.org"). Patterns are lower case (the policy refuses others).
 */
bool http_host_allowed(const char *host, char *const *patterns, size_t n);

/* The response line and headers for a refusal or the CONNECT reply; returns the length. */
int http_status_head(int status, const char *why, char *buf, size_t bufsz);

#endif
