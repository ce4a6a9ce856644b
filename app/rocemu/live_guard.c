/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RX guard (ports[].rx_guard): when rocemu itself falls behind, the frames wait in the
 * NIC's RX ring, and what overflows it the NIC drops (imissed) - in a lossless class too. With
 * the guard, the worker that polls an RX queue reads the ring's fill (rte_eth_rx_queue_count)
 * and, once it holds xoff frames, sends PFC XOFF for the port's lossless priorities out of
 * that port (refreshed every half pause time while above xon), and XON once every RX queue of
 * the port holds xon or fewer. The peer then holds its lossless traffic, as it would for a
 * switch whose ingress buffer fills: the class stays lossless while rocemu is the bottleneck.
 *
 * It reads the fill only when it may matter: after a full burst (a ring that gave less than a
 * burst is nearly empty), while the queue is above xoff, and while the worker leaves its
 * queues unread (backpressure from a full ring between workers). Each queue's state is its
 * poller's; the port's one word (a bit per queue above xoff, changed only on a crossing) makes
 * the first queue over send XOFF and the last one under send XON. The frames leave by the
 * port's control queue, on the worker that owns its TX (a handoff ring when that is another
 * one). docs/multicore.md says what it can and cannot promise.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>

#include "live.h"

/* The ring's size, for the defaults and the check of xoff; 0 when the driver does not say. */
static unsigned int
live_guard_ring(uint16_t id, uint16_t q)
{
	struct rte_eth_rxq_info qi;

	memset(&qi, 0, sizeof(qi));
	if (rte_eth_rx_queue_info_get(id, q, &qi) != 0)
		return 0;
	return qi.nb_desc;
}

int
live_guard_setup(struct live_state *st)
{
	const struct emu_pipeline *pl = st->ctx.pl;
	unsigned int i, q, ring;

	for (i = 0; i < st->n_ports; i++) {
		const struct emu_pipeline_port *pp = &pl->ports[i];
		const struct emu_tm_port_cfg *pc = &pl->tm.ports[i];
		struct live_guard *g = &st->guard[i];
		struct rte_eth_dev_info info;
		struct rte_eth_link link;
		uint64_t bps, pause_ns;
		int rc;

		if (!pp->rx_guard)
			continue;
		if (rte_eth_dev_info_get(st->port_ids[i], &info) != 0)
			memset(&info, 0, sizeof(info));
		ring = live_guard_ring(st->port_ids[i], 0);
		for (q = 0; q < st->n_rxq[i]; q++) {
			rc = rte_eth_rx_queue_count(st->port_ids[i], (uint16_t)q);
			if (rc < 0) {
				fprintf(stderr, "ports[%u].rx_guard: port %s (driver %s) cannot say how "
					"full RX queue %u is (rte_eth_rx_queue_count: %s); the guard "
					"needs a driver that can (mlx5, ice, i40e, ixgbe, net_vhost, ...)"
					" (in %s)\n", i, pp->name,
					info.driver_name != NULL ? info.driver_name : "?", q,
					rte_strerror(-rc), pl->file);
				return -1;
			}
		}
		g->xoff = pp->guard_xoff != 0 ? pp->guard_xoff : (ring != 0 ? ring : LIVE_RXD) / 2;
		g->xon = pp->guard_xoff != 0 ? pp->guard_xon : (ring != 0 ? ring : LIVE_RXD) / 8;
		if (ring != 0 && g->xoff > ring) {
			fprintf(stderr, "ports[%u].rx_guard.xoff: %u frames is more than RX queue 0 of "
				"port %s holds (%u descriptors): it would never send XOFF (in %s)\n",
				i, g->xoff, pp->name, ring, pl->file);
			return -1;
		}
		g->vector = pc->lossless_mask;
		g->quanta = pc->pfc.enabled ? pc->pfc.quanta : 0xFFFF;
		/* the pause the peer takes from the quanta is at its link's speed, which is ours */
		bps = pc->rate_bps;
		memset(&link, 0, sizeof(link));
		if (rte_eth_link_get_nowait(st->port_ids[i], &link) == 0 &&
		    link.link_speed != RTE_ETH_SPEED_NUM_NONE &&
		    link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN)
			bps = (uint64_t)link.link_speed * 1000000ULL;
		pause_ns = bps > 0 ? (uint64_t)g->quanta * 512 * 1000000000ULL / bps : 0;
		g->refresh_ns = pause_ns / 2 > 0 ? pause_ns / 2 : 1;
		g->on = true;
		fprintf(live_out, "rocemu: port %s rx_guard: PFC XOFF (priorities 0x%02x, quanta %u, "
			"refreshed every %.1f us) when an RX queue holds %u frames%s, XON at %u\n",
			pp->name, g->vector, g->quanta, g->refresh_ns / 1e3, g->xoff,
			ring != 0 ? "" : " (the driver does not say its ring's size)", g->xon);
	}
	return 0;
}

