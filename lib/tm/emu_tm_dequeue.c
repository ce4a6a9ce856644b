/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The traffic manager's dequeue: the scheduler (strict or DWRR, paused queues skipped,
 * emu_tm_pick()), the link (exact serialisation in ns + ps), the delay line, and
 * emu_tm_dequeue(). The one-queue advance loop is the general advance again with the port's
 * state in locals and falls back to it; kept next to it so that both copies are read (and
 * changed) together, and so that they inline the static helpers of emu_tm_int.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "lib/base/emu_json.h"
#include "lib/proto/roce_rewrite.h"
#include "lib/tm/emu_tm_int.h"
#include "lib/tm/emu_tm_same.h"

/*
 * The queue whose head starts next and when: among the queues whose head could start
 * earliest, the control queue first, then the scheduler's choice. Returns -1 when
 * every queue is empty.
 */
int
emu_tm_pick(struct emu_tm_port *p, uint64_t *start_ns, uint32_t *start_ps, bool commit)
{
	uint64_t s_ns[EMU_TM_N_Q], best_ns = UINT64_MAX;
	uint32_t s_ps[EMU_TM_N_Q], best_ps = 0;
	unsigned int q, eligible = 0;
	uint32_t left = p->nonempty;
	int chosen = -1;

	/* only the queues that hold packets: most of the time one or two of nine */
	while (left != 0) {
		q = (unsigned int)__builtin_ctz(left);
		left &= left - 1;
		emu_tm_start(p, q, &s_ns[q], &s_ps[q]);
		if (s_ns[q] < best_ns || (s_ns[q] == best_ns && s_ps[q] < best_ps)) {
			best_ns = s_ns[q];
			best_ps = s_ps[q];
			eligible = 0;
		}
		if (s_ns[q] == best_ns && s_ps[q] == best_ps)
			eligible |= 1u << q;
	}
	if (eligible == 0)
		return -1;
	*start_ns = best_ns;
	*start_ps = best_ps;
	if (eligible & (1u << EMU_TM_CTRL_Q))
		return EMU_TM_CTRL_Q;
	if (p->cfg.scheduler == EMU_TM_SCHED_STRICT || !commit)
		return 31 - __builtin_clz(eligible);
	/* DWRR: the turn stays with a queue while its deficit covers its head; a queue that
	 * runs empty loses its deficit. Terminates: every round adds weight x quantum. */
	for (;;) {
		q = p->rr;
		if (eligible & (1u << q)) {
			const struct emu_tm_fifo *f = &p->q[q];
			uint32_t len = emu_wire_len(f->slots[f->head & f->mask]);

			if (!p->rr_fresh) {
				p->deficit[q] +=
					(int64_t)p->cfg.weights[q] * EMU_TM_DWRR_QUANTUM_BYTES;
				p->rr_fresh = true;
			}
			if (p->deficit[q] >= (int64_t)len) {
				p->deficit[q] -= len;
				chosen = (int)q;
				break;
			}
		} else if (emu_tm_fifo_count(&p->q[q]) == 0) {
			p->deficit[q] = 0;
		}
		p->rr = (uint8_t)((q + 1) % EMU_TM_N_PRIO);
		p->rr_fresh = false;
	}
	return chosen;
}

/*
 * Where emu_tm_dequeue() collects what leaves (emu_tm_advance_run()): a packet that starts
 * while the delay line is empty and leaves by now goes here instead of onto the line, from
 * which the dequeue would take it at once (same packet, same order, same time).
 */
struct emu_tm_out {
	struct rte_mbuf **pkts;
	uint32_t *lens; /* each packet's emu_wire_len(), when not NULL */
	uint16_t max;
	uint16_t n;
	uint64_t bytes;
};

/*
 * emu_tm_port_advance() while data queue @p q alone holds packets under the strict scheduler
 * (what emu_tm_pick() would choose every time): the same steps, with the link's, the queue's
 * and the buffer's running state in locals (see emu_tm_enqueue_run()). Returns true when
 * the queue ran empty, false when its head may not start yet or the delay line is full.
 */
