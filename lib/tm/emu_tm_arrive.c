/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The TM's entries for packets that arrive at a port each at a moment of its own, as a
 * fabric's hops hand them over: emu_tm_arrive() (one packet at its arrival: the advance and
 * the enqueue in one call) and emu_tm_arrive_run() (a time-ordered run into one port: a last
 * level's departures delivered to a real port), each with its common case inline and the
 * general functions (emu_tm.c) for the rest.
 */
#include <rte_common.h>

#include "lib/tm/emu_tm_int.h"

/*
 * emu_tm_arrive(): emu_tm_advance() and emu_tm_enqueue() at the packet's arrival, in one call,
 * with the common case inline. The advance: while the port holds one data priority under the
 * strict scheduler, its head packets that can start by @p now_ns start here one by one, as the
 * general advance starts them (emu_tm_start(), emu_tm_start_head()), without the set-up of
 * its loop for a run, as long as the delay line has room; anything else goes to
 * emu_tm_advance(), which then finds exactly what is left. The enqueue: a data
 * frame the byte limits take without headroom, with no ECN draw at enqueue, is queued as
 * emu_tm_enqueue() queues it (emu_tm_fifo_join()); any other goes there. Per-packet callers
 * whose packets each arrive at a moment of their own (a fabric link's departures into the next
 * hop) pay the general functions' set-up only when it is needed.
 */
static inline __attribute__((always_inline)) bool
emu_tm_arrive_one(struct emu_tm *tm, uint16_t port, struct rte_mbuf *m, uint64_t now_ns,
		  struct emu_rng *rng)
{
	struct emu_tm_port *const p = &tm->ports[port];
	struct emu_pkt_meta *const meta = emu_meta(m);
	const uint8_t flags = meta->flags;
	const unsigned int q = meta->prio & (EMU_TM_N_PRIO - 1);
	const uint32_t len = emu_wire_len(m);
	const uint64_t cells = emu_tm_cells(&tm->buf, len);
	const bool own = p->cfg.own_buffer;
	const uint16_t hop = emu_meta_hop_in(meta);

	/* the advance, while it is the common case (one data queue under the strict scheduler,
	 * room on the delay line); first what most arrivals find: nothing queued, or the link
	 * busy past now (every queued packet arrived by now) */
	while (p->nonempty == (1u << q) && q != EMU_TM_CTRL_Q &&
	       p->cfg.scheduler == EMU_TM_SCHED_STRICT && emu_tm_fifo_count(&p->wire) <= p->wire.mask) {
		uint64_t start_ns;
		uint32_t start_ps;

		if (p->link_free_ns > now_ns || (p->link_free_ns == now_ns && p->link_free_ps != 0))
			goto enqueue;
		emu_tm_start(p, q, &start_ns, &start_ps);
		if (start_ns > now_ns || (start_ns == now_ns && start_ps > 0))
			goto enqueue;
		emu_tm_start_head(tm, p, q, start_ns, start_ps, rng);
	}
	/* what the loop did not take: emu_tm_advance() finds it (nothing, when the loop stopped
	 * because nothing more can start by now) */
	if (p->nonempty != 0)
		emu_tm_advance(tm, port, now_ns, rng);
enqueue:
	if (unlikely((flags & EMU_META_MACCTL) || !p->link_up ||
		     (p->cfg.ecn.enabled && p->cfg.ecn.at_enqueue) ||
		     emu_tm_limit(tm, p, q, cells) != EMU_TM_CTR_MAX))
		return emu_tm_enqueue(tm, port, m, now_ns, rng);
	/* emu_tm_enqueue() of a frame every byte limit takes: its steps, in its order */
	meta->flags = flags & (uint8_t)~EMU_META_HEADROOM;
	if (!own)
		tm->used_cells += cells;
	p->q_cells[q] += cells;
	p->port_cells += cells;
	p->port_pkts += 1;
	if (hop < tm->n_ports && (tm->lossless_of[hop] & (1u << q))) {
		struct emu_tm_port *in = &tm->ports[hop];

		in->ing_bytes[q] += len;
		if (in->cfg.pfc.enabled && !in->xoff[q] && in->ing_bytes[q] > in->cfg.pfc.xoff_bytes)
			emu_tm_xoff(tm, in, q, now_ns);
	}
	emu_tm_fifo_join(tm, p, q, m, len, now_ns);
	return true;
}

bool
emu_tm_arrive(struct emu_tm *tm, uint16_t port, struct rte_mbuf *m, uint64_t now_ns,
	      struct emu_rng *rng)
{
	return emu_tm_arrive_one(tm, port, m, now_ns, rng);
}

/*
 * Whether the run @p pkts (@p n, in time order) into port @p p is calm: every packet a data
 * frame of priority @p q, the port holding no other priority under the strict scheduler, with
 * room on its delay line for everything it could start; the limits take all of them without
 * headroom; no ECN can draw (none at enqueue; at dequeue the queue stays at or below kmin);
 * no hop's ingress bytes can reach XOFF (a start may still end an XOFF: emu_tm_unaccount()).
 * With @p shown, emu_tm_arrivals_calm() has said the last three for these packets and more
 * (their bytes, their port, their hops) and nothing else has arrived since: only the priority,
 * the scheduler and the delay line are left to check. Then each arrival is an advance that
 * starts the due heads as emu_tm_start_head() does, without its ECN step, and an enqueue of
 * an admitted frame. The room on the delay line keeps its ring from being overrun
 * (emu_tm_delay_fits() sizes it so that it does not fill).
 */
static bool
emu_tm_run_calm(const struct emu_tm *tm, const struct emu_tm_port *p, unsigned int q,
		struct rte_mbuf **pkts, uint16_t n, bool shown)
{
	const struct emu_tm_buffer_cfg *bc = &tm->buf;
	uint64_t bytes = 0, cells;
	uint16_t i;

	if (tm->general_only || !p->link_up || q == EMU_TM_CTRL_Q ||
	    p->cfg.scheduler != EMU_TM_SCHED_STRICT || (p->nonempty & ~(1u << q)) != 0 ||
	    emu_tm_fifo_count(&p->wire) + emu_tm_fifo_count(&p->q[q]) + n > p->wire.mask + 1 ||
	    (p->cfg.ecn.enabled && p->cfg.ecn.at_enqueue))
		return false;
	for (i = 0; i < n; i++) {
		const struct emu_pkt_meta *meta = emu_meta(pkts[i]);

		if ((meta->flags & EMU_META_MACCTL) || (meta->prio & (EMU_TM_N_PRIO - 1)) != q)
			return false;
		if (!shown)
			bytes += emu_wire_len(pkts[i]);
	}
	if (shown) /* the rest: emu_tm_arrivals_calm(), for more than these */
		return true;
	for (i = 0; i < n; i++) {
		uint16_t hop = emu_meta_hop_in(emu_meta(pkts[i]));
		const struct emu_tm_port *in;

		if (hop >= tm->n_ports || !(tm->lossless_of[hop] & (1u << q)))
			continue;
		in = &tm->ports[hop];
		if (in->cfg.pfc.enabled && in->ing_bytes[q] + bytes > in->cfg.pfc.xoff_bytes)
			return false;
	}
	if (p->cfg.ecn.enabled && p->all_q_bytes + bytes > p->cfg.ecn.kmin_bytes)
		return false;
	cells = bytes + (uint64_t)n * (bc->cell_bytes - 1); /* at most (emu_tm_cells()) */
	if (p->port_pkts + n > p->cfg.queue_pkts || p->port_cells + cells > p->cfg.limit_bytes ||
	    (!bc->dynamic && p->q_cells[q] + cells > p->cfg.queue_limit_bytes))
		return false;
	if (p->cfg.own_buffer)
		return true;
	return tm->used_cells + cells <= bc->total_bytes &&
	       (!bc->dynamic || (double)(p->q_cells[q] + cells) <=
				       bc->alpha * (double)(bc->total_bytes - tm->used_cells - cells));
}

/*
 * emu_tm_arrive_run()'s calm loop with the port's running state in locals: the stores into
 * each packet's metadata may alias the port as far as the compiler knows, so it would load
 * every field again after each. The same steps in the same order as the arrivals one by one
 * (for each packet: the heads that start by its arrival, as emu_tm_start() and
 * emu_tm_start_head() start them, then its enqueue as emu_tm_fifo_join()), written back once.
 * Only while no (port, priority) is in XOFF, so that no start ends one (emu_tm_unaccount()'s
 * XON test has nothing to do); only queue @p q holds packets (emu_tm_run_calm()), so the port's
 * nonempty bits are that queue's. @p own and @p trace are constants in each copy.
 */
static inline __attribute__((always_inline)) void
emu_tm_arrive_calm(struct emu_tm *tm, struct emu_tm_port *p, unsigned int q,
		   struct rte_mbuf **pkts, uint16_t n, const bool own, const bool trace)
{
	struct emu_tm_fifo *const f = &p->q[q];
	struct rte_mbuf **const slots = f->slots, **const wslots = p->wire.slots;
	const uint32_t mask = f->mask, wmask = p->wire.mask, tail0 = f->tail, wtail0 = p->wire.tail;
	const uint64_t pause = p->pause_until_ns[q], delay = p->cfg.delay_ns;
	const uint64_t rate = p->cfg.rate_bps, cb_round = tm->buf.cell_bytes - 1u;
	const bool pow2 = (tm->buf.cell_bytes & cb_round) == 0;
	const unsigned int n_ports = tm->n_ports;
	uint32_t head = f->head, tail = tail0, wtail = wtail0;
	uint64_t free_ns = p->link_free_ns, busy = p->busy_ps;
	uint32_t free_ps = p->link_free_ps;
	uint64_t qb = p->q_bytes[q], allq = p->all_q_bytes, enq_bytes = 0;
	uint64_t qmax = p->max_q_bytes[q], allmax = p->ctr[EMU_TM_CTR_MAX_QUEUE_BYTES];
	uint64_t q_cells = p->q_cells[q], port_cells = p->port_cells, used = tm->used_cells;
	uint32_t port_pkts = p->port_pkts;
	/* emu_tm_link_take()'s memo, valid for this rate only (UINT32_MAX: no length) */
	uint32_t memo_len = p->memo_rate_bps == rate ? p->memo_len : UINT32_MAX;
	uint64_t memo_ps = p->memo_wire_ps;
	uint16_t i;

#define TM_CALM_CELLS(len) (pow2 ? ((uint64_t)(len) + cb_round) & ~cb_round : \
			    ((uint64_t)(len) + cb_round) / (cb_round + 1) * (cb_round + 1))
	for (i = 0; i < n; i++) {
		struct rte_mbuf *const m = pkts[i];
		struct emu_pkt_meta *const meta = emu_meta(m);
		const uint64_t t = meta->ts_ns;
		const uint32_t len = emu_wire_len(m);
		const uint16_t hop = emu_meta_hop_in(meta);
		const uint64_t cells = TM_CALM_CELLS(len);

		/* the advance to t: what starts by then, in order */
		while (head != tail) {
			struct rte_mbuf *const h = slots[head & mask];
			struct emu_pkt_meta *const hm = emu_meta(h);
			const uint64_t arrived = hm->ts_ns;
			uint64_t a = pause > arrived ? pause : arrived, start_ns, sum_ps, hcells;
			struct emu_tm_port *in;
			uint32_t start_ps, hlen;
			uint16_t hh;

			if (a > free_ns || (a == free_ns && free_ps == 0)) {
				start_ns = a;
				start_ps = 0;
			} else {
				start_ns = free_ns;
				start_ps = free_ps;
			}
			if (start_ns > t || (start_ns == t && start_ps > 0))
				break;
			head++;
			hlen = emu_wire_len(h);
			if (hlen != memo_len) {
				memo_len = hlen;
				memo_ps = emu_tm_wire_ps(hlen, rate);
			}
			sum_ps = start_ps + memo_ps;
			free_ns = start_ns + sum_ps / 1000;
			free_ps = (uint32_t)(sum_ps % 1000);
			qb -= hlen;
			allq -= hlen;
			/* emu_tm_unaccount() */
			hcells = TM_CALM_CELLS(hlen);
			hh = emu_meta_hop_in(hm);
			in = hh < n_ports && (tm->lossless_of[hh] & (1u << q)) ? &tm->ports[hh] : NULL;
			/* headroom is only ever a lossless ingress's (emu_tm_enqueue()) */
			if (unlikely(hm->flags & EMU_META_HEADROOM) && in != NULL) {
				in->hr_cells[q] -= hcells;
			} else {
				if (!own)
					used -= hcells;
				q_cells -= hcells;
				port_cells -= hcells;
			}
			port_pkts -= 1;
			if (in != NULL)
				in->ing_bytes[q] -= hlen;
			/* emu_tm_wire_push() */
			busy += memo_ps;
			if (trace)
				hm->trace.wait_ns = start_ns > arrived ?
					(uint32_t)RTE_MIN(start_ns - arrived, (uint64_t)UINT32_MAX) : 0;
			hm->ts_ns = free_ns + (free_ps != 0) + delay;
			wslots[wtail++ & wmask] = h;
		}
		/* the enqueue of an admitted frame (emu_tm_enqueue()'s steps) */
		meta->flags &= (uint8_t)~EMU_META_HEADROOM;
		if (!own)
			used += cells;
		q_cells += cells;
		port_cells += cells;
		port_pkts += 1;
		if (hop < n_ports && (tm->lossless_of[hop] & (1u << q)))
			tm->ports[hop].ing_bytes[q] += len;
		if (trace) {
			meta->trace.t_enq_ns = t;
			meta->trace.qdepth_bytes = (uint32_t)RTE_MIN(qb, (uint64_t)UINT32_MAX);
		}
		slots[tail++ & mask] = m;
		qb += len;
		allq += len;
		enq_bytes += len;
		if (qb > qmax)
			qmax = qb;
		if (allq > allmax)
			allmax = allq;
	}
#undef TM_CALM_CELLS
	f->head = head;
	f->tail = tail;
	p->nonempty = head != tail ? 1u << q : 0;
	p->wire.tail = wtail;
	if (wtail != wtail0) {
		p->link_free_ns = free_ns;
		p->link_free_ps = free_ps;
		p->busy_ps = busy;
		p->ctr[EMU_TM_CTR_BUSY_NS] = busy / 1000;
	}
	if (memo_len != UINT32_MAX) {
		p->memo_len = memo_len;
		p->memo_rate_bps = rate;
		p->memo_wire_ps = memo_ps;
	}
	p->q_bytes[q] = qb;
	p->all_q_bytes = allq;
	p->max_q_bytes[q] = qmax;
	p->ctr[EMU_TM_CTR_MAX_QUEUE_BYTES] = allmax;
	p->q_cells[q] = q_cells;
	p->port_cells = port_cells;
	tm->used_cells = used;
	p->port_pkts = port_pkts;
	p->ctr[EMU_TM_CTR_ENQ_PKTS] += tail - tail0;
	p->ctr[EMU_TM_CTR_ENQ_BYTES] += enq_bytes;
}

