/* SPDX-License-Identifier: GPL-2.0 */
/*
 * File rights of an agent on a file-system object: the rule of the nearest object in its dentry
 * ancestry (itself first), walking up to the root and across mount points. The most specific rule
 * wins, so a tree can be denied inside an allowed one. No rule: no rights. A walk that cannot
 * finish within AGENTD_MAX_WALK steps yields no rights (fail closed), with its own reason.
 */
#ifndef AGENTD_RIGHTS_BPF_H
#define AGENTD_RIGHTS_BPF_H

#include "agent.bpf.h"
#include "grants.bpf.h"

/* kern_mount()ed file systems (pipes, sockets, memfd, anon inodes) are no namespace's. */
#define MNT_NS_INTERNAL ((struct mnt_namespace *)-22L)

/* Buckets of file rules (abi.h), mapped by agentd. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, AGENTD_RULE_BUCKETS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct agentd_rule_bucket);
} rule_buckets SEC(".maps");

/*
 * The rule in bucket b of owner on (dev, ino), as one word (struct agentd_file_rule's 8 bytes),
 * or 0 for none: ruletab_put() refuses rule id 0, so a rule's word is never 0. Each word is one
 * load, the owner's first (volatile: the compiler keeps their order, and so does x86), so a slot
 * being filled is seen whole or not matched (agentd stores its owner last), and a slot is not
 * freed while a program may hold its generation (abi.h). A word, not a pointer into the bucket:
 * a global function returns a scalar.
 */
static __always_inline __u64 bucket_rule(__u32 b, __u64 owner, __u64 dev, __u64 ino)
{
	struct agentd_rule_bucket *bk = bpf_map_lookup_elem(&rule_buckets, &b);
	struct agentd_rule_slot *sl;
	int j;

	if (!bk)
		return 0;
#pragma unroll
	for (j = 0; j < AGENTD_RULE_BUCKET_SLOTS; j++) {
		sl = &bk->slot[j];
		if (*(volatile __u64 *)&sl->owner == owner && *(volatile __u64 *)&sl->dev == dev &&
		    *(volatile __u64 *)&sl->ino == ino)
			return *(volatile __u64 *)&sl->rule;
	}
	return 0;
}

/*
 * The rule of owner on (dev, ino) as a word, 0 for none: in one of its two buckets, or nowhere.
 * A global function: the verifier checks it once per program, with scalar arguments, where
 * inlined it would check its 16 compares again at every call site in every state of the walks
 * (that made the files programs' verification 3 to 5 times longer on 6.12). The call costs a
 * few instructions, at the levels whose filter bit is set only.
 */
__noinline __u64 agentd_rule_lookup(__u64 owner, __u64 dev, __u64 ino)
{
	__u64 h = agentd_rule_hash(owner, dev, ino);
	__u64 r = bucket_rule(agentd_rule_bucket(h, 0), owner, dev, ino);

	return r ?: bucket_rule(agentd_rule_bucket(h, 1), owner, dev, ino);
}

static __always_inline __u64 find_rule(const struct agentd_file_key *key)
{
	return agentd_rule_lookup(agentd_rule_owner(key->agent_id, key->generation), key->dev,
				  key->ino);
}

/* 0: no entry of rule_buckets or mount_roots names key's object, without a table lookup. 1: one
 * may; the maps say. One load of the object filter (abi.h), at its address. */
static __always_inline int maybe_rule_object(const struct agentd_file_key *key)
{
	__u32 bit = agentd_object_bit(key->dev, key->ino);

	return (agentd_shared.object_filter[bit / 64] >> (bit % 64)) & 1;
}

struct walk {
	__u32 rights;
	__u32 rule_id;
	__u32 reason;
	__u32 flags; /* AGENTD_EVF_INTERNAL */
	__u32 depth; /* steps to the deciding rule: 0 when the rule is on the object itself */
};

