/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The traffic manager's per-packet path: ports and their queues, shared-buffer and ingress
 * accounting, RED ECN marking, the scheduler (strict or DWRR, paused queues skipped), the link
 * (exact serialisation in ns + ps) and the delay line. Configuration: emu_tm_config.c; PFC
 * and storms: emu_tm_pfc.c; profile changes and reports: emu_tm_ctl.c; a fabric's hops:
 * emu_tm_group.c.
 *
 * Over 600 lines (about 1080): the burst enqueue and the one-queue advance loop are the general
 * per-packet functions again with the port's state in locals, and fall back to them packet by
 * packet; kept next to them so that the two copies of each rule are read (and changed)
 * together, and so that they inline the static helpers (emu_tm_int.h: start time, ingress
 * release, the link's time, the queue's and the delay line's bookkeeping). Their inner loops
 * for runs of alike packets are in emu_tm_same.h.
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

void
emu_tm_set_dropper(struct emu_tm *tm, const struct emu_dropper *d, uint32_t reason_base)
{
	tm->drop = d;
	tm->reason_base = reason_base;
}

static int
emu_tm_fifo_init(struct emu_tm_fifo *f, uint32_t cap)
{
	uint32_t n = rte_align32pow2(cap < 2 ? 2 : cap);

	f->slots = calloc(n, sizeof(*f->slots));
	if (f->slots == NULL)
		return -ENOMEM;
	f->mask = n - 1;
	f->head = 0;
	f->tail = 0;
	return 0;
}

static void
emu_tm_fifo_fini(struct emu_tm_fifo *f)
{
	while (f->slots != NULL && emu_tm_fifo_count(f) > 0)
		rte_pktmbuf_free(f->slots[f->head++ & f->mask]);
	free(f->slots);
	f->slots = NULL;
}

struct emu_tm *
emu_tm_create(const struct emu_tm_cfg *cfg, struct emu_err *err)
{
	struct emu_tm *tm;
	unsigned int i, q;

	tm = calloc(1, sizeof(*tm));
	if (tm == NULL)
		goto nomem;
	tm->n_ports = cfg->n_ports;
	tm->buf = cfg->buffer;
	tm->buf_total_cfg = cfg->buffer.total_bytes;
	tm->trace = true;
	for (i = 0; i < cfg->n_ports; i++) {
		struct emu_tm_port *p = &tm->ports[i];

		p->cfg = cfg->ports[i];
		tm->lossless_of[i] = p->cfg.lossless_mask;
		emu_tm_ecn_ramp(&p->cfg.ecn); /* derived: callers may fill the config directly */
		p->link_up = true;
		for (q = 0; q < EMU_TM_N_Q; q++)
			if (emu_tm_fifo_init(&p->q[q], q == EMU_TM_CTRL_Q ? EMU_TM_CTRL_SLOTS :
						       p->cfg.queue_pkts) != 0)
				goto nomem;
		if (emu_tm_fifo_init(&p->wire, emu_tm_wire_slots(&p->cfg)) != 0)
			goto nomem;
	}
	return tm;
nomem:
	emu_tm_free(tm);
	emu_err_setrc(err, -ENOMEM, "tm: out of memory allocating queues");
	return NULL;
}

void
emu_tm_set_trace(struct emu_tm *tm, bool on)
{
	tm->trace = on;
}

void
emu_tm_set_general_only(struct emu_tm *tm, bool on)
{
	tm->general_only = on;
}

void
emu_tm_free(struct emu_tm *tm)
{
	unsigned int i, q;

	if (tm == NULL)
		return;
	for (i = 0; i < tm->n_ports; i++) {
		for (q = 0; q < EMU_TM_N_Q; q++)
			emu_tm_fifo_fini(&tm->ports[i].q[q]);
		emu_tm_fifo_fini(&tm->ports[i].wire);
	}
	free(tm);
}

/*
 * RED ramp on the queue's instantaneous length q (bytes), as in docs/wire.md:
 *     p = 0                                   q <= kmin
 *     p = pmax * (q - kmin) / (kmax - kmin)   kmin < q <= kmax
 *     p = 1                                   q > kmax
 * ECT packets only: a Not-ECT packet is never marked (ecn_not_ect counts those that
 * found q above kmin), a CE packet stays CE (ecn_ce_already). The draw is uniform in
 * [0, 1) from the stream the caller passes in; a packet is marked when draw < p.
 */
void
emu_tm_ecn(struct emu_tm_port *p, struct rte_mbuf *m, uint64_t q, struct emu_rng *rng)
{
	const struct emu_tm_ecn_cfg *ec = &p->cfg.ecn;
	struct emu_pkt_meta *meta = emu_meta(m);

	if (q <= ec->kmin_bytes)
		return;
	if (!(meta->flags & EMU_META_PARSED) || meta->pkt.ip_version == 0 ||
	    meta->pkt.ecn == 0) {
		p->ctr[EMU_TM_CTR_ECN_NOT_ECT] += 1;
		return;
	}
	if (meta->pkt.ecn == 3) {
		p->ctr[EMU_TM_CTR_ECN_CE_ALREADY] += 1;
		return;
	}
	/* the ramp (above kmax every ECT packet is marked) */
	if (q <= ec->kmax_bytes && !((emu_rng_u64(rng) >> 16) < emu_tm_red_q48(ec, q)))
		return;
	/* Headers are in the first segment (the parser linearises only short ones). */
	if (m->data_len < (uint32_t)meta->pkt.l3_off + 40 ||
	    roce_set_ecn(rte_pktmbuf_mtod(m, uint8_t *), &meta->pkt, 3) != 0) {
		p->ctr[EMU_TM_CTR_ECN_NOT_ECT] += 1;
		return;
	}
	p->ctr[EMU_TM_CTR_ECN_MARKED] += 1;
	meta->trace.marks |= EMU_TRACE_CE_RED;
}

/* Ingress port @p in's priority @p q went above XOFF at @p now_ns: tell its sender to pause. */
void
emu_tm_xoff(struct emu_tm *tm, struct emu_tm_port *in, unsigned int q, uint64_t now_ns)
{
	in->xoff[q] = true;
	tm->hot.n_xoff += 1;
	in->xoff_start_ns[q] = now_ns;
	in->refresh_ns[q] = now_ns;
	in->pfc_pending |= (uint16_t)(1u << q);
	tm->hot.pfc_any = true;
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
		if (emu_tm_fifo_count(&p->q[q]) > p->q[q].mask)
			reason = EMU_TM_CTR_DROP_QUEUE_FULL;
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

/*
 * The queue whose head starts next and when: among the queues whose head could start
 * earliest, the control queue first, then the scheduler's choice. Returns -1 when
 * every queue is empty.
 */
int
emu_tm_pick(struct emu_tm_port *p, uint64_t *start_ns, uint32_t *start_ps, bool commit)
{
	uint64_t s_ns[EMU_TM_N_Q], best_ns = UINT64_MAX;
	uint32_t s_ps[EMU_TM_N_Q], best_ps = 0;
	unsigned int q, eligible = 0;
	uint32_t left = p->nonempty;
	int chosen = -1;

	/* only the queues that hold packets: most of the time one or two of nine */
	while (left != 0) {
		q = (unsigned int)__builtin_ctz(left);
		left &= left - 1;
		emu_tm_start(p, q, &s_ns[q], &s_ps[q]);
		if (s_ns[q] < best_ns || (s_ns[q] == best_ns && s_ps[q] < best_ps)) {
			best_ns = s_ns[q];
			best_ps = s_ps[q];
			eligible = 0;
		}
		if (s_ns[q] == best_ns && s_ps[q] == best_ps)
			eligible |= 1u << q;
	}
	if (eligible == 0)
		return -1;
	*start_ns = best_ns;
	*start_ps = best_ps;
	if (eligible & (1u << EMU_TM_CTRL_Q))
		return EMU_TM_CTRL_Q;
	if (p->cfg.scheduler == EMU_TM_SCHED_STRICT || !commit)
		return 31 - __builtin_clz(eligible);
	/* DWRR: the turn stays with a queue while its deficit covers its head; a queue that
	 * runs empty loses its deficit. Terminates: every round adds weight x quantum. */
	for (;;) {
		q = p->rr;
		if (eligible & (1u << q)) {
			const struct emu_tm_fifo *f = &p->q[q];
			uint32_t len = emu_wire_len(f->slots[f->head & f->mask]);

			if (!p->rr_fresh) {
				p->deficit[q] +=
					(int64_t)p->cfg.weights[q] * EMU_TM_DWRR_QUANTUM_BYTES;
				p->rr_fresh = true;
			}
			if (p->deficit[q] >= (int64_t)len) {
				p->deficit[q] -= len;
				chosen = (int)q;
				break;
			}
		} else if (emu_tm_fifo_count(&p->q[q]) == 0) {
			p->deficit[q] = 0;
		}
		p->rr = (uint8_t)((q + 1) % EMU_TM_N_PRIO);
		p->rr_fresh = false;
	}
	return chosen;
}

/* Ingress port @p in's priority @p q went below XON at @p now_ns: tell its sender. */
void
emu_tm_xon(struct emu_tm *tm, struct emu_tm_port *in, unsigned int q, uint64_t now_ns)
{
	in->xoff[q] = false;
	tm->hot.n_xoff -= 1;
	/* In live mode a frame may start on the link (now_ns = its start time) before the
	 * enqueue that raised XOFF: never count a negative interval. */
	if (now_ns > in->xoff_start_ns[q])
		in->xoff_ns[q] += now_ns - in->xoff_start_ns[q];
	in->pfc_pending |= (uint16_t)(1u << q);
	tm->hot.pfc_any = true;
}

/*
 * Where emu_tm_dequeue() collects what leaves (emu_tm_advance_run()): a packet that starts
 * while the delay line is empty and leaves by now goes here instead of onto the line, from
 * which the dequeue would take it at once (same packet, same order, same time).
 */
struct emu_tm_out {
	struct rte_mbuf **pkts;
	uint32_t *lens; /* each packet's emu_wire_len(), when not NULL */
	uint16_t max;
	uint16_t n;
	uint64_t bytes;
};

/*
 * emu_tm_port_advance() while data queue @p q alone holds packets under the strict scheduler
 * (what emu_tm_pick() would choose every time): the same steps, with the link's, the queue's
 * and the buffer's running state in locals (see emu_tm_enqueue_run()). Returns true when
 * the queue ran empty, false when its head may not start yet or the delay line is full.
 */
static inline __attribute__((always_inline)) bool
emu_tm_advance_run(struct emu_tm *tm, struct emu_tm_port *p, unsigned int q, uint64_t now_ns,
		   struct emu_rng *rng, const bool pow2, const bool own, const bool lens,
		   const bool trace, struct emu_tm_out *o)
{
	struct emu_tm_fifo *f = &p->q[q], *w = &p->wire;
	const uint32_t cb = tm->buf.cell_bytes, f_mask = f->mask, w_mask = w->mask;
	const uint64_t cb_round = (uint64_t)cb - 1, cb_mask = ~cb_round; /* pow2 cells */
	struct rte_mbuf **const f_slots = f->slots, **const w_slots = w->slots;
	const uint64_t pause_ns = p->pause_until_ns[q], rate = p->cfg.rate_bps;
	const uint64_t delay_ns = p->cfg.delay_ns;
	/* ECN at dequeue: a queue left longer than kmin may be marked (no limit: never) */
	const uint64_t ecn_above = p->cfg.ecn.enabled && !p->cfg.ecn.at_enqueue ?
					   p->cfg.ecn.kmin_bytes : UINT64_MAX;
	const unsigned int n_ports = tm->n_ports;
	const bool general_only = tm->general_only;
	uint64_t link_ns = p->link_free_ns, busy_ps = p->busy_ps, qb = p->q_bytes[q];
	const uint64_t qb0 = qb; /* qb0 - qb: the bytes that left */
	/* what leaves the queue's cells (not headroom) and the buffer's, summed here and taken
	 * off once at the end */
	uint64_t left_cells = 0, memo_ps = p->memo_wire_ps;
	uint32_t link_ps = p->link_free_ps, head = f->head, tail = f->tail, w_tail = w->tail;
	uint64_t link_ceil = link_ns + (link_ps != 0); /* link free, rounded up to the ns */
	uint32_t memo_len = p->memo_len;
	/* Each packet started since memo_head had memo_len bytes: busy_ps grows by memo_ps and
	 * left_cells by memo_cells for each (added when the length changes and at the end);
	 * a packet in headroom takes its cells back off left_cells. */
	uint32_t memo_head = head;
	uint64_t memo_cells = pow2 ? ((uint64_t)memo_len + cb_round) & cb_mask :
				     ((uint64_t)memo_len + cb - 1) / cb * cb;
	uint64_t memo_whole_ns = memo_ps / 1000;
	uint32_t memo_rest_ps = (uint32_t)(memo_ps % 1000);
	const uint32_t w_head = w->head;
	/* The lossless ingress port of the last packet (packets of one run mostly share it).
	 * in_hop: the hop it is for. Its bytes of priority q were ing when it was loaded, with
	 * the queue at in_qb bytes: every packet since is its, so its bytes now are
	 * ing - (in_qb - qb), stored back when the port changes and at the end. */
	struct emu_tm_port *in = NULL;
	uint32_t in_hop = UINT32_MAX;
	/* While the port is in XOFF, it goes below its XON threshold when ing - (in_qb - qb) <
	 * xon, that is qb < qb_xon = xon - ing + in_qb (as signed: ing - (in_qb - qb) is never
	 * negative, ing - in_qb may be); INT64_MIN: never. */
	uint64_t ing = 0, in_qb = 0;
	int64_t qb_xon = INT64_MIN;
	bool empty = false;
	/* o's count and bytes in locals (o may alias nothing here, but the compiler cannot know) */
	uint16_t o_n = o != NULL ? o->n : 0, o_max = o != NULL ? o->max : 0; /* 0: none */
	struct rte_mbuf **const o_pkts = o != NULL ? o->pkts : NULL;
	uint32_t *const o_lens = o != NULL ? o->lens : NULL;
	uint64_t wire_bytes = 0; /* what went onto the line; the rest of what left went to o */
	struct rte_mbuf *m;
	struct emu_pkt_meta *meta;
	uint64_t start_ns, arrival_ns, ts_ns, sum_ps, dep_ns;
	uint32_t start_ps, len, carry;
	uint32_t hop;
	uint8_t flags;

	if (p->memo_rate_bps != rate)
		memo_len = UINT32_MAX; /* no frame is that long: recompute the first */
	/*
	 * TM_ADV_START(): start the head packet (its departure in dep_ns), or goto stop when the
	 * queue is empty or its head not due. Then it goes to o (TM_ADV_OUT()) or onto the line
	 * (TM_ADV_WIRE()). Two loops: while o takes what leaves by now with nothing on the line
	 * ahead of it, then onto the line; the line's room is tested once first, then where it
	 * fills.
	 */
#define TM_ADV_START() do { \
		if (head == tail) { \
			empty = true; \
			goto stop; \
		} \
		m = f_slots[head & f_mask]; \
		meta = emu_meta(m); \
		/* emu_tm_start() */ \
		ts_ns = meta->ts_ns; \
		arrival_ns = ts_ns; \
		if (pause_ns > arrival_ns) \
			arrival_ns = pause_ns; \
		/* the link is free by the arrival when link_ns + link_ps / 1000 <= arrival_ns, \
		 * that is link_ceil <= arrival_ns; the start is due when its ceiling is <= now */ \
		if (arrival_ns >= link_ceil) { \
			if (arrival_ns > now_ns) \
				goto stop; \
			start_ns = arrival_ns; \
			start_ps = 0; \
		} else { \
			if (link_ceil > now_ns) \
				goto stop; \
			start_ns = link_ns; \
			start_ps = link_ps; \
		} \
		flags = meta->flags; \
		len = (flags & EMU_META_SNAP) ? meta->wire_len : rte_pktmbuf_pkt_len(m); \
		if (unlikely(len != memo_len)) { \
			busy_ps += (uint64_t)(head - memo_head) * memo_ps; \
			left_cells += (uint64_t)(head - memo_head) * memo_cells; \
			memo_head = head; \
			memo_len = len; \
			memo_cells = pow2 ? ((uint64_t)len + cb_round) & cb_mask : \
					    ((uint64_t)len + cb - 1) / cb * cb; \
			memo_ps = emu_tm_wire_ps(len, rate); \
			memo_whole_ns = memo_ps / 1000; \
			memo_rest_ps = (uint32_t)(memo_ps % 1000); \
		} \
		/* (start_ps + memo_ps) / 1000 and % 1000 without a division: start_ps and \
		 * memo_rest_ps are both below 1000 */ \
		sum_ps = start_ps + memo_rest_ps; \
		carry = sum_ps >= 1000; \
		link_ns = start_ns + memo_whole_ns + carry; \
		link_ps = (uint32_t)(sum_ps - (carry ? 1000 : 0)); \
		link_ceil = link_ns + (link_ps != 0); \
		head++; \
		/* emu_tm_unaccount() */ \
		hop = (flags & EMU_META_HOP) ? meta->hop_in : meta->in_port; \
		if (unlikely(hop != in_hop)) { \
			if (in != NULL) \
				in->ing_bytes[q] = ing - (in_qb - qb); \
			in_hop = hop; \
			in = hop < n_ports && (tm->lossless_of[hop] & (1u << q)) ? \
				     &tm->ports[hop] : NULL; \
			qb_xon = INT64_MIN; \
			if (in != NULL) { \
				ing = in->ing_bytes[q]; \
				in_qb = qb; \
				if (in->xoff[q]) \
					qb_xon = (int64_t)in->cfg.pfc.xon_bytes - (int64_t)ing + \
						 (int64_t)in_qb; \
			} \
		} \
		qb -= len; \
		/* no lossless ingress: the packet cannot be in headroom */ \
		if (unlikely(flags & EMU_META_HEADROOM) && in != NULL) { \
			in->hr_cells[q] -= memo_cells; \
			left_cells -= memo_cells; \
		} \
		/* emu_tm_ingress_release(); qb_xon is INT64_MIN without a lossless ingress */ \
		if (unlikely((int64_t)qb < qb_xon)) { \
			in->ing_bytes[q] = ing - (in_qb - qb); \
			emu_tm_xon(tm, in, q, start_ns); \
			qb_xon = INT64_MIN; \
		} \
		/* the queue length the packet leaves behind */ \
		if (qb > ecn_above) \
			emu_tm_ecn(p, m, qb, rng); \
		if (trace) \
			meta->trace.wait_ns = start_ns > ts_ns ? \
				(uint32_t)RTE_MIN(start_ns - ts_ns, (uint64_t)UINT32_MAX) : 0; \
		/* departure = finish rounded up to the ns, plus the propagation delay */ \
		dep_ns = link_ceil + delay_ns; \
		meta->ts_ns = dep_ns; \
	} while (0)
#define TM_ADV_OUT() do { if (lens) o_lens[o_n] = len; o_pkts[o_n++] = m; } while (0)
#define TM_ADV_WIRE() do { \
		w_slots[w_tail++ & w_mask] = m; \
		wire_bytes += len; \
		if (w_tail - w_head > w_mask) \
			goto stop; \
	} while (0)
	/* emu_tm_advance_same() for what it may take: nothing but the link, the queue's length
	 * and where the packets go changes (the pause over before the link is free, no XON
	 * crossed, no mark); out: to o, else onto the line, the line kept below full */
#define TM_ADV_SAME(is_out) do { \
		uint32_t n_ = tail - head, k_; \
		struct emu_tm_link_at l_ = { .ns = link_ns, .ceil = link_ceil, .ps = link_ps }; \
		bool any_ = false; \
		if (n_ == 0 || memo_len == UINT32_MAX || memo_len == 0 || \
		    general_only || pause_ns >= link_ceil || ((is_out) && now_ns < delay_ns) || \
		    (ecn_above != UINT64_MAX && qb - memo_len > ecn_above)) \
			break; \
		if (emu_meta_hop_in(emu_meta(f_slots[head & f_mask])) != in_hop) { \
			/* another ingress than the last packet's (a fabric port's packets \
			 * from several links): each gives its bytes back itself, while no \
			 * ingress is in XOFF; the first packet of a call goes the general way \
			 * (a run of one ingress then follows in the loop above) */ \
			if (in_hop > UINT16_MAX || tm->hot.n_xoff != 0) \
				break; \
			if (in != NULL) \
				in->ing_bytes[q] = ing - (in_qb - qb); \
			in = NULL; \
			in_hop = UINT32_MAX; \
			qb_xon = INT64_MIN; \
			any_ = true; \
		} \
		n_ = RTE_MIN(n_, f_mask + 1 - (head & f_mask)); \
		if (qb_xon != INT64_MIN) \
			n_ = (int64_t)qb < qb_xon ? 0 : \
				(uint32_t)RTE_MIN((uint64_t)n_, \
						  (uint64_t)((int64_t)qb - qb_xon) / memo_len); \
		if (is_out) \
			n_ = RTE_MIN(n_, (uint32_t)(o_max - o_n)); \
		else \
			n_ = RTE_MIN(RTE_MIN(n_, w_mask - (w_tail - w_head)), \
				     w_mask + 1 - (w_tail & w_mask)); \
		if (any_) \
			k_ = emu_tm_advance_same(&f_slots[head & f_mask], n_, 0, memo_len, \
						 memo_whole_ns, memo_rest_ps, &l_, \
						 (is_out) ? now_ns - delay_ns : now_ns, delay_ns, \
						 is_out, trace, \
						 (is_out) ? o_pkts + o_n : &w_slots[w_tail & w_mask], \
						 (is_out) && lens ? o_lens + o_n : NULL, tm, q); \
		else \
			k_ = emu_tm_advance_same(&f_slots[head & f_mask], n_, (uint16_t)in_hop, \
						 memo_len, memo_whole_ns, memo_rest_ps, &l_, \
						 (is_out) ? now_ns - delay_ns : now_ns, delay_ns, \
						 is_out, trace, \
						 (is_out) ? o_pkts + o_n : &w_slots[w_tail & w_mask], \
						 (is_out) && lens ? o_lens + o_n : NULL, NULL, 0); \
		head += k_; \
		qb -= (uint64_t)k_ * memo_len; \
		link_ns = l_.ns; \
		link_ps = l_.ps; \
		link_ceil = l_.ceil; \
		if (is_out) { \
			o_n = (uint16_t)(o_n + k_); \
		} else { \
			w_tail += k_; \
			wire_bytes += (uint64_t)k_ * memo_len; \
		} \
	} while (0)
	if (w_tail - w_head > w_mask)
		goto stop;
	if (o_n < o_max && w_tail == w_head) {
		for (;;) {
			TM_ADV_SAME(true);
			if (o_n == o_max)
				break;
			TM_ADV_START();
			if (dep_ns > now_ns) {
				TM_ADV_WIRE();
				break;
			}
			/* gone by now, nothing ahead of it on the line: straight to the dequeue */
			TM_ADV_OUT();
			if (o_n == o_max)
				break;
		}
	}
	for (;;) {
		TM_ADV_SAME(false);
		TM_ADV_START();
		TM_ADV_WIRE();
	}
