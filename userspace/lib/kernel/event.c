// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "agentd/abi.h"
#include "kernel/event.h"

struct line {
	char *buf;
	size_t size;
	size_t len;
	int err;
};

static void line_add(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void line_add(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->len, l->size - l->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= l->size - l->len)
		l->err = -ENOSPC;
	else
		l->len += n;
}

/* Kernel strings are bytes an agent chose (file names, comm): escape all but printable ASCII. */
static void line_add_escaped(struct line *l, const char *s, size_t max)
{
	size_t i;

	for (i = 0; i < max && s[i]; i++) {
		unsigned char c = s[i];

		if (c > ' ' && c < 0x7f && c != '\\' && c != '"')
			line_add(l, "%c", c);
		else
			line_add(l, "\\x%02x", c);
	}
}

static const char *const hook_names[] = {
	[AGENTD_HOOK_FILE_OPEN] = "file_open",
	[AGENTD_HOOK_PATH_MKNOD] = "path_mknod",
	[AGENTD_HOOK_PATH_MKDIR] = "path_mkdir",
	[AGENTD_HOOK_PATH_SYMLINK] = "path_symlink",
	[AGENTD_HOOK_PATH_UNLINK] = "path_unlink",
	[AGENTD_HOOK_PATH_RMDIR] = "path_rmdir",
	[AGENTD_HOOK_PATH_LINK] = "path_link",
	[AGENTD_HOOK_PATH_RENAME] = "path_rename",
	[AGENTD_HOOK_PATH_TRUNCATE] = "path_truncate",
	[AGENTD_HOOK_FILE_TRUNCATE] = "file_truncate",
	[AGENTD_HOOK_PATH_CHMOD] = "path_chmod",
	[AGENTD_HOOK_PATH_CHOWN] = "path_chown",
	[AGENTD_HOOK_INODE_SETXATTR] = "inode_setxattr",
	[AGENTD_HOOK_INODE_REMOVEXATTR] = "inode_removexattr",
	[AGENTD_HOOK_BPRM_CHECK] = "bprm_check_security",
	[AGENTD_HOOK_MMAP_FILE] = "mmap_file",
	[AGENTD_HOOK_FILE_MPROTECT] = "file_mprotect",
	[AGENTD_HOOK_CONNECT4] = "connect4",
	[AGENTD_HOOK_CONNECT6] = "connect6",
	[AGENTD_HOOK_SENDMSG4] = "sendmsg4",
	[AGENTD_HOOK_SENDMSG6] = "sendmsg6",
	[AGENTD_HOOK_BIND4] = "bind4",
	[AGENTD_HOOK_BIND6] = "bind6",
	[AGENTD_HOOK_SOCK_CREATE] = "sock_create",
	[AGENTD_HOOK_UNIX_STREAM_CONNECT] = "unix_stream_connect",
	[AGENTD_HOOK_UNIX_MAY_SEND] = "unix_may_send",
	[AGENTD_HOOK_BPF] = "bpf",
	[AGENTD_HOOK_PERF_EVENT_OPEN] = "perf_event_open",
	[AGENTD_HOOK_KERNEL_MODULE_REQUEST] = "kernel_module_request",
	[AGENTD_HOOK_KERNEL_READ_FILE] = "kernel_read_file",
	[AGENTD_HOOK_KERNEL_LOAD_DATA] = "kernel_load_data",
	[AGENTD_HOOK_SB_MOUNT] = "sb_mount",
	[AGENTD_HOOK_MOVE_MOUNT] = "move_mount",
	[AGENTD_HOOK_SB_UMOUNT] = "sb_umount",
	[AGENTD_HOOK_SB_PIVOTROOT] = "sb_pivotroot",
	[AGENTD_HOOK_USERNS_CREATE] = "userns_create",
	[AGENTD_HOOK_TASK_KILL] = "task_kill",
	[AGENTD_HOOK_PTRACE_ACCESS_CHECK] = "ptrace_access_check",
	[AGENTD_HOOK_PTRACE_TRACEME] = "ptrace_traceme",
	[AGENTD_HOOK_KEY_ALLOC] = "key_alloc",
	[AGENTD_HOOK_KEY_PERMISSION] = "key_permission",
	[AGENTD_HOOK_CGROUP_WRITE] = "cgroup_write",
	[AGENTD_HOOK_TASK_ALLOC] = "task_alloc",
	[AGENTD_HOOK_FILE_RECEIVE] = "file_receive",
	[AGENTD_HOOK_INODE_SETATTR] = "inode_setattr",
	[AGENTD_HOOK_INODE_SET_ACL] = "inode_set_acl",
	[AGENTD_HOOK_INODE_REMOVE_ACL] = "inode_remove_acl",
	[AGENTD_HOOK_SOCKET_CONNECT] = "socket_connect",
	[AGENTD_HOOK_SOCKET_SENDMSG] = "socket_sendmsg",
	[AGENTD_HOOK_SOCKET_SETSOCKOPT] = "socket_setsockopt",
	[AGENTD_HOOK_SOCKET_BIND] = "socket_bind",
	[AGENTD_HOOK_CAPABLE] = "capable",
	[AGENTD_HOOK_SYSLOG] = "syslog",
	[AGENTD_HOOK_SETTIME] = "settime",
	[AGENTD_HOOK_QUOTACTL] = "quotactl",
	[AGENTD_HOOK_USERFAULTFD] = "userfaultfd",
	[AGENTD_HOOK_FILE_SEND_SIGIOTASK] = "file_send_sigiotask",
	[AGENTD_HOOK_FILE_FCNTL] = "file_fcntl",
	[AGENTD_HOOK_FILE_IOCTL] = "file_ioctl",
	[AGENTD_HOOK_TASK_SETPGID] = "task_setpgid",
	[AGENTD_HOOK_TASK_SETNICE] = "task_setnice",
	[AGENTD_HOOK_TASK_SETIOPRIO] = "task_setioprio",
	[AGENTD_HOOK_TASK_SETSCHEDULER] = "task_setscheduler",
	[AGENTD_HOOK_TASK_PRLIMIT] = "task_prlimit",
	[AGENTD_HOOK_TASK_MOVEMEMORY] = "task_movememory",
	[AGENTD_HOOK_IPC_PERMISSION] = "ipc_permission",
	[AGENTD_HOOK_SHM_ASSOCIATE] = "shm_associate",
	[AGENTD_HOOK_MSG_QUEUE_ASSOCIATE] = "msg_queue_associate",
	[AGENTD_HOOK_SEM_ASSOCIATE] = "sem_associate",
	[AGENTD_HOOK_SHM_SHMAT] = "shm_shmat",
	[AGENTD_HOOK_MSG_QUEUE_MSGSND] = "msg_queue_msgsnd",
	[AGENTD_HOOK_MSG_QUEUE_MSGRCV] = "msg_queue_msgrcv",
	[AGENTD_HOOK_SHM_SHMCTL] = "shm_shmctl",
	[AGENTD_HOOK_MSG_QUEUE_MSGCTL] = "msg_queue_msgctl",
	[AGENTD_HOOK_SEM_SEMCTL] = "sem_semctl",
	[AGENTD_HOOK_SEM_SEMOP] = "sem_semop",
	[AGENTD_HOOK_IPC_ALLOC] = "ipc_alloc",
	[AGENTD_HOOK_PATH_NOTIFY] = "path_notify",
};

