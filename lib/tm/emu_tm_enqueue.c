/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The traffic manager's enqueue: one packet (emu_tm_enqueue(): shared-buffer and ingress
 * accounting, limits, ECN, XOFF) and bursts (emu_tm_enqueue_burst(), emu_tm_enqueue_port_run()),
 * the general rule again with the port's state in locals, falling back to it packet by packet;
 * kept in one file so that the two copies of each rule are read (and changed) together. Their
 * inner loops for runs of alike packets are in emu_tm_same.h; the arrival side in
 * emu_tm_arrive.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "lib/base/emu_json.h"
#include "lib/proto/roce_rewrite.h"
#include "lib/tm/emu_tm_int.h"
#include "lib/tm/emu_tm_same.h"

/*
 * A PFC frame @p m the switch sends, into the last frame of a full control queue (one that has
 * not started: started frames are on the delay line): every priority @p m names takes @p m's
 * time, the others keep theirs, so the frame that leaves carries the newest state of each.
 * The queue fills only when its port has not sent for a while (two workers on shared CPUs, a
 * descheduled owner), and a receiver only ever acts on the latest time of a priority: merged,
 * a refresh or the XON that ends a pause is never refused. PAUSE frames and anything else:
 * false (the caller drops @p m as before).
 */
static bool
emu_tm_pfc_merge(struct rte_mbuf *into, const struct rte_mbuf *m)
{
	uint8_t *d = rte_pktmbuf_mtod(into, uint8_t *);
	const uint8_t *s = rte_pktmbuf_mtod(m, const uint8_t *);
	uint16_t v, i;

	/* dst, src, EtherType 0x8808, opcode 0x0101, class-enable vector, 8 x 16-bit quanta */
	if (into->data_len < 34 || m->data_len < 34 || d[12] != 0x88 || d[13] != 0x08 ||
	    s[12] != 0x88 || s[13] != 0x08 ||
	    ((d[14] << 8) | d[15]) != EMU_TM_MACCTL_OPCODE_PFC ||
	    ((s[14] << 8) | s[15]) != EMU_TM_MACCTL_OPCODE_PFC)
		return false;
	v = (uint16_t)((s[16] << 8) | s[17]);
	for (i = 0; i < EMU_TM_N_PRIO; i++)
		if (v & (1u << i))
			memcpy(d + 18 + 2 * i, s + 18 + 2 * i, 2);
	v |= (uint16_t)((d[16] << 8) | d[17]);
	d[16] = (uint8_t)(v >> 8);
	d[17] = (uint8_t)v;
	return true;
}

bool
emu_tm_enqueue(struct emu_tm *tm, uint16_t port, struct rte_mbuf *m, uint64_t now_ns,
	       struct emu_rng *rng)
{
	struct emu_tm_port *p = &tm->ports[port];
	struct emu_pkt_meta *meta = emu_meta(m);
	uint32_t len = emu_wire_len(m);
	struct emu_tm_port *in = NULL;
	unsigned int q, reason = EMU_TM_CTR_MAX;
	uint64_t cells;
	uint32_t hop;

