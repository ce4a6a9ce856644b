/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The switch's virtual incast senders: filler frames built once, generated on the clock,
 * enqueued like real frames, absorbed or sent to a sink port when the TM releases them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_branch_prediction.h>
#include <rte_malloc.h>

#include "lib/proto/roce_build.h"
#include "lib/proto/roce_mbuf.h"
#include "lib/base/emu_json.h"

#include "lib/switch/emu_switch_int.h"

/* A virtual frame's source and sender: source index in the low 3 bits of meta->reserved. */
#define EMU_INCAST_SRC_BITS 3
#define EMU_INCAST_SRC(meta) ((meta)->reserved & ((1u << EMU_INCAST_SRC_BITS) - 1))
#define EMU_INCAST_SENDER(meta) ((unsigned int)(meta)->reserved >> EMU_INCAST_SRC_BITS)

_Static_assert(EMU_MAX_INCAST <= (1 << EMU_INCAST_SRC_BITS), "source index bits");
_Static_assert(EMU_INCAST_MAX_HOSTS <= (1 << (16 - EMU_INCAST_SRC_BITS)), "sender bits");

/* The source's next frame time, from its senders when it has them. */
static inline void
emu_incast_src_resched(struct emu_incast_src *src)
{
	uint64_t t;

	if (src->hosts != NULL) {
		emu_incast_hosts_next(src->hosts, &t);
		src->s.next_ns = t;
	}
}

/* A closed-loop sender's frame dropped anywhere (the TM's refusal included): out of the switch. */
static void
emu_switch_incast_drop_hook(void *arg, struct rte_mbuf *m, uint32_t reason)
{
	struct emu_switch *sw = arg;
	struct emu_pkt_meta *meta = emu_meta(m);
	struct emu_incast_src *src;

	(void)reason;
	if (!(meta->flags & EMU_META_VIRTUAL))
		return;
	src = &sw->incast[EMU_INCAST_SRC(meta)];
	/* an attached source's frames are dropped inside the fabric as well as by the TM */
	if (src->s.cfg.attach_leaf != EMU_PORT_NONE)
		src->ctr[EMU_INCAST_CTR_TM_DROPPED] += 1;
	if (src->hosts == NULL)
		return;
	emu_incast_hosts_gone(src->hosts, EMU_INCAST_SENDER(meta), emu_wire_len(m), meta->ts_ns);
	emu_incast_src_resched(src);
}

void
emu_switch_incast_start(struct emu_switch *sw, unsigned int i, uint64_t epoch_ns)
{
	struct emu_incast_src *src = &sw->incast[i];

	emu_incast_sched_start(&src->s, epoch_ns);
	if (src->hosts != NULL) {
		emu_incast_hosts_start(src->hosts, &src->s.cfg, epoch_ns);
		emu_incast_src_resched(src);
	}
}

void
emu_switch_incast_apply(struct emu_switch *sw, unsigned int i, const struct emu_set *set,
			uint64_t now_ns)
{
	struct emu_incast_src *src = &sw->incast[i];
	struct emu_incast_cfg before = src->s.cfg;

	emu_incast_apply(&src->s, set, now_ns);
	if (src->hosts != NULL &&
	    (before.enabled != src->s.cfg.enabled || before.senders != src->s.cfg.senders ||
	     before.rate_bps != src->s.cfg.rate_bps)) {
		emu_incast_hosts_start(src->hosts, &src->s.cfg, now_ns);
		emu_incast_src_resched(src);
	}
}

void
emu_switch_incast_free(struct emu_switch *sw)
{
	unsigned int i;

	for (i = 0; i < sw->n_incast; i++) {
		rte_free(sw->incast[i].tmpl);
		rte_free(sw->incast[i].hosts);
		sw->incast[i].tmpl = NULL;
		sw->incast[i].hosts = NULL;
	}
}

