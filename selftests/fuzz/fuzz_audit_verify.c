// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the audit verifier's reader. Any bytes, as a live file in memory and as a
 * file on disk read through zlib (which takes gzip and plain input alike).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/mman.h>
#include "audit/audit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct audit_verify_result res;
	char *paths[1] = { path };

	audit_verify_buffer("fuzz", (const char *)data, size, &res);
	if (fd < 0) {
		fd = memfd_create("fuzz-audit", MFD_CLOEXEC);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (fd < 0 || ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	audit_verify_files(paths, 1, &res);
	return 0;
}