	if (!p->link_up) {
		emu_tm_drop(tm, port, m, EMU_TM_CTR_DROP_LINK_DOWN);
		return false;
	}
	if (meta->flags & EMU_META_MACCTL) {
		q = EMU_TM_CTRL_Q;
		if (emu_tm_fifo_count(&p->q[q]) > p->q[q].mask) {
			struct rte_mbuf *last = p->q[q].slots[(p->q[q].tail - 1) & p->q[q].mask];

			if (emu_tm_pfc_merge(last, m)) {
				p->ctr[EMU_TM_CTR_PFC_COALESCED] += 1;
				rte_pktmbuf_free(m);
				return true;
			}
			reason = EMU_TM_CTR_DROP_QUEUE_FULL;
		}
		cells = 0;
	} else {
		q = meta->prio & (EMU_TM_N_PRIO - 1);
		cells = emu_tm_cells(&tm->buf, len);
		hop = emu_meta_hop_in(meta);
		if (hop < tm->n_ports && (tm->ports[hop].cfg.lossless_mask & (1u << q)))
			in = &tm->ports[hop];
		meta->flags &= (uint8_t)~EMU_META_HEADROOM;
		reason = emu_tm_limit(tm, p, q, cells);
		/* Without headroom (no PFC configured) a lossless frame is dropped like a lossy
		 * one, under the reason the shared buffer gave. */
		if (reason != EMU_TM_CTR_MAX && in != NULL && in->cfg.headroom_bytes > 0) {
			/* A lossless packet the shared buffer refuses goes into the headroom
			 * of its ingress port (only the slot limit is absolute). */
			if (p->port_pkts >= p->cfg.queue_pkts)
				reason = EMU_TM_CTR_DROP_QUEUE_FULL;
			else if (in->hr_cells[q] + cells > in->cfg.headroom_bytes)
				reason = EMU_TM_CTR_DROP_HEADROOM_OVERFLOW;
			else {
				reason = EMU_TM_CTR_MAX;
				meta->flags |= EMU_META_HEADROOM;
			}
		}
	}
	if (reason != EMU_TM_CTR_MAX) {
		emu_tm_drop(tm, port, m, reason);
		return false;
	}
	if (q != EMU_TM_CTRL_Q) {
		if (meta->flags & EMU_META_HEADROOM) {
			in->hr_cells[q] += cells;
			in->ctr[EMU_TM_CTR_HEADROOM_PKTS] += 1;
		} else {
			if (!p->cfg.own_buffer)
				tm->used_cells += cells;
			p->q_cells[q] += cells;
			p->port_cells += cells;
		}
		p->port_pkts += 1;
		if (p->cfg.ecn.enabled && p->cfg.ecn.at_enqueue)
			emu_tm_ecn(p, m, p->q_bytes[q], rng);
		if (in != NULL) {
			in->ing_bytes[q] += len;
			/* Crossing XOFF: tell the sender on the ingress port to pause. */
			if (in->cfg.pfc.enabled && !in->xoff[q] &&
			    in->ing_bytes[q] > in->cfg.pfc.xoff_bytes) {
				emu_tm_xoff(tm, in, q, now_ns);
			}
		}
	}
	emu_tm_fifo_join(tm, p, q, m, len, now_ns);
	return true;
}

/* Is @p m a packet emu_tm_enqueue_port_run() takes for @p port? Parsed, not a MAC control
 * frame (one that arrived, or one the switch sends), for that port. */
static inline bool
emu_tm_run_member(struct rte_mbuf *m, uint16_t port)
{
	const struct emu_pkt_meta *meta = emu_meta(m);

	return meta->out_port == port && (meta->flags & EMU_META_PARSED) &&
	       !(meta->flags & EMU_META_MACCTL) && meta->pkt.cls != ROCE_CLASS_MAC_CONTROL;
}

/*
 * How many cells one queue (@p q_cells, of a port holding @p port_cells) may still take, the
 * buffer holding @p used_cells of @p total, before one of emu_tm_enqueue()'s byte limits
 * refuses a packet: the port's limit, the static queue limit, the shared buffer, and the
 * dynamic threshold q <= alpha x (total - used), where both sides move with each packet
 * (q and used grow by the same cells). Below the exact bound by a margin (64 bytes per unit
 * of 1 + alpha), so that rounding in the threshold's double arithmetic never lets through a
 * packet the exact test refuses; a packet past the room goes through emu_tm_enqueue(). Byte
 * counts stay below EMU_TM_MAX_KB (16 GiB) by configuration: the conversions are exact.
 */
