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
 * Why the guards below make the grouped order exact. One by one, packet i is
 * advance(P_i) + enqueue(P_i); grouped, each port P in order of its first packet gets
 * advance, its first packet, advance, the rest as one burst. Ports share three things: the
 * TM's random stream (ECN draws), the lossless ingress accounting (XOFF, XON, headroom) and the
 * drop path. The guards: all packets of one priority from one ingress; every port a single
 * FIFO (only that priority queued) with a buffer of its own and room for all its packets (no
 * drop, no headroom); no ECN at enqueue; the ingress, when lossless, neither in XOFF nor able
 * to reach it with all the packets in (so no XOFF, and no XON, which needs one first). Within a
 * port: the first advance starts what its backlog can start by now, the second the first
 * packet if the link is then free; after that the link is busy past now (a frame takes a
 * picosecond or more), paused, or the backlog waits, so every later advance at this instant
 * starts nothing, and the burst enqueue of the third packet on equals the one-by-one
 * enqueues (emu_tm.h); the first two go one by one, each an advance and an enqueue
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
	uint16_t port_of[EMU_TM_GROUP_MAX], cnt[EMU_TM_GROUP_MAX], pos[EMU_TM_GROUP_MAX];
	uint64_t bytes[EMU_TM_GROUP_MAX], cells[EMU_TM_GROUP_MAX], all_bytes = 0;
	uint8_t grp[EMU_TM_GROUP_MAX];
	struct rte_mbuf *sorted[EMU_TM_GROUP_MAX];
	const struct emu_pkt_meta *m0;
	unsigned int n_grp = 0, i, g, k, q;
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
			bytes[g] = cells[g] = 0;
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
	/* each port's packets together, in their order, the ports in order of their first */
	for (g = 0, k = 0; g < n_grp; g++) {
		pos[g] = (uint16_t)k;
		k += cnt[g];
	}
	for (i = 0; i < n; i++)
		sorted[pos[grp[i]]++] = pkts[i];
	for (g = 0, k = 0; g < n_grp; k += cnt[g], g++) {
		/* advance + enqueue of the first two (emu_tm_arrive(): the second's advance
		 * starts the first without the general advance's set-up), the rest at once */
		emu_tm_arrive(tm, port_of[g], sorted[k], now_ns, rng);
		if (cnt[g] > 1)
			emu_tm_arrive(tm, port_of[g], sorted[k + 1], now_ns, rng);
		if (cnt[g] > 2)
			emu_tm_enqueue_burst(tm, port_of[g], &sorted[k + 2], (uint16_t)(cnt[g] - 2),
					     now_ns, rng);
	}
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
