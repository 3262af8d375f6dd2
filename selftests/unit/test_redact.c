// SPDX-License-Identifier: GPL-2.0
/* Redaction of tool output: each secret, each pattern class, and the output cap's edge. */
#include <stdio.h>
#include <stdlib.h>
#include "harness.h"
#include "wire/redact.h"

/* Redacts text whole with r; the result must be want, with n markers. */
static void expect(const struct redactor *r, const char *text, const char *want, unsigned n)
{
	unsigned count;
	size_t len;
	char *out;

	ASSERT_EQ(redact(r, text, strlen(text), strlen(text), &out, &len, &count), 0);
	if (strcmp(out, want) || count != n)
		FAIL("redact(\"%s\"):\n  got  \"%s\" (%u)\n  want \"%s\" (%u)", text, out, count,
		     want, n);
	ASSERT_EQ(len, strlen(out));
	free(out);
}

TEST(redact_secret_values)
{
	struct redactor r = { 0 };

	ASSERT_EQ(redactor_add_secret(&r, "hunter2hunter2", 14), 0);
	ASSERT_EQ(redactor_add_secret(&r, "s3", 2), 0);
	ASSERT_EQ(redactor_add_secret(&r, "", 0), 0);
	ASSERT_EQ(r.n, 2);
	expect(&r, "token=hunter2hunter2\n", "token=[REDACTED:secret]\n", 1);
	/* Found at every offset (7 too): overlapping occurrences merge into one marker. */
	expect(&r, "hunter2hunter2hunter2hunter2", "[REDACTED:secret]", 1);
	expect(&r, "as3s3", "a[REDACTED:secret][REDACTED:secret]", 2);
	expect(&r, "nothing here", "nothing here", 0);
	expect(&r, "", "", 0);
	redactor_clear(&r);
	ASSERT_EQ(r.n, 0);
	expect(&r, "hunter2hunter2", "hunter2hunter2", 0);
	expect(NULL, "hunter2hunter2", "hunter2hunter2", 0);
}

/*
 * A pattern match does not hide a secret: "eyJa.bb." starts a JWT whose signature part stops at
 * the secret's first character that is not base64url; the secret is still found whole.
 */
TEST(redact_secret_inside_a_pattern_match)
{
	static const char secret[] = "S3cr3t!Value/42+tail";
	struct redactor r = { 0 };
	unsigned count;
	char text[256], *out;
	size_t len;

	ASSERT_EQ(redactor_add_secret(&r, secret, strlen(secret)), 0);
	snprintf(text, sizeof(text), "eyJa.bb.%s end", secret);
	ASSERT_EQ(redact(&r, text, strlen(text), strlen(text), &out, &len, &count), 0);
	if (strstr(out, "Value") || strstr(out, "tail") || strcmp(out, "[REDACTED:jwt] end"))
		FAIL("got \"%s\"", out);
	free(out);
	/* Inside a bearer token and an AWS key's value, too. */
	snprintf(text, sizeof(text), "Authorization: Bearer abcdefgh%s", secret);
	ASSERT_EQ(redact(&r, text, strlen(text), strlen(text), &out, &len, &count), 0);
	if (strstr(out, "Value") || strstr(out, "tail"))
		FAIL("got \"%s\"", out);
	free(out);
	redactor_clear(&r);
}

/* hex (either case), base64 (both alphabets, the three alignments inside a longer string),
 * percent-encoding of some or all bytes: each is found. */