void
emu_tm_arrive_run(struct emu_tm *tm, uint16_t port, struct rte_mbuf **pkts, uint16_t n,
		  bool calm_shown, struct emu_rng *rng)
{
	struct emu_tm_port *const p = &tm->ports[port];
	const unsigned int q = n > 0 ? emu_meta(pkts[0])->prio & (EMU_TM_N_PRIO - 1) : 0;
	const bool own = p->cfg.own_buffer;
	uint16_t i;

	if (!emu_tm_run_calm(tm, p, q, pkts, n, calm_shown)) {
		for (i = 0; i < n; i++)
			emu_tm_arrive_one(tm, port, pkts[i], emu_meta(pkts[i])->ts_ns, rng);
		return;
	}
	if (tm->hot.n_xoff == 0) {
		if (own)
			emu_tm_arrive_calm(tm, p, q, pkts, n, true, tm->trace);
		else if (tm->trace)
			emu_tm_arrive_calm(tm, p, q, pkts, n, false, true);
		else
			emu_tm_arrive_calm(tm, p, q, pkts, n, false, false);
		return;
	}
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct emu_pkt_meta *meta = emu_meta(m);
		const uint64_t t = meta->ts_ns;
		const uint32_t len = emu_wire_len(m);
		const uint64_t cells = emu_tm_cells(&tm->buf, len);
		const uint16_t hop = emu_meta_hop_in(meta);

		/* the advance to t: what starts by then, in order (emu_tm_start_head() but its
		 * ECN step: the queue stays at or below kmin) */
		while (p->nonempty != 0) {
			struct emu_tm_fifo *f = &p->q[q];
			uint64_t start_ns, wire_ps;
			uint32_t start_ps, hlen;
			struct rte_mbuf *h;

			emu_tm_start(p, q, &start_ns, &start_ps);
			if (start_ns > t || (start_ns == t && start_ps > 0))
				break;
			h = f->slots[f->head++ & f->mask];
			hlen = emu_wire_len(h);
			wire_ps = emu_tm_link_take(p, start_ns, start_ps, hlen);
			if (emu_tm_fifo_count(f) == 0)
				p->nonempty = 0;
			p->q_bytes[q] -= hlen;
			p->all_q_bytes -= hlen;
			emu_tm_unaccount(tm, p, q, emu_meta(h), hlen, start_ns);
			emu_tm_wire_push(tm, p, h, start_ns, wire_ps);
		}
		/* the enqueue of an admitted frame (emu_tm_enqueue()'s steps) */
		meta->flags &= (uint8_t)~EMU_META_HEADROOM;
		if (!own)
			tm->used_cells += cells;
		p->q_cells[q] += cells;
		p->port_cells += cells;
		p->port_pkts += 1;
		if (hop < tm->n_ports && (tm->lossless_of[hop] & (1u << q)))
			tm->ports[hop].ing_bytes[q] += len;
		emu_tm_fifo_join(tm, p, q, m, len, t);
	}
}