static __always_inline struct mount *real_mount(struct vfsmount *m)
{
	return (struct mount *)((void *)m - bpf_core_field_offset(struct mount, mnt));
}

struct walk_state {
	struct agentd_file_key key;
	struct dentry *d;
	struct dentry *root;
	struct mount *mnt;
	struct walk *w;
	__u32 base; /* steps taken before the bpf_loop() part */
	int done;
};

/*
 * Above the object's own mount, no BTF pointer reaches struct mount from the hook's arguments,
 * and the walk reads through bpf_probe_read_kernel(), a helper call per read. With
 * AGENTD_RDONLY_CAST (the objects built for Linux 6.2 and later, which have the kfunc
 * bpf_rdonly_cast(); the enforcer picks them by the kernel's BTF), a read-only cast makes every
 * such read a plain load the kernel guards as it guards the helper's (a fault reads 0), and the
 * verifier turns the cast itself into a register move.
 */
#ifdef AGENTD_RDONLY_CAST
extern void *bpf_rdonly_cast(const void *obj__ign, __u32 btf_id__k) __ksym;
#define kernel_ptr(type, p) ((type *)bpf_rdonly_cast((p), bpf_core_type_id_kernel(type)))
#endif

/* The walk reached the top without a rule. Only kern_mount()ed file systems are internal: a
 * mount detached from its namespace (lazy umount) has none, and is no less denied. */
static __always_inline long walk_end(struct walk_state *s)
{
	struct mount *mnt = s->mnt;
#ifdef AGENTD_RDONLY_CAST
	struct mnt_namespace *ns = kernel_ptr(struct mount, mnt)->mnt_ns;
#else
	/* Not BPF_CORE_READ(s->mnt, ...): that would relocate s->mnt too, against a kernel type
	 * named walk_state, which the load refuses. */
	struct mnt_namespace *ns = BPF_CORE_READ(mnt, mnt_ns);
#endif

	if (ns == MNT_NS_INTERNAL)
		s->w->flags |= AGENTD_EVF_INTERNAL;
	s->w->reason = AGENTD_REASON_NO_RULE;
	s->done = 1;
	return 1;
}

/* Keys the object at d; 0 for a negative dentry (a name being created: its parent decides). */
static __always_inline int object_key(struct dentry *d, struct agentd_file_key *key)
{
	struct inode *inode = BPF_CORE_READ(d, d_inode);

	if (!inode)
		return 0;
	key->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	key->ino = BPF_CORE_READ(inode, i_ino);
	return 1;
}

/* The walk decided by the rule of word (find_rule()), depth steps up, its rights within mask.
 * Returns 1. */
static __always_inline long walk_decided(struct walk *w, __u64 word, __u32 mask, __u32 depth)
{
	struct agentd_file_rule rule;

	__builtin_memcpy(&rule, &word, sizeof(rule));
	w->rights = rule.rights & mask;
	w->rule_id = rule.rule_id;
	w->reason = AGENTD_REASON_RULE;
	w->depth = depth;
	return 1;
}

/*
 * Reads two pointer fields a and b of ptr (a struct type) into *pa and *pb: with one
 * bpf_probe_read_kernel() when the running kernel puts b after a within PAIR_SPAN bytes, with two
 * otherwise. The offsets are CO-RE relocations, constants to the verifier, which keeps one
 * branch. Every kernel we run does (struct mount: mnt_parent, mnt_mountpoint, then mnt's
 * mnt_root, mnt_sb, side by side; struct dentry: d_inode 24 bytes after d_parent). A failed read
 * leaves NULL, as BPF_CORE_READ does.
 */
