// SPDX-License-Identifier: GPL-2.0
/* The egress proxy's parser and host rules (http_proxy.c) and the userspace structural check
 * (netdeny_addr_denied): every refusal, and what is accepted. */
#include <arpa/inet.h>
#include <stdio.h>
#include "harness.h"
#include "wire/http_proxy.h"
#include "policy/netdeny.h"

static char out[HTTP_OUT_MAX];

static int parse(const char *head, struct http_request *req, size_t *outlen)
{
	return http_request_parse(head, strlen(head), req, out, outlen);
}

/* The head must be refused with this status and reason. */
static void refused(const char *head, int status, const char *why)
{
	struct http_request req;
	size_t outlen;
	int r = parse(head, &req, &outlen);

	if (r != -EINVAL)
		FAIL("accepted (%d): %s", r, head);
	if (req.status != status || strcmp(req.why, why))
		FAIL("%s: got %d %s, expected %d %s", head, req.status, req.why, status, why);
}

TEST(http_connect_accepted)
{
	struct http_request req;
	size_t outlen = 99;
	const char *h = "CONNECT Example.ORG.:443 HTTP/1.1\r\nHost: example.org:443\r\n"
			"User-Agent: curl\r\n\r\n\x16\x03\x01";

	ASSERT_EQ(parse(h, &req, &outlen), 1);
	ASSERT(req.connect);
	ASSERT_STREQ(req.host, "example.org");
	ASSERT_EQ(req.port, 443);
	ASSERT_EQ(req.minor, 1);
	ASSERT_EQ(req.head_len, strlen(h) - 3);
	ASSERT_EQ(outlen, 0);
}

TEST(http_forward_rewritten_to_origin_form)
{
	struct http_request req;
	size_t outlen;
	const char *h = "GET http://Pypi.org/simple/x?y=1 HTTP/1.1\r\nHost: pypi.org\r\n"
			"Accept: */*\r\nConnection: keep-alive, X-Secret\r\nX-Secret: 1\r\n"
			"Proxy-Authorization: Basic eA==\r\nKeep-Alive: 5\r\nTE: trailers\r\n"
			"Upgrade: h2c\r\nProxy-Connection: keep-alive\r\nContent-Length: 0\r\n\r\n";
	const char *want = "GET /simple/x?y=1 HTTP/1.1\r\nHost: pypi.org\r\nAccept: */*\r\n"
			   "Content-Length: 0\r\nConnection: close\r\n\r\n";

	ASSERT_EQ(parse(h, &req, &outlen), 1);
	ASSERT(!req.connect);
	ASSERT_STREQ(req.method, "GET");
	ASSERT_STREQ(req.host, "pypi.org");
	ASSERT_EQ(req.port, 80);
	ASSERT_EQ(outlen, strlen(want));
	out[outlen] = '\0';
	ASSERT_STREQ(out, want);
}

TEST(http_forward_port_empty_path_and_query)
{
	struct http_request req;
	size_t outlen;

	ASSERT_EQ(parse("POST http://a.example:8080 HTTP/1.0\r\n\r\n", &req, &outlen), 1);
	out[outlen] = '\0';
	ASSERT_STREQ(out, "POST / HTTP/1.0\r\nHost: a.example:8080\r\nConnection: close\r\n\r\n");
	ASSERT_EQ(parse("GET http://a.example?q HTTP/1.1\r\nHost: A.example:80\r\n\r\n", &req,
			&outlen),
		  1);
	out[outlen] = '\0';
	ASSERT_STREQ(out, "GET /?q HTTP/1.1\r\nHost: a.example\r\nConnection: close\r\n\r\n");
}

TEST(http_incomplete_heads_wait)
{
	struct http_request req;
	size_t outlen;

	ASSERT_EQ(parse("", &req, &outlen), 0);
	ASSERT_EQ(parse("CONNECT a.example:443 HTTP/1.1\r", &req, &outlen), 0);
	ASSERT_EQ(parse("CONNECT a.example:443 HTTP/1.1\r\n", &req, &outlen), 0);
	ASSERT_EQ(parse("CONNECT a.example:443 HTTP/1.1\r\nHost: a\r\n\r", &req, &outlen), 0);
}

