/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The TM's entries for packets that arrive at a port each at a moment of its own, as a
 * fabric's hops hand them over: emu_tm_enqueue_grouped() (packets that arrive at one instant
 * for several ports, each port's packets taken together, when that provably gives what taking
 * them one by one would: one burst from a real port spread by ECMP over the links of a group)
 * and emu_tm_arrive() (one packet at its arrival: the advance and the enqueue in one call).
 */
#include <string.h>

#include <rte_common.h>

#include "lib/tm/emu_tm_int.h"

#define EMU_TM_GROUP_MAX 64

/*
 * Why the guards below make this exact. One by one, packet i is advance(P_i) + enqueue(P_i);
 * here, in the same packet order, each port P's first two packets are each an advance and an
 * enqueue, and its later ones are appended to its queue, the queue's and the port's counts
 * brought up to date once at the end. Ports share three things: the
 * TM's random stream (ECN draws), the lossless ingress accounting (XOFF, XON, headroom) and the
 * drop path. The guards: all packets of one priority from one ingress; every port a single
 * FIFO (only that priority queued) with a buffer of its own and room for all its packets (no
 * drop, no headroom); no ECN at enqueue; the ingress, when lossless, neither in XOFF nor able
 * to reach it with all the packets in (so no XOFF, and no XON, which needs one first). Within a
 * port: the first advance starts what its backlog can start by now, the second the first
 * packet if the link is then free; after that the link is busy past now (a frame takes a
 * picosecond or more), paused, or the backlog waits, so every later advance at this instant
 * starts nothing, and appending the third packet on equals the one-by-one enqueues (every
 * limit admits them: the running counts are read by nobody meanwhile, other ports' arrivals
 * apart, which touch only their own port and the ingress's bytes, whose order does not
 * matter below XOFF); the first two go one by one, each an advance and an enqueue
 * (emu_tm_arrive()). The ECN draws at dequeue come only from the first advances: the second
 * can start only the port's first new packet, with nothing queued behind it, so it leaves no
 * queue to mark on; and the first advances keep their order (ports in order of their first
 * packets), as one by one.
 */
