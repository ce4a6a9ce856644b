/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The runner's side of an emulated fabric (lib/fabric/fab.h). A unicast packet from a real
 * port whose egress port hangs off another leaf enters the fabric after the ingress stages:
 * its leaf picks the first link, and from then on the packet moves hop by hop, each link a
 * TM port (queues, ECN, PFC accounting, shaper, delay line). Link departures are processed
 * as discrete events in time order across all links (each link's next event is kept, and the
 * earliest is taken), so a packet arriving at the next hop is enqueued there at its exact
 * arrival time, after everything that happened before it; the last hop hands it to the TM
 * of its real egress port. PFC inside the fabric needs no frame: when a link's ingress side
 * (the next switch) crosses XOFF, the link itself is paused; at the first hop the ingress is
 * the real port, and the NIC gets real PFC frames (emu_switch_send_pfc()).
 */
#include <errno.h>
#include <string.h>

#include <rte_malloc.h>

#include "lib/switch/emu_switch_int.h"

#define EMU_FAB_RNG_STREAM 0x466162ULL /* "Fab" */

int
emu_switch_fabric_init(struct emu_switch *sw, struct emu_err *err)
{
	const struct fab_cfg *fc = sw->pl->fabric;
	unsigned int l;

	sw->fab = fc;
	sw->fab_reason_base = sw->n_reasons;
	if (fc == NULL)
		return 0;
	sw->n_reasons += fc->n_links * FAB_LINK_CTR_MAX + fc->n_switches * FAB_SW_CTR_MAX;
	sw->fab_rt = rte_zmalloc("emu_fabric", sizeof(*sw->fab_rt), RTE_CACHE_LINE_SIZE);
	if (sw->fab_rt == NULL)
		return emu_err_setrc(err, -ENOMEM, "fabric: out of memory");
	if (fc->needs_flow_table) {
		sw->fab_rt->flowlets = rte_zmalloc("emu_flowlets", sizeof(struct fab_flowlet) *
						   FAB_MAX_SWITCHES * FAB_FLOWLET_SLOTS,
						   RTE_CACHE_LINE_SIZE);
		if (sw->fab_rt->flowlets == NULL)
			return emu_err_setrc(err, -ENOMEM, "fabric: out of memory (flowlet table)");
	}
	emu_rng_seed(&sw->fab_rng, sw->seed, EMU_FAB_RNG_STREAM);
	for (l = 0; l < FAB_MAX_LINKS; l++)
		sw->fab_ev[l] = UINT64_MAX;
	return 0;
}

void
emu_switch_fabric_free(struct emu_switch *sw)
{
	if (sw->fab_rt != NULL)
		rte_free(sw->fab_rt->flowlets);
	rte_free(sw->fab_rt);
	sw->fab_rt = NULL;
}

static inline void
emu_fab_update(struct emu_switch *sw, unsigned int l)
{
	sw->fab_ev[l] = emu_tm_port_next_event_ns(sw->tm, fab_link_port(sw->fab, l));
}

/* Packet @p m goes onto link @p l at @p t_ns (its arrival at the link's switch). */
static void
emu_fab_hop(struct emu_switch *sw, unsigned int l, struct rte_mbuf *m, uint64_t t_ns)
{
	const struct fab_link_cfg *lc = &sw->fab->links[l];
	uint16_t port = fab_link_port(sw->fab, l);
	uint64_t *ctr = sw->fab_link_ctr[l];

	if (lc->loss > 0 && emu_rng_uniform(&sw->fab_rng) < lc->loss) {
		emu_drop(&sw->dropper, m, sw->fab_reason_base + l * FAB_LINK_CTR_MAX +
			 FAB_LINK_CTR_DROP_LOSS, &ctr[FAB_LINK_CTR_DROP_LOSS]);
		return;
	}
	ctr[FAB_LINK_CTR_ROUTED] += 1;
	/* nothing reaches the link earlier than t: its queue is exact at t */
	emu_tm_advance(sw->tm, port, t_ns, &sw->tm_rng);
	emu_tm_enqueue(sw->tm, port, m, t_ns, &sw->tm_rng);
	emu_fab_update(sw, l);
}

/* No link up towards the packet's leaf at fabric switch @p s. */
static void
emu_fab_no_path(struct emu_switch *sw, unsigned int s, struct rte_mbuf *m)
{
	const struct fab_cfg *fc = sw->fab;

	emu_drop(&sw->dropper, m, sw->fab_reason_base + fc->n_links * FAB_LINK_CTR_MAX +
		 s * FAB_SW_CTR_MAX + FAB_SW_CTR_DROP_NO_PATH,
		 &sw->fab_sw_ctr[s][FAB_SW_CTR_DROP_NO_PATH]);
}

