/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Redaction of tool output (docs/BROKER.md#redaction): every secret value injected into a call
 * and every secret-shaped string (private keys, cloud keys, forge and chat tokens, bearer
 * tokens, JWTs, passwords in URLs) becomes "[REDACTED:<class>]". One left-to-right pass over
 * the bytes, linear in the input times the longest token.
 */
#ifndef AGENTD_REDACT_H
#define AGENTD_REDACT_H

#include <stddef.h>

#define REDACT_SECRETS_MAX 32
#define REDACT_SECRET_MAX 65536 /* bytes of one secret value */
/* The longest secret-shaped string matched whole (a PEM private key); longer ones are redacted
 * to the end of the output. */
#define REDACT_TOKEN_MAX 16384
#define REDACT_SECRET_MARKER "[REDACTED:secret]"

struct redactor {
	struct {
		char *value;
		size_t len;
	} secrets[REDACT_SECRETS_MAX];
	size_t n, longest;
};

/* Adds a secret value (copied; empty values are ignored). Returns 0, -E2BIG or -ENOMEM. */
int redactor_add_secret(struct redactor *r, const char *value, size_t len);
/* Wipes and frees the secret values; the redactor is empty again. */
void redactor_clear(struct redactor *r);
/* Bytes of output to keep past a cap so that a secret starting before the cap is seen whole. */
size_t redact_lookahead(const struct redactor *r);

/*
 * Redacts in[0, len) and returns in *out (malloc'ed, NUL-terminated) the result up to the
 * input offset keep (keep <= len): a match that starts before keep is replaced whole, even when
 * it ends past keep; nothing past keep is returned otherwise. *count is the number of markers
 * written. Returns 0 or -ENOMEM.
 */
int redact(const struct redactor *r, const char *in, size_t len, size_t keep, char **out,
	   size_t *outlen, unsigned *count);

/* The pattern classes, NULL-terminated (for docs and tests). */
extern const char *const redact_classes[];

#endif
