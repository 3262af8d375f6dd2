// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "agentd/abi.h"
#include "files.h"
#include "files.skel.h"

struct files {
	struct files_bpf *skel;
	struct ring_buffer *events;
};

__u64 kernel_dev(dev_t st_dev)
{
	return ((__u64)major(st_dev) << 20) | minor(st_dev);
}

int files_load(struct files **out, event_fn on_event, void *ctx)
{
	struct files *f;
	int err;

	*out = NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->skel = files_bpf__open();
	if (!f->skel) {
		err = -errno;
		goto err_free;
	}
	err = files_bpf__load(f->skel);
	if (err)
		goto err_free;
	f->events = ring_buffer__new(bpf_map__fd(f->skel->maps.events),
				     (ring_buffer_sample_fn)on_event, ctx, NULL);
	if (!f->events) {
		err = -errno;
		goto err_free;
	}
	*out = f;
	return 0;

err_free:
	files_destroy(f);
	return err;
}

int files_attach(struct files *f)
{
	return files_bpf__attach(f->skel);
}

void files_detach(struct files *f)
{
	files_bpf__detach(f->skel);
}

int files_add_agent(struct files *f, __u64 cgroup_id, __u32 agent_id, __u32 generation)
{
	struct agentd_agent a = { .agent_id = agent_id, .generation = generation };

	if (!agent_id || agent_id >= AGENTD_MAX_AGENTS)
		return -ERANGE;
	return bpf_map__update_elem(f->skel->maps.agent_cgroups, &cgroup_id, sizeof(cgroup_id), &a,
				    sizeof(a), BPF_ANY);
}

int files_deny(struct files *f, __u32 agent_id, const char *path, __u32 rule_id)
{
	struct agentd_file_rule rule = { .rule_id = rule_id };
	struct agentd_file_key key = { .agent_id = agent_id };
	struct stat st;

	if (stat(path, &st))
		return -errno;
	key.dev = kernel_dev(st.st_dev);
	key.ino = st.st_ino;
	return bpf_map__update_elem(f->skel->maps.file_rules, &key, sizeof(key), &rule,
				    sizeof(rule), BPF_ANY);
}

int files_consume(struct files *f, int timeout_ms)
{
	int n, m;

	/* The programs wake us only past a backlog, so consume after every timeout too. */
	n = ring_buffer__poll(f->events, timeout_ms);
	if (n < 0 && n != -EINTR)
		return n;
	m = ring_buffer__consume(f->events);
	if (m < 0)
		return m;
	return (n > 0 ? n : 0) + m;
}

int files_drops(struct files *f, __u32 agent_id, __u64 *drops)
{
	int ncpu = libbpf_num_possible_cpus(), i, err;
	__u64 *vals;

	if (ncpu < 0)
		return ncpu;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	err = bpf_map__lookup_elem(f->skel->maps.event_drops, &agent_id, sizeof(agent_id), vals,
				   ncpu * sizeof(*vals), 0);
	*drops = 0;
	for (i = 0; !err && i < ncpu; i++)
		*drops += vals[i];
	free(vals);
	return err;
}

void files_destroy(struct files *f)
{
	if (!f)
		return;
	ring_buffer__free(f->events);
	files_bpf__destroy(f->skel);
	free(f);
}