static inline uint64_t
emu_tm_room(uint64_t limit, uint64_t port_cells, uint64_t queue_limit, uint64_t q_cells,
	    uint64_t total, uint64_t used_cells, double alpha, bool dynamic, bool own)
{
	uint64_t room = port_cells < limit ? limit - port_cells : 0;

	if (!dynamic)
		room = RTE_MIN(room, q_cells < queue_limit ? queue_limit - q_cells : 0);
	if (!own) {
		room = RTE_MIN(room, used_cells < total ? total - used_cells : 0);
		if (dynamic) {
			double d = alpha * (double)(int64_t)(total - used_cells) -
				   (double)(int64_t)q_cells;
			uint64_t r = d > 0 ? (uint64_t)(d / (1.0 + alpha)) : 0;

			room = RTE_MIN(room, r > 64 ? r - 64 : 0);
		}
	}
	return room;
}

/*
 * emu_tm_enqueue() of pkts[0..n) to one port, in order, with the port's running state in
 * locals: the compiler cannot keep it in registers across the stores into each packet's
 * metadata (they may alias the port as far as it knows). A packet the common case does not
 * cover (a MAC control frame, one the buffer would refuse or take into headroom) goes through
 * emu_tm_enqueue() itself with the state written back first, so the result is the same
 * packet for packet. pow2 (cell size 1 or a power of two), dynamic and own are constants in
 * each copy the caller makes (fewer registers and branches). The queues only grow during a
 * burst, so the port's maximum queue is its length at the end.
 */
static inline __attribute__((always_inline)) uint16_t
emu_tm_enqueue_run(struct emu_tm *tm, uint16_t port, struct rte_mbuf **pkts, uint16_t n,
		   uint64_t now_ns, struct emu_rng *rng, const bool pow2, const bool dynamic,
		   const bool own, const bool scan, const bool trace, uint16_t *taken)
{
	struct emu_tm_port *p = &tm->ports[port];
	const uint32_t cb = tm->buf.cell_bytes;
	/* pow2: cells = (len + cb_round) & cb_mask */
	const uint64_t cb_round = (uint64_t)cb - 1, cb_mask = ~cb_round;
	const uint64_t total = tm->buf.total_bytes, limit = p->cfg.limit_bytes;
	const uint64_t queue_limit = p->cfg.queue_limit_bytes;
	const uint32_t queue_pkts = p->cfg.queue_pkts;
	const unsigned int n_ports = tm->n_ports;
	const double alpha = tm->buf.alpha;
	const bool general_only = tm->general_only;
	/* all_q0, port_pkts0: at the last load; what grew since is what this run queued. Every
	 * packet from i_load on, up to the current one, was queued here: port_pkts is
	 * port_pkts0 + i - i_load, and the slot limit is reached at i = pkts_stop. */
	uint64_t port_cells, used_cells, all_q, all_q0, pkts_stop;
	uint32_t port_pkts, port_pkts0, nonempty;
	unsigned int i, i_load;
	uint16_t queued = 0;
	/* The queue of the last packet (runs of one priority are the rule): its FIFO tail,
	 * cells, bytes and maximum in locals. cq = EMU_TM_N_Q: none loaded. */
	unsigned int cq = EMU_TM_N_Q;
	struct emu_tm_fifo *f = NULL;
	struct rte_mbuf **f_slots = NULL;
	uint32_t f_tail = 0, f_tail0 = 0, f_mask = 0;
	uint64_t q_cells = 0, qb = 0;
	/* Cells queue cq may still take in this run with every byte limit of emu_tm_enqueue()
	 * passing (emu_tm_room(), computed with acc_cells 0): one compare per packet instead of
	 * those tests. */
	uint64_t room = 0;
	/* The lossless ingress port of the last packet (in_hop, UINT32_MAX: none loaded); a new
	 * queue loads it again. Its bytes of priority cq were ing0 when acc_bytes was in_acc0:
	 * every packet since is its, so they are ing0 + acc_bytes - in_acc0 now (acc_bytes is
	 * folded only with the port unloaded). While PFC may pause it, it crosses XOFF when
	 * acc_bytes passes acc_xoff = xoff - ing0 + in_acc0 (signed: it may be crossed already);
	 * INT64_MAX: never. */
	struct emu_tm_port *in = NULL;
	uint32_t in_hop = UINT32_MAX;
	uint64_t ing0 = 0, in_acc0 = 0;
	int64_t acc_xoff = INT64_MAX;
	/* cells and bytes queued since the running counts were last brought up to date: one add
	 * each per packet, added to the queue's, the port's and the buffer's in TM_BURST_FOLD() */
	uint64_t acc_cells = 0, acc_bytes = 0;

#define TM_BURST_FOLD() do { \
		q_cells += acc_cells; port_cells += acc_cells; \
		if (!own) \
			used_cells += acc_cells; \
		qb += acc_bytes; all_q += acc_bytes; acc_cells = 0; acc_bytes = 0; \
	} while (0)
