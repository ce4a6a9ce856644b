/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The traffic manager's inner loops for runs of alike packets (emu_tm.c's burst enqueue and
 * one-queue advance take them where they apply): the common packet's steps with one compare
 * of its metadata word, few enough values live that the compiler keeps them all in
 * registers. Each gives the same result as the loop's general steps for the packets it takes
 * (test_tm_same.c compares the two with emu_tm_set_general_only()). Internal to lib/tm.
 */
#ifndef EMU_TM_SAME_H
#define EMU_TM_SAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "lib/pkt/emu_pkt.h"
#include "lib/tm/emu_tm.h"
#include "lib/tm/emu_tm_int.h"

/* out_port, prio and flags of @p meta as one word: out_port in the low 16 bits, prio in bits
 * 16-23, flags in 24-31 (one load where they lie next to each other). */
static inline uint32_t
emu_tm_meta_word(const struct emu_pkt_meta *meta)
{
	uint32_t w;

	_Static_assert(offsetof(struct emu_pkt_meta, prio) ==
			       offsetof(struct emu_pkt_meta, out_port) + 2 &&
		       offsetof(struct emu_pkt_meta, flags) ==
			       offsetof(struct emu_pkt_meta, out_port) + 3,
		       "out_port, prio, flags: one word");
	memcpy(&w, &meta->out_port, sizeof(w));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return w;
#else
	return (uint32_t)meta->out_port | (uint32_t)meta->prio << 16 | (uint32_t)meta->flags << 24;
#endif
}

/* in_port, out_port, prio and flags of @p meta as one word: in_port in bits 0-15, out_port
 * 16-31, prio 32-39, flags 40-47 (emu_tm_meta_word() with in_port below it). */
static inline uint64_t
emu_tm_meta_word64(const struct emu_pkt_meta *meta)
{
	_Static_assert(offsetof(struct emu_pkt_meta, out_port) ==
			       offsetof(struct emu_pkt_meta, in_port) + 2,
		       "in_port, out_port, prio, flags: one word");
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t w;

	memcpy(&w, &meta->in_port, sizeof(w));
	return w & 0xFFFFFFFFFFFFull;
#else
	return (uint64_t)meta->in_port | (uint64_t)emu_tm_meta_word(meta) << 16;
#endif
}

#define EMU_TM_SAME_ANY_PORT UINT32_MAX /* emu_tm_enqueue_same(): not a scan */

/*
 * The inner loop of emu_tm_enqueue_run(): from pkts[i] on, below @p end, the packets its
 * body would queue without changing what it keeps loaded, that is of @p port's run (its
 * scan; EMU_TM_SAME_ANY_PORT: none), of queue @p q, from ingress @p hop (in_port, or hop_in
 * when the first is a fabric hop: then all), whole frames (no snapshot), not MAC control,
 * within the @p room of cells (*acc_cells of it taken) and not crossing XOFF (@p acc_xoff,
 * see there). For each, the body's steps; *f_tail, *acc_cells and *acc_bytes as the body
 * leaves them. Returns the index of the first packet not taken, which the body then decides.
 * One compare of the metadata word and two of the room a packet, and few enough values live
 * that none is kept on the stack (the body's tests for what changes keep about fifteen
 * there).
 */
