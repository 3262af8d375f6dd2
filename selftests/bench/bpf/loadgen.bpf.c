// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark only (make bench), never loaded by agentd: every system call of an agent's task
 * becomes EVENTS_PER_CALL file events in the same ring buffer, through the same reserve/submit
 * path and loss accounting, that the enforcement programs use (several per call, so that one
 * producer core can offer more than its system call rate). It measures the event pipeline.
 */
#include "agent.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define EVENTS_PER_CALL 32

static __always_inline void emit(const struct agent *a, long id)
{
	struct agentd_file_event *e;

	e = event_reserve(a->id, sizeof(*e));
	if (!e)
		return;
	event_fill(&e->hdr, AGENTD_EV_FILE, sizeof(*e), &e->task, a, &e->verdict,
		   AGENTD_HOOK_FILE_OPEN, 0, AGENTD_REASON_RULE, 1);
	e->rights_needed = AGENTD_RIGHT_READ;
	e->rights_held = AGENTD_RIGHT_READ;
	e->dev = 1;
	e->ino = id;
	e->flags = 0;
	__builtin_memcpy(e->path, "/loadgen", 9);
	e->path_len = 8;
	event_submit(e);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(loadgen, struct pt_regs *regs, long id)
{
	struct agent a;
	int i;

	if (!current_agent(&a))
		return 0;
#pragma unroll
	for (i = 0; i < EVENTS_PER_CALL; i++)
		emit(&a, id);
	return 0;
}