static const char *const reason_names[] = {
	[AGENTD_REASON_RULE] = "rule",
	[AGENTD_REASON_NO_RULE] = "no-rule",
	[AGENTD_REASON_WALK_TOO_DEEP] = "walk-too-deep",
	[AGENTD_REASON_LINK_WIDENS] = "link-widens-rights",
	[AGENTD_REASON_WRITABLE_EXEC] = "exec-from-writable-tree",
	[AGENTD_REASON_ANON_EXEC] = "anonymous-file-exec",
	[AGENTD_REASON_NO_POLICY] = "no-policy",
	[AGENTD_REASON_STRUCTURAL] = "structural-deny",
	[AGENTD_REASON_SELF_PROTECT] = "self-protection",
	[AGENTD_REASON_OUTSIDE_AGENT] = "target-outside-agent",
	[AGENTD_REASON_NOT_OWN_SOCKET] = "not-own-broker-socket",
	[AGENTD_REASON_NOT_OWN_UNIX_SOCKET] = "not-own-socket",
	[AGENTD_REASON_UNKNOWN_MOUNT] = "unknown-mount",
	[AGENTD_REASON_MAP_UNREADABLE] = "map-unreadable",
	[AGENTD_REASON_UNRECORDED] = "unrecorded",
	[AGENTD_REASON_PROTOCOL] = "protocol",
	[AGENTD_REASON_REROUTE] = "reroute",
	[AGENTD_REASON_UNREADABLE] = "unreadable",
	[AGENTD_REASON_DEVICE] = "device",
	[AGENTD_REASON_CAPABILITY] = "capability-not-granted",
	[AGENTD_REASON_NOT_OWN_IPC] = "not-own-ipc-object",
	[AGENTD_REASON_TOOL_NETWORK] = "tool-network",
	[AGENTD_REASON_GRANT] = "grant",
};

static const char *name_of(const char *const *names, size_t n, __u32 i)
{
	return i < n && names[i] ? names[i] : "unknown";
}

