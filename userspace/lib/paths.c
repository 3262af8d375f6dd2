// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include "paths.h"

int path_beside(const char *control, const char *name, char *out, size_t outsz)
{
	char copy[PATH_MAX];

	if ((size_t)snprintf(copy, sizeof(copy), "%s", control) >= sizeof(copy) ||
	    (size_t)snprintf(out, outsz, "%s/%s", dirname(copy), name) >= outsz)
		return -ENAMETOOLONG;
	return 0;
}