TEST(redact_secret_encodings)
{
	static const char secret[] = "s3cr3t-Value-42";
	struct redactor r = { 0 };
	static const char *const forms[] = {
		/* hex */
		"7333637233742d56616c75652d3432",
		"7333637233742D56616C75652D3432",
		/* base64 of the secret, of "x" + it, of "xy" + it (standard alphabet) */
		"czNjcjN0LVZhbHVlLTQy",
		"eHMzY3IzdC1WYWx1ZS00Mg==",
		"eHlzM2NyM3QtVmFsdWUtNDI=",
		/* in a longer base64 string, mid-stream */
		"QUFBQUFBczNjcjN0LVZhbHVlLTQyQkJCQg==",
		/* percent-encoded: all bytes, some bytes, lower-case hex */
		"%73%33%63%72%33%74%2D%56%61%6C%75%65%2D%34%32",
		"s3cr3t%2DValue-42",
		"s3%63r3t-Value-4%32",
	};
	unsigned count;
	size_t i, len, n;
	char text[256], mid[16], *out;

	ASSERT_EQ(redactor_add_secret(&r, secret, strlen(secret)), 0);
	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		snprintf(text, sizeof(text), "<%s>", forms[i]);
		/* The middle of the form: the secret's bytes alone decide it. */
		n = strlen(forms[i]);
		snprintf(mid, sizeof(mid), "%.8s", forms[i] + n / 2 - 4);
		ASSERT_EQ(redact(&r, text, strlen(text), strlen(text), &out, &len, &count), 0);
		/* What stays: the markers of a longer string, a character of bytes around it. */
		if (count != 1 || strstr(out, mid) || !strstr(out, "[REDACTED:secret]"))
			FAIL("%s: got \"%s\" (%u)", forms[i], out, count);
		free(out);
	}
	/* The URL-safe alphabet (bytes whose base64 is all '+' and '/' in the standard one). */
	redactor_clear(&r);
	ASSERT_EQ(redactor_add_secret(&r, "\xfb\xef\xbe\xfb\xef\xbe\xfb\xef\xbe", 9), 0);
	expect(&r, "[++++++++++++]", "[[REDACTED:secret]]", 1);
	expect(&r, "[-_-_-_-_-_-_]", "[-_-_-_-_-_-_]", 0);
	expect(&r, "[------------]", "[[REDACTED:secret]]", 1);
	redactor_clear(&r);
	/* The lookahead covers the longest form, percent-encoded. */
	ASSERT_EQ(redactor_add_secret(&r, secret, strlen(secret)), 0);
	ASSERT(redact_lookahead(&r) >= 3 * strlen(secret));
	redactor_clear(&r);
}

TEST(redact_secret_limits)
{
	static char big[REDACT_SECRET_MAX + 1];
	struct redactor r = { 0 };
	int i;

	ASSERT_EQ(redactor_add_secret(&r, big, sizeof(big)), -E2BIG);
	for (i = 0; i < REDACT_SECRETS_MAX; i++)
		ASSERT_EQ(redactor_add_secret(&r, "x", 1), 0);
	ASSERT_EQ(redactor_add_secret(&r, "y", 1), -E2BIG);
	ASSERT_EQ(redact_lookahead(&r), REDACT_TOKEN_MAX);
	redactor_clear(&r);
}