stop:
#undef TM_ADV_SAME
#undef TM_ADV_START
#undef TM_ADV_OUT
#undef TM_ADV_WIRE
	busy_ps += (uint64_t)(head - memo_head) * memo_ps;
	left_cells += (uint64_t)(head - memo_head) * memo_cells;
	if (o != NULL) {
		o->n = o_n;
		o->bytes += qb0 - qb - wire_bytes;
	}
	if (in != NULL)
		in->ing_bytes[q] = ing - (in_qb - qb);
	if (head == f->head) { /* nothing started: the state is as it was */
		if (empty)
			p->nonempty &= ~(1u << q);
		return empty;
	}
	p->port_pkts -= head - f->head;
	f->head = head;
	if (head == tail)
		p->nonempty &= ~(1u << q);
	w->tail = w_tail;
	p->link_free_ns = link_ns;
	p->link_free_ps = link_ps;
	p->busy_ps = busy_ps;
	p->ctr[EMU_TM_CTR_BUSY_NS] = busy_ps / 1000;
	p->q_bytes[q] = qb;
	p->all_q_bytes -= qb0 - qb;
	p->q_cells[q] -= left_cells;
	p->port_cells -= left_cells;
	if (!own)
		tm->used_cells -= left_cells;
	if (memo_len != UINT32_MAX) {
		p->memo_len = memo_len;
		p->memo_rate_bps = rate;
		p->memo_wire_ps = memo_ps;
	}
	return empty;
}