TEST(http_framing_refused)
{
	char big[HTTP_HEAD_MAX + 16];

	refused("GET http://a.example/ HTTP/1.1\nHost: a.example\r\n\r\n", 400, "bare-lf");
	refused("GET http://a.example/ HTTP/1.1\r\nX: a\rb\r\n\r\n", 400, "bare-cr");
	refused("\r\nGET http://a.example/ HTTP/1.1\r\n\r\n", 400, "empty-request-line");
	ASSERT_EQ(http_request_parse("GET http://a.example/ HTTP/1.1\r\nX: \0\r\n\r\n", 38,
				     &(struct http_request){}, out, &(size_t){ 0 }),
		  -EINVAL);
	memset(big, 'a', sizeof(big));
	memcpy(big, "GET http://a.example/", 21);
	big[sizeof(big) - 1] = '\0';
	refused(big, 431, "head-too-large");
}

TEST(http_request_line_refused)
{
	refused("GET  http://a.example/ HTTP/1.1\r\n\r\n", 400, "bad-request-line");
	refused("GET http://a.example/\r\n\r\n", 400, "bad-request-line");
	refused("get http://a.example/ HTTP/1.1\r\n\r\n", 400, "bad-method");
	refused("GETGETGETGETGETGET http://a.example/ HTTP/1.1\r\n\r\n", 400, "bad-method");
	refused("GET http://a.example/\x7f HTTP/1.1\r\n\r\n", 400, "bad-target");
	refused("GET http://a.example/ HTTP/2.0\r\n\r\n", 400, "bad-version");
	refused("GET http://a.example/ HTTP/1.1 \r\n\r\n", 400, "bad-version");
	refused("GET /index.html HTTP/1.1\r\nHost: a.example\r\n\r\n", 400, "not-absolute-uri");
	refused("GET https://a.example/ HTTP/1.1\r\n\r\n", 400, "https-needs-connect");
	refused("GET ftp://a.example/ HTTP/1.1\r\n\r\n", 400, "not-absolute-uri");
	refused("GET http://a.example/#x HTTP/1.1\r\n\r\n", 400, "fragment");
}

TEST(http_authority_refused)
{
	refused("CONNECT a.example HTTP/1.1\r\n\r\n", 400, "port-missing");
	refused("CONNECT a.example: HTTP/1.1\r\n\r\n", 400, "bad-port");
	refused("CONNECT a.example:0 HTTP/1.1\r\n\r\n", 400, "bad-port");
	refused("CONNECT a.example:0443 HTTP/1.1\r\n\r\n", 400, "bad-port");
	refused("CONNECT a.example:65536 HTTP/1.1\r\n\r\n", 400, "bad-port");
	refused("CONNECT a.example:443:1 HTTP/1.1\r\n\r\n", 400, "bad-port");
	refused("CONNECT a.example:+443 HTTP/1.1\r\n\r\n", 400, "bad-port");
	refused("CONNECT user@a.example:443 HTTP/1.1\r\n\r\n", 400, "userinfo");
	refused("GET http://u:p@a.example/ HTTP/1.1\r\n\r\n", 400, "userinfo");
	refused("CONNECT [::1]:443 HTTP/1.1\r\n\r\n", 403, "ip-literal");
	refused("CONNECT 127.0.0.1:443 HTTP/1.1\r\n\r\n", 403, "ip-literal");
	refused("CONNECT 2130706433:443 HTTP/1.1\r\n\r\n", 403, "ip-literal");
	refused("CONNECT 0x7f.1:443 HTTP/1.1\r\n\r\n", 403, "ip-literal");
	refused("GET http://10.0.0.1/ HTTP/1.1\r\n\r\n", 403, "ip-literal");
	refused("CONNECT a_b.example:443 HTTP/1.1\r\n\r\n", 400, "bad-host");
	refused("CONNECT -a.example:443 HTTP/1.1\r\n\r\n", 400, "bad-host");
	refused("CONNECT a..example:443 HTTP/1.1\r\n\r\n", 400, "bad-host");
	refused("CONNECT :443 HTTP/1.1\r\n\r\n", 400, "bad-host");
	refused("CONNECT a%2eexample:443 HTTP/1.1\r\n\r\n", 400, "bad-host");
}