/* Have the TM build each source's filler frame once (emu_incast_build_template()). */
int
emu_switch_incast_init(struct emu_switch *sw, struct emu_err *err)
{
	bool hook = false;
	unsigned int i;

	for (i = 0; i < sw->pl->n_incast; i++) {
		struct emu_incast_src *src = &sw->incast[i];
		const struct emu_incast_cfg *c = &sw->pl->incast[i];
		uint8_t mac[6];

		src->s.cfg = *c;
		src->tmpl = rte_zmalloc("emu_incast", c->frame_bytes, RTE_CACHE_LINE_SIZE);
		if (src->tmpl == NULL)
			return emu_err_setrc(err, -ENOMEM, "incast[%u]: out of memory", i);
		sw->n_incast = i + 1;
		emu_switch_port_mac(c->port, mac);
		if (emu_incast_build_template(c, i, mac, src->tmpl, &src->pkt) != 0)
			return emu_err_set(err, "incast[%u]: cannot build a %u-byte frame", i,
					   c->frame_bytes);
		if (c->attach_leaf != EMU_PORT_NONE && !hook) {
			if (emu_switch_add_drop_hook(sw, emu_switch_incast_drop_hook, sw) != 0)
				return emu_err_set(err, "incast[%u]: no drop hook left", i);
			hook = true;
		}
		if (emu_incast_closed_loop(c)) {
			const struct emu_tm_pfc_cfg *pfc = &sw->pl->tm.ports[c->port].pfc;

			src->hosts = rte_zmalloc("emu_incast_hosts", sizeof(*src->hosts),
						 RTE_CACHE_LINE_SIZE);
			if (src->hosts == NULL)
				return emu_err_setrc(err, -ENOMEM, "incast[%u]: out of memory", i);
			emu_incast_hosts_init(src->hosts, c, pfc->xoff_bytes, pfc->xon_bytes);
			if (!hook && emu_switch_add_drop_hook(sw, emu_switch_incast_drop_hook, sw) != 0)
				return emu_err_set(err, "incast[%u]: no drop hook left", i);
			hook = true;
		}
		emu_switch_incast_start(sw, i, 0);
	}
	return 0;
}

/* Into the TM (or, attached to a leaf, into the fabric there): false when the TM refused it
 * at once (an attached source's drops are counted by the drop hook instead). */
static bool
emu_switch_incast_enqueue(struct emu_switch *sw, const struct emu_incast_src *src,
			  struct rte_mbuf *m, uint64_t t)
{
	if (src->s.cfg.attach_leaf != EMU_PORT_NONE) {
		emu_switch_fabric_enter_virtual(sw, m, src->s.cfg.attach_leaf, t);
		return true;
	}
	return emu_tm_enqueue(sw->tm, src->s.cfg.port, m, t, &sw->tm_rng);
}

/*
 * Sender @p j of closed-loop source @p idx wakes at @p t: its frame, or NULL with *woke set
 * (its rate does not allow one yet) or not (pool empty).
 */
static struct rte_mbuf *
emu_switch_incast_host_frame(struct emu_switch *sw, unsigned int idx, unsigned int j, uint64_t t,
			     bool *woke)
{
	struct emu_incast_src *src = &sw->incast[idx];
	struct emu_incast_host *h = &src->hosts->h[j];
	uint64_t cnps = h->cnps, cuts = h->rp.decreases + h->cuts_before;
	struct rte_mbuf *m;

	bool send;

	send = emu_incast_hosts_poll(src->hosts, j, src->s.cfg.frame_bytes, t);
	src->ctr[EMU_INCAST_CTR_CNPS] += h->cnps - cnps;
	src->ctr[EMU_INCAST_CTR_RATE_CUTS] += h->rp.decreases + h->cuts_before - cuts;
	*woke = !send;
	if (!send)
		return NULL;
	m = emu_incast_frame(sw->pool, src->tmpl, &src->pkt, &src->s.cfg, idx, t);
	if (m == NULL) {
		/* the sender's schedule moved on; the frame was never in the switch */
		emu_incast_hosts_gone(src->hosts, j, src->s.cfg.frame_bytes, t);
		return NULL;
	}
	emu_meta(m)->reserved = (uint16_t)(idx | (j << EMU_INCAST_SRC_BITS));
	return m;
}