#define PAIR_SPAN 32
#define read_pair(ptr, type, a, b, pa, pb)                                                         \
	({                                                                                         \
		__u32 __oa = bpf_core_field_offset(type, a),                                       \
		      __ob = bpf_core_field_offset(type, b);                                       \
		__u64 __buf[PAIR_SPAN / 8];                                                        \
                                                                                                   \
		if (__ob > __oa && __ob - __oa <= PAIR_SPAN - 8) {                                 \
			bpf_probe_read_kernel(__buf, __ob - __oa + 8, (void *)(ptr) + __oa);       \
			*(pa) = (void *)__buf[0];                                                  \
			*(pb) = (void *)__buf[(__ob - __oa) / 8];                                  \
		} else {                                                                           \
			*(pa) = (void *)BPF_CORE_READ(ptr, a);                                     \
			*(pb) = (void *)BPF_CORE_READ(ptr, b);                                     \
		}                                                                                  \
	})

/* From the root of s->mnt to its mount point in the mount above; returns 1 at the top (the
 * walk ends there, undecided). Three reads: parent and mount point, the parent's root and super
 * block, the device. */
static __always_inline long walk_cross(struct walk_state *s)
{
	struct mount *mnt = s->mnt, *parent;
	struct dentry *mountpoint, *root;
	struct super_block *sb;

#ifdef AGENTD_RDONLY_CAST
	struct mount *m = kernel_ptr(struct mount, mnt);

	parent = m->mnt_parent;
	mountpoint = m->mnt_mountpoint;
	if (parent == mnt || !parent)
		return walk_end(s);
	root = parent->mnt.mnt_root;
	sb = parent->mnt.mnt_sb;
	s->key.dev = sb->s_dev;
#else
	read_pair(mnt, struct mount, mnt_parent, mnt_mountpoint, &parent, &mountpoint);
	if (parent == mnt || !parent)
		return walk_end(s);
	read_pair(parent, struct mount, mnt.mnt_root, mnt.mnt_sb, &root, &sb);
	s->key.dev = BPF_CORE_READ(sb, s_dev);
#endif
	s->d = mountpoint;
	s->mnt = parent;
	s->root = root;
	return 0;
}

/* One step up the ancestry, across mounts; returns 1 when decided. s->key.dev is the device of
 * s->mnt's file system, which every dentry up to its root shares. A bpf_loop() callback. */
static long walk_step(__u32 i, void *ctx)
{
	struct walk_state *s = ctx;
	struct dentry *d = s->d, *up;
	__u64 rule;
	struct inode *inode;

#ifdef AGENTD_RDONLY_CAST
	d = kernel_ptr(struct dentry, d);
	up = d->d_parent;
	inode = d->d_inode;
#else
	read_pair(d, struct dentry, d_parent, d_inode, &up, &inode);
#endif
	if (inode) {
#ifdef AGENTD_RDONLY_CAST
		s->key.ino = kernel_ptr(struct inode, inode)->i_ino;
#else
		s->key.ino = BPF_CORE_READ(inode, i_ino);
#endif
		rule = maybe_rule_object(&s->key) ? find_rule(&s->key) : 0;
		if (rule) {
			s->done = 1;
			return walk_decided(s->w, rule, ~0U, s->base + i);
		}
	}
	if (d == s->root)
		return walk_cross(s);
	/* The top of a file system that is not its mount's root: a pseudo file (pipes, sockets,
	 * memfds are their own parents) or a disconnected dentry (a bind mount of a deleted tree). */
	if (up == d)
		return walk_end(s);
	s->d = up;
	return 0;
}

/*
 * The rights of an object reached by a hook that names no mount (utimes, extended attributes,
 * ACLs): the walk stays in the object's file system, and every mount root it passes before the
 * deciding rule narrows the rights to those at that mount's mount point (mount_roots, filled by
 * userspace from the mount table). A path walk through any one of those mounts would stop there
 * and go on above its mount point; not knowing which, this walk grants only what every one of
 * them grants. The top of a file system with no rule on the way decides by the mount roots
 * passed; with none passed, the object was reached through no mount agentd saw: no rights.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, AGENTD_MAX_MOUNT_ROOTS);
	__type(key, struct agentd_file_key);
	__type(value, struct agentd_mount_root);
} mount_roots SEC(".maps");

struct inode_walk_state {
	struct agentd_file_key key;
	struct dentry *d;
	struct walk *w;
	__u32 above; /* rights every mount root passed allows */
	__u32 above_rule;
	int roots; /* 1: a mount root was passed */
	int done;
};