static inline __attribute__((always_inline)) bool
emu_tm_advance_run(struct emu_tm *tm, struct emu_tm_port *p, unsigned int q, uint64_t now_ns,
		   struct emu_rng *rng, const bool pow2, const bool own, const bool lens,
		   const bool trace, struct emu_tm_out *o)
{
	struct emu_tm_fifo *f = &p->q[q], *w = &p->wire;
	const uint32_t cb = tm->buf.cell_bytes, f_mask = f->mask, w_mask = w->mask;
	const uint64_t cb_round = (uint64_t)cb - 1, cb_mask = ~cb_round; /* pow2 cells */
	struct rte_mbuf **const f_slots = f->slots, **const w_slots = w->slots;
	const uint64_t pause_ns = p->pause_until_ns[q], rate = p->cfg.rate_bps;
	const uint64_t delay_ns = p->cfg.delay_ns;
	/* ECN at dequeue: a queue left longer than kmin may be marked (no limit: never) */
	const uint64_t ecn_above = p->cfg.ecn.enabled && !p->cfg.ecn.at_enqueue ?
					   p->cfg.ecn.kmin_bytes : UINT64_MAX;
	const unsigned int n_ports = tm->n_ports;
	const bool general_only = tm->general_only;
	uint64_t link_ns = p->link_free_ns, busy_ps = p->busy_ps, qb = p->q_bytes[q];
	const uint64_t qb0 = qb; /* qb0 - qb: the bytes that left */
	/* what leaves the queue's cells (not headroom) and the buffer's, summed here and taken
	 * off once at the end */
	uint64_t left_cells = 0, memo_ps = p->memo_wire_ps;
	uint32_t link_ps = p->link_free_ps, head = f->head, tail = f->tail, w_tail = w->tail;
	uint64_t link_ceil = link_ns + (link_ps != 0); /* link free, rounded up to the ns */
	uint32_t memo_len = p->memo_len;
	/* Each packet started since memo_head had memo_len bytes: busy_ps grows by memo_ps and
	 * left_cells by memo_cells for each (added when the length changes and at the end);
	 * a packet in headroom takes its cells back off left_cells. */
	uint32_t memo_head = head;
	uint64_t memo_cells = pow2 ? ((uint64_t)memo_len + cb_round) & cb_mask :
				     ((uint64_t)memo_len + cb - 1) / cb * cb;
	uint64_t memo_whole_ns = memo_ps / 1000;
	uint32_t memo_rest_ps = (uint32_t)(memo_ps % 1000);
	const uint32_t w_head = w->head;
	/* The lossless ingress port of the last packet (packets of one run mostly share it).
	 * in_hop: the hop it is for. Its bytes of priority q were ing when it was loaded, with
	 * the queue at in_qb bytes: every packet since is its, so its bytes now are
	 * ing - (in_qb - qb), stored back when the port changes and at the end. */
	struct emu_tm_port *in = NULL;
	uint32_t in_hop = UINT32_MAX;
	/* While the port is in XOFF, it goes below its XON threshold when ing - (in_qb - qb) <
	 * xon, that is qb < qb_xon = xon - ing + in_qb (as signed: ing - (in_qb - qb) is never
	 * negative, ing - in_qb may be); INT64_MIN: never. */
	uint64_t ing = 0, in_qb = 0;
	int64_t qb_xon = INT64_MIN;
	bool empty = false;
	/* o's count and bytes in locals (o may alias nothing here, but the compiler cannot know) */
	uint16_t o_n = o != NULL ? o->n : 0, o_max = o != NULL ? o->max : 0; /* 0: none */
	struct rte_mbuf **const o_pkts = o != NULL ? o->pkts : NULL;
	uint32_t *const o_lens = o != NULL ? o->lens : NULL;
	uint64_t wire_bytes = 0; /* what went onto the line; the rest of what left went to o */
	struct rte_mbuf *m;
	struct emu_pkt_meta *meta;
	uint64_t start_ns, arrival_ns, ts_ns, sum_ps, dep_ns;
	uint32_t start_ps, len, carry;
	uint32_t hop;
	uint8_t flags;

	if (p->memo_rate_bps != rate)
		memo_len = UINT32_MAX; /* no frame is that long: recompute the first */
	/*
	 * TM_ADV_START(): start the head packet (its departure in dep_ns), or goto stop when the
	 * queue is empty or its head not due. Then it goes to o (TM_ADV_OUT()) or onto the line
	 * (TM_ADV_WIRE()). Two loops: while o takes what leaves by now with nothing on the line
	 * ahead of it, then onto the line; the line's room is tested once first, then where it
	 * fills.
	 */
#define TM_ADV_START() do { \
		if (head == tail) { \
			empty = true; \
			goto stop; \
		} \
		m = f_slots[head & f_mask]; \
		meta = emu_meta(m); \
		/* emu_tm_start() */ \
		ts_ns = meta->ts_ns; \
		arrival_ns = ts_ns; \
		if (pause_ns > arrival_ns) \
			arrival_ns = pause_ns; \
		/* the link is free by the arrival when link_ns + link_ps / 1000 <= arrival_ns, \
		 * that is link_ceil <= arrival_ns; the start is due when its ceiling is <= now */ \
		if (arrival_ns >= link_ceil) { \
			if (arrival_ns > now_ns) \
				goto stop; \
			start_ns = arrival_ns; \
			start_ps = 0; \
		} else { \
			if (link_ceil > now_ns) \
				goto stop; \
			start_ns = link_ns; \
			start_ps = link_ps; \
		} \
		flags = meta->flags; \
		len = (flags & EMU_META_SNAP) ? meta->wire_len : rte_pktmbuf_pkt_len(m); \
		if (unlikely(len != memo_len)) { \
			busy_ps += (uint64_t)(head - memo_head) * memo_ps; \
			left_cells += (uint64_t)(head - memo_head) * memo_cells; \
			memo_head = head; \
			memo_len = len; \
			memo_cells = pow2 ? ((uint64_t)len + cb_round) & cb_mask : \
					    ((uint64_t)len + cb - 1) / cb * cb; \
			memo_ps = emu_tm_wire_ps(len, rate); \
			memo_whole_ns = memo_ps / 1000; \
			memo_rest_ps = (uint32_t)(memo_ps % 1000); \
		} \
		/* (start_ps + memo_ps) / 1000 and % 1000 without a division: start_ps and \
		 * memo_rest_ps are both below 1000 */ \
		sum_ps = start_ps + memo_rest_ps; \
		carry = sum_ps >= 1000; \
		link_ns = start_ns + memo_whole_ns + carry; \
		link_ps = (uint32_t)(sum_ps - (carry ? 1000 : 0)); \
		link_ceil = link_ns + (link_ps != 0); \
		head++; \
		/* emu_tm_unaccount() */ \
		hop = (flags & EMU_META_HOP) ? meta->hop_in : meta->in_port; \
		if (unlikely(hop != in_hop)) { \
			if (in != NULL) \
				in->ing_bytes[q] = ing - (in_qb - qb); \
			in_hop = hop; \
			in = hop < n_ports && (tm->lossless_of[hop] & (1u << q)) ? \
				     &tm->ports[hop] : NULL; \
			qb_xon = INT64_MIN; \
			if (in != NULL) { \
				ing = in->ing_bytes[q]; \
				in_qb = qb; \
				if (in->xoff[q]) \
					qb_xon = (int64_t)in->cfg.pfc.xon_bytes - (int64_t)ing + \
						 (int64_t)in_qb; \
			} \
		} \
		qb -= len; \
		/* no lossless ingress: the packet cannot be in headroom */ \
		if (unlikely(flags & EMU_META_HEADROOM) && in != NULL) { \
			in->hr_cells[q] -= memo_cells; \
			left_cells -= memo_cells; \
		} \
		/* emu_tm_ingress_release(); qb_xon is INT64_MIN without a lossless ingress */ \
		if (unlikely((int64_t)qb < qb_xon)) { \
			in->ing_bytes[q] = ing - (in_qb - qb); \
			emu_tm_xon(tm, in, q, start_ns); \
			qb_xon = INT64_MIN; \
		} \
		/* the queue length the packet leaves behind */ \
		if (qb > ecn_above) \
			emu_tm_ecn(p, m, qb, rng); \
		if (trace) \
			meta->trace.wait_ns = start_ns > ts_ns ? \
				(uint32_t)RTE_MIN(start_ns - ts_ns, (uint64_t)UINT32_MAX) : 0; \
		/* departure = finish rounded up to the ns, plus the propagation delay */ \
		dep_ns = link_ceil + delay_ns; \
		meta->ts_ns = dep_ns; \
	} while (0)
