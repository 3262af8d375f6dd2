// SPDX-License-Identifier: GPL-2.0
/* The one way to load an agent's policy: its tools registry, the policy, and its digest. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <openssl/evp.h>
#include "policy/load.h"

/* Without its registry, the policy's tools name no definition rather than freed ones. */
static void forget_defs(struct policy *p)
{
	size_t i;

	for (i = 0; i < p->n_tools; i++)
		p->tools[i].def = NULL;
}

int policy_load_full(const struct policy_source *src, struct policy **out,
		     struct tools_registry **regp, struct policy_errors *errs)
{
	struct tools_registry *reg = NULL, none = { .path = (char *)src->no_tools };
	char digest[POLICY_DIGEST_HEX];
	int err = 0;

	*out = NULL;
	if (regp)
		*regp = NULL;
	if (!src->path)
		return -EINVAL;
	if (src->tools && src->tools[0])
		err = tools_load(src->tools, &reg, errs);
	if (!err)
		err = policy_load(src->path, src->vars,
				  reg		  ? reg
				  : src->no_tools ? &none
						  : NULL,
				  out, errs);
	if (!err && src->digest) {
		err = policy_digest(*out, digest);
		if (!err && strcmp(digest, src->digest))
			err = -ESTALE;
	}
	if (err) {
		policy_free(*out);
		*out = NULL;
	}
	/* The policy's tools point into the registry: kept with it when the caller asks. */
	if (regp && !err && reg)
		*regp = reg;
	else
		tools_free(reg);
	if (!regp && *out)
		forget_defs(*out);
	return err;
}

static void digest_str(EVP_MD_CTX *md, const char *s)
{
	EVP_DigestUpdate(md, s, strlen(s) + 1);
}

static void digest_path(EVP_MD_CTX *md, const struct policy_path *pp, __u32 rights)
{
	char buf[80];

	digest_str(md, pp->path);
	snprintf(buf, sizeof(buf), "%u %d %llu %llu", rights, pp->exists,
		 (unsigned long long)pp->dev, (unsigned long long)pp->ino);
	digest_str(md, buf);
}

int policy_digest(const struct policy *p, char hex[POLICY_DIGEST_HEX])
{
	unsigned char out[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	char buf[96];
	size_t k;

	if (!md)
		return -ENOMEM;
	if (!EVP_DigestInit_ex(md, EVP_sha256(), NULL)) {
		EVP_MD_CTX_free(md);
		return -EIO;
	}
	digest_str(md, "agentd layers 3");
	for (k = 0; k < p->n_files; k++)
		digest_path(md, &p->files[k], p->files[k].rights);
	digest_str(md, "exec");
	for (k = 0; k < p->exec.n_allow; k++)
		digest_path(md, &p->exec.allow[k], 0);
	snprintf(buf, sizeof(buf), "%d %d %u %d %d %llx", p->exec.allow_memfd,
		 p->exec.allow_writable, p->net.sockets, p->io_uring, p->audit.log_allows,
		 (unsigned long long)p->capabilities);
	digest_str(md, buf);
	digest_str(md, "env");
	for (k = 0; k < p->n_env; k++)
		digest_str(md, p->env[k]);
	EVP_DigestFinal_ex(md, out, &n);
	EVP_MD_CTX_free(md);
	for (i = 0; i < n && i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", out[i]);
	return 0;
}