/* The top of the object's file system (or of a disconnected tree) with no rule on the way. */
static __always_inline long inode_walk_end(struct inode_walk_state *s, struct dentry *d)
{
	s->done = 1;
	if (s->roots) {
		s->w->rights = s->above;
		s->w->rule_id = s->above_rule;
		s->w->reason = AGENTD_REASON_RULE;
		return 1;
	}
	/* kern_mount()ed file systems (pipes, sockets, memfds): as in file_open, the agent can
	 * only reach an object there that it already holds. */
	if (BPF_CORE_READ(d, d_sb, s_flags) & SB_KERNMOUNT) {
		s->w->flags |= AGENTD_EVF_INTERNAL;
		s->w->reason = AGENTD_REASON_NO_RULE;
		return 1;
	}
	s->w->reason = AGENTD_REASON_UNKNOWN_MOUNT;
	return 1;
}

/* One step up inside a file system; returns 1 when decided. A bpf_loop() callback. */
static long inode_walk_step(__u32 i, void *ctx)
{
	struct inode_walk_state *s = ctx;
	struct dentry *d = s->d, *up;
	struct agentd_mount_root *root;
	__u64 rule;

	if (object_key(d, &s->key) && maybe_rule_object(&s->key)) {
		rule = find_rule(&s->key);
		if (rule) {
			s->done = 1;
			return walk_decided(s->w, rule, s->above, i);
		}
		root = bpf_map_lookup_elem(&mount_roots, &s->key);
		if (root) {
			s->above &= root->rights;
			/* A flag, not a count: the verifier of Linux 6.8 and later follows this
			 * callback until its states converge, and a count differs at each step. */
			s->above_rule = s->roots ? 0 : root->rule_id;
			s->roots = 1;
		}
	}
	up = BPF_CORE_READ(d, d_parent);
	if (up == d)
		return inode_walk_end(s, d);
	s->d = up;
	return 0;
}

static __always_inline void inode_rights_walk(const struct agent *a, struct dentry *d,
					      struct walk *w)
{
	struct inode_walk_state s = {
		.key = { .agent_id = a->id, .generation = a->cfg.generation },
		.d = d,
		.w = w,
		.above = ~0U,
	};

	bpf_loop(AGENTD_MAX_WALK, inode_walk_step, &s, 0);
	if (!s.done)
		w->reason = AGENTD_REASON_WALK_TOO_DEEP;
}

/*
 * Steps of the walk up the object's own mount that rights_walk() makes inline, before its
 * bpf_loop(): most rules an agent's file meets are this near (on the file, its directory, its
 * workspace), and a step made inline costs 52 instructions on 6.12 where one made by the loop
 * costs 76: the callback's call saves and restores registers, and the walk's state stays in
 * memory (docs/PERFORMANCE.md). The verifier checks them
 * as straight code (the rule lookup is a global function): the programs of Linux 6.1 verify in
 * fewer instructions with them, those of 6.12 in a few percent more (docs/PERFORMANCE.md).
 */
#define WALK_INLINE 4

/*
 * One step up the object's own mount, where most of any path lies, at depth i, reading through
 * BTF pointers (plain loads, no helper call per level); returns 1 when decided or at the
 * mount's root (s->base: the steps taken, the root's included). s->key.dev is the device of
 * the mount's file system, which every dentry up to its root shares.
 */