/* XOFF (every lossless priority for the quanta) or XON (time 0) out of @p port. */
static void
live_guard_send(struct live_worker *w, uint16_t port, bool xoff, uint64_t now)
{
	const struct live_guard *g = &w->st->guard[port];
	struct emu_tm_pfc_frame f;
	unsigned int q;

	memset(&f, 0, sizeof(f));
	f.port = port;
	f.vector = g->vector;
	for (q = 0; q < EMU_TM_N_PRIO; q++)
		if (xoff && (g->vector >> q) & 1)
			f.quanta[q] = g->quanta;
	if (!emu_switch_pfc_out(w->sw, &f, now))
		LIVE_STORE(&w->guard[port].not_sent, w->guard[port].not_sent + 1);
}

/* Read RX queue @p i of worker @p w's ring fill and act on a crossing. */
void
live_guard_check(struct live_worker *w, unsigned int i, uint64_t now)
{
	struct live_rxq *rq = &w->rxq[i];
	struct live_guard *g = &w->st->guard[rq->port];
	struct live_guard_ctr *c = &w->guard[rq->port];
	uint32_t bit = 1u << rq->queue, old;
	int fill;

	fill = rte_eth_rx_queue_count(w->st->port_ids[rq->port], rq->queue);
	if (fill < 0)
		fill = 0; /* it answered at start: the device went away (a vhost peer closed) */
	if ((uint64_t)fill > c->fill_max)
		LIVE_STORE(&c->fill_max, (uint64_t)fill);
	if (!rq->guard_over) {
		if ((uint32_t)fill < g->xoff)
			return;
		rq->guard_over = true;
		rq->guard_since = now;
		rq->guard_refresh = now + g->refresh_ns;
		old = __atomic_fetch_or(&g->over, bit, __ATOMIC_ACQ_REL);
		if (old == 0) {
			live_guard_send(w, rq->port, true, now);
			LIVE_STORE(&c->xoff, c->xoff + 1);
		}
	} else if ((uint32_t)fill <= g->xon) {
		rq->guard_over = false;
		LIVE_STORE(&c->over_ns, c->over_ns + (now - rq->guard_since));
		old = __atomic_fetch_and(&g->over, ~bit, __ATOMIC_ACQ_REL);
		if (old == bit) {
			live_guard_send(w, rq->port, false, now);
			LIVE_STORE(&c->xon, c->xon + 1);
		}
	} else if (now >= rq->guard_refresh) {
		rq->guard_refresh = now + g->refresh_ns;
		live_guard_send(w, rq->port, true, now);
		LIVE_STORE(&c->refresh, c->refresh + 1);
	}
}

/* Port @p p's guard counters summed over the workers (relaxed loads: a control-path read). */
static void
live_guard_sum(const struct live_state *st, unsigned int p, struct live_guard_ctr *out)
{
	unsigned int k;

	memset(out, 0, sizeof(*out));
	for (k = 0; k < st->n_workers; k++) {
		const struct live_guard_ctr *c = &st->w[k].guard[p];
		uint64_t fill = LIVE_LOAD(&c->fill_max);

		out->xoff += LIVE_LOAD(&c->xoff);
		out->xon += LIVE_LOAD(&c->xon);
		out->refresh += LIVE_LOAD(&c->refresh);
		out->not_sent += LIVE_LOAD(&c->not_sent);
		out->over_ns += LIVE_LOAD(&c->over_ns);
		if (fill > out->fill_max)
			out->fill_max = fill;
	}
}

json_t *
live_guard_json(const struct live_state *st, unsigned int p)
{
	struct live_guard_ctr c;

	live_guard_sum(st, p, &c);
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f}",
			 "xoff_frames", (json_int_t)c.xoff, "xon_frames", (json_int_t)c.xon,
			 "refresh_frames", (json_int_t)c.refresh,
			 "not_sent_nombuf", (json_int_t)c.not_sent,
			 "fill_max", (json_int_t)c.fill_max, "xoff_at", (json_int_t)st->guard[p].xoff,
			 "xon_at", (json_int_t)st->guard[p].xon, "over_ms", c.over_ns / 1e6);
}

void
live_guard_print(const struct live_state *st, FILE *f)
{
	struct live_guard_ctr c;
	unsigned int p;

	for (p = 0; p < st->n_ports; p++) {
		if (!st->guard[p].on)
			continue;
		live_guard_sum(st, p, &c);
		fprintf(f, "rx_guard %s: %" PRIu64 " XOFF, %" PRIu64 " XON, %" PRIu64 " refreshes "
			"(%" PRIu64 " not sent: no mbuf); an RX queue held up to %" PRIu64 " frames "
			"(XOFF at %u, XON at %u), above XOFF for %.3f ms\n",
			st->ctx.pl->port_names[p], c.xoff, c.xon, c.refresh, c.not_sent, c.fill_max,
			st->guard[p].xoff, st->guard[p].xon, c.over_ns / 1e6);
	}
}
