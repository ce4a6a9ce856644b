/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The TM's side of a fabric's levels: emu_tm_enqueue_grouped() (packets that arrive at one
 * instant for several ports, each port's packets taken together, when that provably gives what
 * taking them one by one would: one burst from a real port spread by ECMP over the links of a
 * group), and what a level's departures need to be merged and delivered in bulk
 * (emu_tm_departed_sum(), emu_tm_merge_departed(), emu_tm_arrivals_calm()). One packet's
 * arrival and a port's time-ordered run: emu_tm_arrive.c.
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
