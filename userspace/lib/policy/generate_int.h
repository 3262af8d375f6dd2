/* SPDX-License-Identifier: GPL-2.0 */
/* What generate.c (records) and generate_doc.c (folding, the document) share. */
#ifndef AGENTD_POLICY_GENERATE_INT_H
#define AGENTD_POLICY_GENERATE_INT_H

#include <arpa/inet.h>
#include "policy/generate.h"

struct cand {
	char *path; /* the agent's view: absolute, normalised */
	__u32 rights;
};

struct conn {
	char cidr[INET6_ADDRSTRLEN + 5];
	const char *proto; /* "tcp", "udp", "any" */
	__u16 port;
};

struct gen {
	json_t *current; /* the policy as written */
	json_t *doc; /* the output being built */
	struct gen_opts opts;
	struct policy_var *vars; /* the policy's, --var, then tmp and home */
	size_t nvars;
	struct cand *files;
	size_t nfiles;
	char **exec;
	size_t nexec;
	struct conn *conns;
	size_t nconns;
	unsigned int sockets; /* bit per sock_names[] */
	__u64 caps;
	bool bind;
	struct gen_skip *skips;
	size_t nskips;
};

#define GEN_RIGHTS 8
#define GEN_FAMILIES 5

/* Rights by bit (AGENTD_RIGHT_*), and the socket families sock_create records name. */
extern const char *const gen_right_names[GEN_RIGHTS];
struct gen_family {
	unsigned int family;
	const char *name;
};
extern const struct gen_family gen_families[GEN_FAMILIES];

/* path is dir or inside its tree */
bool gen_under(const char *path, const char *dir);
/* p's directory ("/" for "/x") */
void gen_parent_of(const char *p, char *buf, size_t bufsz);
/* o's string member key, "" when absent or not a string */
const char *gen_str_at(const json_t *o, const char *key);
/* Adds rights on path: 1 added or widened, 0 already held, -ENOMEM. */
int gen_add_file(struct gen *g, const char *path, __u32 rights);

#endif
