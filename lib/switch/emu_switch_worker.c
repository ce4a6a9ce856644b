/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A switch on several worker lcores: one replica of the switch per worker, each owning the
 * egress of some ports (their TMs, egress stages and TX), as rte_sched asks (enqueue and
 * dequeue of a port on one thread). A replica's ingress stages run on the frames its worker
 * receives; a frame for a port another worker owns is staged here and pushed, once a poll,
 * into that worker's SPSC rte_ring (qos_sched's RX -> worker pattern), and so is a received
 * MAC control frame whose pause belongs to another worker's egress, and a PFC frame a TM
 * builds for a port another worker sends from. Counters stay per replica (one writer each)
 * and are added up when read: emu_switch_absorb() at exit, emu_snap_absorb() while running.
 * docs/multicore.md has the picture and what is per worker.
 */
#include <errno.h>
#include <string.h>

#include <rte_ring.h>

#include "lib/base/emu_tsan.h"
#include "lib/switch/emu_switch_int.h"

/* Two replicas' runner counter @p k together: a sum, but every replica applies every profile
 * change, so profile_changes is one replica's, and a maximum is the larger. */
static uint64_t
emu_run_ctr_add(unsigned int k, uint64_t a, uint64_t b)
{
	return k == EMU_RUN_CTR_PROFILE_CHANGES || k == EMU_RUN_CTR_HANDOFF_PFC_DELAY_MAX_NS ?
		       RTE_MAX(a, b) : a + b;
}

int
emu_switch_set_worker(struct emu_switch *sw, uint64_t owned, const uint8_t *owner_of,
		      unsigned int n_workers, struct rte_ring *const *rings, struct emu_err *err)
{
	uint64_t all = (sw->n_ports >= 64) ? UINT64_MAX : ((1ULL << sw->n_ports) - 1);
	unsigned int i, self = n_workers;

	if (n_workers == 0 || n_workers > EMU_MAX_WORKERS)
		return emu_err_set(err, "--workers: must be 1..%d, got %u", EMU_MAX_WORKERS,
				   n_workers);
	for (i = 0; i < sw->n_ports; i++) {
		if (owner_of[i] >= n_workers)
			return emu_err_set(err, "ports[%u]: owner worker %u of %u", i, owner_of[i],
					   n_workers);
		if ((owned >> i) & 1)
			self = owner_of[i];
	}
	for (i = 0; i < sw->n_stages; i++)
		if (sw->stages[i].ops->service != NULL && !sw->stages[i].ops->replicable &&
		    n_workers > 1)
			return emu_err_set(err, "%s.%s: a %s stage writes a file from one switch: "
					   "it runs with --workers 1 for now (docs/multicore.md)",
					   sw->stages[i].egress ? "egress" : "ingress",
					   sw->stages[i].name, sw->stages[i].ops->type);
	/* packets cross the fabric on their destination's owner, which has its own copy of
	 * every link: a link that carries packets to ports of two owners would be split */
	for (i = 0; sw->pl->fabric != NULL && i < sw->n_ports; i++) {
		unsigned int j;

		for (j = 0; j < i; j++) {
			uint16_t l;

			if (owner_of[i] == owner_of[j])
				continue;
			l = fab_shared_link(sw->pl->fabric, i, j);
			if (l != FAB_NONE)
				return emu_err_set(err, "fabric: packets to %s and to %s can both take "
						   "link %s, but workers %u and %u own them: ports "
						   "whose packets share a link need one worker "
						   "(docs/multicore.md)", sw->pl->port_names[j],
						   sw->pl->port_names[i],
						   sw->pl->fabric->links[l].name, owner_of[j],
						   owner_of[i]);
		}
	}
	memcpy(sw->owner_of, owner_of, sw->n_ports);
	sw->foreign = all & ~owned;
	sw->n_workers = n_workers;
	for (i = 0; i < n_workers; i++)
		sw->ho_ring[i] = i == self ? NULL : rings[i];
	for (i = 0; i < sw->n_incast; i++) {
		const struct emu_incast_src *src = &sw->incast[i];

		sw->incast[i].foreign = emu_switch_foreign(sw, src->s.cfg.port);
		if (src->s.cfg.sink_port != EMU_PORT_NONE &&
		    owner_of[src->s.cfg.sink_port] != owner_of[src->s.cfg.port])
			return emu_err_set(err, "incast.%s: its sink port %s and its port %s have "
					   "different owners: give both to one worker (--rxq-map, "
					   "docs/multicore.md)", src->s.cfg.name,
					   sw->pl->port_names[src->s.cfg.sink_port],
					   sw->pl->port_names[src->s.cfg.port]);
	}
	return 0;
}