bool
emu_tm_enqueue_grouped(struct emu_tm *tm, const uint16_t *ports, struct rte_mbuf **pkts,
		       uint16_t n, uint64_t now_ns, struct emu_rng *rng)
{
	uint8_t gi[EMU_TM_MAX_PORTS]; /* the group of a port, 0xff: none yet */
	uint16_t port_of[EMU_TM_GROUP_MAX], cnt[EMU_TM_GROUP_MAX];
	uint64_t bytes[EMU_TM_GROUP_MAX], cells[EMU_TM_GROUP_MAX], all_bytes = 0;
	uint8_t grp[EMU_TM_GROUP_MAX], seen[EMU_TM_GROUP_MAX];
	/* each port's queue of the priority, while its later packets are appended */
	struct rte_mbuf **slot_of[EMU_TM_GROUP_MAX];
	uint32_t tail[EMU_TM_GROUP_MAX], mask_of[EMU_TM_GROUP_MAX];
	const struct emu_pkt_meta *m0;
	unsigned int n_grp = 0, i, g, q;
	uint16_t hop;

	if (n > EMU_TM_GROUP_MAX || n == 0)
		return false;
	/* one priority and one ingress for all (a burst of one QP's or one NIC's traffic) */
	m0 = emu_meta(pkts[0]);
	q = m0->prio & (EMU_TM_N_PRIO - 1);
	hop = emu_meta_hop_in(m0);
	memset(gi, 0xff, sizeof(gi));
	for (i = 0; i < n; i++) {
		const struct emu_pkt_meta *meta = emu_meta(pkts[i]);
		const uint32_t len = emu_wire_len(pkts[i]);
		const uint16_t port = ports[i];

		if ((meta->flags & EMU_META_MACCTL) || meta->prio != m0->prio ||
		    emu_meta_hop_in(meta) != hop || port >= tm->n_ports)
			return false;
		g = gi[port];
		if (g == 0xff) {
			g = gi[port] = (uint8_t)n_grp++;
			port_of[g] = port;
			cnt[g] = 0;
			seen[g] = 0;
			bytes[g] = cells[g] = 0;
			slot_of[g] = tm->ports[port].q[q].slots;
			mask_of[g] = tm->ports[port].q[q].mask;
		}
		cnt[g]++;
		bytes[g] += len;
		cells[g] += emu_tm_cells(&tm->buf, len);
		all_bytes += len;
		grp[i] = (uint8_t)g;
	}
	for (g = 0; g < n_grp; g++) {
		const struct emu_tm_port *p = &tm->ports[port_of[g]];

		if (!p->link_up || !p->cfg.own_buffer || (p->nonempty & ~(1u << q)) != 0 ||
		    p->port_pkts + cnt[g] > p->cfg.queue_pkts ||
		    p->port_cells + cells[g] > p->cfg.limit_bytes ||
		    (!tm->buf.dynamic && p->q_cells[q] + cells[g] > p->cfg.queue_limit_bytes) ||
		    (p->cfg.ecn.enabled && p->cfg.ecn.at_enqueue))
			return false;
	}
	if (hop < tm->n_ports && (tm->lossless_of[hop] & (1u << q))) {
		const struct emu_tm_port *ip = &tm->ports[hop];

		if (ip->cfg.pfc.enabled &&
		    (ip->xoff[q] || ip->ing_bytes[q] + all_bytes > ip->cfg.pfc.xoff_bytes))
			return false;
	}
	/* in packet order (as one by one): a port's first two packets each an advance and an
	 * enqueue (emu_tm_arrive()), its later ones appended to its queue, whose running counts
	 * are brought up to date once at the end; meanwhile only other ports' arrivals happen */
	for (i = 0; i < n; i++) {
		struct rte_mbuf *const m = pkts[i];
		struct emu_pkt_meta *const meta = emu_meta(m);
		const uint32_t len = emu_wire_len(m);

		g = grp[i];
		if (seen[g] < 2) {
			emu_tm_arrive(tm, port_of[g], m, now_ns, rng);
			if (++seen[g] == 2) {
				const struct emu_tm_port *p = &tm->ports[port_of[g]];

				tail[g] = p->q[q].tail;
				bytes[g] = cells[g] = 0;
			}
			continue;
		}
		/* emu_tm_enqueue() of a frame the guards admit: its steps but the running counts */
		meta->flags &= (uint8_t)~EMU_META_HEADROOM;
		meta->ts_ns = now_ns;
		if (tm->trace) {
			meta->trace.t_enq_ns = now_ns;
			meta->trace.qdepth_bytes = (uint32_t)RTE_MIN(tm->ports[port_of[g]].q_bytes[q] +
								     bytes[g], (uint64_t)UINT32_MAX);
		}
		slot_of[g][tail[g]++ & mask_of[g]] = m;
		bytes[g] += len;
		cells[g] += emu_tm_cells(&tm->buf, len);
	}
	all_bytes = 0;
	for (g = 0; g < n_grp; g++) {
		struct emu_tm_port *p = &tm->ports[port_of[g]];
		const uint32_t added = cnt[g] > 2 ? cnt[g] - 2u : 0;

		if (added == 0)
			continue;
		p->q[q].tail = tail[g];
		p->nonempty |= 1u << q;
		p->q_bytes[q] += bytes[g];
		p->all_q_bytes += bytes[g];
		p->q_cells[q] += cells[g];
		p->port_cells += cells[g];
		p->port_pkts += added;
		p->ctr[EMU_TM_CTR_ENQ_PKTS] += added;
		p->ctr[EMU_TM_CTR_ENQ_BYTES] += bytes[g];
		/* the queue only grew since the second arrival: its length now is its maximum */
		if (p->q_bytes[q] > p->max_q_bytes[q])
			p->max_q_bytes[q] = p->q_bytes[q];
		if (p->all_q_bytes > p->ctr[EMU_TM_CTR_MAX_QUEUE_BYTES])
			p->ctr[EMU_TM_CTR_MAX_QUEUE_BYTES] = p->all_q_bytes;
		all_bytes += bytes[g];
	}
	/* the lossless ingress's bytes (no XOFF: checked above) */
	if (hop < tm->n_ports && (tm->lossless_of[hop] & (1u << q)))
		tm->ports[hop].ing_bytes[q] += all_bytes;
	return true;
}

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

bool
emu_tm_departed_sum(const struct emu_tm *tm, const uint16_t *ports, unsigned int n,
		    uint64_t now_ns, struct emu_tm_sum *sum)
{
	uint64_t pkts = 0, bytes = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct emu_tm_port *p = &tm->ports[ports[i]];
		struct rte_mbuf *const *slots = p->wire.slots;
		const uint32_t mask = p->wire.mask, tail = p->wire.tail;
		uint32_t h;

		if (tail - p->wire.head > mask)
			return false;
		for (h = p->wire.head; h != tail; h++) {
			struct rte_mbuf *m = slots[h & mask];

			if (emu_meta(m)->ts_ns > now_ns)
				break;
			bytes += emu_wire_len(m);
		}
		pkts += h - p->wire.head;
	}
	sum->pkts += pkts;
	sum->bytes += bytes;
	/* at most a cell less one byte more per packet (emu_tm_cells()) */
	sum->cells += bytes + pkts * (tm->buf.cell_bytes - 1);
	return true;
}