#define TM_ADV_OUT() do { if (lens) o_lens[o_n] = len; o_pkts[o_n++] = m; } while (0)
#define TM_ADV_WIRE() do { \
		w_slots[w_tail++ & w_mask] = m; \
		wire_bytes += len; \
		if (w_tail - w_head > w_mask) \
			goto stop; \
	} while (0)
	/* emu_tm_advance_same() for what it may take: nothing but the link, the queue's length
	 * and where the packets go changes (the pause over before the link is free, no XON
	 * crossed, no mark); out: to o, else onto the line, the line kept below full */
#define TM_ADV_SAME(is_out) do { \
		uint32_t n_ = tail - head, k_; \
		struct emu_tm_link_at l_ = { .ns = link_ns, .ceil = link_ceil, .ps = link_ps }; \
		bool any_ = false; \
		if (n_ == 0 || memo_len == UINT32_MAX || memo_len == 0 || \
		    general_only || pause_ns >= link_ceil || ((is_out) && now_ns < delay_ns) || \
		    (ecn_above != UINT64_MAX && qb - memo_len > ecn_above)) \
			break; \
		if (emu_meta_hop_in(emu_meta(f_slots[head & f_mask])) != in_hop) { \
			/* another ingress than the last packet's (a fabric port's packets \
			 * from several links): each gives its bytes back itself, while no \
			 * ingress is in XOFF; the first packet of a call goes the general way \
			 * (a run of one ingress then follows in the loop above) */ \
			if (in_hop > UINT16_MAX || tm->hot.n_xoff != 0) \
				break; \
			if (in != NULL) \
				in->ing_bytes[q] = ing - (in_qb - qb); \
			in = NULL; \
			in_hop = UINT32_MAX; \
			qb_xon = INT64_MIN; \
			any_ = true; \
		} \
		n_ = RTE_MIN(n_, f_mask + 1 - (head & f_mask)); \
		if (qb_xon != INT64_MIN) \
			n_ = (int64_t)qb < qb_xon ? 0 : \
				(uint32_t)RTE_MIN((uint64_t)n_, \
						  (uint64_t)((int64_t)qb - qb_xon) / memo_len); \
		if (is_out) \
			n_ = RTE_MIN(n_, (uint32_t)(o_max - o_n)); \
		else \
			n_ = RTE_MIN(RTE_MIN(n_, w_mask - (w_tail - w_head)), \
				     w_mask + 1 - (w_tail & w_mask)); \
		if (any_) \
			k_ = emu_tm_advance_same(&f_slots[head & f_mask], n_, 0, memo_len, \
						 memo_whole_ns, memo_rest_ps, &l_, \
						 (is_out) ? now_ns - delay_ns : now_ns, delay_ns, \
						 is_out, trace, \
						 (is_out) ? o_pkts + o_n : &w_slots[w_tail & w_mask], \
						 (is_out) && lens ? o_lens + o_n : NULL, tm, q); \
		else \
			k_ = emu_tm_advance_same(&f_slots[head & f_mask], n_, (uint16_t)in_hop, \
						 memo_len, memo_whole_ns, memo_rest_ps, &l_, \
						 (is_out) ? now_ns - delay_ns : now_ns, delay_ns, \
						 is_out, trace, \
						 (is_out) ? o_pkts + o_n : &w_slots[w_tail & w_mask], \
						 (is_out) && lens ? o_lens + o_n : NULL, NULL, 0); \
		head += k_; \
		qb -= (uint64_t)k_ * memo_len; \
		link_ns = l_.ns; \
		link_ps = l_.ps; \
		link_ceil = l_.ceil; \
		if (is_out) { \
			o_n = (uint16_t)(o_n + k_); \
		} else { \
			w_tail += k_; \
			wire_bytes += (uint64_t)k_ * memo_len; \
		} \
	} while (0)
	if (w_tail - w_head > w_mask)
		goto stop;
	if (o_n < o_max && w_tail == w_head) {
		for (;;) {
			TM_ADV_SAME(true);
			if (o_n == o_max)
				break;
			TM_ADV_START();
			if (dep_ns > now_ns) {
				TM_ADV_WIRE();
				break;
			}
			/* gone by now, nothing ahead of it on the line: straight to the dequeue */
			TM_ADV_OUT();
			if (o_n == o_max)
				break;
		}
	}
	for (;;) {
		TM_ADV_SAME(false);
		TM_ADV_START();
		TM_ADV_WIRE();
	}
