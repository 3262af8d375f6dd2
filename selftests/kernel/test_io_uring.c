// SPDX-License-Identifier: GPL-2.0
/*
 * io_uring does not step around the file rules: an IORING_OP_OPENAT runs file_open like
 * open(2), whether the submitting task runs it inline or hands it to an io-wq worker
 * (IOSQE_ASYNC), a kernel thread of the agent's own process and so of its cgroup.
 */
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include "ops.h"

struct ring {
	int fd;
	void *sq, *cq;
	size_t sq_len, cq_len;
	struct io_uring_sqe *sqes;
	size_t sqes_len;
	struct io_uring_params p;
};

static int ring_open(struct ring *r)
{
	memset(r, 0, sizeof(*r));
	r->fd = syscall(SYS_io_uring_setup, 4, &r->p);
	if (r->fd < 0)
		return errno;
	r->sq_len = r->p.sq_off.array + r->p.sq_entries * sizeof(__u32);
	r->cq_len = r->p.cq_off.cqes + r->p.cq_entries * sizeof(struct io_uring_cqe);
	r->sqes_len = r->p.sq_entries * sizeof(struct io_uring_sqe);
	r->sq = mmap(NULL, r->sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
		     IORING_OFF_SQ_RING);
	r->cq = mmap(NULL, r->cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
		     IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, r->sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
		       IORING_OFF_SQES);
	if (r->sq == MAP_FAILED || r->cq == MAP_FAILED || r->sqes == MAP_FAILED)
		return errno;
	return 0;
}

#define RING_U32(base, off) ((__u32 *)((char *)(base) + (off)))

/* One request like tmpl, submitted and waited for, its result in *res (-errno on failure).
 * Returns 0, or 100 + errno or 200 when the ring itself failed. */
static int ring_run(struct ring *r, const struct io_uring_sqe *tmpl, int *res)
{
	__u32 tail = *RING_U32(r->sq, r->p.sq_off.tail),
	      mask = *RING_U32(r->sq, r->p.sq_off.ring_mask);
	__u32 idx = tail & mask, head;
	struct io_uring_cqe *cqe;

	r->sqes[idx] = *tmpl;
	RING_U32(r->sq, r->p.sq_off.array)[idx] = idx;
	__atomic_store_n(RING_U32(r->sq, r->p.sq_off.tail), tail + 1, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return 100 + errno;
	head = __atomic_load_n(RING_U32(r->cq, r->p.cq_off.head), __ATOMIC_ACQUIRE);
	if (head == __atomic_load_n(RING_U32(r->cq, r->p.cq_off.tail), __ATOMIC_ACQUIRE))
		return 200;
	cqe = (struct io_uring_cqe *)((char *)r->cq + r->p.cq_off.cqes) +
	      (head & *RING_U32(r->cq, r->p.cq_off.ring_mask));
	*res = cqe->res;
	__atomic_store_n(RING_U32(r->cq, r->p.cq_off.head), head + 1, __ATOMIC_RELEASE);
	return 0;
}

/* One OPENAT, submitted and waited for; the open's errno (0: it opened, and is closed). */
static int ring_openat(struct ring *r, const char *path, __u8 sqe_flags)
{
	struct io_uring_sqe sqe = {
		.opcode = IORING_OP_OPENAT,
		.flags = sqe_flags,
		.fd = AT_FDCWD,
		.addr = (__u64)(unsigned long)path,
		.open_flags = O_RDONLY | O_CLOEXEC,
	};
	int res, err = ring_run(r, &sqe, &res);

	if (err)
		return err;
	if (res < 0)
		return -res;
	close(res);
	return 0;
}

struct uring_case {
	const char *path;
	__u8 flags;
};

static int try_uring_open(void *arg)
{
	const struct uring_case *c = arg;
	struct ring r;
	int err = ring_open(&r);

	if (err)
		return 100 + err;
	err = ring_openat(&r, c->path, c->flags);
	close(r.fd);
	return err;
}

TEST(io_uring_openat_follows_the_file_rules)
{
	char top[PATH_MAX], secret[PATH_MAX], open_file[PATH_MAX];
	struct test_agent ag;
	const __u8 modes[] = { 0, IOSQE_ASYNC };
	size_t i;

	test_dir(top, sizeof(top));
	test_write(PATHF(secret, "%s/secret", top), "s3cr3t\n", 0644);
	test_write(PATHF(open_file, "%s/open", top), "hello\n", 0644);
	const struct file_rule files[] = { { "/", RX }, { secret, 0 } };
	test_agent_start(&ag, &(struct ruleset){ .files = files, .nfiles = 2 }, true);
	for (i = 0; i < sizeof(modes); i++) {
		struct uring_case denied = { secret, modes[i] }, allowed = { open_file, modes[i] };

		ASSERT_EQ(test_agent_run(&ag, try_uring_open, &denied), EPERM);
		ASSERT_EQ(test_agent_run(&ag, try_uring_open, &allowed), 0);
		ASSERT_EQ(run_in_cgroup(NULL, try_uring_open, &denied, NULL), 0);
	}
}

/*
 * io_uring runs a request under a personality (credentials) registered before: here the agent's
 * own, registered before a setgid() gave its task new ones, so that the request runs with
 * credentials other than the task's real ones. The attribute-change hooks check it all the same:
 * a SETXATTR without the setattr right is denied.
 */
static int try_uring_setxattr_as_personality(void *path)
{
	struct io_uring_sqe sqe = {
		.opcode = IORING_OP_SETXATTR,
		.addr = (__u64)(unsigned long)OP_XATTR,
		.addr2 = (__u64)(unsigned long)"v",
		.addr3 = (__u64)(unsigned long)path,
		.len = 1,
	};
	struct ring r;
	int err = ring_open(&r), id, res;

	if (err)
		return 100 + err;
	id = syscall(SYS_io_uring_register, r.fd, IORING_REGISTER_PERSONALITY, NULL, 0);
	if (id < 0 || setgid(getgid()))
		return 100 + errno;
	sqe.personality = (__u16)id;
	err = ring_run(&r, &sqe, &res);
	close(r.fd);
	return err ? err : -res;
}

TEST(io_uring_setxattr_under_a_personality_needs_setattr)
{
	char top[PATH_MAX], no[PATH_MAX], yes[PATH_MAX];
	struct test_agent ag;

	test_dir(top, sizeof(top));
	test_write(PATHF(no, "%s/no", top), "data\n", 0644);
	test_write(PATHF(yes, "%s/yes", top), "data\n", 0644);
	const struct file_rule files[] = {
		{ "/", RX },
		{ no, AGENTD_RIGHTS_ALL & ~AGENTD_RIGHT_SETATTR },
		{ yes, AGENTD_RIGHTS_ALL },
	};
	/* CAP_SYS_ADMIN: the attribute is trusted.* (the rights decide, not the capability). */
	test_agent_start(&ag,
			 &(struct ruleset){ .files = files,
					    .nfiles = 3,
					    .capabilities = 1ULL << CAP_SYS_ADMIN },
			 true);
	ASSERT_EQ(test_agent_run(&ag, try_uring_setxattr_as_personality, no), EPERM);
	ASSERT_EQ(test_agent_run(&ag, try_uring_setxattr_as_personality, yes), 0);
}