/* emu_tm_advance_run() with the cell rounding, the port's own buffer and the trace as constants. */
static bool
emu_tm_advance_one_queue(struct emu_tm *tm, struct emu_tm_port *p, unsigned int q,
			 uint64_t now_ns, struct emu_rng *rng, struct emu_tm_out *o)
{
	const uint32_t cb = tm->buf.cell_bytes;

	const bool trace = tm->trace;

	if ((cb & (cb - 1)) != 0)
		return emu_tm_advance_run(tm, p, q, now_ns, rng, false, p->cfg.own_buffer,
					  o != NULL && o->lens != NULL, trace, o);
	if (p->cfg.own_buffer)
		return emu_tm_advance_run(tm, p, q, now_ns, rng, true, true,
					  o != NULL && o->lens != NULL, trace, o);
	/* the common cases, with the trace as a constant too */
	if (o != NULL && o->lens != NULL && trace)
		return emu_tm_advance_run(tm, p, q, now_ns, rng, true, false, true, true, o);
	if (o != NULL && o->lens != NULL)
		return emu_tm_advance_run(tm, p, q, now_ns, rng, true, false, true, false, o);
	if (trace)
		return emu_tm_advance_run(tm, p, q, now_ns, rng, true, false, false, true, o);
	return emu_tm_advance_run(tm, p, q, now_ns, rng, true, false, false, false, o);
}