TEST(http_headers_refused)
{
	char many[HTTP_HEADERS_MAX * 8 + 64];
	int i, n;

	refused("GET http://a.example/ HTTP/1.1\r\nHost: a.example\r\nHost: a.example\r\n\r\n", 400,
		"multiple-host");
	refused("GET http://a.example/ HTTP/1.1\r\nHost: b.example\r\n\r\n", 400, "host-mismatch");
	refused("GET http://a.example/ HTTP/1.1\r\nHost: a.example:81\r\n\r\n", 400,
		"host-mismatch");
	refused("CONNECT a.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n", 400,
		"host-mismatch");
	refused("GET http://a.example/ HTTP/1.1\r\nHost: u@a.example\r\n\r\n", 400, "userinfo");
	refused("GET http://a.example/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n", 400, "obs-fold");
	refused("GET http://a.example/ HTTP/1.1\r\nX : a\r\n\r\n", 400, "bad-header-name");
	refused("GET http://a.example/ HTTP/1.1\r\nX a\r\n\r\n", 400, "bad-header");
	refused("GET http://a.example/ HTTP/1.1\r\n: a\r\n\r\n", 400, "bad-header");
	refused("GET http://a.example/ HTTP/1.1\r\nX: a\x01\r\n\r\n", 400, "bad-header-value");
	refused("POST http://a.example/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
		400, "multiple-content-length");
	refused("POST http://a.example/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400,
		"bad-content-length");
	refused("POST http://a.example/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 400,
		"bad-transfer-encoding");
	refused("POST http://a.example/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
		"Content-Length: 3\r\n\r\n",
		400, "content-length-and-transfer-encoding");
	refused("GET http://a.example/ HTTP/1.1\r\nConnection: close, Content-Length\r\n\r\n", 400,
		"connection-names-framing");
	refused("GET http://a.example/ HTTP/1.1\r\nConnection: "
		"a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q\r\n"
		"\r\n",
		400, "connection-too-many");
	n = snprintf(many, sizeof(many), "GET http://a.example/ HTTP/1.1\r\n");
	for (i = 0; i <= HTTP_HEADERS_MAX; i++)
		n += snprintf(many + n, sizeof(many) - n, "X: %d\r\n", i % 10);
	snprintf(many + n, sizeof(many) - n, "\r\n");
	refused(many, 431, "too-many-headers");
}

TEST(http_host_normalise_rules)
{
	char h[HTTP_HOST_MAX + 1], big[300];

	ASSERT_EQ(http_host_normalise("WWW.Example.COM.", 16, h), 0);
	ASSERT_STREQ(h, "www.example.com");
	ASSERT_EQ(http_host_normalise("a-1.b2", 6, h), 0);
	ASSERT_EQ(http_host_normalise("1.2.3.4", 7, h), -EADDRNOTAVAIL);
	ASSERT_EQ(http_host_normalise("0177.1", 6, h), -EADDRNOTAVAIL);
	ASSERT_EQ(http_host_normalise("example.0x", 10, h), -EADDRNOTAVAIL);
	ASSERT_EQ(http_host_normalise("[fe80::1]", 9, h), -EADDRNOTAVAIL);
	ASSERT_EQ(http_host_normalise("1.2.3.com", 9, h), 0);
	ASSERT_EQ(http_host_normalise("", 0, h), -EINVAL);
	ASSERT_EQ(http_host_normalise(".", 1, h), -EINVAL);
	ASSERT_EQ(http_host_normalise("a..", 3, h), -EINVAL);
	ASSERT_EQ(http_host_normalise("a-.b", 4, h), -EINVAL);
	ASSERT_EQ(http_host_normalise("a b", 3, h), -EINVAL);
	memset(big, 'a', 64);
	ASSERT_EQ(http_host_normalise(big, 64, h), -EINVAL);
	ASSERT_EQ(http_host_normalise(big, 63, h), 0);
	for (int i = 0; i < 300; i++)
		big[i] = i % 2 ? '.' : 'a';
	ASSERT_EQ(http_host_normalise(big, 253, h), 0);
	ASSERT_EQ(http_host_normalise(big, 255, h), -EINVAL);
}

