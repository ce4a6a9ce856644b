/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NODE_TUNE_H
#define NODE_TUNE_H

/**
 * @file
 * NCCL's algorithm and protocol choice for an all-reduce (src/graph/tuning.cc, NCCL 2.30.7, as
 * NODE.md 2 quotes it): for each (algorithm, protocol) time = latency + bytes / (1000 x
 * algorithm bandwidth) us, the smallest wins. Ring and Tree with LL, LL128 and Simple; the
 * latencies are NCCL's formulas with its constants; the bandwidths follow its tables from a
 * simplified graph (node_tune_in: 2 channels per NIC, each channel at the NIC's share), which
 * is where this departs from NCCL (docs/node.md has the list). Pure arithmetic.
 */

#include <stdint.h>

#include "lib/node/node_model.h"

enum node_algo { NODE_ALGO_TREE, NODE_ALGO_RING, NODE_N_ALGOS };
enum node_proto { NODE_PROTO_LL, NODE_PROTO_LL128, NODE_PROTO_SIMPLE, NODE_N_PROTOS };

struct node_tune_in {
	unsigned int nodes;		/**< processes */
	unsigned int ppn;		/**< GPUs (ranks) per node */
	const struct node_cfg *node;
	const struct node_eval *eval;
};

/** NCCL's latency of (algo, proto) for an all-reduce, us (the x1.4 Simple ring factor for
 * sizes of >= 64 bytes per channel and rank included when @p bytes says so). */
double node_tune_lat_us(enum node_algo a, enum node_proto p, const struct node_tune_in *in,
			uint64_t bytes);

/** The algorithm bandwidth NCCL would assume for (algo, proto), GB/s (0: not enabled). */
double node_tune_bw_GBps(enum node_algo a, enum node_proto p, const struct node_tune_in *in);

/** The channels the simplified graph gives: 2 per NIC (NCCL's duplication), at least 2. */
unsigned int node_tune_channels(const struct node_tune_in *in);

/**
 * The (algo, proto) with the smallest time for @p bytes; @p times (may be NULL) gets every
 * candidate's time in us, < 0 where not enabled. Returns 0.
 */
int node_tune_pick(const struct node_tune_in *in, uint64_t bytes, enum node_algo *a,
		   enum node_proto *p, double times[NODE_N_ALGOS][NODE_N_PROTOS]);

const char *node_algo_name(enum node_algo a);
const char *node_proto_name(enum node_proto p);

#endif