/* Push what is staged for worker @p w; what its ring has no room for is dropped, named. */
static unsigned int
emu_switch_handoff_push(struct emu_switch *sw, unsigned int w)
{
	unsigned int n = sw->ho_n[w], k;

	/* The release comes before the enqueue that publishes the frames: the owner may dequeue
	 * and acquire before this call returns (a release after the enqueue raced with it). */
	EMU_TSAN_RELEASE(sw->ho_ring[w]); /* the frames and their metadata, to the owner */
	k = rte_ring_sp_enqueue_burst(sw->ho_ring[w], (void **)sw->ho_pkts[w], n, NULL);
	EMU_TSAN_ACQUIRE(sw->ho_ring[w]); /* the slots the owner read are free again */
	sw->ctr[EMU_RUN_CTR_HANDOFF_OUT] += k;
	if (k < n)
		emu_switch_drop_bulk(sw, &sw->ho_pkts[w][k], n - k, EMU_RUN_CTR_DROP_HANDOFF_FULL);
	sw->ho_n[w] = 0;
	return k;
}

void
emu_switch_handoff(struct emu_switch *sw, unsigned int port, struct rte_mbuf *m)
{
	unsigned int w = sw->owner_of[port];

	if (sw->ho_n[w] == EMU_HO_STAGE)
		emu_switch_handoff_push(sw, w);
	sw->ho_pkts[w][sw->ho_n[w]++] = m;
}

uint16_t
emu_switch_handoff_run(struct emu_switch *sw, uint16_t port, struct rte_mbuf **pkts, uint16_t n)
{
	unsigned int w = sw->owner_of[port];
	uint16_t k = 0, room;

	while (k < n) {
		const struct emu_pkt_meta *meta = emu_meta(pkts[k]);

		if (meta->out_port != port || !(meta->flags & EMU_META_PARSED) ||
		    meta->pkt.cls == ROCE_CLASS_MAC_CONTROL)
			break;
		k++;
	}
	for (n = 0; n < k; n += room) {
		if (sw->ho_n[w] == EMU_HO_STAGE)
			emu_switch_handoff_push(sw, w);
		room = (uint16_t)RTE_MIN((unsigned int)(k - n),
					 (unsigned int)(EMU_HO_STAGE - sw->ho_n[w]));
		memcpy(&sw->ho_pkts[w][sw->ho_n[w]], pkts + n, room * sizeof(*pkts));
		sw->ho_n[w] = (uint16_t)(sw->ho_n[w] + room);
	}
	return k;
}

unsigned int
emu_switch_handoff_flush(struct emu_switch *sw)
{
	unsigned int w, k = 0;

	for (w = 0; w < sw->n_workers; w++)
		if (sw->ho_n[w] > 0)
			k += emu_switch_handoff_push(sw, w);
	return k;
}

uint64_t
emu_switch_handoff_staged(const struct emu_switch *sw)
{
	uint64_t n = 0;
	unsigned int w;

	for (w = 0; w < sw->n_workers; w++)
		n += sw->ho_n[w];
	return n;
}

void
emu_switch_rx_refused(struct emu_switch *sw, uint16_t port, struct rte_mbuf **pkts, uint16_t n,
		      uint64_t now_ns)
{
	struct emu_port_stats *ps = &sw->port_stats[port];
	uint16_t i;

	for (i = 0; i < n; i++) {
		emu_switch_rx_meta(sw, emu_meta(pkts[i]), port, now_ns);
		ps->rx_bytes += rte_pktmbuf_pkt_len(pkts[i]);
	}
	ps->rx_pkts += n;
	emu_switch_drop_bulk(sw, pkts, n, EMU_RUN_CTR_DROP_HANDOFF_FULL);
}