stop:
#undef TM_ADV_SAME
#undef TM_ADV_START
#undef TM_ADV_OUT
#undef TM_ADV_WIRE
	busy_ps += (uint64_t)(head - memo_head) * memo_ps;
	left_cells += (uint64_t)(head - memo_head) * memo_cells;
	if (o != NULL) {
		o->n = o_n;
		o->bytes += qb0 - qb - wire_bytes;
	}
	if (in != NULL)
		in->ing_bytes[q] = ing - (in_qb - qb);
	if (head == f->head) { /* nothing started: the state is as it was */
		if (empty)
			p->nonempty &= ~(1u << q);
		return empty;
	}
	p->port_pkts -= head - f->head;
	f->head = head;
	if (head == tail)
		p->nonempty &= ~(1u << q);
	w->tail = w_tail;
	p->link_free_ns = link_ns;
	p->link_free_ps = link_ps;
	p->busy_ps = busy_ps;
	p->ctr[EMU_TM_CTR_BUSY_NS] = busy_ps / 1000;
	p->q_bytes[q] = qb;
	p->all_q_bytes -= qb0 - qb;
	p->q_cells[q] -= left_cells;
	p->port_cells -= left_cells;
	if (!own)
		tm->used_cells -= left_cells;
	if (memo_len != UINT32_MAX) {
		p->memo_len = memo_len;
		p->memo_rate_bps = rate;
		p->memo_wire_ps = memo_ps;
	}
	return empty;
}