static __always_inline long mount_step(struct walk_state *s, __u32 i)
{
	struct dentry *d = s->d, *up;
	__u64 rule;
	struct inode *inode = d->d_inode;

	if (inode) {
		s->key.ino = inode->i_ino;
		rule = maybe_rule_object(&s->key) ? find_rule(&s->key) : 0;
		if (rule) {
			s->done = 1;
			return walk_decided(s->w, rule, ~0U, i);
		}
	}
	if (d == s->root) {
		s->base = i + 1;
		return 1;
	}
	up = d->d_parent;
	/* See walk_step. */
	if (up == d)
		return walk_end(s);
	s->d = up;
	return 0;
}

/* mount_step() as bpf_loop() callbacks: from the object, and past the inline steps. */
static long walk_mount_step(__u32 i, void *ctx)
{
	return mount_step(ctx, i);
}

static long walk_mount_step_after(__u32 i, void *ctx)
{
	return mount_step(ctx, i + WALK_INLINE);
}

#define WALK_STATE(a, d, vmnt, w)                                                                  \
	{                                                                                          \
		.key = { .agent_id = (a)->id,                                                      \
			 .generation = (a)->cfg.generation,                                        \
			 .dev = (vmnt)->mnt_sb->s_dev },                                           \
		.d = (d), .root = (vmnt)->mnt_root, .mnt = real_mount(vmnt), .w = (w),             \
	}

/* The walk on from the root of the object's own mount, reached undecided or not: through the
 * mounts above with walk_step, whose CO-RE reads follow struct mount (no BTF pointer reaches it
 * from a vfsmount). */
static __always_inline void walk_above(struct walk_state *s)
{
	if (s->done)
		return;
	if (!s->base || s->base >= AGENTD_MAX_WALK) {
		s->w->reason = AGENTD_REASON_WALK_TOO_DEEP;
		return;
	}
	/* The mount's root, undecided: on from its mount point, in the mount above. */
	if (walk_cross(s))
		return;
	bpf_loop(AGENTD_MAX_WALK - s->base, walk_step, s, 0);
	if (!s->done)
		s->w->reason = AGENTD_REASON_WALK_TOO_DEEP;
}

/*
 * The walk of a path (d on vmnt): up the object's own mount with mount_step(), whose loads need
 * d and vmnt to be the hook's arguments or loaded from them, never values read by
 * BPF_CORE_READ (the verifier refuses the program otherwise), WALK_INLINE steps inline and the
 * rest by bpf_loop(); then walk_above().
 */
static __always_inline void rights_walk(const struct agent *a, struct dentry *d,
					struct vfsmount *vmnt, struct walk *w)
{
	struct walk_state s = WALK_STATE(a, d, vmnt, w);
	__u32 i;

#pragma unroll
	for (i = 0; i < WALK_INLINE; i++)
		if (mount_step(&s, i))
			goto above;
	bpf_loop(AGENTD_MAX_WALK - WALK_INLINE, walk_mount_step_after, &s, 0);
above:
	walk_above(&s);
}

/* rights_walk() all by bpf_loop(), for the hooks that walk two paths or more (link, rename):
 * with the inline steps, path_rename's verification on 6.12 processed 2.3 times the
 * instructions, path_link's 1.3 times. */
static __always_inline void rights_walk_looped(const struct agent *a, struct dentry *d,
					       struct vfsmount *vmnt, struct walk *w)
{
	struct walk_state s = WALK_STATE(a, d, vmnt, w);

	bpf_loop(AGENTD_MAX_WALK, walk_mount_step, &s, 0);
	walk_above(&s);
}

/*
 * The path of an object for events, built only when one is emitted: names are written
 * backwards, from the end of a per-CPU scratch buffer twice AGENTD_PATH_LEN long, so that every
 * write at an offset masked by AGENTD_PATH_LEN - 1, of a length so masked, stays inside it.
 */
#define PATH_MASK (AGENTD_PATH_LEN - 1)

struct path_scratch {
	char buf[2 * AGENTD_PATH_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct path_scratch);
} path_scratch SEC(".maps");