/*
 * Start serialising every queued packet whose start time has come; with @p o (the dequeue),
 * one queue under the strict scheduler hands what leaves by now straight to it.
 */
static void
emu_tm_port_advance_out(struct emu_tm *tm, struct emu_tm_port *p, uint64_t now_ns,
			struct emu_rng *rng, struct emu_tm_out *o)
{
	while (emu_tm_fifo_count(&p->wire) <= p->wire.mask) {
		uint64_t start_ns;
		uint32_t start_ps;
		int q;

		if (p->nonempty != 0 && (p->nonempty & (p->nonempty - 1)) == 0 &&
		    p->nonempty != 1u << EMU_TM_CTRL_Q && p->cfg.scheduler == EMU_TM_SCHED_STRICT) {
			unsigned int q1 = (unsigned int)__builtin_ctz(p->nonempty);

			/* most calls find the head not due yet: say so before the loop's set-up */
			emu_tm_start(p, q1, &start_ns, &start_ps);
			if (start_ns > now_ns || (start_ns == now_ns && start_ps > 0))
				return;
			if (!emu_tm_advance_one_queue(tm, p, q1, now_ns, rng, o))
				return;
			continue;
		}
		if (p->nonempty != 0 && (p->nonempty & (p->nonempty - 1)) == 0) {
			/* one queue holds packets: emu_tm_pick() would choose it */
			q = __builtin_ctz(p->nonempty);
			emu_tm_start(p, (unsigned int)q, &start_ns, &start_ps);
		} else {
			q = emu_tm_pick(p, &start_ns, &start_ps, false);
		}
		if (q < 0 || start_ns > now_ns || (start_ns == now_ns && start_ps > 0))
			break;
		/* the strict scheduler's choice does not change when it commits */
		if (p->cfg.scheduler != EMU_TM_SCHED_STRICT)
			q = emu_tm_pick(p, &start_ns, &start_ps, true);
		emu_tm_start_head(tm, p, (unsigned int)q, start_ns, start_ps, rng);
	}
}