/*
 * Generate every incast frame whose arrival time is <= @p until_ns, in time order across
 * sources, and enqueue each at its own arrival time. Returns false when the per-call bound
 * stopped it early (the next event time is then in the past and the caller comes back).
 */
bool
emu_switch_incast_gen(struct emu_switch *sw, uint64_t until_ns)
{
	uint64_t gen[EMU_MAX_INCAST] = { 0 }, bytes[EMU_MAX_INCAST] = { 0 };
	uint64_t dropped[EMU_MAX_INCAST] = { 0 }, nombuf[EMU_MAX_INCAST] = { 0 };
	unsigned int budget = EMU_INCAST_CATCHUP, i, best;
	bool done = true;

	if (sw->n_incast == 0)
		return true;
	for (;;) {
		struct emu_incast_src *src;
		struct rte_mbuf *m;
		uint32_t len;
		uint64_t t;

		/* a source whose port another worker owns is generated there (foreign) */
		best = sw->n_incast;
		for (i = 0; i < sw->n_incast; i++)
			if (!sw->incast[i].foreign &&
			    (best == sw->n_incast ||
			     sw->incast[i].s.next_ns < sw->incast[best].s.next_ns))
				best = i;
		if (best == sw->n_incast)
			break;
		src = &sw->incast[best];
		t = src->s.next_ns;
		if (t > until_ns)
			break;
		if (budget-- == 0) {
			done = false;
			break;
		}
		/*
		 * Catching up after the runner was late (live mode: the lcore was descheduled or
		 * the loop slow), frames are generated at their past times; the TM admits against
		 * its queue as last dequeued, so first let the port's queue drain to t, or a
		 * backlog of frames that would have left long ago fills the buffer and drops.
		 * The replay clock is never late (it stops at every frame's time): there this
		 * never runs.
		 */
		if (t < until_ns && !emu_switch_drain(sw, src->s.cfg.port, t)) {
			done = false;	/* TX staging full: the rest after the next TX */
			break;
		}
		len = src->s.cfg.frame_bytes;
		if (src->hosts != NULL) {
			int j = emu_incast_hosts_next(src->hosts, &t);
			uint64_t pauses = src->hosts->h[j].pauses;
			bool woke;

			m = emu_switch_incast_host_frame(sw, best, (unsigned int)j, t, &woke);
			if (m != NULL) {
				gen[best] += 1;
				bytes[best] += len;
				if (!emu_switch_incast_enqueue(sw, src, m, t))
					dropped[best] += 1;
				emu_incast_hosts_check(src->hosts, (unsigned int)j, t);
				src->ctr[EMU_INCAST_CTR_PAUSES] += src->hosts->h[j].pauses - pauses;
			} else if (!woke) {
				nombuf[best] += 1;
			}
			emu_incast_src_resched(src);
			continue;
		}
		emu_incast_sched_advance(&src->s);
		m = emu_incast_frame(sw->pool, src->tmpl, &src->pkt, &src->s.cfg, best, t);
		if (m == NULL) {
			nombuf[best] += 1;
			continue;
		}
		gen[best] += 1;
		bytes[best] += len;
		if (!emu_switch_incast_enqueue(sw, src, m, t))
			dropped[best] += 1;
	}
	for (i = 0; i < sw->n_incast; i++) {
		sw->incast[i].ctr[EMU_INCAST_CTR_GENERATED] += gen[i];
		sw->incast[i].ctr[EMU_INCAST_CTR_BYTES] += bytes[i];
		sw->incast[i].ctr[EMU_INCAST_CTR_TM_DROPPED] += dropped[i];
		sw->incast[i].ctr[EMU_INCAST_CTR_NOMBUF] += nombuf[i];
	}
	return done;
}

