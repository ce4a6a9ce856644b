/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCEGEN_RG_SCHED_H
#define ROCEGEN_RG_SCHED_H

/**
 * @file
 * Collectives as schedules: a list of transfers grouped in steps, pure data (no ports, no
 * clock), so that the same schedule drives rocegen on the wire and a unit test in memory.
 *
 * Every rank has a data buffer (the collective's input and output, `size` bytes of floats) and a
 * landing area. A transfer copies [src_off, src_off + len) of the source rank's data into the
 * destination's landing area at land_off (an RDMA WRITE when the ranks are in different
 * processes, a memory copy otherwise). At the end of its step the destination applies it:
 * REDUCE adds the landed floats into data at dst_off, COPY copies them there, LAND leaves them
 * in the landing area (point-to-point, incast). Landing offsets are distinct within an
 * iteration, so a fast sender never overwrites bytes its receiver has not applied yet; data
 * changes only at step ends, when the rank's own writes are acknowledged, so a write being
 * (re)transmitted always reads stable bytes.
 */

#include <stdbool.h>
#include <stdint.h>

#define RG_MAX_RANKS 64

enum rg_coll {
	RG_COLL_P2P,		/**< rank g -> rank g + ranks_per_proc (the next process) */
	RG_COLL_ALLREDUCE,	/**< sum; ring or NCCL's double binary tree */
	RG_COLL_ALLGATHER,	/**< ring */
	RG_COLL_REDUCESCATTER,	/**< ring; rank g ends with chunk g summed */
	RG_COLL_BROADCAST,	/**< pipelined ring from the root */
	RG_COLL_ALLTOALL,	/**< chunk j of rank g to chunk g of rank j, all at once */
	RG_COLL_INCAST,		/**< every other rank writes its buffer to the root, all at once */
	RG_COLL_MAX
};

enum rg_algo {
	RG_ALGO_RING,
	RG_ALGO_TREE,
	RG_ALGO_HIER,	/**< all-reduce: intra-node RS, inter-node AR per rail, intra-node AG */
};

enum rg_kind {
	RG_LAND,
	RG_COPY,
	RG_REDUCE,
};

struct rg_xfer {
	uint32_t step;
	uint32_t seq;		/**< order of creation: ties within a step */
	uint16_t src, dst;	/**< global ranks */
	uint8_t kind;		/**< enum rg_kind */
	uint64_t src_off;	/**< into the source's data */
	uint64_t dst_off;	/**< into the destination's data (COPY, REDUCE) */
	uint64_t len;
	uint64_t land_off;	/**< into the destination's landing area */
};

struct rg_sched {
	enum rg_coll coll;
	enum rg_algo algo;
	unsigned int n_ranks;
	unsigned int root;
	uint64_t size;			/**< bytes of data per rank */
	unsigned int n_steps;
	struct rg_xfer *x;		/**< sorted by (step, seq) */
	uint32_t n, cap;
	uint32_t *step_first;		/**< n_steps + 1 entries: x[step_first[s]..step_first[s+1]) */
	uint64_t land_len[RG_MAX_RANKS];	/**< landing bytes per rank per iteration */
};

/** Name of a collective ("allreduce", ...) and its inverse (-1 if unknown). */
const char *rg_coll_name(enum rg_coll c);
int rg_coll_by_name(const char *name);

/** Name of an algorithm ("ring", "tree", "hier"). */
const char *rg_algo_name(enum rg_algo a);

/** Bytes a size is rounded down to (a multiple of 64 x ranks bytes, like nccl-tests' count). */
uint64_t rg_sched_round(uint64_t size, unsigned int n_ranks);

/**
 * Build the schedule of @p coll over @p n_ranks ranks for @p size bytes per rank (rounded by
 * rg_sched_round, must stay > 0). Returns 0, -EINVAL (bad arguments) or -ENOMEM.
 */
int rg_sched_build(struct rg_sched *s, enum rg_coll coll, enum rg_algo algo,
		   unsigned int n_ranks, unsigned int root, uint64_t size);

/**
 * The hierarchical all-reduce of @p n_ranks ranks, @p per_node to a node (ranks p x per_node
 * .. + per_node - 1 on node p): a ring reduce-scatter inside each node (per_node - 1 steps,
 * rank k ends with chunk k of S / per_node reduced over its node), a ring all-reduce of chunk
 * k among the ranks k of every node (rail k: 2 (nodes - 1) steps of S / n_ranks), and a ring
 * all-gather inside each node. Only the rails' steps cross nodes: 2 S (nodes - 1) / nodes
 * bytes per node and iteration, where the flat ring puts 2 S (R - 1) / R. 0, -EINVAL, -ENOMEM.
 */
int rg_sched_build_hier(struct rg_sched *s, unsigned int n_ranks, unsigned int per_node,
			uint64_t size);

void rg_sched_free(struct rg_sched *s);

/** nccl-tests' bus bandwidth factor (busbw = algbw x factor); incast: R - 1 (into the root). */
double rg_busbw_factor(enum rg_coll coll, unsigned int n_ranks);

/** Whether the collective reduces (the table's redop column). */
bool rg_coll_reduces(enum rg_coll coll);

/** The value rank g's data holds at float index i before the collective. */
float rg_init_value(enum rg_coll coll, unsigned int n_ranks, unsigned int root, uint64_t size,
		    unsigned int g, uint64_t i);

/**
 * Check one rank's result: data (size bytes) and landing area (land_len bytes). Returns the
 * number of floats that differ from what the collective must leave (0: correct); *first_bad
 * gets the first differing float index in data (or UINT64_MAX).
 */
uint64_t rg_sched_verify(const struct rg_sched *s, unsigned int g, const float *data,
			 const float *land, uint64_t *first_bad);

/**
 * NCCL's double binary tree (ncclGetBtree / ncclGetDtree): parent and children of @p rank in
 * tree @p t (0 or 1); -1 where there is none.
 */
void rg_dtree(unsigned int n_ranks, unsigned int rank, unsigned int t, int *up, int *down0,
	      int *down1);

/**
 * The bytes of a message of @p len bytes that QP @p q of the @p nq QPs of a connection carries,
 * as [*off, *off + *plen), for NCCL_IB_SPLIT_DATA_ON_QPS: @p split 1: the message is cut into
 * nq parts of DIVUP(DIVUP(len, nq), 128) x 128 bytes (the last ones shorter or empty), one per
 * QP, as NCCL's net_ib does; @p split 0 (NCCL's default since 2.20): the whole message goes
 * on QP seq mod nq, @p seq counting the connection's messages. An empty share has *plen 0.
 */
void rg_qp_share(uint64_t len, unsigned int nq, bool split, uint64_t seq, unsigned int q,
		 uint64_t *off, uint64_t *plen);

#endif
