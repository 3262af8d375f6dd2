// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the position locator on bytes jansson never saw (it must not trust them).
 * The input is a JSON pointer, a NUL, then the document.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "policy/jsonpos.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	int line, column;
	char *doc;
	size_t len;

	if (!nul)
		return 0;
	/* A copy of exactly the document's length, so that ASan sees any read past its end. */
	len = size - (nul + 1 - data);
	doc = malloc(len ? len : 1);
	if (!doc)
		return 0;
	memcpy(doc, nul + 1, len);
	if (!jsonpos_locate(doc, len, (const char *)data, &line, &column) &&
	    (line < 1 || column < 1))
		__builtin_trap();
	free(doc);
	return 0;
}