TEST(http_host_allowlist_match)
{
	char *list[] = { "pypi.org", "*.pythonhosted.org", "*.a.example" };

	ASSERT(http_host_allowed("pypi.org", list, 3));
	ASSERT(!http_host_allowed("www.pypi.org", list, 3));
	ASSERT(!http_host_allowed("pypi.org.evil", list, 3));
	ASSERT(!http_host_allowed("xpypi.org", list, 3));
	ASSERT(http_host_allowed("files.pythonhosted.org", list, 3));
	ASSERT(http_host_allowed("a.b.pythonhosted.org", list, 3));
	ASSERT(!http_host_allowed("pythonhosted.org", list, 3));
	ASSERT(!http_host_allowed("evilpythonhosted.org", list, 3));
	ASSERT(!http_host_allowed(".pythonhosted.org", list, 3));
	ASSERT(http_host_allowed("b.a.example", list, 3));
	ASSERT(!http_host_allowed("a.example", list, 3));
	ASSERT(!http_host_allowed("pypi.org", list, 0));
}

TEST(http_status_heads)
{
	char buf[512];
	int n = http_status_head(403, "host-not-allowed", buf, sizeof(buf));

	ASSERT(n > 0 && (size_t)n < sizeof(buf));
	if (strncmp(buf, "HTTP/1.1 403 Forbidden\r\n", 24) || !strstr(buf, "host-not-allowed\n") ||
	    !strstr(buf, "Content-Length: 31\r\n"))
		FAIL("%s", buf);
	http_status_head(200, NULL, buf, sizeof(buf));
	ASSERT_STREQ(buf, "HTTP/1.1 200 Connection established\r\n\r\n");
}

static bool denied(const char *ip)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };

	if (inet_pton(AF_INET, ip, &sin.sin_addr) == 1)
		return netdeny_sockaddr_denied((struct sockaddr *)&sin);
	ASSERT(inet_pton(AF_INET6, ip, &sin6.sin6_addr) == 1);
	return netdeny_sockaddr_denied((struct sockaddr *)&sin6);
}

TEST(netdeny_userspace_check_every_form)
{
	static const char *const deny[] = {
		"127.0.0.1",
		"10.0.0.1",
		"172.16.5.4",
		"192.168.1.1",
		"169.254.169.254",
		"100.100.100.200",
		"0.0.0.0",
		"224.0.0.1",
		"255.255.255.255",
		"192.0.0.192",
		"::",
		"::1",
		"fd00:ec2::254",
		"fe80::1",
		"ff02::1",
		"::ffff:127.0.0.1",
		"::ffff:10.1.1.1",
		"64:ff9b::a9fe:a9fe",
		"2002:7f00:1::1",
		"2002:c0a8:101::",
		"::ffff:169.254.0.1",
		"2001::1",
		"64:ff9b:1::5",
		"::10.0.0.1",
	};
	static const char *const allow[] = {
		"198.51.100.1",	    "8.8.8.8",	       "172.32.0.1",
		"100.128.0.1",	    "2606:4700::1111", "::ffff:198.51.100.1",
		"64:ff9b::808:808", "2002:808:808::1", "11.0.0.1",
	};
	struct sockaddr sa = { .sa_family = AF_UNIX };
	size_t i;

	for (i = 0; i < sizeof(deny) / sizeof(deny[0]); i++)
		if (!denied(deny[i]))
			FAIL("%s not denied", deny[i]);
	for (i = 0; i < sizeof(allow) / sizeof(allow[0]); i++)
		if (denied(allow[i]))
			FAIL("%s denied", allow[i]);
	ASSERT(netdeny_sockaddr_denied(&sa));
}
