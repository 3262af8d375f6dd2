// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include <bpf/libbpf.h>
#include "log.h"

static const char *log_program = "agentd";
static enum log_level log_max = LOG_INFO;

static const char *const level_names[] = {
	[LOG_ERR] = "error",
	[LOG_WARN] = "warning",
	[LOG_INFO] = "info",
	[LOG_DEBUG] = "debug",
};

void log_init(const char *program, enum log_level max)
{
	log_program = program;
	log_max = max;
}

static void log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	if (level > log_max)
		return;
	fprintf(stderr, "%s: %s: ", log_program, level_names[level]);
	vfprintf(stderr, fmt, ap);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf warns about every refused load; the caller decides what a refusal means. */
	if (level != LIBBPF_DEBUG)
		log_vmsg(LOG_DEBUG, fmt, ap);
	return 0;
}

void log_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