void
emu_switch_rx_handoff(struct emu_switch *sw, struct rte_mbuf **pkts, uint16_t n,
		      uint64_t now_ns)
{
	uint64_t delay = 0, pfc = 0, pfc_max = 0;
	uint16_t i, k = 0;

	sw->ctr[EMU_RUN_CTR_HANDOFF_IN] += n;
	/* the frames' lines are in the sender's cache: ask for them all before the first use */
	for (i = 0; i < n; i++) {
		rte_prefetch0(pkts[i]);
		rte_prefetch0(emu_meta(pkts[i]));
	}
	for (i = 0; i < n; i++) {
		struct emu_pkt_meta *meta = emu_meta(pkts[i]);
		/* since it was received, or made (a PFC frame): the cross-worker delay */
		uint64_t d = now_ns > meta->ts_ns ? now_ns - meta->ts_ns : 0;

		delay += d;
		if (meta->flags & (EMU_META_RXCTL | EMU_META_MACCTL)) {
			pfc += 1;
			pfc_max = RTE_MAX(pfc_max, d);
		}
		if (meta->flags & EMU_META_RXCTL) {
			/* a PAUSE/PFC received by another worker for this one's egress */
			meta->flags &= (uint8_t)~EMU_META_RXCTL;
			emu_tm_pause_rx(sw->tm, meta->in_port, now_ns, meta->pkt.macctl_opcode,
					meta->pkt.pfc_enable, meta->pkt.pause_quanta, &sw->tm_rng);
			sw->ctr[EMU_RUN_CTR_CONSUMED_MAC_CONTROL] += 1;
			rte_pktmbuf_free(pkts[i]);
			continue;
		}
		pkts[k++] = pkts[i];
	}
	/* into the TM as emu_switch_rx_lens() does: a run to one port in one call, in order */
	emu_switch_enqueue_runs(sw, EMU_PORT_NONE, pkts, k, now_ns);
	sw->ctr[EMU_RUN_CTR_HANDOFF_DELAY_NS] += delay;
	sw->ctr[EMU_RUN_CTR_HANDOFF_PFC] += pfc;
	if (pfc_max > sw->ctr[EMU_RUN_CTR_HANDOFF_PFC_DELAY_MAX_NS])
		sw->ctr[EMU_RUN_CTR_HANDOFF_PFC_DELAY_MAX_NS] = pfc_max;
	emu_switch_send_pfc(sw, now_ns);
}

void
emu_switch_absorb(struct emu_switch *dst, const struct emu_switch *src)
{
	unsigned int i, k;

	for (i = 0; i < dst->n_ports; i++) {
		dst->port_stats[i].rx_pkts += src->port_stats[i].rx_pkts;
		dst->port_stats[i].rx_bytes += src->port_stats[i].rx_bytes;
		dst->port_stats[i].tx_pkts += src->port_stats[i].tx_pkts;
		dst->port_stats[i].tx_bytes += src->port_stats[i].tx_bytes;
	}
	for (k = 0; k < EMU_RUN_CTR_MAX; k++)
		dst->ctr[k] = emu_run_ctr_add(k, dst->ctr[k], src->ctr[k]);
	for (i = 0; i < dst->n_stages; i++) {
		struct emu_stage_inst *d = &dst->stages[i];
		const struct emu_stage_inst *s = &src->stages[i];

		d->in_pkts += s->in_pkts;
		d->out_pkts += s->out_pkts;
		for (k = 0; k < d->ops->n_ctr; k++)
			d->ctr[k] += s->ctr[k];
	}
	emu_tm_absorb(dst->tm, src->tm, src->last_now_ns);
	for (i = 0; i < FAB_MAX_LINKS; i++)
		for (k = 0; k < FAB_LINK_CTR_MAX; k++)
			dst->fab_link_ctr[i][k] += src->fab_link_ctr[i][k];
	for (i = 0; i < FAB_MAX_SWITCHES; i++)
		for (k = 0; k < FAB_SW_CTR_MAX; k++)
			dst->fab_sw_ctr[i][k] += src->fab_sw_ctr[i][k];
	for (i = 0; i < dst->n_incast; i++)
		for (k = 0; k < EMU_INCAST_CTR_MAX; k++)
			dst->incast[i].ctr[k] += src->incast[i].ctr[k];
}

