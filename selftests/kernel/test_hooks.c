// SPDX-License-Identifier: GPL-2.0
/*
 * docs/HOOKS.md accounts for every LSM hook of the running kernel: each bpf_lsm_<hook> function of
 * its BTF has a row, marked present in its kernel's column and classified; and every hook the
 * table says an object X.bpf.c enforces has an lsm/<hook> program in the build's object X. The VM
 * tier stages the table at HOOKS_MD and the objects under OBJ_DIR (selftests/vm/vm.sh).
 */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <sys/utsname.h>
#include "harness.h"

#define HOOKS_MD "/agentd/HOOKS.md"
#define OBJ_DIR "/agentd/bpf"
#define MAX_ROWS 1024
#define NCOLS 2 /* 6.1, 6.12 */

struct row {
	char hook[64];
	char col[NCOLS][8];
	char disp[32];
	char obj[64]; /* the first `X.bpf.c` of the last column, or "" */
};

static void trim(char *s)
{
	size_t n = strlen(s), i = 0;

	while (n && (s[n - 1] == ' ' || s[n - 1] == '\n'))
		s[--n] = '\0';
	while (s[i] == ' ')
		i++;
	memmove(s, s + i, n - i + 1);
}

/* A table row "| `hook` | yes | - | disposition | why |" into r; 0 if the line is not one. */
static int parse_row(char *line, struct row *r)
{
	char *cell[NCOLS + 3], *p = line + 1, *bar, *obj, *end;
	int i;

	if (strncmp(line, "| `", 3))
		return 0;
	for (i = 0; i < NCOLS + 3; i++) {
		bar = strchr(p, '|');
		if (!bar)
			return 0;
		*bar = '\0';
		cell[i] = p;
		trim(cell[i]);
		p = bar + 1;
	}
	memset(r, 0, sizeof(*r));
	snprintf(r->hook, sizeof(r->hook), "%.*s", (int)strlen(cell[0]) - 2, cell[0] + 1);
	for (i = 0; i < NCOLS; i++)
		snprintf(r->col[i], sizeof(r->col[i]), "%s", cell[1 + i]);
	snprintf(r->disp, sizeof(r->disp), "%s", cell[NCOLS + 1]);
	obj = strchr(cell[NCOLS + 2], '`');
	end = obj ? strstr(obj, ".bpf.c`") : NULL;
	if (end)
		snprintf(r->obj, sizeof(r->obj), "%.*s", (int)(end - obj - 1), obj + 1);
	return 1;
}

static size_t read_rows(struct row *rows)
{
	FILE *f = fopen(HOOKS_MD, "re");
	char line[2048];
	size_t n = 0;

	if (!f)
		FAIL("%s: %s", HOOKS_MD, strerror(errno));
	while (fgets(line, sizeof(line), f) && n < MAX_ROWS)
		n += parse_row(line, &rows[n]);
	fclose(f);
	return n;
}

static const struct row *find_row(const struct row *rows, size_t n, const char *hook)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(rows[i].hook, hook))
			return &rows[i];
	return NULL;
}

/* The table's column of the running kernel, -1 for a kernel it has none for. */
static int kernel_column(void)
{
	struct utsname u;

	ASSERT_OK(uname(&u));
	if (!strncmp(u.release, "6.1.", 4))
		return 0;
	if (!strncmp(u.release, "6.12.", 5))
		return 1;
	return -1;
}

/* Whether object obj of the build has a BPF LSM program for hook. */
static bool has_program(const char *obj, const char *hook)
{
	char path[256], sec[128], sec_s[128];
	struct bpf_program *p;
	struct bpf_object *o;
	bool found = false;

	snprintf(path, sizeof(path), "%s/%s.bpf.o", OBJ_DIR, obj);
	snprintf(sec, sizeof(sec), "lsm/%s", hook);
	snprintf(sec_s, sizeof(sec_s), "lsm.s/%s", hook);
	o = bpf_object__open_file(path, NULL);
	if (!o)
		return false;
	bpf_object__for_each_program(p, o)
	{
		const char *s = bpf_program__section_name(p);

		found = found || !strcmp(s, sec) || !strcmp(s, sec_s);
	}
	bpf_object__close(o);
	return found;
}

/* One line per problem (the result line holds only the first few), counted in *n. */
static void note(char *buf, size_t sz, unsigned int *n, const char *what, const char *hook)
{
	size_t len = strlen(buf);

	fprintf(stderr, "HOOKS.md: %s %s\n", what, hook);
	if (len + 1 < sz)
		snprintf(buf + len, sz - len, " %s %s;", what, hook);
	(*n)++;
}

TEST(hooks_all_accounted_for)
{
	static struct row rows[MAX_ROWS];
	static char bad[512];
	unsigned int nbad = 0;
	struct btf *btf = btf__load_vmlinux_btf();
	size_t nrows = read_rows(rows);
	int col = kernel_column();
	const struct row *r;
	__u32 id, n;

	ASSERT(btf);
	ASSERT(nrows > 0);
	bad[0] = '\0';
	n = btf__type_cnt(btf);
	for (id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *name = btf__name_by_offset(btf, t->name_off);

		if (!btf_is_func(t) || strncmp(name, "bpf_lsm_", 8))
			continue;
		name += 8;
		r = find_row(rows, nrows, name);
		if (!r)
			note(bad, sizeof(bad), &nbad, "missing", name);
		else if (col >= 0 && strcmp(r->col[col], "yes"))
			note(bad, sizeof(bad), &nbad, "not marked present", name);
		else if (!strcmp(r->disp, "unclassified"))
			note(bad, sizeof(bad), &nbad, "unclassified", name);
		else if (!strcmp(r->disp, "enforced") && (!r->obj[0] || !has_program(r->obj, name)))
			note(bad, sizeof(bad), &nbad,
			     r->obj[0] ? "enforced, no program in its object"
				       : "enforced by no object",
			     name);
	}
	btf__free(btf);
	if (nbad)
		FAIL("docs/HOOKS.md against this kernel: %u hooks not accounted for (each on "
		     "stderr):%s",
		     nbad, bad);
}
