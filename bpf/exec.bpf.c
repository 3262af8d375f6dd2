// SPDX-License-Identifier: GPL-2.0
/*
 * Exec policy: a binary runs, and a file is mapped executable, only with the EXEC right on it.
 * Executable mappings are checked too, so that "ld.so ./binary" (which maps rather than execs)
 * is held to the same rule. memfds and other files no path reaches are refused unless the
 * policy allows them, and so are files in trees the agent can write, unless allowed.
 *
 * Fails closed like the file policy (rights.bpf.h).
 */
#include "rights.bpf.h"

char LICENSE[] SEC("license") = "GPL";

static __always_inline int check_exec(struct file *file, __u32 hook, enum grant_use_mode mode)
{
	struct dentry *d = file->f_path.dentry;
	struct vfsmount *mnt = file->f_path.mnt;
	struct walk w = {};
	struct agent a;
	int deny, writable;

	if (!current_agent(&a))
		return 0;
	if (!a.has_config) {
		w.reason = AGENTD_REASON_NO_POLICY;
		deny = 1;
		goto out;
	}
	rights_walk(&a, d, mnt, &w);
	if (w.flags & AGENTD_EVF_INTERNAL) {
		deny = !(a.cfg.flags & AGENTD_AGENT_ALLOW_MEMFD_EXEC);
		w.reason = AGENTD_REASON_ANON_EXEC;
		goto out;
	}
	writable = !(a.cfg.flags & AGENTD_AGENT_ALLOW_WRITABLE_EXEC) &&
		   (w.rights & (AGENTD_RIGHT_WRITE | AGENTD_RIGHT_CREATE));
	deny = !(w.rights & AGENTD_RIGHT_EXEC);
	/* A grant never lifts exec from a tree the agent can write. */
	if (deny && !writable && walk_granted(&a, &w, d, AGENTD_RIGHT_EXEC, mode)) {
		deny = 0;
	} else if (!deny && writable) {
		deny = 1;
		w.reason = AGENTD_REASON_WRITABLE_EXEC;
	}
out:
	if (want_file_event(&a, deny, &w))
		emit_file_event(&a, hook, deny, &w, AGENTD_RIGHT_EXEC, d, mnt);
	return lsm_verdict(enforced(&a, deny, w.reason));
}

SEC("lsm/bprm_check_security")
int BPF_PROG(bprm_check_security, struct linux_binprm *bprm, int ret)
{
	return ret ? ret : check_exec(bprm->file, AGENTD_HOOK_BPRM_CHECK, GRANT_CLAIM);
}

SEC("lsm/mmap_file")
int BPF_PROG(mmap_file, struct file *file, unsigned long reqprot, unsigned long prot,
	     unsigned long flags, int ret)
{
	if (ret || !file || !(prot & PROT_EXEC))
		return ret;
	return check_exec(file, AGENTD_HOOK_MMAP_FILE, GRANT_CLAIM_OR_MINE);
}

SEC("lsm/file_mprotect")
int BPF_PROG(file_mprotect, struct vm_area_struct *vma, unsigned long reqprot, unsigned long prot,
	     int ret)
{
	struct file *file;

	if (ret || !(prot & PROT_EXEC))
		return ret;
	file = vma->vm_file;
	return file ? check_exec(file, AGENTD_HOOK_FILE_MPROTECT, GRANT_CLAIM_OR_MINE) : 0;
}
