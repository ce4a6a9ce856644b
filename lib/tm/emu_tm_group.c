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
 * starts nothing, and the burst enqueue equals the one-by-one enqueues (emu_tm.h). The ECN
 * draws at dequeue come only from the first advances: the second can start only the port's
 * first new packet, with nothing queued behind it, so it leaves no queue to mark on; and the
 * first advances keep their order (ports in order of their first packets), as one by one.
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
		emu_tm_advance(tm, port_of[g], now_ns, rng);
		emu_tm_enqueue(tm, port_of[g], sorted[k], now_ns, rng);
		if (cnt[g] > 1) {
			emu_tm_advance(tm, port_of[g], now_ns, rng);
			emu_tm_enqueue_burst(tm, port_of[g], &sorted[k + 1], (uint16_t)(cnt[g] - 1),
					     now_ns, rng);
		}
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
bool
emu_tm_arrive(struct emu_tm *tm, uint16_t port, struct rte_mbuf *m, uint64_t now_ns,
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