TEST(redact_pattern_classes)
{
	expect(NULL, "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\nok",
	       "[REDACTED:private-key]\nok", 1);
	expect(NULL, "x -----BEGIN PRIVATE KEY-----\\nMIIE\\n-----END PRIVATE KEY-----\\n",
	       "x [REDACTED:private-key]\\n", 1);
	expect(NULL,
	       "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE "
	       "KEY-----",
	       "[REDACTED:private-key]", 1);
	expect(NULL,
	       "-----BEGIN PGP PRIVATE KEY BLOCK-----\nx\n-----END PGP PRIVATE KEY BLOCK-----",
	       "[REDACTED:private-key]", 1);
	expect(NULL, "-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----",
	       "-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----", 0);
	expect(NULL, "id AKIAIOSFODNN7EXAMPLE.", "id [REDACTED:aws-access-key-id].", 1);
	expect(NULL, "ASIAIOSFODNN7EXAMPL", "ASIAIOSFODNN7EXAMPL", 0);
	expect(NULL, "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
	       "aws_secret_access_key = [REDACTED:aws-secret-access-key]\n", 1);
	expect(NULL, "\"SecretAccessKey\": \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\"",
	       "\"SecretAccessKey\": \"[REDACTED:aws-secret-access-key]\"", 1);
	expect(NULL, "key=AIzaSyA1234567890abcdefghijklmnopqrstuv", "key=[REDACTED:gcp-api-key]",
	       1);
	expect(NULL, "ya29.a0AfH6SMBx1234567890abcdefgh", "[REDACTED:gcp-oauth-token]", 1);
	expect(NULL,
	       "DefaultEndpointsProtocol=https;AccountName=a;AccountKey="
	       "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/"
	       "KBHBeksoGMGw==;",
	       "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=[REDACTED:azure-storage-"
	       "key];",
	       1);
	expect(NULL, "?sv=2020&sig=abcdefghijklmnopqrstuvwxyz0123456789%2B%3D&se=1",
	       "?sv=2020&sig=[REDACTED:azure-sas-signature]&se=1", 1);
	expect(NULL, "ghp_abcdefghijklmnopqrstuvwxyz0123456789 x", "[REDACTED:github-token] x", 1);
	expect(NULL, "github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "[REDACTED:github-token]",
	       1);
	expect(NULL, "glpat-abcdefghij0123456789", "[REDACTED:gitlab-token]", 1);
	expect(NULL, "xoxb-1234567890-abcdefghij", "[REDACTED:slack-token]", 1);
	expect(NULL, "https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX",
	       "[REDACTED:slack-webhook]", 1);
	expect(NULL, "sk_live_abcdefghijklmnop0123", "[REDACTED:stripe-key]", 1);
	expect(NULL, "Authorization: Bearer abc.def-ghi_jkl~mno\r\n",
	       "Authorization: Bearer [REDACTED:bearer-token]\r\n", 1);
	expect(NULL, "authorization: bearer short", "authorization: bearer short", 0);
	expect(NULL,
	       "t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk "
	       "end",
	       "t=[REDACTED:jwt] end", 1);
	expect(NULL, "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.", "[REDACTED:jwt]", 1);
	expect(NULL, "eyJust.a word", "eyJust.a word", 0);
	expect(NULL, "https://alice:pa55word@example.com/x",
	       "https://alice:[REDACTED:url-password]@example.com/x", 1);
	expect(NULL, "https://example.com:8080/x", "https://example.com:8080/x", 0);
}

/* Every class named in redact_classes has a test above: keep the list and the tests in step. */
TEST(redact_classes_listed)
{
	size_t n = 0;

	while (redact_classes[n])
		n++;
	ASSERT_EQ(n, 15);
}

TEST(redact_at_the_cap)
{
	static const char key[] = "AKIAIOSFODNN7EXAMPLE";
	struct redactor r = { 0 };
	char text[64], *out;
	unsigned count;
	size_t len;

	/* A key that starts before the cap and ends after it goes whole. */
	snprintf(text, sizeof(text), "abc%s tail", key);
	ASSERT_EQ(redact(NULL, text, strlen(text), 10, &out, &len, &count), 0);
	ASSERT_STREQ(out, "abc[REDACTED:aws-access-key-id]");
	ASSERT_EQ(count, 1);
	free(out);
	/* Nothing past the cap otherwise. */
	ASSERT_EQ(redact(NULL, text, strlen(text), 2, &out, &len, &count), 0);
	ASSERT_STREQ(out, "ab");
	ASSERT_EQ(count, 0);
	free(out);
	/* A secret value split by the cap. */
	ASSERT_EQ(redactor_add_secret(&r, "topsecretvalue", 14), 0);
	ASSERT_EQ(redact(&r, "xx topsecretvalue", 17, 6, &out, &len, &count), 0);
	ASSERT_STREQ(out, "xx [REDACTED:secret]");
	free(out);
	redactor_clear(&r);
	/* A private key cut before its END line: everything from BEGIN goes. */
	ASSERT_EQ(redact(NULL, "a\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQ", 38, 38, &out, &len,
			 &count),
		  0);
	ASSERT_STREQ(out, "a\n[REDACTED:private-key]");
	free(out);
	/* Bytes, not strings: NULs pass, a key after one is still found. */
	ASSERT_EQ(redact(NULL, "\0AKIAIOSFODNN7EXAMPLE", 21, 21, &out, &len, &count), 0);
	ASSERT_EQ(len, 1 + strlen("[REDACTED:aws-access-key-id]"));
	ASSERT(!memcmp(out, "\0[REDACTED:aws-access-key-id]", len));
	free(out);
}
