/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_HELDQ_H
#define EMU_HELDQ_H

/**
 * @file
 * Packets held until a due time: a binary min-heap on (due time, arrival sequence) of mbuf
 * pointers, sized once (no allocation per packet). Ties leave in arrival order. Shared by the
 * stages that hold packets for a while (delay, impair's delay action): they report the count
 * through their held() op and hand the due packets back through release().
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

struct emu_heldq_item {
	uint64_t due_ns;
	uint64_t seq;
	struct rte_mbuf *m;
};

struct emu_heldq {
	struct emu_heldq_item *heap;
	uint32_t cap; /**< slots */
	uint32_t n;   /**< packets held */
	uint64_t seq; /**< next arrival sequence number */
};

/** Allocate @p cap slots; -ENOMEM. */
int emu_heldq_init(struct emu_heldq *q, uint32_t cap);

/** Free every held packet and the slots; accepts a zeroed or half-built queue. */
void emu_heldq_free(struct emu_heldq *q);

static inline bool
emu_heldq_full(const struct emu_heldq *q)
{
	return q->n >= q->cap;
}

/** Hold @p m until @p due_ns; the caller checked emu_heldq_full(). */
void emu_heldq_push(struct emu_heldq *q, uint64_t due_ns, struct rte_mbuf *m);

/** The earliest due time, UINT64_MAX when empty. */
static inline uint64_t
emu_heldq_next_due(const struct emu_heldq *q)
{
	return q->n == 0 ? UINT64_MAX : q->heap[0].due_ns;
}

/** Take out up to @p cap packets due at @p now_ns, in (due, arrival) order; returns how many. */
uint16_t emu_heldq_release(struct emu_heldq *q, uint64_t now_ns, struct rte_mbuf **pkts,
			   uint16_t cap);

#endif