/*
 * Take the virtual frames out of a burst the TM released (compacting the rest in place):
 * absorbed ones are counted and freed, sink ones are collected into @p sink (the caller
 * stages them on their sink port). Returns the real packets left.
 */
uint16_t
emu_switch_incast_release(struct emu_switch *sw, struct rte_mbuf **pkts, uint16_t n,
			  struct rte_mbuf **sink, uint16_t *n_sink)
{
	uint64_t absorbed[EMU_MAX_INCAST] = { 0 }, marked[EMU_MAX_INCAST] = { 0 };
	uint16_t i, keep = 0;
	unsigned int k;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct emu_pkt_meta *meta = emu_meta(m);
		const uint8_t *ip;
		unsigned int idx;

		if (!(meta->flags & EMU_META_VIRTUAL)) {
			pkts[keep++] = m;
			continue;
		}
		idx = EMU_INCAST_SRC(meta);
		ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, meta->pkt.l3_off);
		if ((ip[1] & 3) == 3)
			marked[idx] += 1;
		if (unlikely(sw->incast[idx].hosts != NULL)) {
			struct emu_incast_src *src = &sw->incast[idx];
			unsigned int j = EMU_INCAST_SENDER(meta);
			uint64_t paused = src->hosts->h[j].paused_ns;

			emu_incast_hosts_left(src->hosts, j, emu_wire_len(m), (ip[1] & 3) == 3,
					      meta->ts_ns);
			src->ctr[EMU_INCAST_CTR_PAUSED_NS] += src->hosts->h[j].paused_ns - paused;
			src->ctr[EMU_INCAST_CTR_CNP_RING_FULL] = src->hosts->cnp_ring_full;
			emu_incast_src_resched(src);
		}
		if (sw->incast[idx].s.cfg.sink_port != EMU_PORT_NONE) {
			/* out of the TM and of its sender's accounting: from here a real frame on
			 * its way out (a sink-full drop is not the sender's, nor counted twice) */
			meta->flags &= (uint8_t)~EMU_META_VIRTUAL;
			sink[(*n_sink)++] = m;
		} else {
			absorbed[idx] += 1;
			rte_pktmbuf_free(m);
		}
	}
	for (k = 0; k < sw->n_incast; k++) {
		sw->incast[k].ctr[EMU_INCAST_CTR_ABSORBED] += absorbed[k];
		sw->incast[k].ctr[EMU_INCAST_CTR_ECN_MARKED] += marked[k];
	}
	return keep;
}

/* Stage released sink frames on their sink ports' TX buffers, as real frames. */
void
emu_switch_incast_sink(struct emu_switch *sw, struct rte_mbuf **sink, uint16_t n_sink)
{
	uint16_t i;

	for (i = 0; i < n_sink; i++) {
		struct emu_incast_src *src = &sw->incast[EMU_INCAST_SRC(emu_meta(sink[i]))];
		struct emu_tx_stage *tx = &sw->tx[src->s.cfg.sink_port];

		if (tx->n >= EMU_TX_STAGE_PKTS) {
			emu_drop(&sw->dropper, sink[i],
				 sw->incast_reason_base +
					 (uint32_t)(src - sw->incast) * EMU_INCAST_CTR_MAX +
					 EMU_INCAST_CTR_DROP_SINK_FULL,
				 &src->ctr[EMU_INCAST_CTR_DROP_SINK_FULL]);
			continue;
		}
		emu_meta(sink[i])->out_port = src->s.cfg.sink_port;
		tx->lens[tx->n] = emu_wire_len(sink[i]);
		tx->pkts[tx->n++] = sink[i];
		src->ctr[EMU_INCAST_CTR_SINK_TX] += 1;
	}
}
