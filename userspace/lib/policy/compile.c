// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/capability.h>
#include "policy/compile.h"

/* Adds rights for the object at pp, merging with an earlier rule on the same object. */
static void add_file(struct compiled *c, const struct policy_path *pp, __u32 rights)
{
	size_t i;

	if (!pp->exists)
		return;
	for (i = 0; i < c->rs.nfiles; i++) {
		if (c->objects[i].dev == pp->dev && c->objects[i].ino == pp->ino) {
			c->files[i].rights |= rights;
			return;
		}
	}
	c->objects[i] = (struct file_object){ pp->dev, pp->ino };
	c->files[i] = (struct file_rule){ pp->path, rights };
	c->rs.nfiles++;
}

static int compile_files(const struct policy *p, struct compiled *c)
{
	size_t n = p->n_files + p->exec.n_allow, i;

	c->files = calloc(n ? n : 1, sizeof(*c->files));
	c->objects = calloc(n ? n : 1, sizeof(*c->objects));
	if (!c->files || !c->objects)
		return -ENOMEM;
	for (i = 0; i < p->n_files; i++)
		add_file(c, &p->files[i], p->files[i].rights);
	for (i = 0; i < p->exec.n_allow; i++)
		add_file(c, &p->exec.allow[i], AGENTD_RIGHT_EXEC | AGENTD_RIGHT_READ);
	c->rs.files = c->files;
	c->rs.objects = c->objects;
	return 0;
}

static void connect_key(const struct policy_connect *pc, struct agentd_addr_key *k)
{
	memset(k, 0, sizeof(*k));
	if (pc->family == AF_INET) {
		k->addr[10] = k->addr[11] = 0xff;
		memcpy(k->addr + 12, pc->addr, 4);
		k->prefixlen = 96 + pc->prefix_len;
	} else {
		memcpy(k->addr, pc->addr, 16);
		k->prefixlen = pc->prefix_len;
	}
}

static __u32 connect_protocols(const struct policy_connect *pc)
{
	if (pc->protocol == IPPROTO_TCP)
		return AGENTD_PROTO_TCP;
	if (pc->protocol == IPPROTO_UDP)
		return AGENTD_PROTO_UDP;
	return AGENTD_PROTO_TCP | AGENTD_PROTO_UDP;
}

/* A rule's nranges of 0 means every port: a rule for the whole range absorbs the others. */
static int add_connect(struct compiled *c, const struct policy_connect *pc, size_t index)
{
	bool every_port = pc->port_lo == 1 && pc->port_hi == 65535;
	struct agentd_addr_key k;
	struct net_rule *r;
	size_t i;

	connect_key(pc, &k);
	for (i = 0; i < c->rs.nnet; i++)
		if (!memcmp(&c->net[i].cidr, &k, sizeof(k)))
			break;
	r = &c->net[i];
	if (i == c->rs.nnet) {
		r->cidr = k;
		r->protocols = connect_protocols(pc);
		c->rs.nnet++;
		if (every_port)
			return 0;
	} else if (r->protocols != connect_protocols(pc)) {
		snprintf(c->error, sizeof(c->error),
			 "network.connect[%zu]: rules for one network must name the same protocol",
			 index);
		return -EINVAL;
	} else if (!r->nranges || every_port) {
		r->nranges = 0;
		return 0;
	}
	if (r->nranges == AGENTD_NET_PORT_RANGES) {
		snprintf(c->error, sizeof(c->error),
			 "network.connect[%zu]: more than %d port ranges for one network", index,
			 AGENTD_NET_PORT_RANGES);
		return -EINVAL;
	}
	r->port_lo[r->nranges] = pc->port_lo;
	r->port_hi[r->nranges] = pc->port_hi;
	r->nranges++;
	return 0;
}

static int compile_net(const struct policy *p, struct compiled *c)
{
	size_t i;
	int err;

	c->net = calloc(p->net.n_connect ? p->net.n_connect : 1, sizeof(*c->net));
	if (!c->net)
		return -ENOMEM;
	c->rs.net = c->net;
	for (i = 0; i < p->net.n_connect; i++) {
		err = add_connect(c, &p->net.connect[i], i);
		if (err)
			return err;
	}
	return 0;
}

static void compile_sockets(const struct policy *p, struct ruleset *rs)
{
	static const struct {
		__u32 policy;
		int family;
	} families[] = {
		{ POLICY_SOCK_INET, AF_INET },	   { POLICY_SOCK_INET6, AF_INET6 },
		{ POLICY_SOCK_UNIX, AF_UNIX },	   { POLICY_SOCK_NETLINK, AF_NETLINK },
		{ POLICY_SOCK_PACKET, AF_PACKET },
	};
	size_t i;

	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (p->net.sockets & families[i].policy)
			rs->sock_families |= 1ULL << families[i].family;
	rs->sock_types = 1U << SOCK_STREAM | 1U << SOCK_DGRAM | 1U << SOCK_SEQPACKET;
	if (p->net.sockets & POLICY_SOCK_RAW)
		rs->sock_types |= 1U << SOCK_RAW;
}

int policy_compile(const struct policy *p, struct compiled *c)
{
	int err;

	memset(c, 0, sizeof(*c));
	if (p->exec.allow_memfd)
		c->rs.flags |= AGENTD_AGENT_ALLOW_MEMFD_EXEC;
	if (p->exec.allow_writable)
		c->rs.flags |= AGENTD_AGENT_ALLOW_WRITABLE_EXEC;
	if (p->net.bind)
		c->rs.flags |= AGENTD_AGENT_ALLOW_BIND;
	if (p->net.sockets & POLICY_SOCK_ICMP)
		c->rs.flags |= AGENTD_AGENT_ALLOW_ICMP;
	if (p->audit.log_allows)
		c->rs.flags |= AGENTD_AGENT_LOG_ALLOWS;
	if (p->mode == POLICY_MODE_SHADOW)
		c->rs.flags |= AGENTD_AGENT_SHADOW;
	c->rs.capabilities = p->capabilities;
	/* Creating a device takes both the grant and the kernel's own capability check. */
	if (p->devices.create) {
		c->rs.flags |= AGENTD_AGENT_ALLOW_DEVICES;
		c->rs.capabilities |= 1ULL << CAP_MKNOD;
	}
	compile_sockets(p, &c->rs);
	err = compile_files(p, c);
	if (!err)
		err = compile_net(p, c);
	if (err == -ENOMEM)
		snprintf(c->error, sizeof(c->error), "out of memory");
	return err;
}

void compiled_free(struct compiled *c)
{
	free(c->files);
	free(c->objects);
	free(c->net);
	c->files = NULL;
	c->objects = NULL;
	c->net = NULL;
}