unsigned int
emu_tm_merge_departed(struct emu_tm *tm, const uint16_t *ports, unsigned int n, uint64_t now_ns,
		      struct rte_mbuf **out, uint8_t *from, unsigned int max)
{
	/* the wires that have a departure by now, in the order of ports */
	struct {
		struct emu_tm_port *p;
		uint64_t t;     /* its head's departure */
		uint64_t bytes; /* taken off it here */
		uint32_t head;  /* its next slot */
		uint8_t pos;    /* in ports */
	} w[EMU_TM_MAX_PORTS];
	unsigned int i, k, na = 0, got = 0;

	for (i = 0; i < n && i < EMU_TM_MAX_PORTS; i++) {
		struct emu_tm_port *p = &tm->ports[ports[i]];
		uint64_t t;

		if (emu_tm_fifo_count(&p->wire) == 0)
			continue;
		t = emu_meta(p->wire.slots[p->wire.head & p->wire.mask])->ts_ns;
		if (t <= now_ns) {
			w[na].p = p;
			w[na].t = t;
			w[na].bytes = 0;
			w[na].head = p->wire.head;
			w[na++].pos = (uint8_t)i;
		}
	}
	while (na > 0 && got < max) {
		struct emu_tm_port *p;
		struct rte_mbuf *m;
		uint64_t t = w[0].t;

		k = 0;
		for (i = 1; i < na; i++)
			if (w[i].t < t) {
				t = w[i].t;
				k = i;
			}
		p = w[k].p;
		m = p->wire.slots[w[k].head++ & p->wire.mask];
		w[k].bytes += emu_wire_len(m);
		out[got] = m;
		from[got++] = w[k].pos;
		if (w[k].head != p->wire.tail &&
		    (t = emu_meta(p->wire.slots[w[k].head & p->wire.mask])->ts_ns) <= now_ns) {
			w[k].t = t;
			continue;
		}
		/* done with that wire: the others keep their order */
		p->ctr[EMU_TM_CTR_DEQ_PKTS] += w[k].head - p->wire.head;
		p->ctr[EMU_TM_CTR_DEQ_BYTES] += w[k].bytes;
		p->wire.head = w[k].head;
		na--;
		for (i = k; i < na; i++)
			w[i] = w[i + 1];
	}
	for (k = 0; k < na; k++) { /* stopped at max */
		struct emu_tm_port *p = w[k].p;

		p->ctr[EMU_TM_CTR_DEQ_PKTS] += w[k].head - p->wire.head;
		p->ctr[EMU_TM_CTR_DEQ_BYTES] += w[k].bytes;
		p->wire.head = w[k].head;
	}
	return got;
}

bool
emu_tm_arrivals_calm(const struct emu_tm *tm, const uint16_t *dests, unsigned int n_dests,
		     const uint16_t *hops, unsigned int n_hops, const struct emu_tm_sum *sum)
{
	const struct emu_tm_buffer_cfg *bc = &tm->buf;
	unsigned int i, q;

	if (tm->hot.pfc_any || tm->hot.n_xoff != 0)
		return false;
	for (i = 0; i < n_hops; i++) {
		const struct emu_tm_port *h = &tm->ports[hops[i]];

		if (!h->cfg.pfc.enabled)
			continue;
		for (q = 0; q < EMU_TM_N_PRIO; q++)
			if ((tm->lossless_of[hops[i]] & (1u << q)) &&
			    h->ing_bytes[q] + sum->bytes > h->cfg.pfc.xoff_bytes)
				return false;
	}
	for (i = 0; i < n_dests; i++) {
		const struct emu_tm_port *p = &tm->ports[dests[i]];
		const uint64_t cells = p->port_cells + sum->cells;

		if (!p->link_up || p->port_pkts + sum->pkts > p->cfg.queue_pkts ||
		    cells > p->cfg.limit_bytes || (!bc->dynamic && cells > p->cfg.queue_limit_bytes))
			return false;
		if (p->cfg.ecn.enabled &&
		    (p->cfg.ecn.at_enqueue || p->all_q_bytes + sum->bytes > p->cfg.ecn.kmin_bytes))
			return false;
		if (p->cfg.own_buffer)
			continue;
		if (tm->used_cells + sum->cells > bc->total_bytes ||
		    (bc->dynamic && (double)cells > bc->alpha * (double)(bc->total_bytes -
									tm->used_cells - sum->cells)))
			return false;
	}
	return true;
}