bool
emu_switch_fabric_enter(struct emu_switch *sw, struct rte_mbuf *m, uint64_t now_ns)
{
	const struct fab_cfg *fc = sw->fab;
	struct emu_pkt_meta *meta = emu_meta(m);
	unsigned int a, b;
	uint16_t l;

	/* frames rocemu creates and packets between ports of one leaf go straight to the port */
	if (fc == NULL || meta->in_port >= fc->n_ports || meta->out_port >= fc->n_ports)
		return false;
	a = fc->port_leaf[meta->in_port];
	b = fc->port_leaf[meta->out_port];
	if (a == FAB_NONE || b == FAB_NONE || a == b)
		return false;
	l = fab_route(fc, sw->fab_rt, sw->tm, a, b, meta, now_ns, &sw->fab_rng);
	if (l == FAB_NONE) {
		emu_fab_no_path(sw, a, m);
		return true;
	}
	/* at the first hop the ingress side is the real port (real PFC to the NIC) */
	meta->hop_in = meta->in_port;
	meta->flags |= EMU_META_HOP;
	meta->trace.path = (uint8_t)RTE_MIN(l + 1u, 255u);
	emu_fab_hop(sw, l, m, now_ns);
	return true;
}

/* Packet @p m left link @p l at its ts_ns: into the next link, or its real port's TM. */
static void
emu_fab_arrive(struct emu_switch *sw, unsigned int l, struct rte_mbuf *m)
{
	const struct fab_cfg *fc = sw->fab;
	struct emu_pkt_meta *meta = emu_meta(m);
	unsigned int s = fc->links[l].to, d = fc->port_leaf[meta->out_port];
	uint64_t t = meta->ts_ns;
	uint16_t next;

	meta->hop_in = fab_link_port(fc, l);
	meta->flags |= EMU_META_HOP;
	if (s == d) {
		emu_tm_advance(sw->tm, meta->out_port, t, &sw->tm_rng);
		emu_tm_enqueue(sw->tm, meta->out_port, m, t, &sw->tm_rng);
		return;
	}
	next = fab_route(fc, sw->fab_rt, sw->tm, s, d, meta, t, &sw->fab_rng);
	if (next == FAB_NONE)
		emu_fab_no_path(sw, s, m);
	else
		emu_fab_hop(sw, next, m, t);
}

void
emu_switch_fabric_pause(struct emu_switch *sw, const struct emu_tm_pfc_frame *f, uint64_t now_ns)
{
	static const uint16_t opcode_pfc = 0x0101, opcode_pause = 0x0001;

	emu_tm_pause_rx(sw->tm, f->port, now_ns, f->pause ? opcode_pause : opcode_pfc,
			f->pause ? 0 : f->vector, f->quanta, &sw->tm_rng);
	emu_fab_update(sw, f->port - sw->fab->n_ports);
}

void
emu_switch_fabric_advance(struct emu_switch *sw, uint64_t now_ns)
{
	const struct fab_cfg *fc = sw->fab;
	struct rte_mbuf *burst[EMU_BURST];
	unsigned int l, best;
	uint64_t t;
	uint16_t n, i;

	if (fc == NULL)
		return;
	for (;;) {
		t = UINT64_MAX;
		best = 0;
		for (l = 0; l < fc->n_links; l++)
			if (sw->fab_ev[l] < t) {
				t = sw->fab_ev[l];
				best = l;
			}
		if (t > now_ns)
			break;
		n = emu_tm_dequeue(sw->tm, fab_link_port(fc, best), t, burst, EMU_BURST,
				   &sw->tm_rng);
		for (i = 0; i < n; i++)
			emu_fab_arrive(sw, best, burst[i]);
		/* queues that crossed XOFF or XON pause or resume the link before them now */
		emu_switch_send_pfc(sw, t);
		emu_fab_update(sw, best);
		/* an event that changed nothing (e.g. a PFC refresh already sent) is not taken
		 * again at the same time */
		if (sw->fab_ev[best] <= t && n == 0)
			sw->fab_ev[best] = t + 1;
	}
}

/* A profile changed a link (rate, link down or up): its next event moves. */
void
emu_switch_fabric_touch(struct emu_switch *sw, uint16_t tm_port)
{
	if (sw->fab != NULL && tm_port >= sw->fab->n_ports &&
	    tm_port < sw->fab->n_ports + sw->fab->n_links)
		emu_fab_update(sw, tm_port - sw->fab->n_ports);
}

void
emu_switch_fabric_discard(struct emu_switch *sw)
{
	struct rte_mbuf *burst[EMU_BURST];
	unsigned int l;
	uint16_t n;

	if (sw->fab == NULL)
		return;
	for (l = 0; l < sw->fab->n_links; l++) {
		while ((n = emu_tm_dequeue(sw->tm, fab_link_port(sw->fab, l), UINT64_MAX / 2, burst,
					   EMU_BURST, &sw->tm_rng)) > 0)
			emu_switch_drop_bulk(sw, burst, n, EMU_RUN_CTR_DROP_DISCARDED_AT_EXIT);
		sw->fab_ev[l] = UINT64_MAX;
	}
}
