/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_NETDENY_H
#define AGENTD_NETDENY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include "agentd/abi.h"

/*
 * The structural deny list: destinations no agent policy can open (loopback, private, shared,
 * link-local and metadata, multicast, broadcast, reserved), each IPv4 range in every form an IPv6
 * socket can reach it by: IPv4-mapped (the key form itself), NAT64 (64:ff9b::/96) and 6to4
 * (2002::/16). Keys are LPM keys for the structural_deny map (IPv4 kept IPv4-mapped).
 * Fills out with up to max keys; returns how many, or -ENOSPC.
 */
int netdeny_default(struct agentd_addr_key *out, size_t max);

/* Parses "a.b.c.d/n" or "x::y/n" into an LPM key (IPv4 as IPv4-mapped). Host bits must be zero.
 * Returns 0 or -EINVAL. */
int netdeny_parse_cidr(const char *cidr, struct agentd_addr_key *key);

/*
 * Whether addr (16 bytes, IPv4 as IPv4-mapped) is in the structural deny list, in any of its
 * forms: the check the kernel makes, for connections agentd makes itself (the egress proxy).
 */
bool netdeny_addr_denied(const __u8 addr[16]);
/* The same for an AF_INET or AF_INET6 address; any other family is denied. */
bool netdeny_sockaddr_denied(const struct sockaddr *sa);

#endif