static inline __attribute__((always_inline)) unsigned int
emu_tm_enqueue_same(struct rte_mbuf **pkts, unsigned int i, uint64_t end, uint64_t now_ns,
		    uint32_t port, unsigned int q, uint32_t hop, uint64_t cb_round,
		    const bool pow2, const bool trace, uint64_t qb, struct rte_mbuf **f_slots,
		    uint32_t *f_tail, uint32_t f_mask, uint64_t room, uint64_t *acc_cells,
		    int64_t acc_xoff, uint64_t *acc_bytes)
{
	const bool scan = port != EMU_TM_SAME_ANY_PORT;
	/* inside the fabric (the first packet a hop: so are the others) the ingress is hop_in */
	const bool fab = i < end && (emu_meta(pkts[i])->flags & EMU_META_HOP);
	const uint64_t flags_mask = EMU_META_MACCTL | EMU_META_SNAP | EMU_META_HOP |
				    (scan ? EMU_META_PARSED : 0);
	const uint64_t mask = (fab ? 0 : 0xFFFFu) | (scan ? 0xFFFFull << 16 : 0) |
			      (uint64_t)(EMU_TM_N_PRIO - 1) << 32 | flags_mask << 40;
	const uint64_t want = (fab ? (uint64_t)EMU_META_HOP << 40 : hop) |
			      (scan ? (uint64_t)port << 16 | (uint64_t)EMU_META_PARSED << 40 : 0) |
			      (uint64_t)q << 32;
	/* slots up to the end of the FIFO's ring: a pointer instead of the tail and its mask */
	const uint32_t wrap = f_mask + 1 - (*f_tail & f_mask);
	struct rte_mbuf **sp = &f_slots[*f_tail & f_mask];
	const unsigned int i0 = i;
	/* what is left of the room and below XOFF, counted down */
	uint64_t room_left;
	int64_t xoff_left, xoff_left0;

	if (*acc_cells > room)
		return i;
	room_left = room - *acc_cells;
	xoff_left = xoff_left0 = acc_xoff - (int64_t)*acc_bytes;
	if (end > (uint64_t)i + wrap)
		end = (uint64_t)i + wrap;
	while (i < end) {
		struct rte_mbuf *m = pkts[i];
		struct emu_pkt_meta *meta = emu_meta(m);
		const uint64_t w = emu_tm_meta_word64(meta);
		const uint32_t len = rte_pktmbuf_pkt_len(m);
		const uint64_t cells = pow2 ? ((uint64_t)len + cb_round) & ~cb_round :
					      ((uint64_t)len + cb_round) / (cb_round + 1) *
						      (cb_round + 1);

		if ((w & mask) != want || (fab && meta->hop_in != hop) ||
		    (scan && meta->pkt.cls == ROCE_CLASS_MAC_CONTROL) ||
		    cells > room_left || (int64_t)len > xoff_left)
			break;
		if (trace) {
			meta->trace.t_enq_ns = now_ns;
			meta->trace.qdepth_bytes = (uint32_t)RTE_MIN(
				qb + *acc_bytes + (uint64_t)(xoff_left0 - xoff_left),
				(uint64_t)UINT32_MAX);
		}
		room_left -= cells;
		xoff_left -= len;
		meta->flags = (uint8_t)(w >> 40) & (uint8_t)~EMU_META_HEADROOM;
		meta->ts_ns = now_ns;
		*sp++ = m;
		i++;
	}
	*f_tail += i - i0;
	*acc_cells = room - room_left;
	*acc_bytes += (uint64_t)(xoff_left0 - xoff_left);
	return i;
}

/* The link's state in emu_tm_advance_run(): free from ns + ps / 1000, ceil that rounded up. */
struct emu_tm_link_at {
	uint64_t ns, ceil;
	uint32_t ps;
};

/*
 * The inner loop of emu_tm_advance_run(): up to @p n_max packets from the queue's slot
 * @p sp on, each the next the loop's TM_ADV_START() would start, as long as it is the
 * common one there: from ingress @p want (its in_port, or hop_in when the first is a fabric
 * hop: then all; not in headroom, a whole frame) of the length memo_len the wire time is
 * known for, and with @p out (the first loop: to the dequeue) leaving by @p limit_ns (now
 * less the propagation delay), else (onto the line) starting by @p limit_ns (now). The caller
 * has made sure that no packet among them changes anything else the loop tracks: that the
 * pause is over before the link is free, that none crosses XON or is marked, and that @p dst
 * (the dequeue's array or the line's slots) and the queue's slots do not wrap. For each: the
 * link's new state in *@p l, the trace's wait, the departure in ts_ns, the packet (and its
 * length) in @p dst. Returns the packets taken. Fewer values live than in TM_ADV_START() and
 * none of its branches for what changes. With @p any_in (the TM; then @p q the queue), the
 * packets may come from any ingress (a fabric port's, from several links), and each gives
 * its bytes back to its lossless ingress as it starts.
 */