#define TM_BURST_LOAD(from) do { \
		port_cells = p->port_cells; used_cells = tm->used_cells; \
		all_q = all_q0 = p->all_q_bytes; port_pkts = port_pkts0 = p->port_pkts; \
		i_load = (from); \
		pkts_stop = (uint64_t)i_load + (port_pkts0 < queue_pkts ? queue_pkts - port_pkts0 : 0); \
		nonempty = p->nonempty; cq = EMU_TM_N_Q; in_hop = UINT32_MAX; in = NULL; \
		acc_xoff = INT64_MAX; \
	} while (0)
	/* the queue only grew in this run: its length now is its maximum in the run */
#define TM_BURST_STORE_Q() do { \
		TM_BURST_FOLD(); \
		/* f_tail0 = f_tail: nothing queued since (or no queue loaded: both 0) */ \
		if (f_tail != f_tail0) { \
			f->tail = f_tail; p->q_cells[cq] = q_cells; p->q_bytes[cq] = qb; \
			nonempty |= 1u << cq; \
			if (qb > p->max_q_bytes[cq]) \
				p->max_q_bytes[cq] = qb; \
			f_tail0 = f_tail; \
		} \
	} while (0)
#define TM_BURST_STORE_IN() do { \
		if (in != NULL) \
			in->ing_bytes[cq] = ing0 + (acc_bytes - in_acc0); \
	} while (0)