void
emu_snap_absorb(const struct emu_switch *sw, struct emu_snap *dst, const struct emu_snap *src)
{
	unsigned int i, k, n_stage_ctr = 0;

	for (i = 0; i < sw->n_ports; i++) {
		dst->ports[i].rx_pkts += src->ports[i].rx_pkts;
		dst->ports[i].rx_bytes += src->ports[i].rx_bytes;
		dst->ports[i].tx_pkts += src->ports[i].tx_pkts;
		dst->ports[i].tx_bytes += src->ports[i].tx_bytes;
	}
	for (i = 0; i < sw->pl->tm.n_ports; i++) {
		dst->tm_held[i] += src->tm_held[i];
		dst->tm_link_up[i] = dst->tm_link_up[i] && src->tm_link_up[i];
		for (k = 0; k < EMU_TM_CTR_MAX; k++)
			if (k == EMU_TM_CTR_MAX_QUEUE_BYTES)
				dst->tm_ctr[i][k] = RTE_MAX(dst->tm_ctr[i][k], src->tm_ctr[i][k]);
			else
				dst->tm_ctr[i][k] += src->tm_ctr[i][k];
		for (k = 0; k < EMU_TM_N_PRIO; k++) {
			struct emu_tm_prio_stats *d = &dst->prio[i][k];
			const struct emu_tm_prio_stats *s = &src->prio[i][k];

			d->queue_bytes += s->queue_bytes;
			d->queue_pkts += s->queue_pkts;
			d->max_queue_bytes = RTE_MAX(d->max_queue_bytes, s->max_queue_bytes);
			d->ingress_bytes += s->ingress_bytes;
			d->headroom_bytes += s->headroom_bytes;
			d->paused = d->paused || s->paused;
			d->paused_ns += s->paused_ns;
			d->xoff = d->xoff || s->xoff;
			d->xoff_ns += s->xoff_ns;
		}
	}
	for (i = 0; i < FAB_MAX_LINKS; i++)
		for (k = 0; k < FAB_LINK_CTR_MAX; k++)
			dst->fab_link_ctr[i][k] += src->fab_link_ctr[i][k];
	for (i = 0; i < FAB_MAX_SWITCHES; i++)
		for (k = 0; k < FAB_SW_CTR_MAX; k++)
			dst->fab_sw_ctr[i][k] += src->fab_sw_ctr[i][k];
	dst->buf_used += src->buf_used;
	for (k = 0; k < EMU_RUN_CTR_MAX; k++)
		dst->run_ctr[k] = emu_run_ctr_add(k, dst->run_ctr[k], src->run_ctr[k]);
	for (i = 0; i < sw->n_stages; i++) {
		dst->st_in[i] += src->st_in[i];
		dst->st_out[i] += src->st_out[i];
		n_stage_ctr += sw->stages[i].ops->n_ctr;
	}
	for (k = 0; k < n_stage_ctr; k++)
		dst->stage_ctr[k] += src->stage_ctr[k];
	for (i = 0; i < sw->n_incast; i++) {
		dst->incast_enabled[i] = dst->incast_enabled[i] || src->incast_enabled[i];
		for (k = 0; k < EMU_INCAST_CTR_MAX; k++)
			dst->incast_ctr[i][k] += src->incast_ctr[i][k];
		/* a closed loop's senders live on its port's owner alone */
		if (sw->incast[i].hosts != NULL && !sw->incast[i].foreign)
			continue;
		if (sw->incast[i].hosts != NULL)
			memcpy(dst->incast_host[i], src->incast_host[i], sizeof(dst->incast_host[i]));
	}
	dst->cons.rx += src->cons.rx;
	dst->cons.created += src->cons.created;
	dst->cons.tx += src->cons.tx;
	dst->cons.drops += src->cons.drops;
	dst->cons.held += src->cons.held;
	dst->cons.consumed += src->cons.consumed;
	dst->cons.handoff_out += src->cons.handoff_out;
	dst->cons.handoff_in += src->cons.handoff_in;
	dst->cons.unaccounted += src->cons.unaccounted;
}

void
emu_snap_view(const struct emu_snap *sn, struct emu_snap_view *v)
{
	v->handoff_in = sn->run_ctr[EMU_RUN_CTR_HANDOFF_IN];
	v->handoff_out = sn->run_ctr[EMU_RUN_CTR_HANDOFF_OUT];
	v->drop_full = sn->run_ctr[EMU_RUN_CTR_DROP_HANDOFF_FULL];
	v->delay_ns = sn->run_ctr[EMU_RUN_CTR_HANDOFF_DELAY_NS];
	v->pfc = sn->run_ctr[EMU_RUN_CTR_HANDOFF_PFC];
	v->pfc_delay_max_ns = sn->run_ctr[EMU_RUN_CTR_HANDOFF_PFC_DELAY_MAX_NS];
}

struct emu_program *
emu_switch_program(const struct emu_switch *sw)
{
	return sw->prog;
}
