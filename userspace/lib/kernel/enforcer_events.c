// SPDX-License-Identifier: GPL-2.0
/*
 * The events ring buffer the programs write: its consumption, and the counters of the events
 * the kernel could not record.
 */
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kernel/enforcer_internal.h"

__u32 enforcer_ring_bytes(const struct enforcer *e)
{
	int fd = enforcer_map_fd(e, "events");
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) ? info.max_entries : 0;
}

int enforcer_consume(struct enforcer *e, int timeout_ms)
{
	int n = 0, m;

	if (!e->events)
		return -EINVAL;
	/* The programs wake us only past a backlog, so consume after every timeout too. With no
	 * time to wait, polling would only cost an epoll_wait(): consuming reads every ring. */
	if (timeout_ms) {
		n = ring_buffer__poll(e->events, timeout_ms);
		if (n < 0 && n != -EINTR)
			return n;
	}
	m = ring_buffer__consume(e->events);
	if (m < 0)
		return m;
	return (n > 0 ? n : 0) + m;
}

int enforcer_events_fd(const struct enforcer *e)
{
	return e->events ? ring_buffer__epoll_fd(e->events) : -EINVAL;
}

int enforcer_drops(struct enforcer *e, __u32 agent_id, __u64 *drops)
{
	int ncpu = libbpf_num_possible_cpus(), i, err = 0;
	__u64 *vals;

	if (ncpu < 0)
		return ncpu;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	if (bpf_map_lookup_elem(enforcer_map_fd(e, "event_drops"), &agent_id, vals))
		err = -errno;
	*drops = 0;
	for (i = 0; !err && i < ncpu; i++)
		*drops += vals[i];
	free(vals);
	return err;
}

int enforcer_events_open(struct enforcer *e, event_fn fn, void *ctx)
{
	e->events = ring_buffer__new(enforcer_map_fd(e, "events"), (ring_buffer_sample_fn)fn, ctx,
				     NULL);
	return e->events ? 0 : -errno;
}