#define TM_BURST_STORE() do { \
		port_pkts = port_pkts0 + (uint32_t)(i - i_load); \
		TM_BURST_STORE_IN(); TM_BURST_STORE_Q(); /* before the fold */ \
		p->port_cells = port_cells; tm->used_cells = used_cells; \
		p->all_q_bytes = all_q; p->port_pkts = port_pkts; p->nonempty = nonempty; \
		if (all_q > p->ctr[EMU_TM_CTR_MAX_QUEUE_BYTES]) \
			p->ctr[EMU_TM_CTR_MAX_QUEUE_BYTES] = all_q; \
		p->ctr[EMU_TM_CTR_ENQ_PKTS] += port_pkts - port_pkts0; \
		p->ctr[EMU_TM_CTR_ENQ_BYTES] += all_q - all_q0; \
		queued += (uint16_t)(port_pkts - port_pkts0); \
		port_pkts0 = port_pkts; all_q0 = all_q; \
	} while (0)
	/* emu_tm_run_member()'s metadata test as one compare of emu_tm_meta_word() */
	const uint32_t run_mask = 0xFFFFu | (uint32_t)(EMU_META_PARSED | EMU_META_MACCTL) << 24;
	const uint32_t run_want = (uint32_t)port | (uint32_t)EMU_META_PARSED << 24;

	TM_BURST_LOAD(0);
	for (i = 0; i < n; i++) {
		/* The same run of the last packet's queue: every packet that the body below
		 * would queue without changing what it keeps loaded, with its tests reduced to
		 * one compare of the metadata word and the two of the room. */
		if (cq < EMU_TM_N_PRIO && in_hop <= UINT16_MAX && !general_only) {
			i = emu_tm_enqueue_same(pkts, i, RTE_MIN((uint64_t)n, pkts_stop), now_ns,
						scan ? port : EMU_TM_SAME_ANY_PORT, cq, in_hop,
						cb_round, pow2, trace, qb, f_slots, &f_tail, f_mask,
						room, &acc_cells, acc_xoff, &acc_bytes);
			if (i >= n)
				break;
		}
		struct rte_mbuf *m = pkts[i];
		struct emu_pkt_meta *meta = emu_meta(m);
		const uint32_t w = emu_tm_meta_word(meta);
		const uint8_t flags = (uint8_t)(w >> 24);
		const uint32_t len = (flags & EMU_META_SNAP) ? meta->wire_len :
							     rte_pktmbuf_pkt_len(m);
		const unsigned int q = (w >> 16) & (EMU_TM_N_PRIO - 1);
		const uint32_t hop = (flags & EMU_META_HOP) ? meta->hop_in : meta->in_port;
		uint64_t cells;

		/* emu_tm_enqueue_port_run(): the run ends at a packet for another port or one the
		 * caller consumes (not parsed, or a MAC control frame that arrived) */
		/* emu_tm_run_member(), with the metadata word already at hand */
		if (scan && unlikely((w & run_mask) != run_want ||
				     meta->pkt.cls == ROCE_CLASS_MAC_CONTROL))
			break;

		if (unlikely(q != cq)) {
			TM_BURST_STORE_IN(); /* before the fold */
			TM_BURST_STORE_Q();
			in = NULL;
			in_hop = UINT32_MAX;
			acc_xoff = INT64_MAX;
			cq = q;
			f = &p->q[q];
			f_slots = f->slots;
			f_tail = f_tail0 = f->tail;
			f_mask = f->mask;
			q_cells = p->q_cells[q];
			qb = p->q_bytes[q];
			room = emu_tm_room(limit, port_cells, queue_limit, q_cells, total, used_cells,
					   alpha, dynamic, own);
		}
		if (pow2)
			cells = ((uint64_t)len + cb_round) & cb_mask;
		else
			cells = (uint64_t)(len + cb - 1) / cb * cb;
		/* emu_tm_enqueue()'s tests: the slot count as it is, the byte limits through the
		 * room they leave (a packet past it is decided there, exactly); a MAC control frame
		 * of the switch's goes there too (a scan has ended the run at it) */
		if (unlikely((!scan && (flags & EMU_META_MACCTL)) || i >= pkts_stop ||
			     acc_cells + cells > room)) {
			/* the general path decides: drop, headroom or the control queue */
			TM_BURST_STORE();
			queued += emu_tm_enqueue(tm, port, m, now_ns, rng);
			TM_BURST_LOAD(i + 1);
			continue;
		}
		if (unlikely(hop != in_hop)) {
			TM_BURST_STORE_IN();
			in_hop = hop;
			in = hop < n_ports && (tm->lossless_of[hop] & (1u << q)) ? &tm->ports[hop] :
										   NULL;
			acc_xoff = INT64_MAX;
			if (in != NULL) {
				ing0 = in->ing_bytes[q];
				in_acc0 = acc_bytes;
				if (in->cfg.pfc.enabled && !in->xoff[q])
					acc_xoff = (int64_t)in->cfg.pfc.xoff_bytes - (int64_t)ing0 +
						   (int64_t)in_acc0;
			}
		}
		acc_cells += cells;
		/* Crossing XOFF: tell the sender on the ingress port to pause. */
		if (unlikely((int64_t)(acc_bytes + len) > acc_xoff)) {
			emu_tm_xoff(tm, in, q, now_ns);
			acc_xoff = INT64_MAX;
		}
		meta->flags = flags & (uint8_t)~EMU_META_HEADROOM;
		meta->ts_ns = now_ns;
		if (trace) {
			meta->trace.t_enq_ns = now_ns;
			meta->trace.qdepth_bytes =
				(uint32_t)RTE_MIN(qb + acc_bytes, (uint64_t)UINT32_MAX);
		}
		f_slots[f_tail++ & f_mask] = m;
		acc_bytes += len;
	}
	TM_BURST_STORE();
	if (taken != NULL)
		*taken = (uint16_t)i;
