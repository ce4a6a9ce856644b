/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_REORDER_PRIV_H
#define EMU_REORDER_PRIV_H

/*
 * The reorder stage's internals, shared by reorder.c (its packet path) and reorder_config.c
 * (its keys, init, needs and free): the node, QP and ready ring layouts and their sizes.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_common.h>

#include "lib/base/emu_keys.h"
#include "lib/stage/emu_match.h"

#include "stages.h"

#define REORDER_NIL UINT32_MAX
#define REORDER_WAYS 8
#define REORDER_CHUNK 32 /* packets whose QP entries are prefetched together */
#define REORDER_PSN_MASK 0xffffffu
#define REORDER_PSN_HALF 0x800000u
#define REORDER_TIMEOUT_US_DEFAULT 100.0
#define REORDER_MAX_HELD_DEFAULT 16384 /* 100 us at 400 Gb/s is 4883 frames of 1 KB */
#define REORDER_MAX_QPS_DEFAULT 4096   /* ConWeave's Tofino2 flow table */
#define REORDER_READY_SLACK 1024 /* ready ring beyond 2 x max_held_pkts */

struct reorder_node {
	struct rte_mbuf *m;
	uint64_t t_hold_ns;
	uint32_t psn, qp;
	uint32_t prev, next;   /* the QP's held packets by PSN; next links the free list */
	uint32_t older, newer; /* every held packet by arrival */
};
/* Node lists are circular through sentinel nodes after the max_held packet nodes: one for
 * the arrival order (REORDER_ARR), one per QP entry (reorder_qs()): no end cases. */
#define REORDER_ARR(rp) ((rp)->max_held)
#define reorder_qs(rp, qi) ((rp)->max_held + 1 + (qi))
#define reorder_oldest(rp) (&(rp)->nodes[(rp)->nodes[REORDER_ARR(rp)].newer])

struct reorder_qp {
	uint8_t ip[16];
	uint32_t qpn, sig;   /* sig 0: free entry */
	/* expected and n_held, then n_ready and sync: two 8-byte words that
	 * reorder_in_order_idle() tests at once */
	uint32_t expected;   /* E (below 2^24) */
	uint32_t n_held;     /* in the buffer */
	uint32_t n_ready;    /* in the ready ring */
	uint32_t sync;       /* 1: E unknown, the next request sets it; else 0 */
	uint32_t gen;      /* bumped when the entry is reused: ring entries of the old QP */
	uint64_t used;     /* LRU stamp */
} __rte_cache_aligned; /* one line per lookup */
_Static_assert(offsetof(struct reorder_qp, n_held) == offsetof(struct reorder_qp, expected) + 4 &&
	       offsetof(struct reorder_qp, n_ready) == offsetof(struct reorder_qp, expected) + 8 &&
	       offsetof(struct reorder_qp, sync) == offsetof(struct reorder_qp, expected) + 12,
	       "reorder_in_order_idle() reads expected..sync as two words");

struct reorder_ready {
	struct rte_mbuf *m;
	uint32_t qp, gen;
};

struct reorder_priv {
	uint8_t is_request[256]; /* reorder_is_request() of every opcode, for the per-packet test */
	uint32_t port_mask, start_psn;
	bool has_match, policy_drop, start_first;
	struct emu_match match;
	uint64_t timeout_ns, stamp, ready_since_ns;
	struct reorder_node *nodes;
	uint32_t max_held, n_used, free_head, max_depth;
	struct reorder_qp *qps;
	uint32_t bucket_mask, n_qps;
	uint32_t *hints;     /* direct-mapped: entry + 1 of a QP seen at reorder_hint(), or 0 */
	uint32_t hint_mask;  /* hint slots - 1 */
	struct reorder_ready *ready;
	uint32_t ready_mask, ready_head, ready_n;
};

/* reorder_config.c */
extern const char *const reorder_keys[];
extern const struct emu_key_table reorder_key_table;
int reorder_init(void *priv, const json_t *cfg, const struct emu_stage_env *env,
		 struct emu_err *err);
int reorder_needs(const json_t *cfg, const struct emu_stage_env *env,
		  struct emu_stage_needs *needs, struct emu_err *err);
void reorder_free(void *priv);

#endif
