/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * emu_tm_enqueue_grouped(): packets that arrive at one instant for several ports, each port's
 * packets taken together, when that provably gives what taking them one by one would. The
 * first hop of an emulated fabric is the case: one burst from a real port spread by ECMP over
 * the links of a group, every packet advanced and enqueued on its link at the burst's time.
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
 * drop path. With all packets of one priority from one ingress, every port a single FIFO (one priority queued, its own buffer, enough room
 * for all its packets: no drop, no headroom), no ECN draw possible (the queue stays at or below
 * kmin even with every packet in it, or ECN off), and every lossless ingress the packets came
 * from neither in XOFF nor able to reach it, nothing one port does is seen by another. Within a
 * port: the first advance starts what its backlog can start by now, the second the first
 * packet if the link is then free; after that the link is busy past now (a frame takes a
 * picosecond or more), paused, or the backlog waits, so every later advance at this instant
 * starts nothing, and the burst enqueue equals the one-by-one enqueues (emu_tm.h).
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
		    (p->cfg.ecn.enabled && (p->cfg.ecn.at_enqueue ||
					    p->q_bytes[q] + bytes[g] > p->cfg.ecn.kmin_bytes)))
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