#undef TM_BURST_FOLD
#undef TM_BURST_LOAD
#undef TM_BURST_STORE
#undef TM_BURST_STORE_Q
#undef TM_BURST_STORE_IN
	return queued;
}

uint16_t
emu_tm_enqueue_burst(struct emu_tm *tm, uint16_t port, struct rte_mbuf **pkts, uint16_t n,
		     uint64_t now_ns, struct emu_rng *rng)
{
	const struct emu_tm_port *p = &tm->ports[port];
	const uint32_t cb = tm->buf.cell_bytes;
	const bool own = p->cfg.own_buffer, dynamic = tm->buf.dynamic;
	uint16_t i, queued = 0;

	/* one packet (replay: every arrival its own event): the burst's set-up costs more */
	if (n == 1)
		return emu_tm_enqueue(tm, port, pkts[0], now_ns, rng);
	if (!p->link_up || (p->cfg.ecn.enabled && p->cfg.ecn.at_enqueue)) {
		for (i = 0; i < n; i++)
			queued += emu_tm_enqueue(tm, port, pkts[i], now_ns, rng);
		return queued;
	}
	if ((cb & (cb - 1)) != 0)
		return emu_tm_enqueue_run(tm, port, pkts, n, now_ns, rng, false, dynamic, own, false,
					  tm->trace, NULL);
	if (own)
		return emu_tm_enqueue_run(tm, port, pkts, n, now_ns, rng, true, dynamic, true, false,
					  tm->trace, NULL);
	if (dynamic)
		return emu_tm_enqueue_run(tm, port, pkts, n, now_ns, rng, true, true, false, false,
					  tm->trace, NULL);
	return emu_tm_enqueue_run(tm, port, pkts, n, now_ns, rng, true, false, false, false,
				  tm->trace, NULL);
}

uint16_t
emu_tm_enqueue_port_run(struct emu_tm *tm, uint16_t port, struct rte_mbuf **pkts, uint16_t n,
			uint64_t now_ns, struct emu_rng *rng)
{
	const struct emu_tm_port *p = &tm->ports[port];
	const uint32_t cb = tm->buf.cell_bytes;
	uint16_t k = 0;

	if (n > 1 && p->link_up && !(p->cfg.ecn.enabled && p->cfg.ecn.at_enqueue) &&
	    (cb & (cb - 1)) == 0 && !p->cfg.own_buffer) {
		/* the common case: the run found in the enqueue loop itself */
		/* the trace as a constant too: one register and test fewer a packet */
		if (tm->buf.dynamic && tm->trace)
			emu_tm_enqueue_run(tm, port, pkts, n, now_ns, rng, true, true, false, true,
					   true, &k);
		else if (tm->buf.dynamic)
			emu_tm_enqueue_run(tm, port, pkts, n, now_ns, rng, true, true, false, true,
					   false, &k);
		else if (tm->trace)
			emu_tm_enqueue_run(tm, port, pkts, n, now_ns, rng, true, false, false, true,
					   true, &k);
		else
			emu_tm_enqueue_run(tm, port, pkts, n, now_ns, rng, true, false, false, true,
					   false, &k);
		return k;
	}
	while (k < n && emu_tm_run_member(pkts[k], port))
		k++;
	if (k > 0)
		emu_tm_enqueue_burst(tm, port, pkts, k, now_ns, rng);
	return k;
}