struct path_state {
	struct dentry *d;
	struct dentry *root;
	struct mount *mnt;
	char *buf;
	__u32 pos; /* the path is buf[pos, AGENTD_PATH_LEN - 1), its NUL at AGENTD_PATH_LEN - 1 */
	int done;
};

/* One name of the ancestry, prepended; returns 1 when the path is complete or full. */
static long path_step(__u32 i, void *ctx)
{
	struct path_state *s = ctx;
	struct dentry *d = s->d, *up;
	struct mount *mnt = s->mnt, *parent;
	__u32 len;

	if (!mnt) {
		/* No mount: names up to the top of the file system. */
		if (d == BPF_CORE_READ(d, d_sb, s_root)) {
			s->done = 1;
			return 1;
		}
	} else if (d == s->root) {
		parent = BPF_CORE_READ(mnt, mnt_parent);
		if (parent == mnt) {
			s->done = 1;
			return 1;
		}
		s->d = BPF_CORE_READ(mnt, mnt_mountpoint);
		s->mnt = parent;
		s->root = BPF_CORE_READ(parent, mnt.mnt_root);
		return 0;
	}
	len = BPF_CORE_READ(d, d_name.len);
	if (len + 1 > s->pos)
		return 1; /* does not fit: the path keeps its tail, marked truncated */
	s->pos -= len;
	bpf_probe_read_kernel(s->buf + (s->pos & PATH_MASK), len & PATH_MASK,
			      BPF_CORE_READ(d, d_name.name));
	up = BPF_CORE_READ(d, d_parent);
	/* A pseudo file (pipe, socket, memfd) is its own parent: its name alone. */
	if (up == d) {
		s->done = 1;
		return 1;
	}
	s->pos -= 1;
	s->buf[s->pos & PATH_MASK] = '/';
	s->d = up;
	return 0;
}

/* Fills e->path, e->path_len and AGENTD_EVF_PATH_TRUNCATED for object on vmnt. With no vmnt,
 * the path from the top of the object's file system: a tail, marked truncated. */
static __always_inline void event_path(struct agentd_file_event *e, struct dentry *object,
				       struct vfsmount *vmnt)
{
	struct path_state s = { .pos = AGENTD_PATH_LEN - 1 };
	__u32 zero = 0, size;
	struct path_scratch *p;

	e->path[0] = '\0';
	e->path_len = 0;
	p = bpf_map_lookup_elem(&path_scratch, &zero);
	if (!p) {
		e->flags |= AGENTD_EVF_PATH_TRUNCATED;
		return;
	}
	s.buf = p->buf;
	s.d = object;
	if (vmnt) {
		s.root = BPF_CORE_READ(vmnt, mnt_root);
		s.mnt = real_mount(vmnt);
	} else {
		e->flags |= AGENTD_EVF_PATH_TRUNCATED;
	}
	p->buf[AGENTD_PATH_LEN - 1] = '\0';
	bpf_loop(AGENTD_MAX_WALK, path_step, &s, 0);
	if (!s.done)
		e->flags |= AGENTD_EVF_PATH_TRUNCATED;
	if (s.done && s.pos == AGENTD_PATH_LEN - 1) {
		/* The root itself. */
		s.pos -= 1;
		p->buf[s.pos & PATH_MASK] = '/';
	}
	size = AGENTD_PATH_LEN - s.pos; /* with the NUL */
	if (size > AGENTD_PATH_LEN)
		return;
	bpf_probe_read_kernel(e->path, size, p->buf + (s.pos & PATH_MASK));
	e->path_len = size - 1;
}

static __always_inline void emit_file_event(const struct agent *a, __u32 hook, int deny,
					    const struct walk *w, __u32 needed,
					    struct dentry *object, struct vfsmount *mnt)
{
	struct agentd_file_event *e;
	struct inode *inode;