/* emu_tm_advance_run() with the cell rounding, the port's own buffer and the trace as constants. */
static bool
emu_tm_advance_one_queue(struct emu_tm *tm, struct emu_tm_port *p, unsigned int q,
			 uint64_t now_ns, struct emu_rng *rng, struct emu_tm_out *o)
{
	const uint32_t cb = tm->buf.cell_bytes;

	const bool trace = tm->trace;

	if ((cb & (cb - 1)) != 0)
		return emu_tm_advance_run(tm, p, q, now_ns, rng, false, p->cfg.own_buffer,
					  o != NULL && o->lens != NULL, trace, o);
	if (p->cfg.own_buffer)
		return emu_tm_advance_run(tm, p, q, now_ns, rng, true, true,
					  o != NULL && o->lens != NULL, trace, o);
	/* the common cases, with the trace as a constant too */
	if (o != NULL && o->lens != NULL && trace)
		return emu_tm_advance_run(tm, p, q, now_ns, rng, true, false, true, true, o);
	if (o != NULL && o->lens != NULL)
		return emu_tm_advance_run(tm, p, q, now_ns, rng, true, false, true, false, o);
	if (trace)
		return emu_tm_advance_run(tm, p, q, now_ns, rng, true, false, false, true, o);
	return emu_tm_advance_run(tm, p, q, now_ns, rng, true, false, false, false, o);
}

/*
 * Start serialising every queued packet whose start time has come; with @p o (the dequeue),
 * one queue under the strict scheduler hands what leaves by now straight to it.
 */
