/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which boundary (boundary.h) a gap item (layers.h) leaves open: what `agentctl drill` compares
 * with what it finds escaped (docs/DRILL.md).
 */
#ifndef AGENTD_GAP_BOUNDARY_H
#define AGENTD_GAP_BOUNDARY_H

#include "sandbox/layers.h"

/* The boundary of it, or -1 for an item no drill crosses ("agentctl attach": the drill runs as
 * agentctl run does). */
int gap_item_boundary(const struct gap_item *it);

/* 1 << boundary for each item of g. */
unsigned int gap_boundaries(const struct gap *g);

#endif
