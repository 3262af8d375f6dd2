/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_LOG_H
#define AGENTD_LOG_H

enum log_level { LOG_ERR, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* Messages go to stderr as "<program>: <level>: <text>"; the text ends in \n. */
void log_init(const char *program, enum log_level max);
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Routes libbpf's own messages through log_msg (warnings only unless debugging). */
void log_libbpf(void);

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