void
emu_tm_port_advance(struct emu_tm *tm, struct emu_tm_port *p, uint64_t now_ns,
		    struct emu_rng *rng)
{
	emu_tm_port_advance_out(tm, p, now_ns, rng, NULL);
}

/* Take the packets at the head of @p p's delay line that have left by @p now_ns into @p o. */
static inline void
emu_tm_wire_pop(struct emu_tm_port *p, uint64_t now_ns, struct emu_tm_out *o)
{
	while (o->n < o->max && emu_tm_fifo_count(&p->wire) > 0) {
		struct rte_mbuf *m = p->wire.slots[p->wire.head & p->wire.mask];

		if (emu_meta(m)->ts_ns > now_ns)
			break;
		p->wire.head++;
		if (o->lens != NULL)
			o->lens[o->n] = emu_wire_len(m);
		o->bytes += emu_wire_len(m);
		o->pkts[o->n++] = m;
	}
}

/*
 * What was on the delay line and has left first; then the packets that start by now, those
 * that also leave by now (the line empty ahead of them) straight into @p out, the others onto
 * the line, from which what has left is taken after. The same packets in the same order as
 * advancing first and then taking from the line; one call earlier when the line was full.
 */
uint16_t
emu_tm_dequeue(struct emu_tm *tm, uint16_t port, uint64_t now_ns, struct rte_mbuf **out,
	       uint16_t max, struct emu_rng *rng)
{
	return emu_tm_dequeue_lens(tm, port, now_ns, out, NULL, max, rng);
}