	e = event_reserve(a->id, sizeof(*e));
	if (!e)
		return;
	event_fill(&e->hdr, AGENTD_EV_FILE, sizeof(*e), &e->task, a, &e->verdict, hook, deny,
		   w->reason, w->rule_id);
	e->rights_needed = needed;
	e->rights_held = w->rights;
	inode = BPF_CORE_READ(object, d_inode);
	e->dev = inode ? BPF_CORE_READ(inode, i_sb, s_dev) : 0;
	e->ino = inode ? BPF_CORE_READ(inode, i_ino) : 0;
	e->flags = w->flags;
	event_path(e, object, mnt);
	event_submit(e);
}

/*
 * A deny by the agent's own rules (a rule, or none) that a grant on the object of d lifts, for
 * the rights the walk lacks: the walk then names the grant. Any other reason (a walk too deep,
 * an unknown mount, a device, self-protection before it) stands. Returns 1 when lifted.
 */
static __always_inline int walk_granted(const struct agent *a, struct walk *w, struct dentry *d,
					__u32 needed, enum grant_use_mode mode)
{
	__u32 id;

	if (w->reason != AGENTD_REASON_RULE && w->reason != AGENTD_REASON_NO_RULE)
		return 0;
	id = file_grant(a, BPF_CORE_READ(d, d_inode), needed & ~w->rights, mode);
	if (!id)
		return 0;
	w->reason = AGENTD_REASON_GRANT;
	w->rule_id = id;
	return 1;
}

/* Whether an event is due: a deny, an allow the policy logs, and every use of a grant. */
static __always_inline int want_file_event(const struct agent *a, int deny, const struct walk *w)
{
	return want_event(a, deny) || w->reason == AGENTD_REASON_GRANT;
}

/*
 * The verdict on an agent needing rights on the object at (d, mnt), a path: mnt is never NULL.
 * name_of names the object in events (the new name for a creation). Returns 0 or -EPERM. Its
 * own function, not one branch of decide_inode(): a program that holds both walks is verified
 * through both, and the inode walk's states multiply on Linux 6.8 and later, whose verifier
 * follows a bpf_loop() callback until its states converge (on 6.12 a path hook's verification
 * processed 34,246 instructions with both, 8,083 with one; up to 1 s a program in the VM tier).
 */
static __always_inline int decide(const struct agent *a, __u32 hook, struct dentry *d,
				  struct vfsmount *mnt, struct dentry *name_of, __u32 needed)
{
	struct walk w = {};
	int deny;

	if (!a->has_config) {
		w.reason = AGENTD_REASON_NO_POLICY;
		deny = 1;
	} else {
		rights_walk(a, d, mnt, &w);
		deny = (w.rights & needed) != needed;
		if (deny && walk_granted(a, &w, d, needed, GRANT_CLAIM))
			deny = 0;
	}
	if (want_file_event(a, deny, &w))
		emit_file_event(a, hook, deny, &w, needed, name_of, mnt);
	return lsm_verdict(enforced(a, deny, w.reason));
}

/* The verdict for hooks that see no mount: the walk stays in the object's file system
 * (inode_rights_walk), and objects of kern_mount()ed ones are the agent's own, as in
 * file_open. Returns 0 or -EPERM. */
static __always_inline int decide_inode(const struct agent *a, __u32 hook, struct dentry *d,
					__u32 needed)
{
	struct walk w = {};
	int deny;

	if (!a->has_config) {
		w.reason = AGENTD_REASON_NO_POLICY;
		deny = 1;
	} else {
		inode_rights_walk(a, d, &w);
		deny = (w.rights & needed) != needed && !(w.flags & AGENTD_EVF_INTERNAL);
		if (deny && walk_granted(a, &w, d, needed, GRANT_CLAIM))
			deny = 0;
	}
	if (want_file_event(a, deny, &w))
		emit_file_event(a, hook, deny, &w, needed, d, NULL);
	return lsm_verdict(enforced(a, deny, w.reason));
}

#endif /* AGENTD_RIGHTS_BPF_H */