#define NAME(table, i) name_of(table, sizeof(table) / sizeof(table[0]), i)

const char *event_hook_name(unsigned int hook)
{
	return NAME(hook_names, hook);
}

const char *event_reason_name(unsigned int reason)
{
	return NAME(reason_names, reason);
}

static void format_common(struct line *l, const struct agentd_task *t,
			  const struct agentd_verdict *v)
{
	line_add(l, "%s agent=%u gen=%u cgroup=%llu pid=%u tid=%u uid=%u comm=\"",
		 v->decision == AGENTD_DECISION_DENY	     ? "deny"
		 : v->decision == AGENTD_DECISION_WOULD_DENY ? "would-deny"
							     : "allow",
		 t->agent_id, t->generation, (unsigned long long)t->cgroup_id, t->pid, t->tid,
		 t->uid);
	line_add_escaped(l, t->comm, sizeof(t->comm));
	line_add(l, "\" hook=%s reason=%s rule=%u", NAME(hook_names, v->hook),
		 NAME(reason_names, v->reason), v->rule_id);
}

static void format_file(struct line *l, const struct agentd_file_event *e)
{
	format_common(l, &e->task, &e->verdict);
	line_add(l, " need=0x%x have=0x%x dev=%llu:%llu ino=%llu path=\"", e->rights_needed,
		 e->rights_held, (unsigned long long)(e->dev >> 20),
		 (unsigned long long)(e->dev & 0xfffff), (unsigned long long)e->ino);
	line_add_escaped(l, e->path, sizeof(e->path));
	line_add(l, "\"%s%s", e->flags & AGENTD_EVF_PATH_TRUNCATED ? " path_truncated" : "",
		 e->flags & AGENTD_EVF_INTERNAL ? " internal" : "");
}

static void format_net(struct line *l, const struct agentd_net_event *e)
{
	char addr[INET6_ADDRSTRLEN];
	static const __u8 mapped[12] = { [10] = 0xff, [11] = 0xff };

	format_common(l, &e->task, &e->verdict);
	if (e->verdict.hook == AGENTD_HOOK_SOCK_CREATE ||
	    e->verdict.hook == AGENTD_HOOK_UNIX_STREAM_CONNECT ||
	    e->verdict.hook == AGENTD_HOOK_UNIX_MAY_SEND) {
		line_add(l, " family=%u type=%u", e->family, e->protocol);
		return;
	}
	if (e->verdict.reason == AGENTD_REASON_REROUTE ||
	    e->verdict.hook == AGENTD_HOOK_SOCKET_SETSOCKOPT) {
		line_add(l, " family=%u level=%u option=%u", e->family, e->protocol >> 16,
			 e->protocol & 0xffff);
		return;
	}
	if (!memcmp(e->addr, mapped, sizeof(mapped)) && e->family == 2)
		inet_ntop(AF_INET, e->addr + 12, addr, sizeof(addr));
	else
		inet_ntop(AF_INET6, e->addr, addr, sizeof(addr));
	line_add(l, " family=%u protocol=%u addr=%s port=%u", e->family, e->protocol, addr,
		 e->port);
}

static void format_self(struct line *l, const struct agentd_self_event *e)
{
	format_common(l, &e->task, &e->verdict);
	line_add(l, " target_pid=%u arg=%u", e->target_pid, e->arg);
}

int event_decode(const void *data, size_t len, union agentd_event *ev)
{
	struct agentd_event_hdr hdr;
	size_t want;

	if (len < sizeof(hdr))
		return -EINVAL;
	memcpy(&hdr, data, sizeof(hdr));
	if (hdr.len != len || hdr.version != AGENTD_EVENT_VERSION)
		return -EINVAL;
	switch (hdr.type) {
	case AGENTD_EV_FILE:
		want = sizeof(ev->file);
		break;
	case AGENTD_EV_NET:
		want = sizeof(ev->net);
		break;
	case AGENTD_EV_SELF:
		want = sizeof(ev->self);
		break;
	default:
		return -EINVAL;
	}
	if (len != want)
		return -EINVAL;
	memcpy(ev, data, len);
	return hdr.type;
}

int event_format(const union agentd_event *ev, char *buf, size_t bufsz)
{
	struct line l = { .buf = buf, .size = bufsz };

	if (!bufsz)
		return -ENOSPC;
	buf[0] = '\0';
	switch (ev->hdr.type) {
	case AGENTD_EV_FILE:
		format_file(&l, &ev->file);
		break;
	case AGENTD_EV_NET:
		format_net(&l, &ev->net);
		break;
	case AGENTD_EV_SELF:
		format_self(&l, &ev->self);
		break;
	default:
		return -EINVAL;
	}
	return l.err ? l.err : (int)l.len;
}