static inline __attribute__((always_inline)) uint32_t
emu_tm_advance_same(struct rte_mbuf **sp, uint32_t n_max, uint16_t want, uint32_t memo_len,
		    uint64_t memo_whole_ns, uint32_t memo_rest_ps, struct emu_tm_link_at *l,
		    uint64_t limit_ns, uint64_t delay_ns, const bool out, const bool trace,
		    struct rte_mbuf **dst, uint32_t *dst_lens, struct emu_tm *any_in,
		    unsigned int q)
{
	/* with any_in: packets of any ingress, each giving its bytes back to its own lossless
	 * ingress (the caller has made sure no ingress is in XOFF, so none crosses XON) */
	const bool any = any_in != NULL;
	/* inside the fabric (the first packet a hop: so are the others) the ingress is hop_in */
	const bool fab = !any && n_max > 0 && (emu_meta(sp[0])->flags & EMU_META_HOP);
	const uint64_t mask = any ? (uint64_t)(EMU_META_SNAP | EMU_META_HEADROOM) << 40 :
			      (fab ? 0 : 0xFFFFu) |
			      (uint64_t)(EMU_META_SNAP | EMU_META_HOP | EMU_META_HEADROOM) << 40;
	const uint64_t want_w = any ? 0 : fab ? (uint64_t)EMU_META_HOP << 40 : want;
	uint64_t lns = l->ns, lceil = l->ceil;
	uint32_t lps = l->ps, j;

	for (j = 0; j < n_max; j++) {
		struct rte_mbuf *m = sp[j];
		struct emu_pkt_meta *meta = emu_meta(m);
		const uint64_t w = emu_tm_meta_word64(meta), ts = meta->ts_ns;
		uint64_t start_ns, nl_ns, nl_ceil, sum_ps;
		uint32_t start_ps, nl_ps;
		bool carry;

		if ((w & mask) != want_w || (fab && meta->hop_in != want) ||
		    rte_pktmbuf_pkt_len(m) != memo_len)
			break;
		/* TM_ADV_START(): the link free by the arrival or not */
		if (ts >= lceil) {
			start_ns = ts;
			start_ps = 0;
		} else {
			start_ns = lns;
			start_ps = lps;
		}
		if (!out && (ts >= lceil ? ts : lceil) > limit_ns)
			break;
		sum_ps = start_ps + memo_rest_ps;
		carry = sum_ps >= 1000;
		nl_ns = start_ns + memo_whole_ns + carry;
		nl_ps = (uint32_t)(sum_ps - (carry ? 1000 : 0));
		nl_ceil = nl_ns + (nl_ps != 0);
		if (out && nl_ceil > limit_ns)
			break;
		if (any) {
			const uint16_t hop = (w >> 40 & EMU_META_HOP) ? meta->hop_in : (uint16_t)w;

			if (hop < any_in->n_ports && (any_in->lossless_of[hop] & (1u << q)))
				any_in->ports[hop].ing_bytes[q] -= memo_len;
		}
		lns = nl_ns;
		lps = nl_ps;
		lceil = nl_ceil;
		if (trace)
			meta->trace.wait_ns = start_ns > ts ?
				(uint32_t)RTE_MIN(start_ns - ts, (uint64_t)UINT32_MAX) : 0;
		meta->ts_ns = nl_ceil + delay_ns;
		dst[j] = m;
		if (dst_lens != NULL)
			dst_lens[j] = memo_len;
	}
	l->ns = lns;
	l->ps = lps;
	l->ceil = lceil;
	return j;
}

#endif /* EMU_TM_SAME_H */