static void
emu_tm_port_advance_out(struct emu_tm *tm, struct emu_tm_port *p, uint64_t now_ns,
			struct emu_rng *rng, struct emu_tm_out *o)
{
	while (emu_tm_fifo_count(&p->wire) <= p->wire.mask) {
		uint64_t start_ns;
		uint32_t start_ps;
		int q;

		if (p->nonempty != 0 && (p->nonempty & (p->nonempty - 1)) == 0 &&
		    p->nonempty != 1u << EMU_TM_CTRL_Q && p->cfg.scheduler == EMU_TM_SCHED_STRICT) {
			unsigned int q1 = (unsigned int)__builtin_ctz(p->nonempty);

			/* most calls find the head not due yet: say so before the loop's set-up */
			emu_tm_start(p, q1, &start_ns, &start_ps);
			if (start_ns > now_ns || (start_ns == now_ns && start_ps > 0))
				return;
			if (!emu_tm_advance_one_queue(tm, p, q1, now_ns, rng, o))
				return;
			continue;
		}
		if (p->nonempty != 0 && (p->nonempty & (p->nonempty - 1)) == 0) {
			/* one queue holds packets: emu_tm_pick() would choose it */
			q = __builtin_ctz(p->nonempty);
			emu_tm_start(p, (unsigned int)q, &start_ns, &start_ps);
		} else {
			q = emu_tm_pick(p, &start_ns, &start_ps, false);
		}
		if (q < 0 || start_ns > now_ns || (start_ns == now_ns && start_ps > 0))
			break;
		/* the strict scheduler's choice does not change when it commits */
		if (p->cfg.scheduler != EMU_TM_SCHED_STRICT)
			q = emu_tm_pick(p, &start_ns, &start_ps, true);
		emu_tm_start_head(tm, p, (unsigned int)q, start_ns, start_ps, rng);
	}
}

void
emu_tm_port_advance(struct emu_tm *tm, struct emu_tm_port *p, uint64_t now_ns,
		    struct emu_rng *rng)
{
	emu_tm_port_advance_out(tm, p, now_ns, rng, NULL);
}

/* Take the packets at the head of @p p's delay line that have left by @p now_ns into @p o. */
static inline void
emu_tm_wire_pop(struct emu_tm_port *p, uint64_t now_ns, struct emu_tm_out *o)
{
	while (o->n < o->max && emu_tm_fifo_count(&p->wire) > 0) {
		struct rte_mbuf *m = p->wire.slots[p->wire.head & p->wire.mask];

		if (emu_meta(m)->ts_ns > now_ns)
			break;
		p->wire.head++;
		if (o->lens != NULL)
			o->lens[o->n] = emu_wire_len(m);
		o->bytes += emu_wire_len(m);
		o->pkts[o->n++] = m;
	}
}

/*
 * What was on the delay line and has left first; then the packets that start by now, those
 * that also leave by now (the line empty ahead of them) straight into @p out, the others onto
 * the line, from which what has left is taken after. The same packets in the same order as
 * advancing first and then taking from the line; one call earlier when the line was full.
 */
uint16_t
emu_tm_dequeue(struct emu_tm *tm, uint16_t port, uint64_t now_ns, struct rte_mbuf **out,
	       uint16_t max, struct emu_rng *rng)
{
	return emu_tm_dequeue_lens(tm, port, now_ns, out, NULL, max, rng);
}

uint16_t
emu_tm_dequeue_lens(struct emu_tm *tm, uint16_t port, uint64_t now_ns, struct rte_mbuf **out,
		    uint32_t *lens, uint16_t max, struct emu_rng *rng)
{
	struct emu_tm_port *p = &tm->ports[port];
	struct emu_tm_out o = { .pkts = out, .lens = lens, .max = max, .n = 0, .bytes = 0 };

	/* nothing queued, nothing on the wire: what the rest would find (polled every pass) */
	if (p->nonempty == 0 && emu_tm_fifo_count(&p->wire) == 0)
		return 0;
	if (emu_tm_fifo_count(&p->wire) > 0)
		emu_tm_wire_pop(p, now_ns, &o);
	if (p->nonempty != 0) {
		/* even with @p out full: the queues are then exact at now for what comes next */
		emu_tm_port_advance_out(tm, p, now_ns, rng, &o);
		emu_tm_wire_pop(p, now_ns, &o);
	}
	p->ctr[EMU_TM_CTR_DEQ_PKTS] += o.n;
	p->ctr[EMU_TM_CTR_DEQ_BYTES] += o.bytes;
	return o.n;
}