uint16_t
emu_tm_dequeue_lens(struct emu_tm *tm, uint16_t port, uint64_t now_ns, struct rte_mbuf **out,
		    uint32_t *lens, uint16_t max, struct emu_rng *rng)
{
	struct emu_tm_port *p = &tm->ports[port];
	struct emu_tm_out o = { .pkts = out, .lens = lens, .max = max, .n = 0, .bytes = 0 };

	/* nothing queued, nothing on the wire: what the rest would find (polled every pass) */
	if (p->nonempty == 0 && emu_tm_fifo_count(&p->wire) == 0)
		return 0;
	if (emu_tm_fifo_count(&p->wire) > 0)
		emu_tm_wire_pop(p, now_ns, &o);
	if (p->nonempty != 0) {
		/* even with @p out full: the queues are then exact at now for what comes next */
		emu_tm_port_advance_out(tm, p, now_ns, rng, &o);
		emu_tm_wire_pop(p, now_ns, &o);
	}
	p->ctr[EMU_TM_CTR_DEQ_PKTS] += o.n;
	p->ctr[EMU_TM_CTR_DEQ_BYTES] += o.bytes;
	return o.n;
}

/* The link went down at @p now_ns: drop what waits in the port's queues (frames already
 * serialised, in the delay line, still arrive). */
void
emu_tm_flush(struct emu_tm *tm, struct emu_tm_port *p, uint64_t now_ns)
{
	unsigned int q;

	p->nonempty = 0;
	for (q = 0; q < EMU_TM_N_Q; q++) {
		while (emu_tm_fifo_count(&p->q[q]) > 0) {
			struct rte_mbuf *m = p->q[q].slots[p->q[q].head++ & p->q[q].mask];
			struct emu_pkt_meta *meta = emu_meta(m);
			uint32_t len = emu_wire_len(m);

			p->q_bytes[q] -= len;
			p->all_q_bytes -= len;
			if (q != EMU_TM_CTRL_Q) {
				emu_tm_unaccount(tm, p, q, meta, len, now_ns);
				p->deficit[q] = 0;
			}
			emu_tm_drop(tm, (uint16_t)(p - tm->ports), m, EMU_TM_CTR_DROP_LINK_DOWN);
		}
	}
}
