/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small test harness after the kernel's kselftest_harness.h: every TEST runs in its own forked
 * child with a deadline, and prints one line: "PASS <prefix><name>", "FAIL <prefix><name>: why"
 * or "SKIP <prefix><name>: why". Cleanups registered with test_defer() run on every exit path.
 */
#ifndef AGENTD_HARNESS_H
#define AGENTD_HARNESS_H

#include <errno.h>
#include <stdbool.h>
#include <string.h>

struct test {
	const char *name;
	void (*fn)(void);
	struct test *next;
};

void harness_register(struct test *t);

#define TEST(n)                                                                                    \
	static void n(void);                                                                       \
	static struct test test_##n = { #n, n, NULL };                                             \
	__attribute__((constructor)) static void register_##n(void)                                \
	{                                                                                          \
		harness_register(&test_##n);                                                       \
	}                                                                                          \
	static void n(void)

__attribute__((noreturn, format(printf, 3, 4))) void test_fail(const char *file, int line,
							       const char *fmt, ...);
__attribute__((noreturn, format(printf, 1, 2))) void test_skip(const char *fmt, ...);
/* Runs fn(arg) when the test ends, however it ends; last registered runs first. */
void test_defer(void (*fn)(void *), void *arg);
/* Whether "-o name" was given on the command line (used to break tests on purpose). */
bool test_option(const char *name);
/* The directory holding agentd and agentctl: the parent of the test binary's directory. */
const char *test_bin_dir(void);

#define FAIL(...) test_fail(__FILE__, __LINE__, __VA_ARGS__)
#define SKIP(...) test_skip(__VA_ARGS__)

#define ASSERT(cond)                                                                               \
	do {                                                                                       \
		if (!(cond))                                                                       \
			FAIL("%s", #cond);                                                         \
	} while (0)

#define ASSERT_EQ(a, b)                                                                            \
	do {                                                                                       \
		long long _a = (long long)(a), _b = (long long)(b);                                \
		if (_a != _b)                                                                      \
			FAIL("%s == %s: %lld != %lld", #a, #b, _a, _b);                            \
	} while (0)

#define ASSERT_STREQ(a, b)                                                                         \
	do {                                                                                       \
		const char *_a = (a), *_b = (b);                                                   \
		if (strcmp(_a, _b))                                                                \
			FAIL("%s == %s: \"%s\" != \"%s\"", #a, #b, _a, _b);                        \
	} while (0)

/* A call returning >= 0 on success and -1 with errno on failure must succeed. */
#define ASSERT_OK(expr)                                                                            \
	do {                                                                                       \
		long _r = (long)(expr);                                                            \
		if (_r < 0)                                                                        \
			FAIL("%s: %s", #expr, strerror(errno));                                    \
	} while (0)

/* ... must fail with exactly this errno. */
#define ASSERT_ERRNO(expr, err)                                                                    \
	do {                                                                                       \
		long _r;                                                                           \
		errno = 0;                                                                         \
		_r = (long)(expr);                                                                 \
		if (_r >= 0)                                                                       \
			FAIL("%s succeeded, expected %s", #expr, strerror(err));                   \
		if (errno != (err))                                                                \
			FAIL("%s: %s, expected %s", #expr, strerror(errno), strerror(err));        \
	} while (0)

#endif
